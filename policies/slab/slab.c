/*
 * Policy `slab`: a working model of jemalloc 5.3.
 *
 * What it models
 *   Size classes (8, 16 ... 128, then four per doubling), small classes
 *   below four pages in slabs with a bitmap and no header in front of a
 *   region, large requests in page-multiple extents of their own, extents
 *   split to fit and merged when freed, arenas with their own locks that
 *   threads are spread over, a thread cache per thread and class, and
 *   decay: freed pages are dirty, become muzzy (MADV_FREE) after
 *   dirty_decay_ms and returned (MADV_DONTNEED) after muzzy_decay_ms,
 *   along a smoothstep curve, driven by allocator activity that reaches
 *   an arena or by a background thread (never in a fork child).  Large
 *   requests from oversize_threshold up go to a huge arena that purges at
 *   once, and any arena purges a freed large extent at once when it merges
 *   into one that big.  See slab.h for the structures, the invariants and
 *   how the model compares with jemalloc (fidelity).
 *
 * Overhead and alignment
 *   No per-block header: a region is exactly its class size, so
 *   malloc(64) twice in a fresh heap gives blocks 64 bytes apart, and
 *   hl_usable_size() is always the class size.  Internal fragmentation is
 *   at most 25% above 128 bytes (about 1/8 on average).  Metadata is out
 *   of band: one extent record (about 160 bytes) per extent, an rtree leaf
 *   (2 MiB of address space, touched sparsely) per GiB of heap, a tcache
 *   record (about 24 KiB) per thread.  Every class from 16 up is a
 *   multiple of 16 and slabs are page aligned, so regions are 16-byte
 *   aligned (the 8-byte class keeps 8 usable bytes but its regions sit 16
 *   apart for heaplab's 16-byte promise; jemalloc packs them at 8); memalign up to a page picks a class that is a multiple of the
 *   alignment, beyond a page a large extent is carved aligned.  A large block's
 *   extent is a page longer than the block (jemalloc's sz_large_pad, which
 *   lets it start the block at a random cache line of the first page; the
 *   model starts it at the extent's first byte), so two 64 KiB blocks in a
 *   row are 68 KiB apart.
 *
 * Complexity
 *   malloc/free on a tcache hit: O(1), no lock, no atomic read-modify-write
 *   (slab_fast.h: the shim inlines them; a free's hit still looks the
 *   pointer up in the rtree, checks it is a region start by one multiply
 *   and that its bit is set, and falls to the slow path, which names the
 *   misuse, when it is not).
 *   A miss fills or flushes a batch under one bin lock.  Extent allocation
 *   is first fit over O(page size classes) buckets, each a pairing heap
 *   ordered by address; freeing a large extent merges with its free
 *   neighbours via the rtree, O(1) each (a small dirty one waits for its
 *   purge: delayed coalescing).  Decay is O(SL_NSTEPS) per epoch plus the pages it purges.
 *   realloc stays put within a class; a large block shrinks in place or
 *   grows into a free extent that follows it, else it moves.
 *
 * Options: described once, in the option table below (the defaults are jemalloc 5.3's); `heaplab
 * options slab` prints them, the book's options appendix is made from it.
 *
 * Left out
 *   Huge-page (HPA) allocation, extent hooks, profiling, per-CPU arenas,
 *   bin sharding, merging across two reservations (extents never do here;
 *   purging splits the oldest extent to the exact page count, so decay
 *   follows its curve), and one
 *   background thread per CPU
 *   (one per heap here).  The tcache of a thread is read without a lock
 *   by the walker and snapshot: they assume a quiet heap.
 *
 * Misuse detected (debug:off)
 *   jemalloc's release build checks nothing and crashes on a pointer it
 *   never handed out; slab aborts there ("does not own", found by the
 *   rtree), on a pointer that is not a region's start, and on a second
 *   free of a region whose bit is already clear in its slab.  A double
 *   free into the thread cache passes, as in jemalloc, and so do
 *   overflows (no header to damage) and writes after free.  With debug:on
 *   the core's guard (core/guard.c) catches every one of them.
 */
#include "config.h"
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include "slab_fast.h"
#include "slab_decay.h"

