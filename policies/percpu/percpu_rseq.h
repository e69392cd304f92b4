/**
 * @file percpu_rseq.h
 * @brief The rseq layer of `percpu`: one push and one pop on this CPU's
 *        stack of a class inside a restartable sequence, the CPU number,
 *        and the fence a slow path uses to stop another CPU's slab.
 *
 * Reached through glibc's registration (glibc 2.35+ registers every
 * thread's struct rseq; `__rseq_offset` from the thread pointer finds it,
 * `__rseq_size` is 0 when it did not, e.g. GLIBC_TUNABLES=
 * glibc.pthread.rseq=0).  The critical sections are x86-64 inline
 * assembly (percpu_rseq.c); elsewhere pc_rseq_usable() is false and the
 * policy runs in lock mode.
 */
#ifndef HL_PERCPU_RSEQ_H
#define HL_PERCPU_RSEQ_H

#include "percpu.h"

/** Result of one critical section. */
enum pc_rseq_result {
	PC_RSEQ_DONE = 0,      /**< committed */
	PC_RSEQ_SLOW,          /**< stack full (push) or empty (pop), slab
				    stopped, or CPU without a slab: slow path */
};

/** True when this thread's rseq area is registered, the kernel fences
 *  rseq critical sections (membarrier), and the process registered for
 *  it.  Called once at init. */
bool pc_rseq_usable(void);
/** Re-registers the process for the fence (a fork child). */
void pc_rseq_reregister(void);
/** Pushes @p p onto this CPU's stack of class @p cls. */
enum pc_rseq_result pc_rseq_push(pc_state_t *s, unsigned cls, void *p);
/** Pops this CPU's stack of class @p cls into *@p out. */
enum pc_rseq_result pc_rseq_pop(pc_state_t *s, unsigned cls, void **out);
/** The CPU this thread runs on now (rseq's cpu_id, or sched_getcpu() in
 *  lock mode), folded into 0 .. ncpus-1. */
unsigned pc_cpu_now(const pc_state_t *s);
/** Restarts any critical section running on CPU @p cpu (membarrier). */
void pc_rseq_fence(unsigned cpu);

/* ThreadSanitizer cannot see inside the assembly: an object pushed in a
 * critical section by one thread and popped by another (or taken out by a
 * slow path under the CPU's lock) reaches it with no happens-before edge
 * that TSan knows of, and it then reports the second thread's reads of
 * the object's span as races with the first thread's writes.  The edge is
 * real: the commit store and the kernel's switch between the two threads
 * order them.  In a TSan build every object that enters a per-CPU stack
 * is released under its own address, and acquired when it leaves
 * (tsan_interface.h's __tsan_release/__tsan_acquire); elsewhere these
 * are nothing. */
#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
/** Marks @p p as handed over: it enters a per-CPU stack. */
static inline void pc_handoff_put(void *p) { __tsan_release(p); }
/** Marks @p p as taken over: it leaves a per-CPU stack. */
static inline void pc_handoff_take(void *p) { __tsan_acquire(p); }
#else
static inline void pc_handoff_put(void *p) { (void)p; }
static inline void pc_handoff_take(void *p) { (void)p; }
#endif
#endif
