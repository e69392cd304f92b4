/*
 * Arenas and bins of policy `slab`.
 *
 * An arena owns one bin per small class and the extents of its chunks.  A
 * bin hands out regions from its current slab (slabcur), lowest region
 * first; when slabcur is full it takes the oldest slab of its nonfull
 * heap (lowest serial number, then address), and only then asks the arena
 * for a fresh slab extent.  A slab that becomes empty goes straight back
 * to the arena as dirty pages; a full slab that gets a region back becomes
 * slabcur if it is older than the current one, else (or when there is no
 * current one) it joins the nonfull heap (jemalloc keeps allocations
 * packed in old, low slabs so young, high ones drain and can be purged).
 */
#include "config.h"
#include <string.h>
#include "slab.h"
#include "slab_decay.h"

/* ---- arenas ------------------------------------------------------------ */

/* Creates arena @p i (arenas lock held, or at init). */
sl_arena_t *sl_arena_create(sl_state_t *s, unsigned i)
{
	/* The record takes jemalloc's arena footprint (SL_ARENA_FOOTPRINT);
	 * what lies past sl_arena_t stands for the parts of jemalloc's arena
	 * the model does not keep (the guarded esets, per-class extent and
	 * large statistics, the HPA shard), and is written as jemalloc's
	 * arena_new() writes them: every page. */
	size_t bytes = hl_align_up(sizeof(sl_arena_t) > SL_ARENA_FOOTPRINT ? sizeof(sl_arena_t) : SL_ARENA_FOOTPRINT, s->sc.page);
	sl_arena_t *a = hl_os_reserve_meta(s->os, bytes);
	if (!a)
		return NULL;
	for (size_t off = hl_align_up(sizeof(sl_arena_t), s->sc.page); off < bytes; off += s->sc.page)
		*(volatile char *)((char *)a + off) = 0;
	a->index = i;
	pthread_mutex_init(&a->ext_lock, NULL);
	hl_meta_init(&a->ext_pool, s->os, sizeof(sl_extent_t));
	for (int st = SL_DIRTY; st <= SL_RETURNED; st++)
		sl_eset_init(&a->esets[st - SL_DIRTY], (sl_estate_t)st);
	uint64_t now = sl_now_ns(s);
	/* jemalloc's arena_choose_huge: the huge arena purges at once (decay
	 * 0) unless the heap's decay time is 0 or -1 already. */
	bool huge = i == SL_HUGE_ARENA;
	int64_t dirty_ms = huge && s->dirty_ms > 0 ? 0 : s->dirty_ms;
	int64_t muzzy_ms = huge && s->muzzy_ms > 0 ? 0 : s->muzzy_ms;
	sl_decay_init(&a->decay[0], dirty_ms, now, hl_mix64(i * 2 + 1 + hl_clock_seed(s->heap)));
	sl_decay_init(&a->decay[1], muzzy_ms, now, hl_mix64(i * 2 + 2 + hl_clock_seed(s->heap)));
	/* jemalloc 5.3 creates arena 0 before it reads oversize_threshold, so
	 * arena 0 keeps the default whatever the option says. */
	a->oversize = i == 0 ? SL_OVERSIZE_DEFAULT : s->oversize;
	a->next_grow = sl_psz_ceil(((size_t)2 << 20) >> s->sc.lg_page);
	for (unsigned b = 0; b < s->sc.nbins; b++)
		pthread_mutex_init(&a->bins[b].lock, NULL);
	__atomic_store_n(&s->arenas[i], a, __ATOMIC_RELEASE);
	if (!huge)
		s->ninit = i + 1;
	return a;
}

sl_arena_t *sl_large_arena(sl_state_t *s, sl_arena_t *a, size_t usize)
{
	if (!s->oversize || usize < s->oversize)
		return a;
	sl_arena_t *huge = sl_arena_get(s, SL_HUGE_ARENA);
	if (HL_UNLIKELY(!huge)) {
		pthread_mutex_lock(&s->arenas_lock);
		huge = s->arenas[SL_HUGE_ARENA];
		if (!huge)
			huge = sl_arena_create(s, SL_HUGE_ARENA);
		pthread_mutex_unlock(&s->arenas_lock);
	}
	return huge ? huge : a;   /* out of metadata: the thread's own arena will do */
}

/* The arena a new thread joins: an unused one while narenas allows,
 * otherwise the one with the fewest threads (arenas lock held). */
sl_arena_t *sl_arena_choose(sl_state_t *s)
{
	sl_arena_t *best = NULL;
	for (unsigned i = 0; i < s->ninit; i++)
		if (!best || s->arenas[i]->nthreads < best->nthreads)
			best = s->arenas[i];
	if ((!best || best->nthreads > 0) && s->ninit < s->narenas) {
		sl_arena_t *a = sl_arena_create(s, s->ninit);
		if (a)
			best = a;
	}
	return best;
}

/* ---- slabs ------------------------------------------------------------- */

