/*
 * bins.c -- policy `bins`: a working model of dlmalloc as glibc's
 * ptmalloc runs it (glibc 2.35 to 2.43, 64-bit; by default the release
 * running the program, option `version`).
 *
 * What it models
 *   Boundary-tagged chunks, coalesced with free neighbours the moment they
 *   are freed; small bins of exact sizes, sorted large bins with a skip
 *   list, an unsorted bin sorted lazily by the next malloc, a binmap, a top
 *   chunk grown from the break; arenas with mutexes (the main one on the
 *   heap's emulated break, the others on 64 MiB-aligned sub-heaps found by
 *   masking); a per-thread tcache in front of everything; big requests on
 *   their own mappings with glibc's self-tuning threshold; trimming.
 *
 * Vital statistics
 *   Alignment:  16 bytes.
 *   Overhead:   8 bytes per live chunk (the size word; the next chunk's
 *               prev_size word belongs to the payload while it is live);
 *               16 bytes plus the 32-byte link header for mapped chunks.
 *   Minimum:    32-byte chunk, 24 usable bytes (malloc(0) and malloc(1)).
 *   Sizes:      chunk = request + 8 rounded up to 16, at least 32.
 *   Speed:      a tcache hit or a free into the tcache is O(1) with no
 *               lock; small-bin fits are O(1); large requests are best fit
 *               over a skip list; the unsorted scan sorts at most 10000
 *               chunks per malloc.
 *   Threads:    one mutex per arena; the tcache needs none.
 *
 * malloc(n):  nb = chunk size of n
 *   1. tcache bin of nb not empty -> pop it (no lock).
 *   2. lock the thread's arena (bind one on the first miss).
 *   3. (fastbins:on) fastbin of nb -> take it, stash more into the tcache.
 *   4. small nb: small bin of nb -> take its oldest chunk, stash more.
 *   5. unsorted scan: exact fits go to the tcache (or are returned), the
 *      last remainder is split for small requests, others are filed.
 *   6. large nb: best fit in its large bin.
 *   7. next larger non-empty bin by the binmap; split its smallest chunk.
 *   8. split the top chunk.
 *   9. sysmalloc: nb >= mmap_threshold -> own mapping; else grow the top
 *      (break or sub-heap) and split it; failing that, a mapping.
 *   (glibc's order: the mapping decision sits in sysmalloc, so a large
 *   request that a free chunk or the top can serve takes it first.)
 *
 * free(p):   tcache (key says "maybe cached twice" -> scan -> abort) while
 *   the bin has room; mapped chunks are unmapped (and may raise the mmap
 *   threshold); others are merged with free neighbours under the arena
 *   lock and go to the unsorted bin or the top; a merged chunk of 64 KiB
 *   or more lets the top be trimmed beyond trim_threshold, keeping top_pad.
 *   Cached links are safe-linked (stored xor their own address >> 12).
 *
 * realloc(p, n):  shrink in place; grow into the top or a free chunk above;
 *   else take a chunk from the arena (not the tcache): glued on when it is
 *   the chunk right above (the top had to grow), else copied and p freed.
 *   Mapped chunks are resized with a real mremap (bn_mremap_chunk).
 *
 * Arenas:  a thread binds on its first call, when its tcache record is
 *   taken (with tcache_count:0, on its first allocation): the first thread gets
 *   the main arena; later ones a parked arena (all its threads exited),
 *   else a new one while fewer than the cap exist (arena_max, or once more
 *   than arena_test exist arenas_per_core x online cores), else the next
 *   arena in the ring that a trylock finds idle.
 *
 * Misuse detected (debug:off): glibc's checks, with glibc's texts —
 *   "free(): invalid pointer" (misaligned, or wrapping: interior, stack
 *   and foreign pointers), "free(): invalid size", "free(): double free
 *   detected in tcache 2" (the tcache key), "double free or corruption
 *   (top|out|!prev|fasttop)" (a double free, or a size word overwritten by
 *   the block below), "malloc(): unaligned tcache chunk detected" (a
 *   cached link written over), the unlink and unsorted-bin checks.  Like
 *   glibc it accepts a realloc of a chunk in the tcache.  One difference
 *   with the installed 2.36: bins takes from a tcache bin whose list is not
 *   empty, so after its last chunk's link is written over the next malloc
 *   of that size follows it and aborts; 2.36 goes by the bin's count and
 *   does not look.  tests/programs/misuse.sh compares the texts with glibc's.  With debug:on the core's guard (core/guard.c)
 *   sees every misuse first, and the checker (bins_check.c) runs before
 *   and after each operation.
 *
 * Options: described once, in the option table below; `heaplab options bins`
 * prints them, the book's options appendix is made from it.  `version`
 * (default: the running glibc, gnu_get_libc_version) sets the knobs that
 * change between the releases modelled: tcache_count 7 and fastbins on up
 * to 2.42, 16 and none in 2.43 (bn_read_options names the sources), and
 * whether option tcache_max opens the large tcache bins (2.42 on:
 * bn_tcache_max_bytes).  Those bins are glibc 2.42's: 12 lists, one per
 * power of two of chunk size from 1041 bytes to 4 MiB, sorted by size;
 * free puts a chunk (not mapped) there while it fits the limit and its
 * bin has room, malloc and calloc take the first chunk big enough (2.42)
 * or of the exact size (2.43) -- after the small-size hit, never in it.
 *
 * The tcache record
 *   As glibc's tcache_init does, a thread's first call binds it to an arena
 *   and takes its tcache record from there: the version's struct, 64 list
 *   heads and 2-byte counts (640 bytes asked, a 656-byte chunk) up to 2.41,
 *   76 of each from 2.42 (760 bytes, a 768-byte chunk), ahead of the
 *   thread's own blocks, freed when the thread exits.  The chunk holds the
 *   counts and heads only, in glibc's order; the rest of what bins keeps
 *   for the thread (arena, hit counts, registry links) is in heaplab's
 *   metadata (bn_tcache_t), and the arena's records list tells the walker
 *   which chunks are records (reported as metadata).  With tcache_count:0
 *   (or if that chunk cannot be had) the record is in the metadata too.
 *   Pieces that realloc and memalign give back go through the tcache
 *   first, as glibc's _int_free does for them.
 *
 * Left out
 *   the per-process getrandom key (a per-heap key from the heap id and
 *   time), tcache_max below 1032 (fewer small bins), the large tcache
 *   bins' lists outside the record (in bn_tcache_t: the record's 12 large
 *   slots are counted in its size, not used) and memalign's look at them
 *   (glibc's tcache_get_align), the hit test by count up to 2.41 (bins tests the list, as 2.42 does),
 *   arena_get_retry after a failed allocation, the tcache_unsorted_limit
 *   tunable, the main arena falling back to non-contiguous mappings when
 *   and the break cannot grow (a request gets its own mapping instead).
 */
