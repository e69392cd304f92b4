/*
 * percpu_rseq.c — push and pop on a per-CPU stack inside a Linux
 * restartable sequence, as TCMalloc's percpu_rseq_x86_64 does (this is
 * heaplab's own, smaller assembly).
 *
 * A critical section here is:
 *
 *      rs->rseq_cs = &descriptor          (start, post-commit, abort)
 *   1: cpu   = rs->cpu_id                 ─┐ if the kernel preempts,
 *      slab  = slabs + cpu * stride         │ migrates or signals the
 *      if cpu >= ncpus or slab->stopped:    │ thread in here, it resumes
 *          slow                             │ at the abort handler, not
 *      cur   = slab->stacks[cls].current    │ where it was, so nothing
 *      push: cap check, slots[cur] = p      │ is half done
 *      pop:  empty check, out = slots[cur-1]│
 *      slab->stacks[cls].current = cur ± 1 ─┘ the commit: one store
 *   2: done
 *   sig: the 4 bytes 0x53053053 glibc registered (RSEQ_SIG)
 *   4: abort handler: count the restart, try again
 *
 * The descriptor lives in section __rseq_cs, 32-byte aligned, as the
 * kernel wants.  Nothing between 1 and 2 is visible to another thread
 * until the commit store, and another thread only changes this slab
 * either in a critical section on this CPU (which preempted us, so ours
 * restarts) or after stopping it: a slow path sets `stopped` and then
 * fences the CPU with membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ),
 * which restarts a section that read `stopped` before the store.
 */
#include "config.h"
#include <sched.h>
#include <unistd.h>
#include <sys/syscall.h>
#if defined(__x86_64__) && defined(__linux__)
#include <sys/rseq.h>
#include <linux/membarrier.h>
#define PC_HAVE_RSEQ 1
#else
#define PC_HAVE_RSEQ 0
#endif
#include "percpu_rseq.h"

#if PC_HAVE_RSEQ

static inline struct rseq *pc_rseq_area(void)
{
	return (struct rseq *)((char *)__builtin_thread_pointer() + __rseq_offset);
}

/* Offset of class @cls's stack header in a slab. */
static inline size_t pc_hoff(unsigned cls)
{
	return offsetof(pc_slab_t, stacks) + (size_t)cls * sizeof(pc_stack_t);
}

/* The descriptor, the signature and the result codes shared by both
 * sections: 0 committed, 1 slow, 2 aborted. */
#define PC_RSEQ_DESCRIPTOR                                                     \
	".pushsection __rseq_cs, \"aw\"\n\t"                                   \
	".balign 32\n\t"                                                       \
	"3:\n\t"                                                               \
	".long 0, 0\n\t"                                                       \
	".quad 1f, 2f - 1f, 4f\n\t"                                            \
	".popsection\n\t"                                                      \
	"leaq 3b(%%rip), %[tmp]\n\t"                                           \
	"movq %[tmp], 8(%[rs])\n\t"
#define PC_RSEQ_SLAB                                                           \
	"1:\n\t"                                                               \
	"movl 4(%[rs]), %k[slab]\n\t"                                          \
	"cmpq %[ncpus], %[slab]\n\t"                                           \
	"jae 5f\n\t"                                                           \
	"imulq %[stride], %[slab]\n\t"                                         \
	"addq %[base], %[slab]\n\t"                                            \
	"cmpl $0, (%[slab])\n\t"                                               \
	"jne 5f\n\t"
#define PC_RSEQ_TAIL                                                           \
	"2:\n\t"                                                               \
	"xorl %k[ret], %k[ret]\n\t"                                            \
	"jmp 6f\n\t"                                                           \
	".byte 0x0f, 0xb9, 0x3d\n\t"                                           \
	".long 0x53053053\n\t"                                                 \
	"4:\n\t"                                                               \
	"movl $2, %k[ret]\n\t"                                                 \
	"jmp 6f\n\t"                                                           \
	"5:\n\t"                                                               \
	"movl $1, %k[ret]\n\t"                                                 \
	"6:\n\t"

static inline int pc_rseq_push_once(struct rseq *rs, pc_state_t *s, unsigned cls, void *p)
{
	unsigned long ret, slab, cur, tmp;
	__asm__ __volatile__(PC_RSEQ_DESCRIPTOR PC_RSEQ_SLAB
			     "movl (%[slab],%[hoff]), %k[cur]\n\t"
			     "cmpl 4(%[slab],%[hoff]), %k[cur]\n\t"
			     "jae 5f\n\t"
			     "leaq (%[slab],%[soff]), %[tmp]\n\t"
			     "movq %[p], (%[tmp],%[cur],8)\n\t"
			     "incl %k[cur]\n\t"
			     "movl %k[cur], (%[slab],%[hoff])\n\t"
			     PC_RSEQ_TAIL
			     : [ret] "=&r"(ret), [slab] "=&r"(slab), [cur] "=&r"(cur), [tmp] "=&r"(tmp)
			     : [rs] "r"(rs), [base] "r"(s->slabs), [stride] "r"(s->slab_stride),
			       [ncpus] "r"((unsigned long)s->ncpus), [hoff] "r"(pc_hoff(cls)),
			       [soff] "r"((size_t)s->slot_off[cls]), [p] "r"(p)
			     : "memory", "cc");
	return (int)ret;
}

