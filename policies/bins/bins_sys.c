/*
 * bins_sys.c -- where policy `bins` gets memory and gives it back: the
 * main arena's break, the sub-heaps of secondary arenas, chunks with a
 * mapping of their own (and the self-tuning mmap threshold), trimming the
 * top and purging whole free pages (malloc_trim).  All memory comes from
 * the page source (core/os.h).
 */
#include "bins.h"
#include <string.h>


static size_t bn_trim_threshold(bn_state_t *st)
{
	return __atomic_load_n(&st->trim_threshold, __ATOMIC_RELAXED);
}

static void bn_account(bn_arena_t *a, ptrdiff_t delta)
{
	a->system += (size_t)delta;
	if (a->system > a->peak_system)
		a->peak_system = a->system;
}

/* --- chunks with their own mapping ------------------------------------------ */

void *bn_mmap_chunk(bn_state_t *st, size_t nb)
{
	size_t map = hl_align_up(nb + BN_SIZE_SZ, st->page);
	if (map < nb)
		return NULL;
	/* the mapping first, its record after: a record pool mapped first
	 * would sit right above the chunk, where mremap grows it in place */
	char *base = hl_os_reserve(st->os, map, st->page, true);
	if (!base)
		return NULL;
	bn_mmap_t *mh = hl_meta_alloc(&st->mmap_pool);
	if (!mh) {
		hl_os_release(st->os, base, map);
		return NULL;
	}
	mh->base = base;
	mh->map_size = map;
	mh->offset = 0;
	bn_chunk_t *c = (bn_chunk_t *)base;   /* glibc: the mapping's start, +0x10 */
	c->prev_size = 0;
	c->size = map | BN_M;
	pthread_mutex_lock(&st->mmap_lock);
	hl_os_set_data(st->os, base, mh);
	mh->prev = NULL;
	mh->next = st->mmaps;
	if (st->mmaps)
		st->mmaps->prev = mh;
	st->mmaps = mh;
	size_t n = __atomic_add_fetch(&st->n_mmaps, 1, __ATOMIC_RELAXED);
	if (n > st->peak_n_mmaps)
		st->peak_n_mmaps = n;
	st->mmapped_bytes += map;
	if (st->mmapped_bytes > st->peak_mmapped)
		st->peak_mmapped = st->mmapped_bytes;
	pthread_mutex_unlock(&st->mmap_lock);
	return bn_chunk2mem(c);
}

/* The record of the mapping at @p base, or NULL (mmap_lock held). */
static bn_mmap_t *bn_mmap_record(bn_state_t *st, const char *base)
{
	return hl_os_data(st->os, base);
}

void bn_mmap_note_offset(bn_state_t *st, bn_chunk_t *c)
{
	pthread_mutex_lock(&st->mmap_lock);
	bn_mmap_t *mh = bn_mmap_record(st, (char *)c - c->prev_size);
	if (mh)
		mh->offset = c->prev_size;
	pthread_mutex_unlock(&st->mmap_lock);
}

/** The self-tuning of glibc's free: a mapped chunk larger than the
 *  threshold (and at most 32 MiB) raises it, and the trim threshold to
 *  twice that, unless the user set any of the three knobs. */
static void bn_tune_threshold(bn_state_t *st, size_t sz)
{
	if (!st->dyn_threshold || sz <= bn_mmap_threshold(st) || sz > BN_MMAP_THRESHOLD_MAX)
		return;
	__atomic_store_n(&st->mmap_threshold, sz, __ATOMIC_RELAXED);
	__atomic_store_n(&st->trim_threshold, 2 * sz, __ATOMIC_RELAXED);
}

