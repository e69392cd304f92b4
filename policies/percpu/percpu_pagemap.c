/*
 * percpu_pagemap.c — page number -> span, TCMalloc's PageMap2: a root of
 * 2^PC_ROOT_BITS leaf pointers, each leaf 2^PC_LEAF_BITS span pointers
 * (2 GiB of address space per leaf).  The root lives in the policy's
 * state and the leaves are metadata regions of the page source: both
 * mapped read/write at once, but only the pages a lookup or a store
 * touches become resident.
 */
#include "config.h"
#include "percpu.h"

#define PC_LEAF_SIZE (((size_t)1 << PC_LEAF_BITS) * sizeof(pc_span_t *))

void pc_pagemap_init(pc_pagemap_t *m, hl_os_t *os)
{
	m->os = os;
}

int pc_pagemap_set(pc_pagemap_t *m, uintptr_t addr, size_t npages, pc_span_t *s)
{
	uintptr_t page = addr >> PC_PAGE_SHIFT;
	for (size_t i = 0; i < npages; i++, page++) {
		uintptr_t hi = page >> PC_LEAF_BITS;
		if (hi >> PC_ROOT_BITS)
			return -1;
		pc_span_t **leaf = atomic_load_explicit(&m->root[hi], memory_order_relaxed);
		if (!leaf) {
			leaf = hl_os_reserve_meta(m->os, PC_LEAF_SIZE);
			if (!leaf)
				return -1;
			atomic_store_explicit(&m->root[hi], leaf, memory_order_release);
		}
		leaf[page & (((uintptr_t)1 << PC_LEAF_BITS) - 1)] = s;
	}
	return 0;
}