#include "bins_fast.h"
#include <errno.h>
#include <gnu/libc-version.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>


static const hl_option_t bn_options[] = {
	{ "version", HL_OPT_ENUM, "system", 0, 0, "system|2.35|2.36|2.37|2.38|2.39|2.40|2.41|2.42|2.43",
	  "glibc release whose defaults apply (system = the running glibc; older as 2.35, newer as 2.43): "
	  "tcache_count, fastbins and what tcache_max can open" },
	{ "tcache_max", HL_OPT_SIZE, "1032", 1032, 4 << 20, NULL,
	  "glibc.malloc.tcache_max, the largest request cached: from glibc 2.42 more than 1032 opens "
	  "12 large bins, one per power of two, up to 4 MiB chunks (glibc ignores 4194281 and up, "
	  "and up to 2.41 anything above 1032); per glibc-2.42's malloc/malloc.c, not measured "
	  "(glibc 2.36 here); below 1032 is not modelled" },
	{ "tcache_count", HL_OPT_INT, "-1", -1, 65535, NULL,
	  "chunks per tcache bin (-1 = the version's: 7, 16 from glibc 2.43; 0 = no tcache)" },
	{ "arena_max", HL_OPT_INT, "0", 0, 1024, NULL,
	  "hard cap on arenas (0 = derive from arena_test and cores)" },
	{ "arena_test", HL_OPT_INT, "8", 1, 1024, NULL,
	  "arenas created before the core count sets the cap" },
	{ "arenas_per_core", HL_OPT_INT, "8", 1, 64, NULL,
	  "arena cap per online core (8 = glibc <= 2.43, 1 = glibc 2.44)" },
	{ "mmap_threshold", HL_OPT_SIZE, "128K", 0, 32 << 20, NULL,
	  "requests this large get their own mapping; setting it stops self-tuning" },
	{ "trim_threshold", HL_OPT_SIZE, "128K", 0, (int64_t)1 << 46, NULL,
	  "free top space that triggers trimming; setting it stops self-tuning" },
	{ "top_pad", HL_OPT_SIZE, "128K", 0, 1 << 30, NULL,
	  "extra bytes grown with and kept at the top; setting it stops self-tuning" },
	{ "mmap_max", HL_OPT_INT, "65536", 0, 1 << 24, NULL,
	  "most chunks with their own mapping at once" },
	{ "fastbins", HL_OPT_ENUM, "version", 0, 0, "version|on|off",
	  "fastbins: chunks up to 128 bytes kept unmerged until consolidation (version: on before 2.43)" },
	{ "brk_max", HL_OPT_SIZE, "4G", 1 << 20, (int64_t)1 << 40, NULL,
	  "address space reserved for the main arena's emulated break" },
	{ NULL, 0, NULL, 0, 0, NULL, NULL },
};

