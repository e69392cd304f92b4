/*
 * Thread caches of policy `slab`.
 *
 * A tcache belongs to one thread (t->policy_tls) and is touched by no one
 * else while the thread runs, so its hits take no lock.  Each bin is a
 * stack of at most ncached_max pointers (sl_cbin_t, jemalloc's layout:
 * it grows down from its empty position): twice the regions of a slab,
 * between 20 and 200, for small classes; 20 for large classes up to
 * tcache_max.  An empty bin is filled with ncached_max >> lg_fill_div
 * regions in one bin-lock hold; a full bin flushes its older half.  Every
 * 64 KiB allocated, and every 64 KiB freed (two counters), one bin is
 * garbage collected: if it never dropped
 * below low_water regions since its last visit, three quarters of those
 * idle regions go back and the next fills get smaller; if it ran dry, the
 * fills grow again.
 */
#include "config.h"
#include <string.h>
#include "slab.h"

const sl_tcache_t sl_no_tcache;

sl_tcache_t *sl_tcache_create(sl_state_t *s, hl_thread_t *t)
{
	sl_tcache_t *tc = hl_meta_alloc(&s->tc_pool);
	if (!tc)
		return NULL;
	/* jemalloc takes the stacks' extent first (tsd_tcache_data_init),
	 * then binds the thread to an arena */
	tc->stack = s->tcache_on ? sl_stack_alloc(s) : NULL;   /* tcache:false makes none */
	if (s->tcache_on && !tc->stack) {
		hl_meta_free(&s->tc_pool, tc);
		return NULL;
	}
	void **slot = tc->slot_area;
	for (unsigned i = 0; i < s->nhbins; i++) {
		sl_cbin_t *b = &tc->bins[i];
		b->full_bits = sl_cbin_bits(slot);
		slot += s->ncached_max[i];
		tc->head[i] = slot;
		b->empty_bits = b->low_water_bits = sl_cbin_bits(slot);
		b->lg_fill_div = 1;
	}
	tc->enabled = s->tcache_on;
	tc->ticks = SL_DECAY_NTICKS;
	tc->gc_bytes[SL_GC_ALLOC] = tc->gc_bytes[SL_GC_DALLOC] = SL_TCACHE_GC_BYTES;
	tc->owner = pthread_self();
	pthread_mutex_lock(&s->arenas_lock);
	tc->arena = sl_arena_choose(s);
	if (!tc->arena) {
		pthread_mutex_unlock(&s->arenas_lock);
		if (tc->stack)
			sl_stack_free(s, tc->stack);
		hl_meta_free(&s->tc_pool, tc);
		return NULL;
	}
	tc->arena->nthreads++;
	tc->next = s->tcaches;
	if (s->tcaches)
		s->tcaches->prev = tc;
	s->tcaches = tc;
	tc->linked = true;
	pthread_mutex_unlock(&s->arenas_lock);
	t->policy_tls = tc;
	return tc;
}

void sl_tcache_fill(sl_state_t *s, sl_tcache_t *tc, unsigned ind)
{
	sl_cbin_t *b = &tc->bins[ind];
	unsigned n = sl_cbin_capacity(b) >> b->lg_fill_div;
	if (!n)
		n = 1;
	/* As jemalloc's cache_bin_init_ptr_array_for_fill: the regions land
	 * below the empty position in the order the slabs give them, lowest
	 * address first, so the lowest is on top. */
	void **empty = tc->head[ind], **dst = empty - n;
	unsigned got = sl_bin_take(s, tc->arena, ind, dst, n);
	if (got < n)
		memmove(empty - got, dst, got * sizeof(void *));
	tc->head[ind] = empty - got;
	HL_EV_COUNT(s->heap, HL_EV_CACHE_FILL, "tcache bin from slabs (first free bits of the bitmap), class", ind, 0, got, NULL);
	b->refilled = 1;
	hl_counter_add(&tc->fills, 1);
	sl_decay_ticks(tc, 1);
}

