/*
 * bins_arena.c -- the arena algorithm of policy `bins`: bins, splitting,
 * coalescing, the unsorted scan, best fit and the top chunk.  Every
 * function here runs with the arena's lock held.  See bins.h for the
 * chunk layout and the invariants.
 */
#include "bins_tcache.h"
#include <errno.h>
#include <string.h>


void bn_lock(bn_arena_t *a)
{
	if (hl_lock(&a->lock))
		__atomic_fetch_add(&a->contention, 1, __ATOMIC_RELAXED);
}

void bn_arena_init(bn_arena_t *a, unsigned index)
{
	hl_lock_init(&a->lock);
	a->index = index;
	a->aflag = index ? BN_A : 0;
	for (unsigned i = 0; i < BN_NBINS; i++) {
		bn_chunk_t *b = &a->bins[i];
		b->fd = b->bk = b;
		b->fd_nextsize = b;   /* non-NULL: a head is never a same-size follower */
	}
	a->next = a;
}

bn_arena_t *bn_arena_new(bn_state_t *st)
{
	bn_arena_t *a = hl_meta_alloc(&st->arena_pool);
	if (!a)
		return NULL;
	bn_arena_init(a, st->narenas);
	a->owner = st->heap;
	if (!bn_sys_first_heap(st, a)) {
		hl_meta_free(&st->arena_pool, a);
		return NULL;
	}
	return a;
}

/** Writes a chunk header of size @p sz with P set, tagged for arena @p a. */
static inline void bn_head(bn_arena_t *a, bn_chunk_t *c, size_t sz)
{
	c->size = sz | BN_P | a->aflag;
}

/* --- filing free chunks ---------------------------------------------------- */

/** Pushes @p c (of size @p sz) at the front of the unsorted bin; a large
 *  chunk is marked as outside any skip list. */
static void bn_to_unsorted(bn_arena_t *a, bn_chunk_t *c, size_t sz)
{
	bn_chunk_t *b = bn_bin(a, BN_UNSORTED), *fwd = b->fd;
	if (HL_UNLIKELY(fwd->bk != b))
		hl_fatal(BN, "free(): corrupted unsorted chunks", bn_chunk2mem(c));
	c->bk = b;
	c->fd = fwd;
	fwd->bk = c;
	b->fd = c;
	if (!bn_is_small(sz))
		c->fd_nextsize = c->bk_nextsize = NULL;
}

/** Inserts @p v (size @p sz >= 1024) into its large bin, keeping the bin
 *  sorted largest first and the skip list over distinct sizes. */
static void bn_large_insert(bn_arena_t *a, bn_chunk_t *v, size_t sz)
{
	bn_chunk_t *b = bn_bin(a, bn_large_index(sz)), *fwd = b->fd, *bck = b;
	if (fwd == b) {                          /* empty bin */
		v->fd_nextsize = v->bk_nextsize = v;
	} else if (sz < bn_csize(b->bk)) {       /* smaller than everything */
		bn_chunk_t *largest = b->fd;
		fwd = b;
		bck = b->bk;
		v->fd_nextsize = largest;
		v->bk_nextsize = largest->bk_nextsize;
		largest->bk_nextsize = v;
		v->bk_nextsize->fd_nextsize = v;
	} else {
		while (sz < bn_csize(fwd))
			fwd = fwd->fd_nextsize;
		if (sz == bn_csize(fwd)) {           /* join behind the size's leader */
			fwd = fwd->fd;
			v->fd_nextsize = v->bk_nextsize = NULL;
		} else {
			v->fd_nextsize = fwd;
			v->bk_nextsize = fwd->bk_nextsize;
			if (HL_UNLIKELY(fwd->bk_nextsize->fd_nextsize != fwd))
				hl_fatal(BN, "malloc(): largebin double linked list corrupted (nextsize)", bn_chunk2mem(fwd));
			fwd->bk_nextsize = v;
			v->bk_nextsize->fd_nextsize = v;
		}
		bck = fwd->bk;
		if (HL_UNLIKELY(bck->fd != fwd))
			hl_fatal(BN, "malloc(): largebin double linked list corrupted (bk)", bn_chunk2mem(fwd));
	}
	v->bk = bck;
	v->fd = fwd;
	fwd->bk = v;
	bck->fd = v;
}

