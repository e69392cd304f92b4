/**
 * @file pools_fast.h
 * @brief Policy `pools`, the fast paths of pymalloc_alloc and
 *        pymalloc_free: the pop from the first pool on usedpools[class]
 *        and the push onto a block's pool, lock held, then the hits that
 *        enter by the lock's bias around them.  pools.c builds its quiet
 *        and listening copies on the same pop and push, and the malloc
 *        shim inlines the hits (shim/fast_paths.h).  They call the
 *        pool lists and the lock of pools.h only.
 *
 *   malloc hit:  1 <= n <= 512, enter by bias ─► pl_pool_alloc ─► leave
 *   free hit:    in an arena (the map), enter by bias ─► pl_pool_free ─► leave
 *   anything else (a new pool, the pool's last block, a failed check, a
 *   thread without the bias): NULL / false, nothing changed; the quiet
 *   copy then serves it.
 */
#ifndef HL_POOLS_FAST_H
#define HL_POOLS_FAST_H

#include "pools.h"

/** True when link @p next of free block @p bp lies in bp's pool (so is
 *  not NULL): the addresses agree above the pool bits. */
static inline bool pl_link_in_pool(const pl_state_t *s, const void *bp, const void *next)
{
	return ((uintptr_t)next ^ (uintptr_t)bp) < s->pool_size;
}

/** pymalloc_alloc's pop, lock held: the first free block of the first
 *  pool on usedpools[@p c]; when it was the pool's last freed block, the
 *  pool is extended (pl_pool_extend) or, full, leaves usedpools.  Counts
 *  small_mallocs.  NULL, nothing changed, when usedpools[c] is empty or
 *  the block's link leaves its pool (written over after a free): the
 *  caller's slow path (pl_malloc_rare).  Events only when @p listening
 *  (event.h, "Quiet copies"). */
static inline __attribute__((always_inline)) void *pl_pool_alloc(pl_state_t *s, size_t c, bool listening)
{
	pl_pool_t *head = pl_used_head(s, c), *pool = head->nextpool;
	if (HL_UNLIKELY(pool == head))
		return NULL;
	void *bp = pool->freeblock;
	void *next = *(void **)bp;
	if (HL_LIKELY(pl_link_in_pool(s, bp, next))) {
		if (listening) HL_EV(s->heap, HL_EV_LIST_POP, "usedpools[class]: first pool's freeblock", c, s->stride[c], bp);
		pool->freeblock = next;
	} else if (HL_LIKELY(next == NULL)) {
		if (listening) HL_EV(s->heap, HL_EV_LIST_POP, "usedpools[class]: the pool's last freed block, then the pool is extended", c, s->stride[c], bp);
		pool->freeblock = NULL;
		if (pl_pool_extend(s, pool) && listening)
			HL_EV(s->heap, HL_EV_MOVE, "pool full: leaves usedpools[class]", c, 0, pl_pool_base(s, pool));
	} else {
		return NULL;
	}
	pool->ref.count++;
	s->small_mallocs++;
	return bp;
}

/** pymalloc_free's push, lock held: block @p p goes first on its pool's
 *  list, and a pool that was full goes back first on usedpools
 *  (insert_to_usedpool).  false, nothing changed,
 *  when a cheap check of pl_free_check (pools.c) fails or p is its pool's
 *  last live block (the pool empties: pl_insert_to_freepool's business):
 *  the caller's slow path (pl_free_rare).  The span test is one
 *  comparison: a never-carved pool (nextoffset 0, below the header, so
 *  the subtraction wraps) passes it but has count 0.  Events only when
 *  @p listening. */
static inline __attribute__((always_inline)) bool pl_pool_free(pl_state_t *s, void *p, bool listening)
{
	pl_pool_t *pool = pl_pool_of(s, p);
	uintptr_t off = ((uintptr_t)p & s->pool_mask) - PL_POOL_OVERHEAD;
	uintptr_t span = (uintptr_t)pool->nextoffset - PL_POOL_OVERHEAD;
	void *lastfree = pool->freeblock;
	uint32_t count = pool->ref.count;
	if (HL_UNLIKELY(off >= span || p == lastfree || count <= 1))
		return false;
	if (listening) HL_EV(s->heap, HL_EV_LIST_PUSH, "pool freeblock, class", pool->szidx, s->stride[pool->szidx], p);
	*(void **)p = lastfree;
	pool->freeblock = p;
	pool->ref.count = count - 1;
	if (HL_UNLIKELY(lastfree == NULL)) {          /* it was full */
		if (listening) HL_EV(s->heap, HL_EV_MOVE, "pool was full: first on usedpools[class] again", pool->szidx, 0, pl_pool_base(s, pool));
		pl_used_push(s, pool, pool->szidx);
	}
	return true;
}

/** malloc's hit: @p n bytes from a pool, for the bias holder @p t; NULL,
 *  nothing changed, for a large request, a thread without the bias, or a
 *  case of pl_pool_alloc's slow path. */
static inline void *pl_malloc_hit(void *st, hl_thread_t *t, size_t n)
{
	pl_state_t *s = st;
	if (HL_UNLIKELY(t->exited || n - 1 >= PL_THRESHOLD) || HL_UNLIKELY(!pl_enter_by_bias(s, t)))
		return NULL;
	void *bp = pl_pool_alloc(s, pl_class_of(s, n), false);
	pl_leave_bias(t);
	return bp;
}

/** free's hit: @p p, a block of one of our arenas, back onto its pool by
 *  the bias holder @p t; false, nothing changed, otherwise (a fallback
 *  block, no bias, a case of pl_pool_free's slow path). */
static inline bool pl_free_hit(void *st, hl_thread_t *t, void *p)
{
	pl_state_t *s = st;
	if (HL_UNLIKELY(t->exited || !pl_map_is_used(s, p)) || HL_UNLIKELY(!pl_enter_by_bias(s, t)))
		return false;
	bool done = pl_pool_free(s, p, false);
	pl_leave_bias(t);
	return done;
}

/* The shim's row for this policy (shim/fast_paths.h): path, table, prefix
 * of the hits, always allowed, free's hit screens by the arena map. */
#define HL_FAST_ROWS_POOLS(X) X(HL_FAST_POOLS, hl_policy_pools, pl, true, true)
#endif