static const hl_option_t sl_options[] = {
	{ "narenas", HL_OPT_INT, "0", 0, SL_MAX_ARENAS, NULL,
	  "arenas threads are spread over; 0 = 4 per CPU" },
	{ "tcache", HL_OPT_BOOL, "on", 0, 0, NULL, "per-thread caches of free regions" },
	{ "tcache_max", HL_OPT_SIZE, "32K", 0, 1 << 20, NULL,
	  "largest size class kept in a thread cache" },
	{ "dirty_decay_ms", HL_OPT_INT, "10000", -1, 1000000000, NULL,
	  "ms until freed dirty pages are purged to muzzy; 0 at once, -1 never" },
	{ "muzzy_decay_ms", HL_OPT_INT, "0", -1, 1000000000, NULL,
	  "ms until muzzy pages are returned; 0 at once, -1 never" },
	{ "background_thread", HL_OPT_BOOL, "off", 0, 0, NULL,
	  "purge from a background thread instead of on allocator activity" },
	{ "oversize_threshold", HL_OPT_SIZE, "8M", 0, (int64_t)1 << 40, NULL,
	  "large classes from this size go to the huge arena, which purges at once; 0 = none" },
	{ NULL, 0, NULL, 0, 0, NULL, NULL }
};

/* ---- malloc ------------------------------------------------------------- */

/* What the slow path hands out for class @p ind (@p usize bytes): the
 * cache's top, a fill, a region straight from the bin without a cache, or
 * a large extent.  Counts no bytes: the caller does, after it. */
static void *sl_malloc_miss(sl_state_t *s, sl_tcache_t *tc, unsigned ind, size_t usize)
{
	if (ind < s->nhbins && tc->enabled) {
		unsigned ncached = sl_cbin_ncached(tc, ind);
		if (ncached) {
			hl_counter_add(&tc->hits, 1);
			HL_EV_COUNT(s->heap, HL_EV_CACHE_HIT, "tcache bin of class", ind, ncached, ncached - 1, *tc->head[ind]);
			return sl_cbin_pop(tc, ind);
		}
		HL_EV(s->heap, HL_EV_CACHE_MISS, "tcache bin of class", ind, usize, NULL);
		if (ind < s->sc.nbins)
			sl_tcache_fill(s, tc, ind);
		if (sl_cbin_ncached(tc, ind))
			return sl_cbin_pop(tc, ind);
	}
	sl_decay_ticks(tc, 1);
	if (ind < s->sc.nbins) {
		void *p = NULL;
		HL_EV(s->heap, HL_EV_LOOK, "no tcache: one region straight from the slab bin of class", ind, usize, NULL);
		return sl_bin_take(s, tc->arena, ind, &p, 1) ? p : NULL;
	}
	HL_EV(s->heap, HL_EV_LOOK, "large: an extent of its own, class", ind, usize, NULL);
	void *p = sl_large_alloc(s, tc->arena, ind, s->sc.page);
	sl_bg_maybe_kick(s);
	return p;
}

static __attribute__((noinline)) void *sl_malloc_slow(sl_state_t *s, hl_thread_t *t, size_t n)
{
	sl_tcache_t *tc = sl_tcache_of(t);
	if (!tc && !(tc = sl_tcache_create(s, t)))
		return NULL;
	unsigned ind = sl_size2index_fast(&s->sc, n);
	size_t usize = sl_index2size(&s->sc, ind);
	void *p = sl_malloc_miss(s, tc, ind, usize);
	if (p)
		sl_tick(s, tc, usize, SL_GC_ALLOC);
	return p;
}

/* malloc: a tcache hit (slab_fast.h), or the slow path.  Built twice
 * (event.h, "Quiet copies"): sl_malloc with its event, sl_malloc_quiet
 * without. */
HL_EV_BODY void *sl_malloc_body(void *st, hl_thread_t *t, size_t n, bool listening)
{
	sl_state_t *s = st;
	sl_tcache_t *tc = t->policy_tls; /* NULL on a record a host made */
	long ind = tc ? sl_cached_class(s, tc, n) : -1;
	if (HL_LIKELY(ind >= 0)) {
		if (listening) {
			unsigned ncached = sl_cbin_ncached(tc, ind);
			HL_EV_COUNT(s->heap, HL_EV_CACHE_HIT, "tcache bin of class", ind, ncached, ncached - 1, *tc->head[ind]);
		}
		void *p = sl_cache_take(tc, (size_t)ind);   /* before the tick: a GC may flush this bin */
		sl_tick(s, tc, s->sc.size[ind], SL_GC_ALLOC);
		return p;
	}
	return sl_malloc_slow(s, t, n);
}
HL_EV_MALLOC_TWICE(sl_malloc)