void sl_tcache_flush(sl_state_t *s, sl_tcache_t *tc, unsigned bin, unsigned keep)
{
	sl_cbin_t *b = &tc->bins[bin];
	unsigned ncached = sl_cbin_ncached(tc, bin);
	if (ncached <= keep)
		return;
	unsigned nflush = ncached - keep;
	HL_EV_COUNT(s->heap, HL_EV_CACHE_FLUSH, "tcache bin, its older regions back to their slabs, class", bin, ncached, keep, NULL);
	/* The bottom nflush, nearest the empty position, in address order
	 * (jemalloc's cache_bin_init_ptr_array_for_flush). */
	void **head = tc->head[bin], **old = head + keep;
	if (bin < s->sc.nbins) {
		sl_bin_give(s, bin, old, nflush);
	} else {
		for (unsigned i = 0; i < nflush; i++)
			sl_large_free(s, sl_rtree_get(&s->rtree, (uintptr_t)old[i]));
	}
	memmove(head + nflush, head, keep * sizeof(void *));
	tc->head[bin] = head + nflush;
	if (sl_cbin_low_water(b) > keep)
		b->low_water_bits = sl_cbin_bits(head + nflush);
	hl_counter_add(&tc->flushes, 1);
	sl_decay_ticks(tc, nflush);
}

/* One incremental GC step on the next bin. */
static void sl_tcache_gc(sl_state_t *s, sl_tcache_t *tc)
{
	unsigned i = tc->next_gc;
	sl_cbin_t *b = &tc->bins[i];
	tc->next_gc = (i + 1) % s->nhbins;
	unsigned low_water = sl_cbin_low_water(b);
	if (low_water > 0) {
		HL_EVENT(s->heap, HL_EV_LOOK, "tcache GC: three quarters of the regions unused since the last visit (its low water) go back, class", i, 0, 0, low_water, -1, NULL);
		unsigned nflush = low_water - (low_water >> 2);
		sl_tcache_flush(s, tc, i, sl_cbin_ncached(tc, i) - nflush);
		if ((sl_cbin_capacity(b) >> (b->lg_fill_div + 1)) >= 1)
			b->lg_fill_div++;
	} else if (b->refilled && b->lg_fill_div > 1) {
		b->lg_fill_div--;
	}
	b->refilled = 0;
	b->low_water_bits = sl_cbin_bits(tc->head[i]);
}

void sl_tcache_event(sl_state_t *s, sl_tcache_t *tc, sl_gc_dir_t dir)
{
	if (tc->ticks <= 0) {
		tc->ticks = SL_DECAY_NTICKS;
		tc->gc_bytes[SL_GC_ALLOC] += SL_TICKS_DUE;   /* sl_decay_ticks() lowered them */
		tc->gc_bytes[SL_GC_DALLOC] += SL_TICKS_DUE;
		sl_decay_tick(s, tc->arena);
	}
	if (tc->gc_bytes[dir] <= 0) {
		tc->gc_bytes[dir] = SL_TCACHE_GC_BYTES;
		if (tc->enabled)
			sl_tcache_gc(s, tc);
	}
}

/* Empties every bin and folds the counters into the state (thread exit). */
void sl_tcache_destroy(sl_state_t *s, sl_tcache_t *tc)
{
	for (unsigned i = 0; i < s->nhbins; i++)
		sl_tcache_flush(s, tc, i, 0);
	if (tc->stack)
		sl_stack_free(s, tc->stack);
	tc->stack = NULL;
	sl_tcache_unlink(s, tc);
}

void sl_tcache_unlink(sl_state_t *s, sl_tcache_t *tc)
{
	pthread_mutex_lock(&s->arenas_lock);
	if (tc->linked) {
		if (tc->prev)
			tc->prev->next = tc->next;
		else
			s->tcaches = tc->next;
		if (tc->next)
			tc->next->prev = tc->prev;
		tc->linked = false;
		tc->arena->nthreads--;
	}
	s->dead_hits += tc->hits;
	s->dead_fills += tc->fills;
	s->dead_flushes += tc->flushes;
	pthread_mutex_unlock(&s->arenas_lock);
}