/* --- arenas: binding a thread (glibc's arena_get2) ---------------------------- */

static bool bn_under_limit(bn_state_t *st)
{
	if (!st->arena_limit) {
		if (st->arena_max)
			st->arena_limit = st->arena_max;
		else if (st->narenas > st->arena_test)
			st->arena_limit = st->per_core * st->ncores;
	}
	return !st->arena_limit || st->narenas < st->arena_limit;
}

/** Round robin from next_to_use: the first arena a trylock finds idle, or
 *  the cursor's own arena when all are busy. */
static bn_arena_t *bn_reuse(bn_state_t *st)
{
	bn_arena_t *a = st->next_to_use, *begin = a;
	do {
		if (hl_lock_try(&a->lock)) {
			hl_unlock(&a->lock);
			break;
		}
		a = bn_ring_next(a);
	} while (a != begin);
	st->next_to_use = bn_ring_next(a);
	return a;
}

static bn_arena_t *bn_make_arena(bn_state_t *st)
{
	bn_arena_t *a = bn_arena_new(st);
	if (!a)
		return NULL;
	st->narenas++;
	a->next = &st->main;
	__atomic_store_n(&st->tail->next, a, __ATOMIC_RELEASE);
	st->tail = a;
	return a;
}

/** Binds the calling thread to an arena (glibc's arena_get2) and records
 *  it in @p tc when there is a record already. */
static bn_arena_t *bn_bind(bn_state_t *st, bn_tcache_t *tc)
{
	bn_arena_t *a = NULL;
	pthread_mutex_lock(&st->list_lock);
	if (!st->main_bound) {
		st->main_bound = true;
		a = &st->main;
	} else if (st->parked) {
		a = st->parked;
		st->parked = a->next_free;
		a->next_free = NULL;
	} else if (bn_under_limit(st)) {
		a = bn_make_arena(st);
		HL_EV(st->heap, HL_EV_NEW, "arena", a ? (long)a->index : -1, 0, NULL);
	}
	if (!a)
		a = bn_reuse(st);
	HL_EV(st->heap, HL_EV_LOOK, "thread bound to arena", a->index, 0, NULL);
	a->attached++;
	if (tc)
		tc->arena = a;
	pthread_mutex_unlock(&st->list_lock);
	return a;
}

/** glibc's tcache_init: the thread binds to an arena and its tcache record
 *  is the first chunk it takes there (the version's struct: BN_TC_STRUCT
 *  bytes asked, BN_TC_STRUCT_242 from 2.42).  Without a tcache, or when
 *  that chunk cannot be had, the record is the metadata's own copy and,
 *  without a tcache, the binding waits for the first allocation. */
static bn_tcache_t *bn_tcache_new(bn_state_t *st, hl_thread_t *t)
{
	bn_tcache_t *tc = hl_meta_alloc(&st->tcache_pool);
	if (!tc)
		return NULL;
	memset(tc, 0, sizeof *tc);
	tc->rec = &tc->own;
	if (st->tcache_count > 0) {
		size_t asked = st->glibc_minor >= 42 ? BN_TC_STRUCT_242 : BN_TC_STRUCT;
		bn_arena_t *a = bn_bind(st, tc);
		bn_lock(a);
		HL_EV(st->heap, HL_EV_LOOK, "the thread's tcache record: its first chunk", a->index, asked, NULL);
		bn_tcache_rec_t *rec = bn_int_malloc(st, a, NULL, bn_request2size(asked));
		if (rec) {
			memset(rec, 0, asked);
			tc->rec = rec;
			tc->chunk = bn_mem2chunk(rec);
			bn_arena_t *home = bn_mmapped(tc->chunk) ? NULL : bn_arena_of(st, tc->chunk);
			if (home == a) {           /* listed for the walker */
				tc->rec_next = a->records;
				a->records = tc;
			}
		}
		bn_unlock(a);
	}
	tc->counts = tc->rec->counts;
	tc->entries = tc->rec->entries;
	tc->thread = t->index;
	pthread_mutex_lock(&st->list_lock);
	tc->next = st->tcaches;
	if (st->tcaches)
		st->tcaches->prev = tc;
	st->tcaches = tc;
	pthread_mutex_unlock(&st->list_lock);
	t->policy_tls = tc;
	return tc;
}