static void *sl_memalign(void *st, hl_thread_t *t, size_t align, size_t n)
{
	sl_state_t *s = st;
	if (align <= s->sc.page) {
		size_t want = hl_align_up(n, align);
		unsigned ind = sl_size2index(&s->sc, want);
		return sl_malloc(s, t, sl_index2size(&s->sc, ind));
	}
	sl_tcache_t *tc = sl_tcache_of(t);
	if (!tc && !(tc = sl_tcache_create(s, t)))
		return NULL;
	unsigned ind = sl_size2index(&s->sc, n < s->sc.large_min ? s->sc.large_min : n);
	sl_decay_ticks(tc, 1);
	void *p = sl_large_alloc(s, tc->arena, ind, align);
	sl_bg_maybe_kick(s);
	if (p)
		sl_tick(s, tc, sl_index2size(&s->sc, ind), SL_GC_ALLOC);
	return p;
}

/* ---- free --------------------------------------------------------------- */

static __attribute__((noreturn, noinline)) void sl_bad(const char *what, const void *p)
{
	hl_fatal(&hl_policy_slab, what, p);
}

/* Debug mode: the pointer must not already sit in this thread's cache. */
static void sl_debug_scan(const sl_tcache_t *tc, unsigned ind, const void *p)
{
	for (unsigned i = 0, n = sl_cbin_ncached(tc, ind); i < n; i++)
		if (tc->head[ind][i] == p)
			sl_bad("double free (block already in the thread cache)", p);
}

/* What the slow path does with live block @p p of extent @p e: onto the
 * tcache @p tc (NULL: none could be made), a full bin flushed first, or
 * back to its slab or arena.  Counts no bytes: the caller does, after it. */
static void sl_free_miss(sl_state_t *s, sl_tcache_t *tc, sl_extent_t *e, void *p)
{
	unsigned ind = e->szind;
	if (tc && tc->enabled && ind < s->nhbins) {
		if (s->debug)
			sl_debug_scan(tc, ind, p);
		if (sl_cbin_bits(tc->head[ind]) == tc->bins[ind].full_bits)
			sl_tcache_flush(s, tc, ind, s->ncached_max[ind] / 2);
		if (e->state == SL_LARGE)
			e->zeroed = SL_ZEROED_CACHED;   /* a calloc from the cache memsets it */
		sl_cbin_push(tc, ind, p);
		unsigned ncached = sl_cbin_ncached(tc, ind);
		HL_EV_COUNT(s->heap, HL_EV_CACHE_PUT, "tcache bin of class", ind, ncached - 1, ncached, p);
		return;
	}
	if (tc)
		sl_decay_ticks(tc, 1);
	HL_EV(s->heap, HL_EV_LOOK, e->state == SL_SLAB ? "no tcache: region back to its slab, class" : "large: extent freed, class", ind, sl_extent_usize(&s->sc, e), p);
	if (e->state == SL_SLAB)
		sl_bin_give(s, ind, &p, 1);
	else
		sl_large_free(s, e);
}

/* free when it is no tcache hit: names the misuse it finds, else caches
 * @p p (a full bin flushed first, or debug mode's scan) or gives it back. */
static __attribute__((noinline)) void sl_free_slow(sl_state_t *s, hl_thread_t *t, void *p)
{
	sl_extent_t *e = sl_rtree_get(&s->rtree, (uintptr_t)p);
	if (HL_UNLIKELY(e == NULL))
		sl_bad("free of a pointer this heap does not own", p);
	if (e->state == SL_SLAB) {
		int idx = sl_region_index(&s->sc, e, (uintptr_t)p);
		if (HL_UNLIKELY(idx < 0))
			sl_bad("free of a pointer that is not the start of a region", p);
		if (HL_UNLIKELY(!hl_bit_get(e->bitmap, (unsigned)idx)))
			sl_bad("double free (region is already free in its slab)", p);
	}
	if (e->state == SL_LARGE && (uintptr_t)p != e->base)
		sl_bad("free of a pointer inside a large block", p);
	if (e->state != SL_LARGE && e->state != SL_SLAB)
		sl_bad("free of a pointer that is not allocated", p);
	sl_tcache_t *tc = sl_tcache_of(t);
	if (!tc)
		tc = sl_tcache_create(s, t);
	size_t usize = sl_extent_usize(&s->sc, e);
	sl_free_miss(s, tc, e, p);
	if (tc)
		sl_tick(s, tc, usize, SL_GC_DALLOC);
}

