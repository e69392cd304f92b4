/*
 * percpu_pagemap.c — page number -> span and class, TCMalloc's PageMap2: a
 * root of 2^PC_ROOT_BITS leaf pointers, each leaf 2^PC_LEAF_BITS entries
 * (2 GiB of address space per leaf; an entry is a span pointer with the
 * class in its top bits, percpu.h).  The root lives in the policy's
 * state and the leaves are metadata regions of the page source: both
 * mapped read/write at once, but only the pages a lookup or a store
 * touches become resident.
 */
#include "config.h"
#include "percpu.h"

#define PC_LEAF_SIZE (((size_t)1 << PC_LEAF_BITS) * sizeof(uintptr_t))

void pc_pagemap_init(pc_pagemap_t *m, hl_os_t *os)
{
	m->os = os;
}

int pc_pagemap_set(pc_pagemap_t *m, uintptr_t addr, size_t npages, pc_span_t *s, unsigned cls)
{
	uintptr_t page = addr >> PC_PAGE_SHIFT;
	if ((uintptr_t)s >> PC_ENTRY_CLASS_SHIFT)
		return -1; /* no room for the class above this address */
	uintptr_t entry = (uintptr_t)s | (uintptr_t)cls << PC_ENTRY_CLASS_SHIFT;
	for (size_t i = 0; i < npages; i++, page++) {
		uintptr_t hi = page >> PC_LEAF_BITS;
		if (hi >> PC_ROOT_BITS)
			return -1;
		uintptr_t *leaf = atomic_load_explicit(&m->root[hi], memory_order_relaxed);
		if (!leaf) {
			leaf = hl_os_reserve_meta(m->os, PC_LEAF_SIZE);
			if (!leaf)
				return -1;
			atomic_store_explicit(&m->root[hi], leaf, memory_order_release);
		}
		leaf[page & (((uintptr_t)1 << PC_LEAF_BITS) - 1)] = entry;
	}
	return 0;
}