/* --- the policy's entry points --------------------------------------------------- */

static void *bn_malloc_slow(bn_state_t *st, hl_thread_t *t, size_t nb)
{
	bn_tcache_t *tc = t->policy_tls;
	if (!tc) {                          /* the thread's first call: a miss */
		if (!(tc = bn_tcache_new(st, t))) {
			errno = ENOMEM;
			return NULL;
		}
		tc->misses += nb <= BN_TC_MAX_CHUNK || nb < st->tc_large_limit;
		if (nb <= BN_TC_MAX_CHUNK)
			HL_EV(st->heap, HL_EV_CACHE_MISS, "tcache bin (the thread's first call)", bn_tc_index(nb), nb, NULL);
	}
	bn_arena_t *a = tc->arena ? tc->arena : bn_bind(st, tc);
	bn_lock(a);
	void *m = bn_int_malloc(st, a, tc, nb);
	bn_unlock(a);
	return m;
}

/* glibc 2.42's large tcache bins (option tcache_max): malloc's look there,
 * the chunk or NULL (a miss, counted).  Only the first chunk big enough is
 * looked at: the exact size from 2.43, any up to 2.42 (tcache_get_large). */
static void *bn_malloc_large(bn_state_t *st, bn_tcache_t *tc, size_t nb, bool listening)
{
	unsigned i = bn_tc_large_index(nb), j = i - BN_TC_BINS;
	void *m = bn_tcache_get_large(tc, j, nb, st->glibc_minor >= 43);
	if (m) {
		tc->hits++;
		if (listening) HL_EV_COUNT(st->heap, HL_EV_CACHE_HIT, "tcache large bin", i, tc->large_counts[j] + 1u, tc->large_counts[j], m);
		return m;
	}
	tc->misses++;
	if (listening) HL_EV(st->heap, HL_EV_CACHE_MISS, "tcache large bin", i, nb, NULL);
	return NULL;
}

/* free's look at the large bins: true when chunk @p c (not mapped, its
 * size past the small bins and below the limit) went on one. */
static bool bn_free_large(bn_state_t *st, hl_thread_t *t, bn_chunk_t *c, bool listening)
{
	size_t sz = bn_csize(c);
	bn_tcache_t *tc = t->policy_tls;
	if (sz <= BN_TC_MAX_CHUNK || sz >= st->tc_large_limit || bn_mmapped(c) || !tc)
		return false;
	unsigned i = bn_tc_large_index(sz), j = i - BN_TC_BINS;
	bn_tentry_t *e = bn_chunk2mem(c);
	if (HL_UNLIKELY(e->key == st->key))
		bn_tcache_double_free_scan_large(st, tc, e, j);
	if (tc->large_counts[j] >= st->tcache_count)
		return false;
	bn_tcache_put_large(st, tc, c, j);
	if (listening) HL_EV_COUNT(st->heap, HL_EV_CACHE_PUT, "tcache large bin", i, tc->large_counts[j] - 1u, tc->large_counts[j], e);
	return true;
}

/* malloc: the tcache hit (bins_fast.h), or the slow path.  Built twice
 * (event.h, "Quiet copies"): bn_malloc with its events, bn_malloc_quiet
 * without. */
