/**
 * @file lock.h
 * @brief A small mutual-exclusion lock on one word and a futex, for the
 *        locks a model takes on its allocation paths.
 *
 * glibc's arena lock is such a lock (glibc 2.36: malloc/arena.c takes
 * `__libc_lock_lock (ar_ptr->mutex)`, an `lll_lock`): an uncontended
 * acquire is one compare-and-swap and a release one exchange, both inline;
 * only a lock found busy goes to the kernel.  A pthread mutex costs two
 * calls into libc and their bookkeeping on every acquire and release, which
 * on a path like glibc's fastbins doubled the model's instructions.
 *
 *     word 0: free          1: held          2: held, and someone may wait
 *     acquire: CAS 0 -> 1, else hl_lock_wait (set 2, futex-wait until free)
 *     release: exchange 0; was 2 -> hl_lock_wake (futex-wake one)
 *
 * It does not nest and has no owner: the holder releases it.  After fork
 * the child sets it free with hl_lock_init, as for a pthread mutex.
 *
 * Its three read-modify-writes are sequentially consistent.  On x86-64
 * that is the same instruction as acquire or release (a locked cmpxchg, an
 * xchg); with acquire and release orders ThreadSanitizer reported races on
 * bins' arenas between holders of the same lock (test_bins, four threads),
 * which it does not with these.
 */
#ifndef HL_LOCK_H
#define HL_LOCK_H

#include <stdbool.h>

/** The lock: 0 free, 1 held, 2 held with possible waiters. */
typedef struct hl_lock {
	int word;
} hl_lock_t;

/** Makes @p l free (also in a fork child, whatever its state was). */
static inline void hl_lock_init(hl_lock_t *l)
{
	__atomic_store_n(&l->word, 0, __ATOMIC_RELAXED);
}

/** Takes @p l when it is free; false, having changed nothing, otherwise. */
static inline bool hl_lock_try(hl_lock_t *l)
{
	int expected = 0;
	return __atomic_compare_exchange_n(&l->word, &expected, 1, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

/** The contended acquire: waits in the kernel until @p l is taken. */
void hl_lock_wait(hl_lock_t *l);
/** Wakes one waiter of @p l (it was released with waiters). */
void hl_lock_wake(hl_lock_t *l);

/** Takes @p l; @return true when it had to wait (the lock was busy). */
static inline bool hl_lock(hl_lock_t *l)
{
	if (__builtin_expect(hl_lock_try(l), 1))
		return false;
	hl_lock_wait(l);
	return true;
}

/** Releases @p l (held by the caller). */
static inline void hl_unlock(hl_lock_t *l)
{
	if (__builtin_expect(__atomic_exchange_n(&l->word, 0, __ATOMIC_SEQ_CST) == 2, 0))
		hl_lock_wake(l);
}
#endif