void bn_munmap_chunk(bn_state_t *st, bn_chunk_t *c)
{
	char *base = (char *)c - c->prev_size;
	size_t sz = bn_csize(c);
	pthread_mutex_lock(&st->mmap_lock);
	bn_mmap_t *mh = ((uintptr_t)base & (st->page - 1)) ? NULL : bn_mmap_record(st, base);
	if (HL_UNLIKELY(!mh || mh->offset != c->prev_size || mh->map_size != c->prev_size + sz)) {
		pthread_mutex_unlock(&st->mmap_lock);
		hl_fatal(BN, "munmap_chunk(): invalid pointer", bn_chunk2mem(c));
	}
	HL_EV(st->heap, HL_EV_UNMAP, "mmapped chunk", -1, sz, bn_chunk2mem(c));
	bn_tune_threshold(st, sz);
	if (mh->prev)
		mh->prev->next = mh->next;
	else
		st->mmaps = mh->next;
	if (mh->next)
		mh->next->prev = mh->prev;
	__atomic_sub_fetch(&st->n_mmaps, 1, __ATOMIC_RELAXED);
	st->mmapped_bytes -= mh->map_size;
	size_t map = mh->map_size;
	pthread_mutex_unlock(&st->mmap_lock);
	hl_meta_free(&st->mmap_pool, mh);
	hl_os_release(st->os, base, map);
}

/* --- mremap --------------------------------------------------------------- */

/** glibc resizes a mapped chunk with mremap (mremap_chunk): the kernel
 *  moves or extends the pages, so the old and the new copy are never both
 *  held.  The chunk keeps its offset in the mapping (its alignment).  A
 *  request it already holds never moves it.  NULL on failure, the chunk
 *  untouched. */
void *bn_mremap_chunk(bn_state_t *st, bn_chunk_t *c, size_t n)
{
	size_t off = c->prev_size, nb = bn_request2size(n);
	char *old = (char *)c - off;
	size_t oldmap = off + bn_csize(c), map = hl_align_up(nb + off + BN_SIZE_SZ, st->page);
	if (map == oldmap || (map > oldmap && bn_usable(c) >= n))
		return bn_chunk2mem(c);        /* what it has already fits */
	pthread_mutex_lock(&st->mmap_lock);
	bn_mmap_t *mh = bn_mmap_record(st, old);
	if (HL_UNLIKELY(!mh || mh->map_size != oldmap)) {
		pthread_mutex_unlock(&st->mmap_lock);
		hl_fatal(BN, "mremap_chunk(): invalid pointer", bn_chunk2mem(c));
	}
	char *nw = hl_os_remap(st->os, old, map);
	HL_EV_COUNT(st->heap, HL_EV_MAP, "mmapped chunk resized by mremap", -1, oldmap, map, nw);
	if (nw) {                          /* the region keeps its record */
		mh->base = nw;
		mh->map_size = map;
		st->mmapped_bytes = st->mmapped_bytes - oldmap + map;
		if (st->mmapped_bytes > st->peak_mmapped)
			st->peak_mmapped = st->mmapped_bytes;
		c = (bn_chunk_t *)(nw + off);
		c->size = (map - off) | BN_M;
	}
	pthread_mutex_unlock(&st->mmap_lock);
	return nw ? bn_chunk2mem(c) : NULL;
}

/* --- the main arena: the break -------------------------------------------- */

/** Moves the break up far enough for a chunk of @p nb plus top_pad. */
static bool bn_grow_main(bn_state_t *st, bn_arena_t *a, size_t nb)
{
	size_t old = a->top ? bn_csize(a->top) : 0;
	size_t grow = hl_align_up(nb + st->top_pad + BN_MINSIZE - old, st->page);
	if (!hl_brk_move(st->os, &st->brk, (intptr_t)grow))
		return false;
	HL_EVENT(st->heap, HL_EV_GROW, "sysmalloc: brk, top", -1, grow, 0, old, old + grow, NULL);
	if (!a->top) {
		a->top = bn_main_first(st);
		a->top->prev_size = 0;
	}
	a->top->size = (old + grow) | BN_P;
	bn_account(a, (ptrdiff_t)grow);
	return true;
}

/* --- secondary arenas: sub-heaps ---------------------------------------- */