/** Files an unsorted chunk into its small or large bin. */
static void bn_place(bn_arena_t *a, bn_chunk_t *v, size_t sz)
{
	unsigned i = bn_bin_index(sz);
	if (bn_is_small(sz)) {
		bn_chunk_t *b = bn_bin(a, i), *fwd = b->fd;
		v->bk = b;
		v->fd = fwd;
		fwd->bk = v;
		b->fd = v;
	} else {
		bn_large_insert(a, v, sz);
	}
	bn_mark_bin(a, i);
}

/** Hands out @p v (size @p sz) for a request of @p nb, splitting off the
 *  remainder into the unsorted bin when it can stand as a chunk. */
static void *bn_split_out(bn_arena_t *a, bn_chunk_t *v, size_t sz, size_t nb)
{
	size_t rest = sz - nb;
	if (rest < BN_MINSIZE) {
		bn_set_inuse_at(v, sz);
		v->size |= a->aflag;
		return bn_chunk2mem(v);
	}
	bn_chunk_t *r = bn_at(v, nb);
	HL_EV_SIZES(a->owner, HL_EV_SPLIT, "chunk (remainder to the unsorted bin)", -1, nb, rest, bn_chunk2mem(v));
	bn_to_unsorted(a, r, rest);
	if (bn_is_small(nb))
		a->last_remainder = r;
	v->size = nb | (v->size & BN_P) | a->aflag;
	bn_head(a, r, rest);
	bn_set_foot(r, rest);
	return bn_chunk2mem(v);
}

/* --- the rungs of malloc ---------------------------------------------------- */

/** Takes the chunk at the tail of small bin @p i and moves more of the
 *  same size into the thread's cache while it has room. */
static void *bn_from_smallbin(bn_state_t *st, bn_arena_t *a, bn_tcache_t *tc, size_t nb)
{
	bn_chunk_t *b = bn_bin(a, bn_small_index(nb)), *v = b->bk;
	if (v == b)
		return NULL;
	for (bn_chunk_t *c = v;; c = b->bk) {
		bn_chunk_t *bck = c->bk;
		if (HL_UNLIKELY(bck->fd != c))
			hl_fatal(BN, "malloc(): smallbin double linked list corrupted", bn_chunk2mem(c));
		bn_set_inuse_at(c, nb);
		c->size |= a->aflag;
		b->bk = bck;
		bck->fd = b;
		if (c != v)
			bn_tcache_put(st, tc, c, bn_tc_index(nb));
		HL_EV(a->owner, c == v ? HL_EV_EXACT_FIT : HL_EV_CACHE_FILL, c == v ? "small bin" : "tcache from small bin", c == v ? (long)bn_small_index(nb) : (long)bn_tc_index(nb), nb, bn_chunk2mem(c));
		if (b->bk == b || !bn_tcache_room(st, tc, bn_tc_index(nb)))
			break;
	}
	return bn_chunk2mem(v);
}

/** Same as bn_from_smallbin for a fastbin (fastbins:on). */
static void *bn_from_fastbin(bn_state_t *st, bn_arena_t *a, bn_tcache_t *tc, size_t nb)
{
	unsigned i = bn_fast_index(nb);
	bn_chunk_t *v = a->fast[i];
	if (!v)
		return NULL;
	if (HL_UNLIKELY(bn_csize(v) != nb))
		hl_fatal(BN, "malloc(): memory corruption (fast)", bn_chunk2mem(v));
	a->fast[i] = v->fd;
	HL_EV(a->owner, HL_EV_EXACT_FIT, "fastbin", i, nb, bn_chunk2mem(v));
	while (a->fast[i] && bn_tcache_room(st, tc, bn_tc_index(nb))) {
		bn_chunk_t *c = a->fast[i];
		a->fast[i] = c->fd;
		bn_tcache_put(st, tc, c, bn_tc_index(nb));
		HL_EV(a->owner, HL_EV_CACHE_FILL, "tcache from fastbin", bn_tc_index(nb), nb, bn_chunk2mem(c));
	}
	((bn_tentry_t *)bn_chunk2mem(v))->key = 0;
	return bn_chunk2mem(v);
}

