/**
 * @file slab_fast.h
 * @brief Policy `slab`, the hits of malloc and free: a pop from the
 *        thread's tcache bin of the request's class, a push onto the bin
 *        of the freed region's class.  The quiet and listening copies in
 *        slab.c are built on them, and the malloc shim inlines them
 *        (shim/fast_paths.h).  They use slab.h only.
 *
 *     malloc(n), n <= 4096                free(p)
 *       ind = lookup[(n + 7) >> 3]          e = rtree[p]: a slab of this heap
 *       bin = tcache bin ind                idx = region of p in e, bit set
 *       head above low water: pop, hits++   bin = tcache bin e->szind
 *       tick(size[ind])                     head not at full: push, tick
 *
 * Anything else (no tcache yet, an empty or full bin, a large block, a
 * pointer that is not a live region: the slow path names the misuse) is
 * not a hit: the hit returns having changed nothing.
 */
#ifndef HL_SLAB_FAST_H
#define HL_SLAB_FAST_H

#include "slab.h"

/** Counts @p bytes allocated or freed (@p dir) on @p tc, after the call
 *  they belong to; runs sl_tcache_event() when a GC step (the counter
 *  reached SL_TCACHE_GC_BYTES: jemalloc's wait is met at equality) or
 *  (sl_decay_ticks) a decay check is due. */
static inline void sl_tick(sl_state_t *s, sl_tcache_t *tc, size_t bytes, sl_gc_dir_t dir)
{
	tc->gc_bytes[dir] -= (int64_t)bytes;
	if (HL_UNLIKELY(tc->gc_bytes[dir] <= 0))
		sl_tcache_event(s, tc, dir);
}

/** sl_tick() for the hits below, which call nothing: when an event is due
 *  it counts nothing and returns false (the quiet copy then runs it). */
static inline bool sl_tick_hit(sl_tcache_t *tc, size_t bytes, sl_gc_dir_t dir)
{
	int64_t left = tc->gc_bytes[dir] - (int64_t)bytes;
	if (HL_UNLIKELY(left <= 0))
		return false;
	tc->gc_bytes[dir] = left;
	return true;
}

/** Pops the top of bin @p i of @p tc (not empty) and lowers its low
 *  water mark when the pop goes below it (jemalloc 5.3's cache_bin_alloc). */
static inline void *sl_cbin_pop(sl_tcache_t *tc, size_t i)
{
	void **head = tc->head[i];
	void *p = *head;
	if (sl_cbin_bits(head) == tc->bins[i].low_water_bits)
		tc->bins[i].low_water_bits = sl_cbin_bits(head + 1);
	tc->head[i] = head + 1;
	if (p == NULL)
		__builtin_unreachable();   /* a bin caches regions, never NULL */
	return p;
}

/** Pushes @p p onto bin @p i of @p tc (not full). */
static inline void sl_cbin_push(sl_tcache_t *tc, size_t i, void *p)
{
	*--tc->head[i] = p;
}

/** The class of a request of @p n bytes when tcache @p tc (never NULL:
 *  sl_no_tcache before the thread has one) holds a region of it above the
 *  bin's low water mark, else -1 (a bin at its low water, which the slow
 *  path lowers or finds empty, or more than 4096 bytes: the slow path
 *  computes those classes; jemalloc 5.3's cache_bin_alloc_easy).  0 bytes reads lookup[0], the class of 1 byte, which is what
 *  the core asks the policy for when a program asks for 0. */
static inline long sl_cached_class(const sl_state_t *s, const sl_tcache_t *tc, size_t n)
{
	if (HL_LIKELY(n <= 4096)) {
		size_t ind = s->sc.lookup[(n + 7) >> 3];
		if (HL_LIKELY(sl_cbin_bits(tc->head[ind]) != tc->bins[ind].low_water_bits))
			return (long)ind;
	}
	return -1;
}

/** Takes the top region of class @p ind's bin (sl_cached_class), counted
 *  as a hit; the caller ticks (sl_tick, or sl_tick_hit first). */
static inline void *sl_cache_take(sl_tcache_t *tc, size_t ind)
{
	void *p = *tc->head[ind]++;   /* above the low water mark: it stays */
	if (p == NULL)
		__builtin_unreachable();
	hl_counter_add(&tc->hits, 1);
	return p;
}

/** malloc's hit: a region from the thread's tcache, or NULL (nothing
 *  changed) when there is none or an event is due. */
static inline void *sl_malloc_hit(void *vst, hl_thread_t *t, size_t n)
{
	sl_state_t *s = vst;
	sl_tcache_t *tc = t->policy_tls;
	long ind = sl_cached_class(s, tc, n);
	if (ind < 0)
		return NULL;
	if (HL_UNLIKELY(!sl_tick_hit(tc, s->sc.size[ind], SL_GC_ALLOC)))
		return NULL;
	return sl_cache_take(tc, (size_t)ind);
}

/** The class of @p p when free's hit may take it: a region start of a slab
 *  of this heap whose bit is set (taken), and a bin of tcache @p tc (never
 *  NULL: sl_no_tcache's bins have no room) with room; else -1.  Without
 *  debug only (its scan of the bin is the slow path's): the shim's fast
 *  path serves no debug heap. */
static inline long sl_cacheable_class(const sl_state_t *s, const sl_tcache_t *tc, const void *p)
{
	const sl_extent_t *e = sl_rtree_get(&s->rtree, (uintptr_t)p);
	if (HL_LIKELY(e != NULL && e->state == SL_SLAB)) {
		size_t ind = e->szind;
		uint64_t idx = sl_region_of(&s->sc, e, (uintptr_t)p);
		if (HL_LIKELY(idx < s->sc.nregs[ind] && hl_bit_get(e->bitmap, idx) &&
			      sl_cbin_bits(tc->head[ind]) != tc->bins[ind].full_bits))
			return (long)ind;
	}
	return -1;
}

/** Pushes @p p onto the bin of class @p ind (sl_cacheable_class). */
static inline void sl_cache_put(sl_tcache_t *tc, size_t ind, void *p)
{
	sl_cbin_push(tc, ind, p);
}

/** free's hit: @p p onto the thread's tcache, or false when it is not a
 *  hit or an event is due (nothing changed). */
static inline bool sl_free_hit(void *vst, hl_thread_t *t, void *p)
{
	sl_state_t *s = vst;
	sl_tcache_t *tc = t->policy_tls;
	long ind = sl_cacheable_class(s, tc, p);
	if (ind < 0)
		return false;
	if (HL_UNLIKELY(!sl_tick_hit(tc, s->sc.size[ind], SL_GC_DALLOC)))
		return false;
	sl_cache_put(tc, (size_t)ind, p);
	return true;
}

/* The shim's row for this policy (shim/fast_paths.h): path, table, prefix
 * of the hits, always allowed, free's hit screens by the radix tree. */
#define HL_FAST_ROWS_SLAB(X) X(HL_FAST_SLAB, hl_policy_slab, sl, true, true)
#endif