/** Reserves a 64 MiB-aligned sub-heap and commits enough of it for
 *  @p need bytes plus top_pad (at least 32 KiB). */
static bn_heap_t *bn_heap_new(bn_state_t *st, size_t need)
{
	size_t sz = need + st->top_pad;
	if (sz < BN_HEAP_MIN)
		sz = BN_HEAP_MIN;
	else if (sz > BN_HEAP_MAX)
		sz = need;
	sz = hl_align_up(sz, st->page);
	if (sz > BN_HEAP_MAX)
		return NULL;
	bn_heap_t *hp = hl_os_reserve(st->os, BN_HEAP_MAX, BN_HEAP_MAX, false);
	if (!hp)
		return NULL;
	if (hl_os_commit(st->os, hp, sz)) {
		hl_os_release(st->os, hp, 0);
		return NULL;
	}
	hp->size = sz;
	return hp;
}

/** Closes the old top of a full sub-heap: two fenceposts at its end (a
 *  16-byte in-use chunk and a size-0 one); the rest, when there is any,
 *  is returned for the caller to free into the bins. */
static bn_chunk_t *bn_fence_off(bn_arena_t *a, bn_chunk_t *old)
{
	size_t sz = bn_csize(old), keep = sz - 2 * 16;
	bn_chunk_t *f1 = keep >= BN_MINSIZE ? bn_at(old, keep) : old;
	size_t fsz = keep >= BN_MINSIZE ? 16 : sz - 16;
	bn_chunk_t *f2 = bn_at(f1, fsz);
	f1->size = fsz | BN_P | a->aflag;
	if (f1 == old)
		f1->size = fsz | (old->size & BN_P) | a->aflag;
	f2->prev_size = fsz;
	f2->size = 0 | BN_P;
	if (f1 == old)
		return NULL;
	old->size = keep | (old->size & BN_P) | a->aflag;
	return old;
}

/** Grows a secondary arena: more of its sub-heap, or a new sub-heap
 *  (the old top's remains go to @p *to_free). */
static bool bn_grow_sub(bn_state_t *st, bn_arena_t *a, size_t nb, bn_chunk_t **to_free)
{
	bn_heap_t *hp = a->heap;
	size_t old = bn_csize(a->top);
	size_t diff = hl_align_up(nb + BN_MINSIZE - old, st->page);
	if (hp->size + diff <= BN_HEAP_MAX &&
	    hl_os_commit(st->os, (char *)hp + hp->size, diff) == 0) {
		hp->size += diff;
		HL_EVENT(st->heap, HL_EV_GROW, "sysmalloc: sub-heap committed further, top", -1, diff, 0, old, old + diff, NULL);
		bn_account(a, (ptrdiff_t)diff);
		a->top->size = (old + diff) | BN_P | BN_A;
		return true;
	}
	bn_heap_t *nh = bn_heap_new(st, nb + BN_MINSIZE + sizeof(bn_heap_t));
	if (!nh)
		return false;
	HL_EV(st->heap, HL_EV_NEW, "sysmalloc: sub-heap (the old one is full)", a->index, nh->size, nh);
	nh->ar = a;
	nh->prev = hp;
	a->heap = nh;
	bn_account(a, (ptrdiff_t)nh->size);
	bn_chunk_t *old_top = a->top;
	a->top = bn_heap_first(nh);
	a->top->size = (nh->size - sizeof(bn_heap_t)) | BN_P | BN_A;
	*to_free = bn_fence_off(a, old_top);
	return true;
}

bool bn_sys_grow(bn_state_t *st, bn_arena_t *a, size_t nb, bn_chunk_t **to_free)
{
	*to_free = NULL;
	return a->index == 0 ? bn_grow_main(st, a, nb) : bn_grow_sub(st, a, nb, to_free);
}