/** Sanity checks glibc makes on each chunk it takes off the unsorted bin. */
static void bn_check_unsorted(bn_state_t *st, bn_arena_t *a, bn_chunk_t *v, size_t sz)
{
	bn_chunk_t *nx = bn_at(v, sz);
	(void)st;
	if (HL_UNLIKELY(sz < BN_MINSIZE || sz > a->system))
		hl_fatal(BN, "malloc(): invalid size (unsorted)", bn_chunk2mem(v));
	if (HL_UNLIKELY(bn_csize(nx) < 16 || bn_csize(nx) > a->system))
		hl_fatal(BN, "malloc(): invalid next size (unsorted)", bn_chunk2mem(v));
	if (HL_UNLIKELY(nx->prev_size != sz))
		hl_fatal(BN, "malloc(): mismatching next->prev_size (unsorted)", bn_chunk2mem(v));
	if (HL_UNLIKELY(v->bk->fd != v || v->fd != bn_bin(a, BN_UNSORTED)))
		hl_fatal(BN, "malloc(): unsorted double linked list corrupted", bn_chunk2mem(v));
	if (HL_UNLIKELY(bn_prev_inuse(nx)))
		hl_fatal(BN, "malloc(): invalid next->prev_inuse (unsorted)", bn_chunk2mem(v));
}

/** Walks the unsorted bin from its tail: returns an exact fit (or the last
 *  remainder for a small request), filing every other chunk into its bin.
 *  Exact fits go to the tcache while it has room; then one is returned. */
static void *bn_scan_unsorted(bn_state_t *st, bn_arena_t *a, bn_tcache_t *tc, size_t nb)
{
	bn_chunk_t *ub = bn_bin(a, BN_UNSORTED), *v;
	unsigned tci = nb <= BN_TC_MAX_CHUNK ? bn_tc_index(nb) : BN_TC_BINS;
	bool cached = false;
	int iters = 0;
	while ((v = ub->bk) != ub) {
		size_t sz = bn_csize(v);
		bn_check_unsorted(st, a, v, sz);
		if (bn_is_small(nb) && v->bk == ub && v == a->last_remainder && sz > nb + BN_MINSIZE) {
			ub->bk = ub->fd = ub;
			HL_EV(a->owner, HL_EV_LOOK, "unsorted bin: the last remainder, split", -1, sz, bn_chunk2mem(v));
			return bn_split_out(a, v, sz, nb);
		}
		ub->bk = v->bk;
		v->bk->fd = ub;
		if (sz == nb) {
			HL_EV(a->owner, bn_tcache_room(st, tc, tci) ? HL_EV_CACHE_FILL : HL_EV_EXACT_FIT, bn_tcache_room(st, tc, tci) ? "tcache from unsorted bin" : "unsorted bin", -1, sz, bn_chunk2mem(v));
			bn_set_inuse_at(v, sz);
			v->size |= a->aflag;
			if (!bn_tcache_room(st, tc, tci))
				return bn_chunk2mem(v);
			bn_tcache_put(st, tc, v, tci);
			cached = true;
			continue;
		}
		bn_place(a, v, sz);
		HL_EV(a->owner, HL_EV_SORT, bn_is_small(sz) ? "unsorted chunk into small bin" : "unsorted chunk into large bin", bn_bin_index(sz), sz, bn_chunk2mem(v));
		if (++iters >= BN_MAX_ITERS)
			break;
	}
	if (cached)
		HL_EV_COUNT(a->owner, HL_EV_LIST_POP, "tcache bin, just filled by the scan", tci, tc->counts[tci], tc->counts[tci] - 1, tc->entries[tci]);
	return cached ? bn_tcache_get(tc, tci) : NULL;
}