/* free: a push on the tcache (slab_fast.h), or the slow path; built twice
 * as malloc is.  Debug mode takes the slow path, which scans the bin. */
HL_EV_BODY void sl_free_body(void *st, hl_thread_t *t, void *p, bool listening)
{
	sl_state_t *s = st;
	sl_tcache_t *tc = t->policy_tls; /* NULL on a record a host made */
	long ind = HL_LIKELY(!s->debug && tc != NULL) ? sl_cacheable_class(s, tc, p) : -1;
	if (HL_LIKELY(ind >= 0)) {
		sl_cache_put(tc, (size_t)ind, p);
		if (listening) {
			unsigned ncached = sl_cbin_ncached(tc, ind);
			HL_EV_COUNT(s->heap, HL_EV_CACHE_PUT, "tcache bin of class", ind, ncached - 1, ncached, p);
		}
		sl_tick(s, tc, s->sc.size[ind], SL_GC_DALLOC);
		return;
	}
	sl_free_slow(s, t, p);
}
HL_EV_FREE_TWICE(sl_free)

/* ---- realloc ------------------------------------------------------------ */

/* Resizes a large block in place when its extent can shrink or grow into
 * the free extent after it (jemalloc's large_ralloc_no_move). */
static bool sl_large_resize(sl_state_t *s, sl_extent_t *e, unsigned ind)
{
	size_t usize = sl_index2size(&s->sc, ind), old = sl_extent_usize(&s->sc, e);
	if (usize == old)
		return true;
	sl_arena_t *a = sl_arena_get(s, e->arena);
	size_t want = sl_large_extent_size(&s->sc, usize);
	pthread_mutex_lock(&a->ext_lock);
	bool ok = usize < old ? sl_extent_shrink(s, a, e, want) : sl_extent_expand(s, a, e, want);
	HL_EV_COUNT(s->heap, ok ? HL_EV_LOOK : HL_EV_REJECT, ok ? "large extent resized in place" : "large extent cannot be resized in place", ind, old, usize, (void *)e->base);
	if (ok) {
		a->st.large_bytes += usize;
		a->st.large_bytes -= old;
		e->szind = (uint16_t)ind;
	}
	pthread_mutex_unlock(&a->ext_lock);
	sl_bg_maybe_kick(s);
	return ok;
}

/* realloc counts its bytes as jemalloc 5.3's do_rallocx does: the new
 * block's as allocated, then the old block's as freed, after the call, so a
 * GC step runs on the state the call left, never between the malloc and
 * the free of a move.  For a move, SL_GC_HOLD lifts both counters for the
 * length of it, above all it can count or sl_decay_ticks() can lower them
 * by: the malloc and the free inside count exactly those bytes and run no
 * event, which dropping the lift runs when due. */
#define SL_GC_HOLD ((int64_t)3 << 61)
_Static_assert(SL_GC_HOLD > SL_TICKS_DUE + SL_TCACHE_GC_BYTES &&
	       SL_GC_HOLD <= INT64_MAX - SL_TCACHE_GC_BYTES, "the lift clears a decay check and fits");

static void sl_realloc_count(sl_state_t *s, sl_tcache_t *tc, size_t usize, size_t old)
{
	sl_tick(s, tc, usize, SL_GC_ALLOC);
	sl_tick(s, tc, old, SL_GC_DALLOC);
}

