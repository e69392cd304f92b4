/*
 * Thread caches of policy `slab`.
 *
 * A tcache belongs to one thread (t->policy_tls) and is touched by no one
 * else while the thread runs, so its hits take no lock.  Each bin is a
 * stack of at most ncached_max pointers: twice the regions of a slab,
 * between 20 and 200, for small classes; 20 for large classes up to
 * tcache_max.  An empty bin is filled with ncached_max >> lg_fill_div
 * regions in one bin-lock hold; a full bin flushes its older half.  Every
 * 64 KiB of traffic one bin is garbage collected: if it never dropped
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
	void **slot = tc->slot_area;
	for (unsigned i = 0; i < s->nhbins; i++) {
		tc->bins[i].slots = slot;
		tc->bins[i].ncached_max = s->ncached_max[i];
		tc->bins[i].lg_fill_div = 1;
		slot += s->ncached_max[i];
	}
	tc->enabled = s->tcache_on;
	tc->ticks = SL_DECAY_NTICKS;
	tc->gc_bytes = SL_TCACHE_GC_BYTES;
	tc->owner = pthread_self();
	pthread_mutex_lock(&s->arenas_lock);
	tc->arena = sl_arena_choose(s);
	if (!tc->arena) {
		pthread_mutex_unlock(&s->arenas_lock);
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
	unsigned n = b->ncached_max >> b->lg_fill_div;
	if (!n)
		n = 1;
	void **dst = b->slots + b->ncached;
	unsigned got = sl_bin_take(s, tc->arena, ind, dst, n);
	for (unsigned i = 0; i < got / 2; i++) {   /* lowest address on top */
		void *x = dst[i];
		dst[i] = dst[got - 1 - i];
		dst[got - 1 - i] = x;
	}
	b->ncached = (uint16_t)(b->ncached + got);
	HL_EV_COUNT(s->heap, HL_EV_CACHE_FILL, "tcache bin from slabs (first free bits of the bitmap), class", ind, b->ncached - got, b->ncached, NULL);
	b->refilled = 1;
	hl_counter_add(&tc->fills, 1);
	sl_decay_ticks(tc, 1);
}

void sl_tcache_flush(sl_state_t *s, sl_tcache_t *tc, unsigned bin, unsigned keep)
{
	sl_cbin_t *b = &tc->bins[bin];
	if (b->ncached <= keep)
		return;
	unsigned nflush = b->ncached - keep;
	HL_EV_COUNT(s->heap, HL_EV_CACHE_FLUSH, "tcache bin, its older regions back to their slabs, class", bin, b->ncached, keep, NULL);
	if (bin < s->sc.nbins) {
		sl_bin_give(s, bin, b->slots, nflush);
	} else {
		for (unsigned i = 0; i < nflush; i++)
			sl_large_free(s, sl_rtree_get(&s->rtree, (uintptr_t)b->slots[i]));
	}
	memmove(b->slots, b->slots + nflush, keep * sizeof(void *));
	b->ncached = (uint16_t)keep;
	if (b->low_water > keep)
		b->low_water = (uint16_t)keep;
	hl_counter_add(&tc->flushes, 1);
	sl_decay_ticks(tc, nflush);
}

/* One incremental GC step on the next bin. */
static void sl_tcache_gc(sl_state_t *s, sl_tcache_t *tc)
{
	unsigned i = tc->next_gc;
	sl_cbin_t *b = &tc->bins[i];
	tc->next_gc = (i + 1) % s->nhbins;
	if (b->low_water > 0) {
		HL_EVENT(s->heap, HL_EV_LOOK, "tcache GC: three quarters of the regions unused since the last visit (its low water) go back, class", i, 0, 0, b->low_water, -1, NULL);
		unsigned nflush = b->low_water - (b->low_water >> 2);
		sl_tcache_flush(s, tc, i, b->ncached - nflush);
		if ((b->ncached_max >> (b->lg_fill_div + 1)) >= 1)
			b->lg_fill_div++;
	} else if (b->refilled && b->lg_fill_div > 1) {
		b->lg_fill_div--;
	}
	b->refilled = 0;
	b->low_water = b->ncached;
}

void sl_tcache_event(sl_state_t *s, sl_tcache_t *tc)
{
	if (tc->ticks <= 0) {
		tc->ticks = SL_DECAY_NTICKS;
		tc->gc_bytes += SL_TICKS_DUE;   /* sl_decay_ticks() lowered it */
		sl_decay_tick(s, tc->arena);
	}
	if (tc->gc_bytes < 0) {
		tc->gc_bytes = SL_TCACHE_GC_BYTES;
		if (tc->enabled)
			sl_tcache_gc(s, tc);
	}
}

/* Empties every bin and folds the counters into the state (thread exit). */
void sl_tcache_destroy(sl_state_t *s, sl_tcache_t *tc)
{
	for (unsigned i = 0; i < s->nhbins; i++)
		sl_tcache_flush(s, tc, i, 0);
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
