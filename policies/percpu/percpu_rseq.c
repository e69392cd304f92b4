/*
 * percpu_rseq.c — the CPU number, the fence and the start-up test of the
 * rseq layer.  The push and the pop on a per-CPU stack inside a Linux
 * restartable sequence, as TCMalloc's percpu_rseq_x86_64 does (this is
 * heaplab's own, smaller assembly), are inline in percpu_rseq.h, so that
 * the shim's malloc and free run them without a call (percpu_fast.h).
 *
 * A critical section there is:
 *
 *      rs->rseq_cs = &descriptor          (start, post-commit, abort)
 *   1: cpu   = rs->cpu_id & 0xffff        ─┐ if the kernel preempts,
 *      slab  = open_slab[cpu]               │ migrates or signals the
 *      if slab == NULL (stopped, or         │ thread in here, it resumes
 *          no slab): slow                   │ at the abort handler, not
 *      cur   = slab->stacks[cls].current    │ where it was, so nothing
 *      push: cap check, slots[cur] = p      │ is half done
 *      pop:  empty check, out = slots[cur-1]│
 *      slab->stacks[cls].current = cur ± 1 ─┘ the commit: one store
 *   2: done
 *   elsewhere (.text.unlikely):
 *   sig: the 4 bytes 0x53053053 glibc registered (RSEQ_SIG)
 *   4: abort handler: count the restart, try again
 *
 * The descriptor lives in section __rseq_cs, 32-byte aligned, as the
 * kernel wants.  Nothing between 1 and 2 is visible to another thread
 * until the commit store, and another thread only changes this slab
 * either in a critical section on this CPU (which preempted us, so ours
 * restarts) or after stopping it.  A slow path on this CPU clears the
 * CPU's open_slab entry in a critical section of its own
 * (pc_rseq_stop_here); one on another CPU clears it and then fences this
 * CPU with membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ), which
 * restarts a section that read the entry before the store.
 */
#include "config.h"
#include <sched.h>
#include <unistd.h>
#include <sys/syscall.h>
#include "percpu_rseq.h"
#if PC_HAVE_RSEQ
#include <linux/membarrier.h>
#endif

#if PC_HAVE_RSEQ

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

long pc_rseq_area_offset(void)
{
	return (long)__rseq_offset;
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
long pc_rseq_area_offset(void) { return 0; }
void pc_rseq_reregister(void) {}
void pc_rseq_fence(unsigned cpu) { (void)cpu; }
unsigned pc_cpu_now(const pc_state_t *s)
{
	int cpu = sched_getcpu();
	return cpu < 0 ? 0 : (unsigned)cpu % s->ncpus;
}
#endif