HL_EV_BODY void *bn_malloc_body(void *stp, hl_thread_t *t, size_t n, bool listening)
{
	bn_state_t *st = stp;
	size_t nb = bn_request2size(n);
	bn_tcache_t *tc = bn_tcache_for(t, nb);
	if (tc) {
		unsigned i = bn_tc_index(nb);
		if (tc->entries[i]) {
			if (listening) HL_EV_COUNT(st->heap, HL_EV_CACHE_HIT, "tcache bin", i, tc->counts[i], tc->counts[i] - 1, tc->entries[i]);
			return bn_tcache_hit(tc, i);
		}
		tc->misses++;
		if (listening) HL_EV(st->heap, HL_EV_CACHE_MISS, "tcache bin", i, nb, NULL);
	} else if (HL_UNLIKELY(nb < st->tc_large_limit) && nb > BN_TC_MAX_CHUNK && t->policy_tls) {
		void *m = bn_malloc_large(st, t->policy_tls, nb, listening);
		if (m)
			return m;
	}
	return bn_malloc_slow(st, t, nb);
}
HL_EV_MALLOC_TWICE(bn_malloc)

/* Debug mode's check after glibc's own: chunk @p c lies in this heap. */
static void bn_check_in_heap(bn_state_t *st, bn_chunk_t *c)
{
	if (!hl_os_contains(st->os, c))
		hl_fatal(BN, "free(): pointer not from this heap", bn_chunk2mem(c));
}

/* Chunk @p c (not mapped) back to its arena, under its lock. */
static void bn_arena_free(bn_state_t *st, bn_chunk_t *c)
{
	bn_arena_t *a = bn_arena_of(st, c);
	bn_lock(a);
	bn_int_free(st, a, c, true);
	bn_unlock(a);
}

/* Every free the tcache does not take: a mapped chunk, or the arena's
 * _int_free under its lock. */
static __attribute__((noinline)) void bn_free_slow(bn_state_t *st, bn_chunk_t *c)
{
	if (bn_mmapped(c)) {
		bn_munmap_chunk(st, c);
		return;
	}
	bn_arena_free(st, c);
}

/* free: the tcache put (bins_fast.h), or the slow path; built twice as
 * malloc is. */
HL_EV_BODY void bn_free_body(void *stp, hl_thread_t *t, void *p, bool listening)
{
	bn_state_t *st = stp;
	bn_chunk_t *c = bn_mem2chunk(p);
	unsigned i;
	bn_tcache_t *tc = bn_free_tcache(t, c, &i);
	if (HL_UNLIKELY(st->debug))
		bn_check_in_heap(st, c);
	if (tc) {
		if (HL_UNLIKELY(((bn_tentry_t *)p)->key == st->key))
			bn_tcache_double_free_scan(st, tc, p, i);
		if (tc->counts[i] < st->tcache_count) {
			bn_tcache_put(st, tc, c, i);
			if (listening) HL_EV_COUNT(st->heap, HL_EV_CACHE_PUT, "tcache bin", i, tc->counts[i] - 1, tc->counts[i], p);
			return;
		}
	} else if (HL_UNLIKELY(st->tc_large_limit) && bn_free_large(st, t, c, listening)) {
		return;
	}
	bn_free_slow(st, c);
}
HL_EV_FREE_TWICE(bn_free)

static void *bn_memalign(void *stp, hl_thread_t *t, size_t align, size_t n)
{
	bn_state_t *st = stp;
	bn_tcache_t *tc = t->policy_tls;
	if (!tc && !(tc = bn_tcache_new(st, t))) {
		errno = ENOMEM;
		return NULL;
	}
	if (align < BN_MINSIZE)
		align = BN_MINSIZE;
	bn_arena_t *a = tc->arena ? tc->arena : bn_bind(st, tc);
	bn_lock(a);
	void *m = bn_int_memalign(st, a, tc, align, bn_request2size(n));
	bn_unlock(a);
	return m;
}

static void *bn_realloc(void *stp, hl_thread_t *t, void *p, size_t n)
{
	bn_state_t *st = stp;
	bn_chunk_t *c = bn_mem2chunk(p);
	size_t old = bn_usable(c);
	bn_check_pointer(c, bn_csize(c));
	if (HL_UNLIKELY(st->debug))
		bn_check_in_heap(st, c);
	if (bn_mmapped(c)) {                /* mremap; failing that, keep or move */
		void *m = bn_mremap_chunk(st, c, n);
		if (m || old >= n)
			return m ? m : p;
		m = bn_malloc(st, t, n);
		if (m) {
			memcpy(m, p, old);
			bn_munmap_chunk(st, c);
		}
		return m;
	}
	bn_tcache_t *tc = t->policy_tls;
	if (!tc && !(tc = bn_tcache_new(st, t))) {
		errno = ENOMEM;
		return NULL;
	}
	bn_arena_t *a = bn_arena_of(st, c);
	bn_lock(a);
	void *m = bn_int_realloc(st, a, tc, c, bn_request2size(n));
	bn_unlock(a);
	if (!m)
		errno = ENOMEM;
	return m;
}