static void *sl_realloc_move(sl_state_t *s, hl_thread_t *t, void *p, size_t old, size_t n)
{
	sl_tcache_t *tc = sl_tcache_of(t);
	if (!tc && !(tc = sl_tcache_create(s, t)))
		return NULL;
	tc->gc_bytes[SL_GC_ALLOC] += SL_GC_HOLD;
	tc->gc_bytes[SL_GC_DALLOC] += SL_GC_HOLD;
	void *q = hl_realloc_move(s, t, p, old, n, sl_malloc, sl_free);
	tc->gc_bytes[SL_GC_ALLOC] -= SL_GC_HOLD;
	tc->gc_bytes[SL_GC_DALLOC] -= SL_GC_HOLD;
	sl_realloc_count(s, tc, 0, 0);   /* the events the move made due */
	return q;
}

static void *sl_realloc(void *st, hl_thread_t *t, void *p, size_t n)
{
	sl_state_t *s = st;
	sl_extent_t *e = sl_rtree_get(&s->rtree, (uintptr_t)p);
	if (!e || (e->state == SL_LARGE && e->base != (uintptr_t)p) || (e->state != SL_LARGE && e->state != SL_SLAB))
		sl_bad("realloc of a pointer that is not allocated", p);
	unsigned ind = sl_size2index(&s->sc, n);
	size_t old = sl_extent_usize(&s->sc, e);
	if (ind == e->szind || (e->state == SL_LARGE && ind >= s->sc.nbins && sl_large_resize(s, e, ind))) {
		sl_tcache_t *tc = sl_tcache_of(t);
		if (tc || (tc = sl_tcache_create(s, t)))
			sl_realloc_count(s, tc, sl_index2size(&s->sc, ind), old);
		return p;
	}
	return sl_realloc_move(s, t, p, old, n);
}

/* ---- queries ------------------------------------------------------------ */

static size_t sl_usable_size(void *st, const void *p)
{
	sl_state_t *s = st;
	sl_extent_t *e = sl_rtree_get(&s->rtree, (uintptr_t)p);
	if (!e)
		return 0;
	return e->state == SL_SLAB || e->state == SL_LARGE ? sl_extent_usize(&s->sc, e) : 0;
}

/* calloc under jemalloc 5.3: a small region is cleared with memset
 * (arena_malloc_small, tcache_alloc_small), and so is a large block that a
 * thread cache hands out (tcache_alloc_large); a large block an arena hands
 * out (large_palloc with zero) is cleared only if its extent is not zeroed,
 * and then by MADV_DONTNEED over the whole extent (src/extent.c,
 * extent_commit_zero; src/ehooks.c, ehooks_default_zero_impl), which
 * touches no page and drops those that were resident: the model does that
 * purge here and answers true.  A purge that fails leaves it to memset, as
 * jemalloc does. */
static bool sl_fresh_zero(void *st, const void *p)
{
	sl_state_t *s = st;
	sl_extent_t *e = sl_rtree_get(&s->rtree, (uintptr_t)p);
	if (!e || e->state != SL_LARGE || e->base != (uintptr_t)p || e->zeroed == SL_ZEROED_CACHED)
		return false;
	if (e->zeroed == SL_ZEROED_YES)
		return true;
	HL_EV(s->heap, HL_EV_PURGE, "calloc: extent zeroed by MADV_DONTNEED (ehooks_zero)", -1, e->size, p);
	return hl_os_purge(s->os, (void *)e->base, e->size) == 0;
}

static bool sl_owns(void *st, const void *p)
{
	sl_state_t *s = st;
	return hl_os_contains(s->os, p);
}

/* malloc_trim: purges every dirty and muzzy page of every arena now. */
static size_t sl_trim(void *st, size_t pad)
{
	sl_state_t *s = st;
	size_t pages = 0;
	(void)pad;
	for (unsigned i = 0; i <= SL_HUGE_ARENA; i++) {
		sl_arena_t *a = sl_arena_get(s, i);
		if (!a)
			continue;
		pthread_mutex_lock(&a->ext_lock);
		pages += a->esets[0].npages + a->esets[1].npages;
		sl_purge(s, a, SL_DIRTY, a->esets[0].npages, true);
		sl_purge(s, a, SL_MUZZY, a->esets[1].npages, true);
		pthread_mutex_unlock(&a->ext_lock);
	}
	return pages << s->sc.lg_page;
}

/* ---- life cycle --------------------------------------------------------- */