/** Best fit within the request's own large bin. */
static void *bn_from_largebin(bn_arena_t *a, size_t nb)
{
	bn_chunk_t *b = bn_bin(a, bn_large_index(nb)), *v = b->fd;
	if (v == b || bn_csize(v) < nb)
		return NULL;
	v = v->bk_nextsize;                 /* smallest size in the bin */
	while (bn_csize(v) < nb)
		v = v->bk_nextsize;
	if (v != b->bk && bn_csize(v->fd) == bn_csize(v))
		v = v->fd;                      /* spare the skip-list leader */
	size_t sz = bn_csize(v);
	HL_EV(a->owner, HL_EV_BEST_FIT, "large bin", bn_large_index(nb), sz, bn_chunk2mem(v));
	bn_unlink(v);
	return bn_split_out(a, v, sz, nb);
}

/** The next non-empty bin above the request's, found through the binmap;
 *  its smallest chunk is split. */
static void *bn_from_binmap(bn_arena_t *a, size_t nb)
{
	unsigned i = bn_bin_index(nb) + 1;
	while (i < BN_NBINS) {
		uint32_t word = a->binmap[i >> 5] & (~0u << (i & 31));
		if (!word) {
			i = (i | 31) + 1;
			continue;
		}
		i = (i & ~31u) + (unsigned)__builtin_ctz(word);
		bn_chunk_t *b = bn_bin(a, i), *v = b->bk;
		if (v == b) {                   /* stale bit: clear, go on */
			a->binmap[i >> 5] &= ~(1u << (i & 31));
			i++;
			continue;
		}
		size_t sz = bn_csize(v);
		HL_EV(a->owner, HL_EV_SCAN, "binmap: smallest chunk of the next non-empty bin", i, sz, bn_chunk2mem(v));
		bn_unlink(v);
		return bn_split_out(a, v, sz, nb);
	}
	return NULL;
}

/** Splits the top chunk when it is large enough. */
static void *bn_from_top(bn_arena_t *a, size_t nb)
{
	bn_chunk_t *v = a->top;
	if (!v)
		return NULL;
	size_t sz = bn_csize(v);
	if (HL_UNLIKELY(sz > a->system))
		hl_fatal(BN, "malloc(): corrupted top size", bn_chunk2mem(v));
	if (sz < nb + BN_MINSIZE)
		return NULL;
	bn_chunk_t *r = bn_at(v, nb);
	HL_EVENT(a->owner, HL_EV_SPLIT, "top", -1, nb, sz - nb, sz, sz - nb, bn_chunk2mem(v));
	a->top = r;
	bn_head(a, v, nb);
	bn_head(a, r, sz - nb);
	return bn_chunk2mem(v);
}

/** glibc's sysmalloc: memory for a request no bin nor the top could
 *  serve: a mapping of its own at or above the mmap threshold, else a
 *  grown top split for @p nb (the remains of a fenced-off old top are
 *  freed first), else a mapping after all.  NULL with ENOMEM. */
static void *bn_sysmalloc(bn_state_t *st, bn_arena_t *a, size_t nb)
{
	bool mapped_first = nb >= bn_mmap_threshold(st) &&
		__atomic_load_n(&st->n_mmaps, __ATOMIC_RELAXED) < __atomic_load_n(&st->mmap_max, __ATOMIC_RELAXED);
	void *m;
	if (mapped_first && (m = bn_mmap_chunk(st, nb))) {
		HL_EV(st->heap, HL_EV_MAP, "sysmalloc: chunk at or above the mmap threshold", -1, nb, m);
		return m;
	}
	bn_chunk_t *old_top;
	bool grown = bn_sys_grow(st, a, nb, &old_top);
	if (old_top)
		bn_int_free(st, a, old_top, true);
	if (grown && (m = bn_from_top(a, nb)))
		return m;
	if (!mapped_first && (m = bn_mmap_chunk(st, nb))) {
		HL_EV(st->heap, HL_EV_MAP, "sysmalloc: the top could not grow", -1, nb, m);
		return m;
	}
	errno = ENOMEM;
	return NULL;
}

