/**
 * @file bins_tcache.h
 * @brief Policy `bins`, the tcache: per-thread LIFO lists of exact chunk
 *        sizes in front of the arenas, used without a lock.  The lowest
 *        layer of the policy but bins.h (see bins.h, "Layers"): bins.c and
 *        bins_arena.c both put chunks here and take them out, and nothing
 *        here calls either.  Putting and taking are inline: they are
 *        malloc's and free's fast path.
 */
#ifndef HL_BINS_TCACHE_H
#define HL_BINS_TCACHE_H

#include "bins.h"

/** A cached chunk's payload: the tcache link and the double-free key. */
typedef struct bn_tentry {
	uintptr_t next;   /**< next entry, safe-linked: (&next >> 12) ^ ptr */
	uint64_t key;     /**< bn_state_t.key while cached, 0 once handed out */
} bn_tentry_t;

/** glibc's tcache_perthread_struct up to 2.41, field for field: what the
 *  record's chunk holds (from 2.42 the chunk is asked 760 bytes, the 12
 *  large bins' slots left unused: their lists are in bn_tcache_t). */
typedef struct bn_tcache_rec {
	uint16_t counts[BN_TC_BINS];       /**< entries per bin */
	bn_tentry_t *entries[BN_TC_BINS];  /**< list heads */
} bn_tcache_rec_t;
/** @cond HL_COMPILE_CHECKS */
_Static_assert(sizeof(bn_tcache_rec_t) == BN_TC_STRUCT, "glibc 2.41's tcache_perthread_struct");
/** @endcond */

/** Per (thread, heap) state: t->policy_tls, in the policy's metadata.  Its
 *  counts and list heads are in the record, which is a chunk of the
 *  thread's arena as glibc's tcache_perthread_struct is; without one
 *  (tcache_count 0, or that chunk could not be had) the record is `own`. */
struct bn_tcache {
	uint16_t *counts;                  /**< rec->counts (owner only) */
	bn_tentry_t **entries;             /**< rec->entries (owner only) */
	bn_tcache_rec_t *rec;              /**< the record (set once) */
	bn_chunk_t *chunk;                 /**< its chunk, NULL when it is `own` */
	bn_arena_t *arena;                 /**< bound arena, NULL until needed */
	uint64_t hits;                     /**< mallocs served from the cache
					        (owner writes, stats read racily) */
	uint64_t misses;                   /**< cacheable mallocs that found their
					        bin empty (same rule as hits) */
	unsigned thread;                   /**< hl_thread_t.index, for pictures */
	struct bn_tcache *next;            /**< next in the registry (list_lock) */
	struct bn_tcache *prev;            /**< previous in the registry (list_lock) */
	struct bn_tcache *rec_next;        /**< next on the records list of the
					        arena holding chunk (its lock) */
	bn_tentry_t *large[BN_TC_LARGE];   /**< glibc 2.42's large bins 64..75
					        (tcache_max), sorted by size */
	uint16_t large_counts[BN_TC_LARGE];/**< entries on each (owner only) */
	bn_tcache_rec_t own;               /**< the record when chunk is NULL */
};

/** glibc 2.42's large_csize2tidx (malloc/malloc.c): TCACHE_SMALL_BINS +
 *  __builtin_clz (MAX_TCACHE_SMALL_SIZE) - __builtin_clz (nb), one bin per
 *  power of two, 64 for chunks 1041..2047 (MAX_TCACHE_SMALL_SIZE is 1032 in
 *  2.42 and 1040 after it: the same leading zeros).  76 and up: too big. */
static inline unsigned bn_tc_large_index(size_t nb)
{
	return BN_TC_BINS + (unsigned)__builtin_clz(BN_TC_MAX_CHUNK) - (unsigned)__builtin_clz((unsigned)nb);
}
/** glibc 2.42's tcache_get_large: the first chunk of at least @p nb bytes
 *  on large bin @p j (0..11) of @p tc, taken off its list, only when it is
 *  exactly @p nb bytes with @p exact (glibc 2.43); NULL when none. */
void *bn_tcache_get_large(bn_tcache_t *tc, unsigned j, size_t nb, bool exact);
/** glibc 2.42's tcache_put_large: chunk @p c put before the first chunk
 *  at least as big on large bin @p j of @p tc (the caller checked room). */
void bn_tcache_put_large(bn_state_t *st, bn_tcache_t *tc, bn_chunk_t *c, unsigned j);
/** bn_tcache_double_free_scan for large bin @p j. */
void bn_tcache_double_free_scan_large(bn_state_t *st, bn_tcache_t *tc, bn_tentry_t *e, unsigned j);

/** Tcache bin of chunk size @p sz: 0 for 32 bytes, one per 16 bytes. */
static inline unsigned bn_tc_index(size_t sz) { return (unsigned)((sz - BN_MINSIZE) >> 4); }

/** Safe-linking: a stored link is the pointer xor its own address >> 12
 *  (the same operation stores a link and reads it back). */
static inline uintptr_t bn_protect(const void *pos, uintptr_t ptr)
{
	return ((uintptr_t)pos >> 12) ^ ptr;
}
/** The entry after @p e on its tcache list (its link decoded, unchecked). */
static inline bn_tentry_t *bn_tentry_next(const bn_tentry_t *e)
{
	return (bn_tentry_t *)bn_protect(&e->next, e->next);
}
/** Pushes chunk @p c on tcache bin @p idx of @p tc, writing the key and the
 *  safe-linked next pointer into its payload (owner thread only). */
static inline void bn_tcache_put(bn_state_t *st, bn_tcache_t *tc, bn_chunk_t *c, unsigned idx)
{
	bn_tentry_t *e = bn_chunk2mem(c);
	e->key = st->key;
	e->next = bn_protect(&e->next, (uintptr_t)tc->entries[idx]);
	tc->entries[idx] = e;
	tc->counts[idx]++;
}
/** Pops the newest entry of non-empty tcache bin @p idx and clears its key;
 *  aborts when the stored link decodes to a misaligned address. */
static inline void *bn_tcache_get(bn_tcache_t *tc, unsigned idx)
{
	bn_tentry_t *e = tc->entries[idx];
	uintptr_t nx = bn_protect(&e->next, e->next);
	if (HL_UNLIKELY(nx & 15))
		hl_fatal(BN, "malloc(): unaligned tcache chunk detected", e);
	tc->entries[idx] = (bn_tentry_t *)nx;
	tc->counts[idx]--;
	e->key = 0;
	return e;
}
/** True when @p tc exists and its bin @p idx can take one more chunk. */
static inline bool bn_tcache_room(const bn_state_t *st, const bn_tcache_t *tc, unsigned idx)
{
	return tc && idx < BN_TC_BINS && tc->counts[idx] < st->tcache_count;
}
/** The key of the chunk at @p e matched: aborts when @p e really is on
 *  bin @p idx of this thread's cache @p tc (a double free), or when the
 *  list is longer than the depth or holds a misaligned entry. */
void bn_tcache_double_free_scan(bn_state_t *st, bn_tcache_t *tc, bn_tentry_t *e, unsigned idx);
/** True when in-use chunk @p c of arena @p a holds a thread's tcache
 *  record (its arena's records list; call with a's lock held). */
static inline bool bn_is_tcache_record(const bn_arena_t *a, const bn_chunk_t *c)
{
	for (const bn_tcache_t *tc = a->records; tc; tc = tc->rec_next)
		if (tc->chunk == c)
			return true;
	return false;
}
#endif