static void sl_slab_init(const sl_sc_t *sc, sl_extent_t *e, unsigned ind)
{
	e->szind = (uint16_t)ind;
	e->nfree = (uint16_t)sc->nregs[ind];
	/* the bits past the class's regions are set: never free (a word at
	 * a time, as this runs for every new slab) */
	for (unsigned w = 0; w < SL_BITMAP_WORDS; w++)
		hl_bit_store_word(e->bitmap, w, ~hl_bits_first_n_word(sc->nregs[ind], w));
}

/* A slab with a free region for @p bin (bin lock held), or NULL. */
static sl_extent_t *sl_bin_refill_cur(sl_state_t *s, sl_arena_t *a, sl_bin_t *bin, unsigned ind)
{
	if (bin->cur && bin->cur->nfree)
		return bin->cur;
	bin->cur = NULL;
	if (bin->nonfull) {
		sl_extent_t *e = sl_ph_extent(bin->nonfull);
		sl_ph_remove(&bin->nonfull, &e->ph);
		e->in_heap = 0;
		bin->nonfull_count--;
		HL_EV(s->heap, HL_EV_LOOK, "slab bin: the oldest non-full slab becomes current, class", ind, 0, (void *)e->base);
		return bin->cur = e;
	}
	pthread_mutex_lock(&a->ext_lock);
	sl_extent_t *e = sl_extent_alloc(s, a, s->sc.slab_size[ind], s->sc.page, SL_SLAB);
	pthread_mutex_unlock(&a->ext_lock);
	if (!e)
		return NULL;
	sl_slab_init(&s->sc, e, ind);
	HL_EVENT(s->heap, HL_EV_NEW, "slab (regions it holds), class", ind, e->size, 0, -1, s->sc.nregs[ind], (void *)e->base);
	bin->nslabs++;
	return bin->cur = e;
}

/* Up to @p n free regions of slab @p e into @p out, lowest address first
 * (as jemalloc 5.3's arena_slab_reg_alloc_batch; fidelity rows
 * jemalloc.tcache-flush-order and tcache-large-order), marked taken;
 * returns how many.  A set bit is a taken region, and the bits past the
 * class's regions were set when the slab was made, so they never look
 * free. */
static unsigned sl_slab_take(const sl_sc_t *sc, sl_extent_t *e, void **out, unsigned n)
{
	unsigned got = hl_bits_take(e->bitmap, SL_BITMAP_WORDS, false, e->base, sc->stride[e->szind], out,
				    n < e->nfree ? n : e->nfree);
	e->nfree = (uint16_t)(e->nfree - got);
	return got;
}

unsigned sl_bin_take(sl_state_t *s, sl_arena_t *a, unsigned ind, void **out, unsigned n)
{
	sl_bin_t *bin = &a->bins[ind];
	unsigned got = 0;
	pthread_mutex_lock(&bin->lock);
	while (got < n) {
		sl_extent_t *e = sl_bin_refill_cur(s, a, bin, ind);
		if (!e)
			break;
		got += sl_slab_take(&s->sc, e, out + got, n - got);
	}
	bin->curregs += got;
	bin->nfills++;
	pthread_mutex_unlock(&bin->lock);
	return got;
}

/* A full slab got a region back: it replaces slabcur when older than it,
 * else it joins the nonfull heap; without a slabcur it joins the heap too,
 * and the next refill takes the oldest there (jemalloc 5.3's
 * arena_bin_lower_slab). */
static void sl_bin_lower(sl_bin_t *bin, sl_extent_t *e)
{
	if (bin->cur && sl_extent_older(e, bin->cur)) {
		sl_extent_t *old = bin->cur;
		bin->cur = e;
		e = old;
		if (!old->nfree)
			return;   /* a full slabcur is simply dropped */
	}
	sl_ph_insert(&bin->nonfull, &e->ph);
	e->in_heap = 1;
	bin->nonfull_count++;
}

/* Frees region @p p of slab @p e (bin lock held); returns e when it emptied. */
static sl_extent_t *sl_slab_give(sl_state_t *s, sl_bin_t *bin, sl_extent_t *e, void *p)
{
	int idx = sl_region_index(&s->sc, e, (uintptr_t)p);
	if (idx < 0 || !hl_bit_get(e->bitmap, (unsigned)idx))
		hl_fatal(&hl_policy_slab, "double free or corrupt pointer in a tcache flush", p);
	hl_bit_clear(e->bitmap, (unsigned)idx);
	e->nfree++;
	bin->curregs--;
	if (e->nfree == s->sc.nregs[e->szind]) {
		if (bin->cur == e) {
			bin->cur = NULL;
		} else if (e->in_heap) {
			sl_ph_remove(&bin->nonfull, &e->ph);
			e->in_heap = 0;
			bin->nonfull_count--;
		}
		bin->nslabs--;
		return e;
	}
	if (e->nfree == 1 && bin->cur != e)
		sl_bin_lower(bin, e);
	return NULL;
}

