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
 * assembly, inline here (percpu_rseq.c draws one); elsewhere
 * pc_rseq_usable() is false and the policy runs in lock mode.
 */
#ifndef HL_PERCPU_RSEQ_H
#define HL_PERCPU_RSEQ_H

#include "percpu.h"
#if defined(__x86_64__) && defined(__linux__)
#include <sys/rseq.h>
/** 1 where the critical sections below exist (x86-64 Linux). */
#define PC_HAVE_RSEQ 1
#else
#define PC_HAVE_RSEQ 0
#endif

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
/** glibc's __rseq_offset, where every thread's struct rseq lies from its
 *  thread pointer (0 without rseq). */
long pc_rseq_area_offset(void);
/** Re-registers the process for the fence (a fork child). */
void pc_rseq_reregister(void);
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

/* The critical sections (x86-64 inline assembly; percpu_rseq.c's header
 * comment draws one).  They are inline so that the shim's malloc and free
 * run them without a call (shim/fast_paths.h). */
#if PC_HAVE_RSEQ
/* The calling thread's struct rseq, which glibc registered. */
static inline struct rseq *pc_rseq_area(void)
{
	return (struct rseq *)((char *)__builtin_thread_pointer() + __rseq_offset);
}

/* The start of the push and the pop: the offset of the thread's struct
 * rseq from its thread pointer (glibc's __rseq_offset, copied into the
 * state at init, so one load) into %[rs]; the descriptor stored in the
 * area's rseq_cs (through %fs, as TCMalloc's sections address
 * __rseq_abi, internal/percpu_rseq_x86_64.S: %fs:__rseq_abi@TPOFF;
 * google/tcmalloc fce3f55); then the slab of the CPU in the area's
 * cpu_id, from open_slab, or `slow` when the entry is NULL (the slab is
 * stopped, or the CPU has none).  The offset is loaded inside the asm,
 * anew at each (re)start, so the compiler keeps no copy alive across a
 * section.  The state's fields are read at their offsets from %[s], so
 * that the sections need few registers: inlined into the shim's malloc
 * and free, more would make every call save and restore some. */
#define PC_RSEQ_START(tmp)                                                     \
	"movq %c[o_rsoff](%[s]), %[rs]\n\t"                                    \
	PC_RSEQ_ENTER(tmp)                                                     \
	"movzwl %%fs:4(%[rs]), %k[slab]\n\t"                                   \
	"movq %c[o_open](%[s],%[slab],8), %[slab]\n\t"                         \
	"testq %[slab], %[slab]\n\t"                                          \
	"jz %l[slow]\n\t"
/* The descriptor (section __rseq_cs, 32-byte aligned, as the kernel
 * wants) stored in the thread's rseq_cs through scratch register @p tmp,
 * then label 1, the section's start. */
#define PC_RSEQ_ENTER(tmp)                                                     \
	".pushsection __rseq_cs, \"aw\"\n\t"                                   \
	".balign 32\n\t"                                                       \
	"3:\n\t"                                                               \
	".long 0, 0\n\t"                                                       \
	".quad 1f, 2f - 1f, 4f\n\t"                                            \
	".popsection\n\t"                                                      \
	"leaq 3b(%%rip), %[" #tmp "]\n\t"                                      \
	"movq %[" #tmp "], %%fs:8(%[rs])\n\t"                                  \
	"1:\n\t"
/* Label 2 ends the section (right after the commit store); the abort
 * handler, label 4 behind the signature glibc registered (RSEQ_SIG),
 * lies out of the way and jumps to `restart_count`. */
#define PC_RSEQ_END                                                            \
	"2:\n\t"                                                               \
	".pushsection .text.unlikely, \"ax\"\n\t"                              \
	".byte 0x0f, 0xb9, 0x3d\n\t"                                           \
	".long 0x53053053\n\t"                                                 \
	"4:\n\t"                                                               \
	"jmp %l[restart_count]\n\t"                                            \
	".popsection\n\t"
/* %[rs] := the address of class %[cls]'s slots in %[slab]. */
#define PC_RSEQ_SLOTS                                                          \
	"movl %c[o_slots](%[s],%[cls],4), %k[rs]\n\t"                          \
	"addq %[slab], %[rs]\n\t"
/* The clobbers and the C labels of both sections. */
#define PC_RSEQ_CLOBBERS : "memory", "cc" : slow, restart_count
/* Both sections' C labels: an abort counts a restart and runs the
 * section again; `slow` gives up. */
#define PC_RSEQ_LABELS(s)                                                      \
	restart_count:                                                         \
	atomic_fetch_add_explicit(&(s)->restarts, 1, memory_order_relaxed);    \
	goto restart;                                                          \
	slow:                                                                  \
	return PC_RSEQ_SLOW;
/* The operands both sections read: the state, the class and the state's
 * field offsets. */
#define PC_RSEQ_INPUTS(s, cls) [s] "r"(s), [cls] "r"((unsigned long)(cls)), PC_RSEQ_OFFSETS
#define PC_RSEQ_OFFSETS                                                        \
	[o_rsoff] "i"(offsetof(pc_state_t, rseq_offset)),                      \
	[o_open] "i"(offsetof(pc_state_t, open_slab)),                         \
	[o_slots] "i"(offsetof(pc_state_t, slot_off)),                         \
	[o_stacks] "i"(offsetof(pc_slab_t, stacks))

