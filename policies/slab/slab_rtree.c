/*
 * The rtree of policy `slab`: a two-level radix tree from page number to
 * extent record, the out-of-band map that lets free() work without a
 * header in front of a region (jemalloc's rtree, with its x86-64 shape:
 * 48-bit addresses, 4 KiB pages, 18 + 18 bits).
 *
 * Readers (free, usable_size) take no lock: a leaf pointer, once set,
 * never changes, and entries are written with release stores under the
 * owning arena's ext lock.  Leaves are created under the rtree lock and
 * live in metadata regions of the page source; only touched leaf pages
 * become resident.
 */
#include "config.h"
#include "slab.h"

void sl_rtree_init(sl_rtree_t *rt, unsigned lg_page)
{
	pthread_mutex_init(&rt->lock, NULL);
	rt->lg_page = lg_page;
	rt->leaf_bits = SL_RT_LEAF_SHIFT - lg_page;
}

static sl_extent_t **sl_rtree_leaf(sl_state_t *s, uintptr_t hi)
{
	sl_rtree_t *rt = &s->rtree;
	sl_extent_t **leaf = __atomic_load_n(&rt->root[hi], __ATOMIC_ACQUIRE);
	if (HL_LIKELY(leaf != NULL))
		return leaf;
	pthread_mutex_lock(&rt->lock);
	leaf = rt->root[hi];
	if (!leaf) {
		leaf = hl_os_reserve_meta(s->os, sizeof(void *) << rt->leaf_bits);
		if (leaf)
			__atomic_store_n(&rt->root[hi], leaf, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&rt->lock);
	return leaf;
}

bool sl_rtree_set(sl_state_t *s, uintptr_t addr, sl_extent_t *e)
{
	sl_rtree_t *rt = &s->rtree;
	uintptr_t hi = addr >> SL_RT_LEAF_SHIFT;
	if (hi >= (1u << SL_RT_ROOT_BITS))
		return false;
	sl_extent_t **leaf = sl_rtree_leaf(s, hi);
	if (!leaf)
		return false;
	uintptr_t in_leaf = (addr & (((uintptr_t)1 << SL_RT_LEAF_SHIFT) - 1)) >> rt->lg_page;
	__atomic_store_n(&leaf[in_leaf], e, __ATOMIC_RELEASE);
	return true;
}
