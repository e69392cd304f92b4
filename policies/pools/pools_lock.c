/*
 * The lock of `pools`: a spinlock standing in for CPython's GIL, biased
 * towards the first thread that uses the heap.
 *
 * CPython's allocator has no lock because the running thread holds the
 * GIL across many allocations.  A plain spinlock costs two atomic
 * read-modify-writes per malloc/free pair, which a single-threaded program
 * under CPython never pays.  So the first thread to enter claims a bias:
 * it then enters with two plain stores and a load,
 *
 *   owner:    me->busy = 1; compiler barrier;
 *             if (owner == me) { enter ... me->busy = 0 (release) }
 *             else { me->busy = 0; take the spinlock }
 *   revoker:  take spinlock; owner = NULL; membarrier(); wait old owner's
 *             busy == 0
 *
 * Without a fence between the owner's store and load, x86 may let the load
 * pass the store; membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) runs a full
 * barrier on every CPU running a thread of the process, so after it either
 * the owner has seen owner = NULL or its busy = 1 is visible to the
 * revoker (the asymmetric Dekker argument).  The owner is read only after
 * busy = 1 is published: a thread that read "owner == me" first and was
 * then preempted before its busy = 1 could wake to find the bias revoked
 * and already claimed by the revoker (now inside under the spinlock);
 * entering on that early read let two threads in at once.
 * ThreadSanitizer caught that in test_pools' threads_share_one_lock (the
 * bias was then two words, a flag and the owner, and the fix read the
 * owner again after the flag; one word read once after the mark does the
 * same with fewer instructions).  The busy mark is in each thread's own
 * record (hl_thread_t.lock_busy), not one word of the heap's: with a
 * single shared word, that late thread's "busy = 1 ... busy = 0" cleared
 * the mark of the thread then holding the bias, and the next revoker went
 * in beside it (TSan, conformance's realloc_moving_while_another_thread_
 * allocates, about one run in four).  A thread that is not the owner
 * marks only its own record, on which no revoker waits.
 *
 * Like the GIL, the bias then moves to the thread that asked: a program
 * whose main thread starts one worker that does all the allocating pays
 * one revocation, not a lock on every call.  Each move costs a membarrier,
 * so after PL_BIAS_MOVES moves the heap is taken to be truly shared and the
 * bias is given up: from then on every entry takes the spinlock.  A fork
 * revokes the bias without moving it (the next caller claims it afresh).
 * Where membarrier is not available the bias is never claimed, nor on a
 * debug heap: its every call takes the spinlock and the full checks, so
 * the bias holder's quick free (pools.c) need not test for debug.
 */
#include "config.h"
#include <linux/membarrier.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "pools.h"

static inline void pl_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/* Contended: spin a little on a plain load, then let the holder run. */
void pl_lock_slow(pl_state_t *s)
{
	for (unsigned spins = 0;; spins++) {
		if (!__atomic_load_n(&s->lock, __ATOMIC_RELAXED) &&
		    !__atomic_exchange_n(&s->lock, 1, __ATOMIC_ACQUIRE))
			return;
		if (spins < 64)
			pl_cpu_relax();
		else
			sched_yield();
	}
}

static long pl_membarrier(int cmd)
{
	return syscall(SYS_membarrier, cmd, 0, 0);
}

void pl_lock_init(pl_state_t *s)
{
	s->bias_ok = !s->debug &&
		pl_membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
}

void pl_revoke_bias(pl_state_t *s)
{
	hl_thread_t *owner = __atomic_load_n(&s->bias_owner, __ATOMIC_RELAXED);
	if (!owner)
		return;
	__atomic_store_n(&s->bias_owner, NULL, __ATOMIC_SEQ_CST);
	if (pl_membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0)
		hl_fatal(&hl_policy_pools, "membarrier failed while revoking the lock bias", NULL);
	for (unsigned spins = 0; __atomic_load_n(&owner->lock_busy, __ATOMIC_ACQUIRE); spins++)
		if (spins < 64)
			pl_cpu_relax();
		else
			sched_yield();
}

static void pl_claim_bias(pl_state_t *s, hl_thread_t *t)
{
	__atomic_store_n(&s->bias_owner, t, __ATOMIC_RELEASE);
}

/* Slow entry: the spinlock, then claim the bias when nobody holds it, or
 * move it here from the thread holding it (until PL_BIAS_MOVES moves).
 * A reader (checker, stats, walker, snapshot) only revokes it: the holder
 * claims it back on its next call, without counting a move. */
void pl_enter_locked(pl_state_t *s, hl_thread_t *t, bool reader)
{
	pl_lock(s);
	if (!s->bias_ok)
		return;
	bool held = __atomic_load_n(&s->bias_owner, __ATOMIC_RELAXED) != NULL;
	if (held)
		pl_revoke_bias(s);
	if (reader)
		return;
	if (held && ++s->bias_moves > PL_BIAS_MOVES) {
		s->bias_ok = false;
		return;
	}
	pl_claim_bias(s, t);
}