void *bn_int_malloc(bn_state_t *st, bn_arena_t *a, bn_tcache_t *tc, size_t nb)
{
	void *m;
	if (nb <= st->max_fast && (m = bn_from_fastbin(st, a, tc, nb)))
		return m;
	if (bn_is_small(nb)) {
		if ((m = bn_from_smallbin(st, a, tc, nb)))
			return m;
	} else if (a->have_fast) {
		bn_consolidate(st, a);
	}
	for (;;) {
		if ((m = bn_scan_unsorted(st, a, tc, nb)))
			return m;
		if (!bn_is_small(nb) && (m = bn_from_largebin(a, nb)))
			return m;
		if ((m = bn_from_binmap(a, nb)) || (m = bn_from_top(a, nb)))
			return m;
		if (!a->have_fast)
			return bn_sysmalloc(st, a, nb);
		bn_consolidate(st, a);
	}
}

/* --- free ------------------------------------------------------------------ */

/** Merges free chunk @p c (size @p sz, tags not yet written) with its free
 *  neighbours and files the result: into top or the unsorted bin. */
static bn_chunk_t *bn_merge(bn_arena_t *a, bn_chunk_t *c, size_t sz)
{
	bn_chunk_t *nx = bn_at(c, sz);
	if (!bn_prev_inuse(c)) {
		size_t ps = c->prev_size;
		HL_EV_SIZES(a->owner, HL_EV_MERGE, "with the previous free chunk", -1, ps, sz + ps, bn_chunk2mem(bn_before(c, ps)));
		c = bn_before(c, ps);
		if (HL_UNLIKELY(bn_csize(c) != ps))
			hl_fatal(BN, "corrupted size vs. prev_size while consolidating", bn_chunk2mem(c));
		bn_unlink(c);
		sz += ps;
	}
	if (nx == a->top) {
		HL_EV_SIZES(a->owner, HL_EV_MERGE, "into top", -1, sz, sz + bn_csize(nx), bn_chunk2mem(c));
		sz += bn_csize(nx);
		bn_head(a, c, sz);
		a->top = c;
		if (a->last_remainder == nx)
			a->last_remainder = NULL;
		return c;
	}
	size_t nsz = bn_csize(nx);
	if (!bn_inuse(nx)) {
		HL_EV_SIZES(a->owner, HL_EV_MERGE, "with the next free chunk", -1, nsz, sz + nsz, bn_chunk2mem(c));
		bn_unlink(nx);
		sz += nsz;
	} else {
		bn_set_prev_inuse(nx, false);
	}
	c->size = sz | BN_P | a->aflag;
	bn_set_foot(c, sz);
	bn_to_unsorted(a, c, sz);
	HL_EV(a->owner, HL_EV_LIST_PUSH, "unsorted bin", -1, sz, bn_chunk2mem(c));
	return c;
}

/** Puts @p c into its fastbin (fastbins:on), kept marked in use. */
static void bn_to_fastbin(bn_state_t *st, bn_arena_t *a, bn_chunk_t *c)
{
	unsigned i = bn_fast_index(bn_csize(c));
	if (HL_UNLIKELY(a->fast[i] == c))
		hl_fatal(BN, "double free or corruption (fasttop)", bn_chunk2mem(c));
	c->fd = a->fast[i];
	((bn_tentry_t *)bn_chunk2mem(c))->key = st->fast_key;
	a->fast[i] = c;
	a->have_fast = true;
	HL_EV(st->heap, HL_EV_LIST_PUSH, "fastbin", i, bn_csize(c), bn_chunk2mem(c));
}

/** Frees chunk @p c of arena @p a (not mapped, not cached); @p may_fast
 *  lets a small chunk go to its fastbin when fastbins are on. */