/* The sections are `asm goto` (GCC 11+: outputs on the fall-through
 * path), so a hit needs no result code, and marked volatile although the
 * manual says asm goto always is: GCC 12 deleted the push, whose outputs
 * nobody reads, and every freed object was lost (policies/percpu/test_percpu's
 * restarts_lose_and_duplicate_nothing saw it). */
/** @cond HL_COMPILE_CHECKS */
_Static_assert(sizeof(pc_stack_t) == 8 && offsetof(pc_stack_t, capacity) == 4, "the sections' addressing");
_Static_assert(sizeof(((pc_state_t *)0)->slot_off[0]) == 4, "the sections read 32-bit fields");
_Static_assert(PC_CPU_IDS == 1 << 16, "the sections index open_slab by a 16-bit CPU number");
/** @endcond */

/** Pushes @p p onto this CPU's stack of class @p cls (inlined into the
 *  shim's free through percpu_fast.h, and called by the per-CPU front). */
static inline __attribute__((always_inline)) enum pc_rseq_result pc_rseq_push(pc_state_t *s, unsigned cls, void *p)
{
	pc_handoff_put(p);
restart:;
	unsigned long rs, slab, cur;
	__asm__ __volatile__ goto(PC_RSEQ_START(cur)
		     "movl %c[o_stacks](%[slab],%[cls],8), %k[cur]\n\t"
		     "cmpl %c[o_stacks]+4(%[slab],%[cls],8), %k[cur]\n\t"
		     "jae %l[slow]\n\t"
		     PC_RSEQ_SLOTS
		     "movq %[p], (%[rs],%[cur],8)\n\t"
		     "incl %k[cur]\n\t"
		     "movl %k[cur], %c[o_stacks](%[slab],%[cls],8)\n\t"
		     PC_RSEQ_END
		     : [slab] "=&r"(slab), [cur] "=&r"(cur), [rs] "=&r"(rs)
		     : [p] "r"(p), PC_RSEQ_INPUTS(s, cls)
		     PC_RSEQ_CLOBBERS);
	return PC_RSEQ_DONE;
	PC_RSEQ_LABELS(s)
}

/** Pops this CPU's stack of class @p cls into *@p out (inlined as the push). */
static inline __attribute__((always_inline)) enum pc_rseq_result pc_rseq_pop(pc_state_t *s, unsigned cls, void **out)
{
restart:;
	unsigned long rs, slab, cur;
	void *obj;
	__asm__ __volatile__ goto(PC_RSEQ_START(obj)
		     "movl %c[o_stacks](%[slab],%[cls],8), %k[cur]\n\t"
		     "subl $1, %k[cur]\n\t"
		     "jb %l[slow]\n\t"
		     PC_RSEQ_SLOTS
		     "movq (%[rs],%[cur],8), %[obj]\n\t"
		     "movl %k[cur], %c[o_stacks](%[slab],%[cls],8)\n\t"
		     PC_RSEQ_END
		     : [slab] "=&r"(slab), [cur] "=&r"(cur), [obj] "=&r"(obj), [rs] "=&r"(rs)
		     : PC_RSEQ_INPUTS(s, cls)
		     PC_RSEQ_CLOBBERS);
	pc_handoff_take(obj);
	*out = obj;
	return PC_RSEQ_DONE;
	PC_RSEQ_LABELS(s)
}

/** Stops CPU @p cpu's slab from that CPU: clears its open_slab entry in
 *  a critical section whose commit is the store, taken only while the
 *  thread runs on @p cpu (TCMalloc's StoreCurrentCpu, as its Grow changes
 *  the current CPU's header).  No fence is needed then: a section of
 *  another thread on this CPU cannot be running, and one it was preempted
 *  in restarts when it resumes and reads the entry.  @return false,
 *  having stored nothing, when the thread is on another CPU or was
 *  preempted in the section (the caller then clears and fences). */
static inline bool pc_rseq_stop_here(pc_state_t *s, unsigned cpu)
{
	unsigned long rs = (unsigned long)s->rseq_offset;
	unsigned long tmp;
	__asm__ __volatile__ goto(PC_RSEQ_ENTER(tmp)
		     "cmpl %%fs:4(%[rs]), %k[cpu]\n\t"
		     "jne %l[slow]\n\t"
		     "movq $0, (%[entry])\n\t"
		     PC_RSEQ_END
		     : [tmp] "=&r"(tmp)
		     : [rs] "r"(rs), [cpu] "r"((unsigned long)cpu), [entry] "r"(&s->open_slab[cpu])
		     PC_RSEQ_CLOBBERS);
	return true;
restart_count:
slow:
	return false;
}
#else
static inline enum pc_rseq_result pc_rseq_push(pc_state_t *s, unsigned cls, void *p)
{
	(void)s, (void)cls, (void)p;
	return PC_RSEQ_SLOW;
}
static inline enum pc_rseq_result pc_rseq_pop(pc_state_t *s, unsigned cls, void **out)
{
	(void)s, (void)cls, (void)out;
	return PC_RSEQ_SLOW;
}
static inline bool pc_rseq_stop_here(pc_state_t *s, unsigned cpu)
{
	(void)s, (void)cpu;
	return false;
}
#endif
#endif
