/**
 * @file bins_fast.h
 * @brief Policy `bins`, the hits of malloc and free: a pop from the
 *        thread's tcache bin, a put onto it.  bins.c's quiet and listening
 *        copies are built on these functions, and the malloc shim inlines
 *        the two hits (shim/fast_paths.h).  They call the tcache layer
 *        only.
 */
#ifndef HL_BINS_FAST_H
#define HL_BINS_FAST_H

#include "bins_tcache.h"

/** Thread @p t's tcache when chunk size @p nb is a tcache size, else NULL
 *  (no tcache yet: the thread's first call). */
static inline bn_tcache_t *bn_tcache_for(hl_thread_t *t, size_t nb)
{
	bn_tcache_t *tc = t->policy_tls;
	return HL_LIKELY(tc != NULL) && nb <= BN_TC_MAX_CHUNK ? tc : NULL;
}

/** A hit on bin @p i of @p tc (not empty): counted, and its newest chunk. */
static inline void *bn_tcache_hit(bn_tcache_t *tc, unsigned i)
{
	tc->hits++;
	return bn_tcache_get(tc, i);
}

/** malloc's hit: the newest chunk of the tcache bin for @p n, or NULL
 *  (nothing changed: the quiet malloc counts the miss).  Any @p n: 0 and
 *  requests above the tcache's are not hits (one unsigned comparison, the
 *  shim's only size test on a hit; it also keeps bn_request2size from
 *  wrapping). */
static inline void *bn_malloc_hit(void *stp, hl_thread_t *t, size_t n)
{
	(void)stp;
	bn_tcache_t *tc = t->policy_tls;
	if (HL_UNLIKELY(n - 1 >= BN_TC_MAX_CHUNK - BN_SIZE_SZ || tc == NULL))
		return NULL;
	unsigned i = bn_tc_index(bn_request2size(n));
	return tc->entries[i] ? bn_tcache_hit(tc, i) : NULL;
}

/** The cheap checks glibc's free makes on every pointer (aborting on a
 *  bad one).  Debug mode adds one in bins.c: the chunk lies in this heap;
 *  the shim never takes the hits of a heap in debug mode. */
static inline void bn_check_pointer(bn_chunk_t *c, size_t sz)
{
	if (HL_UNLIKELY(((uintptr_t)c & 15) || (uintptr_t)c > (uintptr_t)-sz))
		hl_fatal(BN, "free(): invalid pointer", bn_chunk2mem(c));
	if (HL_UNLIKELY(sz < BN_MINSIZE || (sz & 15)))
		hl_fatal(BN, "free(): invalid size", bn_chunk2mem(c));
}

/** free's first steps: chunk @p c checked as glibc checks every pointer,
 *  then the thread's tcache and the bin in @p *idx when the chunk has a
 *  tcache size and is not mmapped; else NULL (the arena's business). */
static inline bn_tcache_t *bn_free_tcache(hl_thread_t *t, bn_chunk_t *c, unsigned *idx)
{
	size_t word = bn_size_word(c), sz = word & ~(size_t)BN_FLAGS;
	bn_check_pointer(c, sz);
	bn_tcache_t *tc = bn_tcache_for(t, sz);
	if (!tc || (word & BN_M))
		return NULL;
	*idx = bn_tc_index(sz);
	return tc;
}

/** free's hit: @p p put on its tcache bin when the bin has room and the
 *  chunk's key does not suggest a double free; false otherwise (nothing
 *  changed: the quiet free scans, or goes to the arena). */
static inline bool bn_free_hit(void *stp, hl_thread_t *t, void *p)
{
	bn_state_t *st = stp;
	bn_chunk_t *c = bn_mem2chunk(p);
	unsigned i;
	bn_tcache_t *tc = bn_free_tcache(t, c, &i);
	if (tc && HL_LIKELY(((bn_tentry_t *)p)->key != st->key) && tc->counts[i] < st->tcache_count) {
		bn_tcache_put(st, tc, c, i);
		return true;
	}
	return false;
}

/* The shim's row for this policy (shim/fast_paths.h): path, table, prefix
 * of the hits, always allowed, and free's hit does not screen (it reads
 * the chunk header first). */
#define HL_FAST_ROWS_BINS(X) X(HL_FAST_BINS, hl_policy_bins, bn, true, false)
#endif