/* Releases the slabs that emptied (their bin lock held, so a checker never
 * sees a slab that belongs to no bin). */
static void sl_slabs_release(sl_state_t *s, sl_arena_t *a, sl_extent_t **empty, unsigned n)
{
	if (!n)
		return;
	pthread_mutex_lock(&a->ext_lock);
	for (unsigned i = 0; i < n; i++) {
		HL_EV(s->heap, HL_EV_RETIRE, "slab (all its regions free), class", empty[i]->szind, empty[i]->size, (void *)empty[i]->base);
		sl_extent_dalloc(s, a, empty[i]);
	}
	pthread_mutex_unlock(&a->ext_lock);
}

void sl_bin_give(sl_state_t *s, unsigned ind, void *const *ptrs, unsigned n)
{
	sl_extent_t *ext[n ? n : 1], *empty[n ? n : 1];
	unsigned left = n;
	for (unsigned i = 0; i < n; i++)
		ext[i] = sl_rtree_get(&s->rtree, (uintptr_t)ptrs[i]);
	while (left) {
		unsigned ai = 0, nempty = 0;
		for (unsigned i = 0; i < n; i++)
			if (ext[i]) {
				ai = ext[i]->arena;
				break;
			}
		sl_arena_t *a = sl_arena_get(s, ai);
		sl_bin_t *bin = &a->bins[ind];
		pthread_mutex_lock(&bin->lock);
		for (unsigned i = 0; i < n; i++) {
			if (!ext[i] || ext[i]->arena != ai)
				continue;
			sl_extent_t *e = sl_slab_give(s, bin, ext[i], ptrs[i]);
			if (e)
				empty[nempty++] = e;
			ext[i] = NULL;
			left--;
		}
		bin->nflushes++;
		sl_slabs_release(s, a, empty, nempty);
		pthread_mutex_unlock(&bin->lock);
	}
	sl_bg_maybe_kick(s);
}

/* ---- large extents ------------------------------------------------------ */

void *sl_large_alloc(sl_state_t *s, sl_arena_t *a, unsigned ind, size_t align)
{
	size_t usize = sl_index2size(&s->sc, ind);
	a = sl_large_arena(s, a, usize);
	pthread_mutex_lock(&a->ext_lock);
	sl_extent_t *e = sl_extent_alloc(s, a, sl_large_extent_size(&s->sc, usize), align, SL_LARGE);
	if (e) {
		e->szind = (uint16_t)ind;
		a->st.nlarge++;
		a->st.large_bytes += usize;
	}
	pthread_mutex_unlock(&a->ext_lock);
	return e ? (void *)e->base : NULL;
}

sl_extent_t *sl_stack_alloc(sl_state_t *s)
{
	sl_arena_t *a = sl_arena_get(s, 0);
	size_t usize = sl_index2size(&s->sc, sl_size2index(&s->sc, 2 * sizeof(void *) + s->tc_slots * sizeof(void *)));
	pthread_mutex_lock(&a->ext_lock);
	sl_extent_t *e = sl_extent_alloc(s, a, sl_large_extent_size(&s->sc, usize), s->sc.page, SL_META);
	pthread_mutex_unlock(&a->ext_lock);
	return e;
}

void sl_stack_free(sl_state_t *s, sl_extent_t *e)
{
	sl_arena_t *a = sl_arena_get(s, e->arena);
	pthread_mutex_lock(&a->ext_lock);
	sl_extent_dalloc(s, a, e);
	pthread_mutex_unlock(&a->ext_lock);
	sl_bg_maybe_kick(s);
}

void sl_large_free(sl_state_t *s, sl_extent_t *e)
{
	sl_arena_t *a = sl_arena_get(s, e->arena);
	pthread_mutex_lock(&a->ext_lock);
	a->st.nlarge--;
	a->st.large_bytes -= sl_extent_usize(&s->sc, e);
	sl_extent_dalloc(s, a, e);
	pthread_mutex_unlock(&a->ext_lock);
	sl_bg_maybe_kick(s);
}

/* ---- every lock, in order (checker, walker, snapshot, fork) ------------ */

void sl_lock_all(sl_state_t *s)
{
	pthread_mutex_lock(&s->arenas_lock);
	sl_arena_t *a;
	for (unsigned i = 0; (a = sl_arena_nth(s, i)); i++) {
		for (unsigned b = 0; b < s->sc.nbins; b++)
			pthread_mutex_lock(&a->bins[b].lock);
		pthread_mutex_lock(&a->ext_lock);
	}
}

void sl_unlock_all(sl_state_t *s)
{
	for (unsigned i = s->ninit + 1; i-- > 0;) {
		sl_arena_t *a = sl_arena_nth(s, i);
		if (!a)
			continue;
		pthread_mutex_unlock(&a->ext_lock);
		for (unsigned b = s->sc.nbins; b-- > 0;)
			pthread_mutex_unlock(&a->bins[b].lock);
	}
	pthread_mutex_unlock(&s->arenas_lock);
}