void bn_int_free(bn_state_t *st, bn_arena_t *a, bn_chunk_t *c, bool may_fast)
{
	size_t sz = bn_csize(c);
	bn_chunk_t *nx = bn_at(c, sz);
	if (HL_UNLIKELY(c == a->top))
		hl_fatal(BN, "double free or corruption (top)", bn_chunk2mem(c));
	/* the main arena is contiguous: no chunk ends beyond its top (a
	 * size word overwritten by the block below usually says otherwise) */
	if (HL_UNLIKELY(a->index == 0 && (uintptr_t)nx >= (uintptr_t)a->top + bn_csize(a->top)))
		hl_fatal(BN, "double free or corruption (out)", bn_chunk2mem(c));
	if (HL_UNLIKELY(!bn_prev_inuse(nx)))
		hl_fatal(BN, "double free or corruption (!prev)", bn_chunk2mem(c));
	if (HL_UNLIKELY(bn_csize(nx) < 16 || bn_csize(nx) > a->system))
		hl_fatal(BN, "free(): invalid next size (normal)", bn_chunk2mem(c));
	if (may_fast && sz <= st->max_fast) {
		bn_to_fastbin(st, a, c);
		return;
	}
	c = bn_merge(a, c, sz);
	if (bn_csize(c) < BN_TRIM_ATTEMPT)
		return;
	if (a->have_fast)
		bn_consolidate(st, a);
	bn_systrim(st, a, st->top_pad, false);
}

/** Empties every fastbin, merging each chunk with its free neighbours
 *  (the pre-2.43 malloc_consolidate). */
void bn_consolidate(bn_state_t *st, bn_arena_t *a)
{
	HL_EV(st->heap, HL_EV_SCAN, "malloc_consolidate: every fastbin chunk merged", -1, 0, NULL);
	a->have_fast = false;
	for (unsigned i = 0; i < BN_NFAST; i++) {
		bn_chunk_t *c = a->fast[i];
		a->fast[i] = NULL;
		while (c) {
			bn_chunk_t *nextc = c->fd;
			size_t sz = bn_csize(c);
			((bn_tentry_t *)bn_chunk2mem(c))->key = 0;
			bn_merge(a, c, sz);
			c = nextc;
		}
	}
}

/* --- memalign and realloc ---------------------------------------------------- */

/** Frees chunk @p c of arena @p a as glibc's _int_free does when realloc
 *  or memalign gives back a piece (glibc 2.36 _int_realloc, _int_memalign):
 *  into the calling thread's tcache while its bin has room, else to a
 *  fastbin or the bins. */
static void bn_free_piece(bn_state_t *st, bn_arena_t *a, bn_tcache_t *tc, bn_chunk_t *c)
{
	unsigned ti = bn_tc_index(bn_csize(c));
	if (bn_csize(c) <= BN_TC_MAX_CHUNK && bn_tcache_room(st, tc, ti)) {
		bn_tcache_put(st, tc, c, ti);
		HL_EV_COUNT(st->heap, HL_EV_CACHE_PUT, "tcache bin", ti, tc->counts[ti] - 1, tc->counts[ti], bn_chunk2mem(c));
	} else {
		bn_int_free(st, a, c, true);
	}
}

/** Gives the part of @p c beyond @p nb back (bn_free_piece), if it can
 *  stand as a chunk of its own. */
static void bn_shrink(bn_state_t *st, bn_arena_t *a, bn_tcache_t *tc, bn_chunk_t *c, size_t nb)
{
	size_t sz = bn_csize(c);
	if (sz < nb + BN_MINSIZE)
		return;
	bn_chunk_t *r = bn_at(c, nb);
	c->size = nb | (c->size & BN_P) | a->aflag;
	bn_head(a, r, sz - nb);
	bn_set_inuse_at(r, sz - nb);
	bn_free_piece(st, a, tc, r);
}