/* Capacity of every tcache bin, and the slots of one tcache. */
static void sl_tcache_shape(sl_state_t *s)
{
	const sl_sc_t *sc = &s->sc;
	unsigned nb = sc->nbins;
	while (nb < SL_MAX_NHBINS && sl_index2size(sc, nb) <= s->tcache_max)
		nb++;
	s->nhbins = nb;
	s->tc_slots = 0;
	for (unsigned i = 0; i < nb; i++) {
		unsigned n = SL_TCACHE_LARGE;
		if (i < sc->nbins) {
			n = 2 * sc->nregs[i];
			n = n < SL_TCACHE_SMALL_MIN ? SL_TCACHE_SMALL_MIN : n;
			n = n > SL_TCACHE_SMALL_MAX ? SL_TCACHE_SMALL_MAX : n;
		}
		s->ncached_max[i] = (uint16_t)(s->tcache_on ? n : 0);
		s->tc_slots += s->ncached_max[i];
	}
}

static void sl_read_options(sl_state_t *s, const hl_conf_t *conf)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int64_t na = hl_conf_int(conf, "narenas");
	if (na == 0)
		na = ncpu > 1 ? 4 * ncpu : 1;
	s->narenas = (unsigned)(na > SL_MAX_ARENAS ? SL_MAX_ARENAS : na);
	s->tcache_on = hl_conf_bool(conf, "tcache");
	s->tcache_max = hl_conf_size(conf, "tcache_max");
	s->dirty_ms = hl_conf_int(conf, "dirty_decay_ms");
	s->muzzy_ms = hl_conf_int(conf, "muzzy_decay_ms");
	s->bg_on = hl_conf_bool(conf, "background_thread");
	/* As jemalloc: a threshold below the smallest large class is no threshold. */
	size_t over = hl_conf_size(conf, "oversize_threshold");
	s->oversize = over < s->sc.large_min ? 0 : over;
}

static void sl_init_locks(sl_state_t *s)
{
	pthread_mutex_init(&s->arenas_lock, NULL);
}

static void *sl_init(hl_heap_t *h, const hl_conf_t *conf)
{
	const sl_sc_t *sc = sl_sc_get();
	if (sc->nregs[0] > SL_BITMAP_WORDS * 64) {
		hl_set_error("slab: pages of %zu bytes give slabs too many regions", sc->page);
		return NULL;
	}
	hl_os_t *os = hl_heap_os(h);
	sl_state_t *s = hl_policy_state_new(h, sizeof *s);
	if (!s)
		return NULL;
	s->heap = h;
	s->os = os;
	s->sc = *sc;
	s->debug = hl_heap_debug(h);
	sl_read_options(s, conf);
	sl_tcache_shape(s);
	hl_meta_init(&s->chunk_pool, os, sizeof(sl_chunk_t));
	hl_meta_init_private(&s->tc_pool, os, sizeof(sl_tcache_t) + s->tc_slots * sizeof(void *));
	sl_init_locks(s);
	sl_rtree_init(&s->rtree, sc->lg_page);
	if (!sl_arena_create(s, 0) || (s->bg_on && sl_bg_start(s) < 0)) {
		hl_set_error("slab: cannot create arena 0 or the background thread");
		return NULL;
	}
	return s;
}

static void sl_destroy(void *st)
{
	sl_bg_stop(st);
}

static void sl_thread_exit(void *st, hl_thread_t *t)
{
	sl_tcache_t *tc = sl_tcache_of(t);
	if (!tc)
		return;
	sl_arena_t *arena = tc->arena;
	sl_tcache_destroy(st, tc);
	hl_meta_free(&((sl_state_t *)st)->tc_pool, tc);
	if (arena)
		sl_decay_thread_ended(st, arena);
	t->policy_tls = (void *)&sl_no_tcache;
}

/* ---- fork --------------------------------------------------------------- */

static hl_meta_pool_t *sl_pool(sl_state_t *s, int i)
{
	return i == 0 ? &s->chunk_pool : &s->tc_pool;
}

static void sl_fork_prepare(void *st)
{
	sl_state_t *s = st;
	hl_background_fork_prepare(&s->bg);
	sl_lock_all(s);
	pthread_mutex_lock(&s->rtree.lock);
	for (int i = 0; i < 2; i++)
		pthread_mutex_lock(&sl_pool(s, i)->lock);
}