static size_t bn_usable_size(void *stp, const void *p)
{
	(void)stp;
	return bn_usable(bn_mem2chunk(p));
}

/* glibc's calloc clears no mmapped chunk: its mapping is fresh, so zero
 * (glibc 2.36 malloc.c, __libc_calloc; measured: calloc(64 MiB) adds
 * 132 KiB of RSS under glibc: the fidelity row glibc.calloc-fresh-untouched). */
static bool bn_fresh_zero(void *stp, const void *p)
{
	(void)stp;
	return bn_mmapped(bn_mem2chunk(p));
}

static bool bn_owns(void *stp, const void *p)
{
	bn_state_t *st = stp;
	return hl_os_contains(st->os, p);
}

/* --- trim ------------------------------------------------------------------------ */

/** The policy's trim (malloc_trim): in every arena, consolidate, purge the
 *  whole free pages inside free chunks and, for the main arena, shrink the
 *  top to @p pad.  Returns the bytes given back. */
static size_t bn_trim(void *stp, size_t pad)
{
	bn_state_t *st = stp;
	size_t given = 0;
	bn_arena_t *a = &st->main;
	do {
		bn_lock(a);
		if (a->have_fast)
			bn_consolidate(st, a);
		given += bn_purge_free(st, a);
		if (a->index == 0)
			given += bn_systrim(st, a, pad, true);
		bn_unlock(a);
		a = bn_ring_next(a);
	} while (a != &st->main);
	return given;
}

/* --- threads and fork -------------------------------------------------------------- */

/** Returns every cached chunk to the arena it came from, then lets go of
 *  the thread's arena (parked when no other thread uses it). */
static void bn_thread_exit(void *stp, hl_thread_t *t)
{
	bn_state_t *st = stp;
	bn_tcache_t *tc = t->policy_tls;
	if (!tc)
		return;
	for (unsigned i = 0; i < BN_TC_BINS; i++)
		while (tc->entries[i])
			bn_arena_free(st, bn_mem2chunk(bn_tcache_get(tc, i)));
	for (unsigned j = 0; j < BN_TC_LARGE; j++)
		while (tc->large[j])
			bn_arena_free(st, bn_mem2chunk(bn_tcache_get_large(tc, j, 0, false)));
	bn_arena_t *bound = tc->arena;
	pthread_mutex_lock(&st->list_lock);
	if (tc->prev)
		tc->prev->next = tc->next;
	else
		st->tcaches = tc->next;
	if (tc->next)
		tc->next->prev = tc->prev;
	st->old_hits += tc->hits;
	st->old_misses += tc->misses;
	pthread_mutex_unlock(&st->list_lock);
	t->policy_tls = NULL;
	if (tc->chunk) {          /* the record goes back like any chunk */
		bn_arena_t *a = bn_mmapped(tc->chunk) ? NULL : bn_arena_of(st, tc->chunk);
		if (a) {
			bn_lock(a);
			bn_tcache_t **pp = &a->records;
			while (*pp && *pp != tc)
				pp = &(*pp)->rec_next;
			if (*pp)
				*pp = tc->rec_next;
			bn_int_free(st, a, tc->chunk, true);
			bn_unlock(a);
		} else {          /* a mapped one when sysmalloc had to map it */
			bn_free_slow(st, tc->chunk);
		}
	}
	hl_meta_free(&st->tcache_pool, tc);
	pthread_mutex_lock(&st->list_lock);
	if (bound && --bound->attached == 0) {
		bound->next_free = st->parked;
		st->parked = bound;
	}
	pthread_mutex_unlock(&st->list_lock);
}

static void bn_fork_prepare(void *stp)
{
	bn_state_t *st = stp;
	pthread_mutex_lock(&st->list_lock);
	bn_arena_t *a = &st->main;
	do {
		hl_lock(&a->lock);
		a = bn_ring_next(a);
	} while (a != &st->main);
	pthread_mutex_lock(&st->mmap_lock);
}

static void bn_fork_parent(void *stp)
{
	bn_state_t *st = stp;
	pthread_mutex_unlock(&st->mmap_lock);
	bn_arena_t *a = &st->main;
	do {
		hl_unlock(&a->lock);
		a = bn_ring_next(a);
	} while (a != &st->main);
	pthread_mutex_unlock(&st->list_lock);
}