void *bn_int_memalign(bn_state_t *st, bn_arena_t *a, bn_tcache_t *tc, size_t align, size_t nb)
{
	char *m = bn_int_malloc(st, a, tc, nb + align + BN_MINSIZE);
	if (!m)
		return NULL;
	bn_chunk_t *c = bn_mem2chunk(m);
	if ((uintptr_t)m % align) {
		char *am = (char *)hl_ptr_align_up((uintptr_t)m, align);
		if ((size_t)(am - m) < BN_MINSIZE)
			am += align;
		bn_chunk_t *ac = bn_mem2chunk(am);
		size_t lead = (size_t)(am - m), sz = bn_csize(c) - lead;
		if (bn_mmapped(c)) {
			ac->prev_size = c->prev_size + lead;
			ac->size = sz | BN_M;
			bn_mmap_note_offset(st, ac);
			return am;
		}
		ac->size = sz | BN_P | a->aflag;
		bn_set_inuse_at(ac, sz);
		c->size = lead | (c->size & BN_P) | a->aflag;
		bn_free_piece(st, a, tc, c);
		c = ac;
	}
	if (!bn_mmapped(c))
		bn_shrink(st, a, tc, c, nb);
	return bn_chunk2mem(c);
}

/** The move of glibc's _int_realloc: a new chunk from the arena (never
 *  from the tcache), glued to @p c when it is the chunk right above it,
 *  else the payload is copied and @p c freed (tcache first). */
static void *bn_realloc_move(bn_state_t *st, bn_arena_t *a, bn_tcache_t *tc, bn_chunk_t *c, size_t nb)
{
	char *m = bn_int_malloc(st, a, tc, nb);
	if (!m)
		return NULL;
	bn_chunk_t *nc = bn_mem2chunk(m);
	if (nc == bn_next(c)) {
		size_t total = bn_csize(c) + bn_csize(nc);
		c->size = total | (c->size & BN_P) | a->aflag;
		bn_shrink(st, a, tc, c, nb);
		return bn_chunk2mem(c);
	}
	HL_EV(st->heap, HL_EV_LOOK, "realloc moves the block", -1, bn_usable(c), m);
	memcpy(m, bn_chunk2mem(c), bn_usable(c));
	bn_free_piece(st, a, tc, c);
	return m;
}

/** realloc of a chunk of arena @p a: shrink in place, grow into the top
 *  or a free chunk above, else move.  NULL when memory ran out. */
void *bn_int_realloc(bn_state_t *st, bn_arena_t *a, bn_tcache_t *tc, bn_chunk_t *c, size_t nb)
{
	size_t sz = bn_csize(c);
	bn_chunk_t *nx = bn_at(c, sz);
	if (HL_UNLIKELY(!bn_prev_inuse(nx) || c == a->top))
		hl_fatal(&hl_policy_bins, "realloc(): invalid pointer", bn_chunk2mem(c));
	if (sz >= nb) {
		HL_EV(st->heap, HL_EV_LOOK, "realloc in place: the chunk is big enough", -1, sz, bn_chunk2mem(c));
		bn_shrink(st, a, tc, c, nb);
		return bn_chunk2mem(c);
	}
	if (nx == a->top && sz + bn_csize(nx) >= nb + BN_MINSIZE) {
		size_t tsz = bn_csize(nx) - (nb - sz);
		HL_EV_SIZES(st->heap, HL_EV_SPLIT, "top, grown into by realloc", -1, nb - sz, tsz, bn_chunk2mem(c));
		c->size = nb | (c->size & BN_P) | a->aflag;
		a->top = bn_at(c, nb);
		bn_head(a, a->top, tsz);
		return bn_chunk2mem(c);
	}
	if (nx != a->top && !bn_inuse(nx) && sz + bn_csize(nx) >= nb) {
		size_t total = sz + bn_csize(nx);
		HL_EV_SIZES(st->heap, HL_EV_MERGE, "realloc: with the next free chunk", -1, bn_csize(nx), total, bn_chunk2mem(c));
		bn_unlink(nx);
		c->size = total | (c->size & BN_P) | a->aflag;
		bn_set_inuse_at(c, total);
		bn_shrink(st, a, tc, c, nb);
		return bn_chunk2mem(c);
	}
	return bn_realloc_move(st, a, tc, c, nb);
}