static inline int pc_rseq_pop_once(struct rseq *rs, pc_state_t *s, unsigned cls, void **out)
{
	unsigned long ret, slab, cur, tmp;
	void *obj;
	__asm__ __volatile__(PC_RSEQ_DESCRIPTOR PC_RSEQ_SLAB
			     "movl (%[slab],%[hoff]), %k[cur]\n\t"
			     "testl %k[cur], %k[cur]\n\t"
			     "jz 5f\n\t"
			     "decl %k[cur]\n\t"
			     "leaq (%[slab],%[soff]), %[tmp]\n\t"
			     "movq (%[tmp],%[cur],8), %[obj]\n\t"
			     "movl %k[cur], (%[slab],%[hoff])\n\t"
			     PC_RSEQ_TAIL
			     : [ret] "=&r"(ret), [slab] "=&r"(slab), [cur] "=&r"(cur), [tmp] "=&r"(tmp),
			       [obj] "=&r"(obj)
			     : [rs] "r"(rs), [base] "r"(s->slabs), [stride] "r"(s->slab_stride),
			       [ncpus] "r"((unsigned long)s->ncpus), [hoff] "r"(pc_hoff(cls)),
			       [soff] "r"((size_t)s->slot_off[cls])
			     : "memory", "cc");
	*out = obj;
	return (int)ret;
}

enum pc_rseq_result pc_rseq_push(pc_state_t *s, unsigned cls, void *p)
{
	struct rseq *rs = pc_rseq_area();
	int r;
	pc_handoff_put(p);
	while ((r = pc_rseq_push_once(rs, s, cls, p)) == 2)
		atomic_fetch_add_explicit(&s->restarts, 1, memory_order_relaxed);
	return r ? PC_RSEQ_SLOW : PC_RSEQ_DONE;
}

enum pc_rseq_result pc_rseq_pop(pc_state_t *s, unsigned cls, void **out)
{
	struct rseq *rs = pc_rseq_area();
	int r;
	while ((r = pc_rseq_pop_once(rs, s, cls, out)) == 2)
		atomic_fetch_add_explicit(&s->restarts, 1, memory_order_relaxed);
	if (r)
		return PC_RSEQ_SLOW;
	pc_handoff_take(*out);
	return PC_RSEQ_DONE;
}

static long pc_membarrier(int cmd, unsigned flags, int cpu)
{
	return syscall(__NR_membarrier, cmd, flags, cpu);
}

bool pc_rseq_usable(void)
{
	if (__rseq_size < 20) /* cpu_id and rseq_cs are needed */
		return false;
	if ((int32_t)pc_rseq_area()->cpu_id < 0)
		return false;
	long have = pc_membarrier(MEMBARRIER_CMD_QUERY, 0, 0);
	if (have < 0 || !(have & MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ))
		return false;
	return pc_membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ, 0, 0) == 0 &&
	       pc_membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ, MEMBARRIER_CMD_FLAG_CPU, 0) == 0;
}

void pc_rseq_reregister(void)
{
	pc_membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ, 0, 0);
}

void pc_rseq_fence(unsigned cpu)
{
	pc_membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ, MEMBARRIER_CMD_FLAG_CPU, (int)cpu);
}

unsigned pc_cpu_now(const pc_state_t *s)
{
	int cpu;
	if (s->mode == PC_MODE_RSEQ)
		cpu = (int32_t)pc_rseq_area()->cpu_id;
	else
		cpu = sched_getcpu();
	return cpu < 0 ? 0 : (unsigned)cpu % s->ncpus;
}

#else /* no rseq here: lock mode only */

bool pc_rseq_usable(void) { return false; }
void pc_rseq_reregister(void) {}
enum pc_rseq_result pc_rseq_push(pc_state_t *s, unsigned cls, void *p)
{
	(void)s, (void)cls, (void)p;
	return PC_RSEQ_SLOW;
}
enum pc_rseq_result pc_rseq_pop(pc_state_t *s, unsigned cls, void **out)
{
	(void)s, (void)cls, (void)out;
	return PC_RSEQ_SLOW;
}
void pc_rseq_fence(unsigned cpu) { (void)cpu; }
unsigned pc_cpu_now(const pc_state_t *s)
{
	int cpu = sched_getcpu();
	return cpu < 0 ? 0 : (unsigned)cpu % s->ncpus;
}
#endif