static void sl_fork_parent(void *st)
{
	sl_state_t *s = st;
	for (int i = 2; i-- > 0;)
		pthread_mutex_unlock(&sl_pool(s, i)->lock);
	pthread_mutex_unlock(&s->rtree.lock);
	sl_unlock_all(s);
	hl_background_fork_parent(&s->bg);
}

/* In the child only the forking thread lives.  The other threads' caches
 * are dropped, not flushed: one of those threads may have been halfway
 * through a push or pop when the fork came, and flushing its cache then
 * frees a block twice or one still in use (bench/stress found it).  Their
 * blocks stay cached for good, as jemalloc 5.3's tsd_postfork_child keeps
 * only the forking thread's tsd and leaves the others' tcaches alone.  The
 * background thread is not started again:
 * jemalloc 5.3 switches background threads off in a fork child
 * (background_thread_postfork_child), so there decay runs on the child's
 * own allocator activity, as with background_thread:false. */
static void sl_fork_child(void *st)
{
	sl_state_t *s = st;
	for (int i = 0; i < 2; i++)
		hl_meta_fork_child(sl_pool(s, i));
	pthread_mutex_init(&s->rtree.lock, NULL);
	sl_arena_t *a;
	for (unsigned i = 0; (a = sl_arena_nth(s, i)); i++) {
		pthread_mutex_init(&a->ext_lock, NULL);
		hl_meta_fork_child(&a->ext_pool);
		for (unsigned b = 0; b < s->sc.nbins; b++)
			pthread_mutex_init(&a->bins[b].lock, NULL);
	}
	sl_init_locks(s);
	pthread_t self = pthread_self();
	for (sl_tcache_t *tc = s->tcaches, *next; tc; tc = next) {
		next = tc->next;
		if (!pthread_equal(tc->owner, self))
			sl_tcache_unlink(s, tc);
	}
	hl_background_fork_child(&s->bg);
	s->bg_on = false;
}

/* heaplab diagnose's candidates: knobs that change how memory comes back,
 * each with what the real allocator needs to do the same. */
static const hl_whatif_t sl_whatif[] = {
	{ "", "LD_PRELOAD=" HL_SYSTEM_LIBDIR "libjemalloc.so.2" },
	{ "narenas:2,background_thread:on",
	  "LD_PRELOAD=" HL_SYSTEM_LIBDIR "libjemalloc.so.2 MALLOC_CONF=narenas:2,background_thread:true" },
	{ "dirty_decay_ms:0", "LD_PRELOAD=" HL_SYSTEM_LIBDIR "libjemalloc.so.2 MALLOC_CONF=dirty_decay_ms:0" },
	{ NULL, NULL },
};

/* Configurations the fuzzers run beside the defaults (core/policy.h). */
static const char *const sl_variants[] = {
	"tcache:off,dirty_decay_ms:0",
	"narenas:2,tcache_max:1K,oversize_threshold:64K",
	"dirty_decay_ms:0,muzzy_decay_ms:0,tcache_max:64K",
	NULL,
};

const hl_policy_t hl_policy_slab = {
	.name = "slab",
	.summary = "jemalloc: size classes, headerless slabs, extents, arenas, tcache, decay",
	.options = sl_options,
	.fidelity_family = "jemalloc",
	.whatif = sl_whatif,
	.variants = sl_variants,
	.tls_empty = &sl_no_tcache,
	.init = sl_init,
	.destroy = sl_destroy,
	.malloc = sl_malloc,
	.free = sl_free,
	.malloc_quiet = sl_malloc_quiet,
	.free_quiet = sl_free_quiet,
	.realloc = sl_realloc,
	.memalign = sl_memalign,
	.usable_size = sl_usable_size,
	.fresh_zero = sl_fresh_zero,
	.owns = sl_owns,
	.trim = sl_trim,
	.reset = NULL,
	.stats = sl_stats,
	.snapshot = sl_snapshot,
	.check = sl_check,
	.walk = sl_walk,
	.thread_exit = sl_thread_exit,
	.fork_prepare = sl_fork_prepare,
	.fork_parent = sl_fork_parent,
	.fork_child = sl_fork_child,
};