static void bn_fork_child(void *stp)
{
	bn_state_t *st = stp;
	pthread_mutex_init(&st->mmap_lock, NULL);
	bn_arena_t *a = &st->main;
	do {
		hl_lock_init(&a->lock);
		a = bn_ring_next(a);
	} while (a != &st->main);
	pthread_mutex_init(&st->list_lock, NULL);
	hl_meta_fork_child(&st->arena_pool);
	hl_meta_fork_child(&st->tcache_pool);
	hl_meta_fork_child(&st->mmap_pool);
}

/* --- set-up --------------------------------------------------------------------------- */

/* The minor number of the glibc 2.x release option `version` names: its
 * choice, or the running glibc's (gnu_get_libc_version), kept within the
 * releases modelled (2.35 .. 2.43). */
static unsigned bn_version_minor(const hl_conf_t *conf)
{
	int i = hl_conf_enum(conf, "version");
	int major = 2, minor = BN_GLIBC_FIRST + i - 1;
	if (i == 0 && sscanf(gnu_get_libc_version(), "%d.%d", &major, &minor) != 2)
		minor = BN_GLIBC_LAST;
	if (major != 2)
		minor = major < 2 ? BN_GLIBC_FIRST : BN_GLIBC_LAST;
	return minor < BN_GLIBC_FIRST ? BN_GLIBC_FIRST : minor > BN_GLIBC_LAST ? BN_GLIBC_LAST : (unsigned)minor;
}

/* Option tcache_max as glibc's do_set_tcache_max takes the tunable
 * (malloc/malloc.c): the limit of the large bins, or 0 when they stay shut.
 * Up to 2.41 (e.g. glibc-2.36) a value above MAX_TCACHE_SIZE (1032) is
 * refused and the default kept: nothing beyond the 64 small bins.  At the
 * glibc-2.42 tag: nb = request2size (value), refused when its index is
 * TCACHE_MAX_BINS (76) or more, else mp_.tcache_max_bytes = nb, the test
 * being nb < mp_.tcache_max_bytes (so a chunk of nb itself is not cached);
 * in 2.43's sources (the bminor/glibc mirror's master of 2026-01-20, just
 * before the release) mp_.tcache_max_bytes = nb + 1.  Not measured: the
 * installed glibc is 2.36. */
static size_t bn_tcache_max_bytes(unsigned minor, size_t value)
{
	size_t nb = bn_request2size(value);
	if (minor < 42 || nb <= BN_TC_MAX_CHUNK || bn_tc_large_index(nb) >= BN_TC_BINS + BN_TC_LARGE)
		return 0;
	return minor >= 43 ? nb + 1 : nb;
}

static void bn_read_options(bn_state_t *st, const hl_conf_t *conf)
{
	/* What changes between the releases modelled, read from the
	 * glibc-2.NN tags' malloc/malloc.c (and the commits of 2025-12-10 for
	 * 2.43): TCACHE_FILL_COUNT 7 up to 2.42, 16 in 2.43 ("malloc: set
	 * default tcache fill count to 16"); the fastbins, on by default
	 * (DEFAULT_MXFAST 128) up to 2.42, removed in 2.43 ("malloc: Remove
	 * fastbin infrastructure"). */
	st->glibc_minor = bn_version_minor(conf);
	int64_t depth = hl_conf_int(conf, "tcache_count");
	st->tcache_count = depth >= 0 ? (unsigned)depth : st->glibc_minor >= 43 ? 16 : 7;
	int fast = hl_conf_enum(conf, "fastbins"); /* version | on | off */
	bool fastbins = fast == 0 ? st->glibc_minor < 43 : fast == 1;
	st->arena_max = (unsigned)hl_conf_int(conf, "arena_max");
	st->arena_test = (unsigned)hl_conf_int(conf, "arena_test");
	st->per_core = (unsigned)hl_conf_int(conf, "arenas_per_core");
	st->mmap_threshold = hl_conf_size(conf, "mmap_threshold");
	st->trim_threshold = hl_conf_size(conf, "trim_threshold");
	st->top_pad = hl_conf_size(conf, "top_pad");
	st->mmap_max = (size_t)hl_conf_int(conf, "mmap_max");
	st->max_fast = fastbins ? BN_MAX_FAST : 0;
	st->tc_large_limit = bn_tcache_max_bytes(st->glibc_minor, hl_conf_size(conf, "tcache_max"));
	st->dyn_threshold = !hl_conf_given(conf, "mmap_threshold") &&
			    !hl_conf_given(conf, "trim_threshold") &&
			    !hl_conf_given(conf, "top_pad") && !hl_conf_given(conf, "mmap_max");
}