bool bn_sys_first_heap(bn_state_t *st, bn_arena_t *a)
{
	bn_heap_t *hp = bn_heap_new(st, sizeof(bn_heap_t) + BN_MINSIZE);
	if (!hp)
		return false;
	hp->ar = a;
	a->heap = hp;
	bn_account(a, (ptrdiff_t)hp->size);
	a->top = bn_heap_first(hp);
	a->top->size = (hp->size - sizeof(bn_heap_t)) | BN_P | BN_A;
	return true;
}

/* --- giving memory back ------------------------------------------------------ */

/** Releases the newest sub-heap while the top chunk is all of it, merging
 *  the previous sub-heap's fenceposts (and a free chunk before them) into
 *  the new top. */
static size_t bn_heap_drop(bn_state_t *st, bn_arena_t *a)
{
	size_t given = 0;
	bn_heap_t *hp = a->heap;
	while (hp->prev && a->top == bn_heap_first(hp)) {
		bn_heap_t *prev = hp->prev;
		bn_chunk_t *f2 = bn_at(prev, prev->size - 16);
		bn_chunk_t *top = bn_before(f2, f2->prev_size);
		size_t sz = bn_csize(top) + 16;
		if (!bn_prev_inuse(top)) {
			size_t ps = top->prev_size;
			top = bn_before(top, ps);
			bn_unlink(top);
			sz += ps;
		}
		HL_EV(st->heap, HL_EV_RETIRE, "sub-heap (its top was all of it)", a->index, hp->size, hp);
		a->heap = prev;
		a->top = top;
		top->size = sz | BN_P | BN_A;
		bn_account(a, -(ptrdiff_t)hp->size);
		given += hp->size;
		hl_os_release(st->os, hp, hp->size);
		hp = prev;
	}
	return given;
}

/** Gives back the top beyond @p pad: the break moves down (main arena) or
 *  the sub-heap's tail is decommitted.  Unless @p forced (malloc_trim), the
 *  top must first have reached trim_threshold. */
size_t bn_systrim(bn_state_t *st, bn_arena_t *a, size_t pad, bool forced)
{
	size_t given = a->index ? bn_heap_drop(st, a) : 0;
	if (!a->top)
		return given;
	size_t tsz = bn_csize(a->top);
	if ((!forced && tsz < bn_trim_threshold(st)) || tsz <= pad + BN_MINSIZE + 1)
		return given;
	size_t extra = hl_align_down(tsz - BN_MINSIZE - 1 - pad, st->page);
	if (!extra)
		return given;
	if (a->index == 0) {
		if (!hl_brk_move(st->os, &st->brk, -(intptr_t)extra))
			return given;
	} else {
		bn_heap_t *hp = a->heap;
		if (hl_os_decommit(st->os, (char *)hp + hp->size - extra, extra))
			return given;
		hp->size -= extra;
	}
	bn_account(a, -(ptrdiff_t)extra);
	HL_EVENT(st->heap, HL_EV_SHRINK, forced ? "malloc_trim: top" : "systrim: top above the trim threshold", -1, extra, 0, tsz, tsz - extra, NULL);
	a->top->size = (tsz - extra) | BN_P | a->aflag;
	return given + extra;
}

/* Purges every whole page inside the free chunks of arena @p a. */
size_t bn_purge_free(bn_state_t *st, bn_arena_t *a)
{
	size_t given = 0;
	for (unsigned i = BN_UNSORTED; i < BN_NBINS; i++) {
		bn_chunk_t *b = bn_bin(a, i);
		for (bn_chunk_t *c = b->fd; c != b; c = c->fd) {
			uintptr_t lo = hl_ptr_align_up((uintptr_t)c + sizeof(bn_chunk_t), st->page);
			uintptr_t hi = (uintptr_t)c + bn_csize(c);
			if (hi <= lo || hi - lo < st->page)
				continue;
			size_t len = hl_align_down(hi - lo, st->page);
			HL_EV(st->heap, HL_EV_PURGE, "whole pages inside a free chunk", i, len, (void *)lo);
			if (hl_os_purge(st->os, (void *)lo, len) == 0)
				given += len;
		}
	}
	return given;
}