static void *bn_init(hl_heap_t *h, const hl_conf_t *conf)
{
	hl_os_t *os = hl_heap_os(h);
	bn_state_t *st = hl_policy_state_new(h, sizeof(*st));
	if (!st)
		return NULL;
	st->heap = h;
	st->os = os;
	st->page = hl_os_page(os);
	st->debug = hl_heap_debug(h);
	bn_read_options(st, conf);
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	st->ncores = n > 0 ? (unsigned)n : 1;
	if (hl_brk_init(os, &st->brk, hl_conf_size(conf, "brk_max"))) {
		hl_set_error("bins: cannot reserve the break");
		return NULL;
	}
	st->key = hl_mix64(hl_clock_seed(h) ^ (uintptr_t)st);
	st->fast_key = hl_mix64(st->key);
	bn_arena_init(&st->main, 0);
	st->main.owner = h;
	st->tail = st->next_to_use = &st->main;
	st->narenas = 1;
	pthread_mutex_init(&st->list_lock, NULL);
	pthread_mutex_init(&st->mmap_lock, NULL);
	hl_meta_init_private(&st->arena_pool, os, sizeof(bn_arena_t));
	hl_meta_init_private(&st->tcache_pool, os, sizeof(bn_tcache_t));
	hl_meta_init_private(&st->mmap_pool, os, sizeof(bn_mmap_t));
	/* the records' first page now, so that a program's first large block
	 * costs one mmap, as under glibc, not a second for its record */
	hl_meta_free(&st->mmap_pool, hl_meta_alloc(&st->mmap_pool));
	return st;
}

static void bn_destroy(void *stp)
{
	bn_state_t *st = stp;
	pthread_mutex_destroy(&st->list_lock);
	pthread_mutex_destroy(&st->mmap_lock);
}

/* heaplab diagnose's candidates: knobs that change how memory comes back,
 * each with what the real allocator needs to do the same. */
static const hl_whatif_t bn_whatif[] = {
	{ "", "the default (glibc malloc as it is)" },
	{ "arena_max:2", "MALLOC_ARENA_MAX=2" },
	{ "arena_max:1", "MALLOC_ARENA_MAX=1" },
	{ "trim_threshold:32K", "GLIBC_TUNABLES=glibc.malloc.trim_threshold=32768" },
	{ "mmap_threshold:32K", "GLIBC_TUNABLES=glibc.malloc.mmap_threshold=32768" },
	{ "arena_max:2,trim_threshold:32K", "MALLOC_ARENA_MAX=2 GLIBC_TUNABLES=glibc.malloc.trim_threshold=32768" },
	{ NULL, NULL },
};

/* Configurations the fuzzers run beside the defaults (core/policy.h). */
static const char *const bn_variants[] = {
	"fastbins:on,tcache_count:7,mmap_threshold:4K,trim_threshold:0,top_pad:0",
	"tcache_count:0,mmap_max:0",
	"fastbins:on,tcache_count:1,top_pad:4K",
	NULL,
};

const hl_policy_t hl_policy_bins = {
	.name = "bins",
	.summary = "dlmalloc / glibc ptmalloc: boundary tags, bins, tcache, arenas, mmap threshold",
	.options = bn_options,
	.fidelity_family = "glibc",
	.whatif = bn_whatif,
	.variants = bn_variants,
	.init = bn_init,
	.destroy = bn_destroy,
	.malloc = bn_malloc,
	.free = bn_free,
	.malloc_quiet = bn_malloc_quiet,
	.free_quiet = bn_free_quiet,
	.realloc = bn_realloc,
	.memalign = bn_memalign,
	.usable_size = bn_usable_size,
	.fresh_zero = bn_fresh_zero,
	.owns = bn_owns,
	.trim = bn_trim,
	.reset = NULL,
	.stats = bn_stats,
	.snapshot = bn_snapshot,
	.check = bn_check,
	.walk = bn_walk,
	.thread_exit = bn_thread_exit,
	.fork_prepare = bn_fork_prepare,
	.fork_parent = bn_fork_parent,
	.fork_child = bn_fork_child,
	.libc_api = &bn_libc_api,
};
