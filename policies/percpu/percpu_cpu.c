/*
 * percpu_cpu.c — the per-CPU front end (TCMalloc's CpuCache).
 *
 * Every CPU has a slab: for each class a stack of object pointers with a
 * `current` count and a `capacity`.  malloc pops and free pushes on the
 * stack of the CPU the thread runs on, in an rseq critical section
 * (percpu_rseq.c) or, in lock mode, under the CPU's mutex after
 * sched_getcpu().  An empty stack (underflow) or a full one (overflow)
 * takes the slow path, under the CPU's mutex and with the slab stopped.
 * Both follow google/tcmalloc fce3f55, cpu_cache.h (UpdateCapacity,
 * TargetOverflowRefillCount, Refill, Overflow):
 *
 *   capacity: below two batches a miss grows it by one object, and an
 *             underflow below one batch grows it to a batch; past two
 *             batches only an underflow that follows an overflow grows
 *             it, by a batch (those two misses would have collapsed);
 *   target:   how many objects the miss moves: about half the capacity,
 *             capped at 1, 2, 4 ... batches for the 1st, 2nd, 3rd ...
 *             miss of one kind in a row;
 *   underflow: take `target` objects from the transfer cache, return one
 *             and push the rest;
 *   overflow:  give the freed object and target - 1 from the top of the
 *             stack to the transfer cache, even when the capacity grew.
 *
 * A CPU's capacities may add up to cpu_cache_bytes; past that, growing
 * one class steals a batch of capacity from another class of the same
 * CPU (round robin), whose excess objects go to the transfer cache.
 * (Google's tcmalloc of fce3f55 lets Grow fall short instead and moves
 * capacity in the background; percpu.c lists what the model leaves
 * out.)  A CPU's stacks start with capacity 0, so an idle CPU holds
 * nothing.
 */
#include "config.h"
#include "percpu_rseq.h"

/* Takes CPU @cpu's slab for a slow path: its mutex, and in rseq mode its
 * open_slab entry cleared, so no critical section runs on it meanwhile.
 * Cleared from that CPU in a critical section of its own, it needs no fence, as
 * TCMalloc's changes to the current CPU's header need none; from another
 * CPU (the thread moved since it read its CPU) it is stored and then the
 * CPU is fenced with membarrier, which costs an interrupt there.  A fence
 * on every slow path also made two threads that start on one CPU hand
 * it to each other at every batch, so that their blocks came out
 * interleaved a batch at a time (bench/HISTORY.md, "blocks of two threads
 * in one page"). */
static void pc_cpu_lock(pc_state_t *s, unsigned cpu)
{
	pthread_mutex_lock(&s->cpus[cpu].lock);
	if (s->mode == PC_MODE_RSEQ && !pc_rseq_stop_here(s, cpu)) {
		atomic_store(&s->open_slab[cpu], NULL);
		pc_rseq_fence(cpu);
		atomic_fetch_add_explicit(&s->fences, 1, memory_order_relaxed);
	}
}

static void pc_cpu_unlock(pc_state_t *s, unsigned cpu)
{
	if (s->mode == PC_MODE_RSEQ)
		atomic_store_explicit(&s->open_slab[cpu], pc_slab(s, cpu), memory_order_release);
	pthread_mutex_unlock(&s->cpus[cpu].lock);
}

/* Moves the top @n objects of a stack to the transfer cache. */
static void pc_cpu_spill(pc_state_t *s, pc_slab_t *sl, unsigned cls, unsigned n)
{
	pc_stack_t *st = &sl->stacks[cls];
	if (n > st->current)
		n = st->current;
	HL_EV_COUNT(s->heap, HL_EV_CACHE_FLUSH, "per-CPU slab to the transfer cache, class", cls, st->current,
		    st->current - n, NULL);
	st->current -= n;
	for (unsigned i = 0; i < n; i++)
		pc_handoff_take(pc_slots(s, sl, cls)[st->current + i]);
	pc_transfer_insert(s, cls, pc_slots(s, sl, cls) + st->current, n);
}

/* Lowers class @cls's capacity by up to @n (excess objects spilled);
 * returns the bytes of capacity freed. */
static size_t pc_cpu_shrink(pc_state_t *s, unsigned cpu, unsigned cls, unsigned n)
{
	pc_slab_t *sl = pc_slab(s, cpu);
	pc_stack_t *st = &sl->stacks[cls];
	if (n > st->capacity)
		n = st->capacity;
	st->capacity -= n;
	if (st->current > st->capacity)
		pc_cpu_spill(s, sl, cls, st->current - st->capacity);
	size_t bytes = (size_t)n * s->cl.size[cls];
	s->cpus[cpu].capacity_bytes -= bytes;
	return bytes;
}

/* Makes room in the CPU's budget for @bytes by stealing from other classes. */
static void pc_cpu_steal(pc_state_t *s, unsigned cpu, unsigned cls, size_t bytes)
{
	pc_cpu_t *c = &s->cpus[cpu];
	for (unsigned tries = 0; tries < s->cl.n && c->capacity_bytes + bytes > s->cpu_cache_bytes; tries++) {
		unsigned v = c->steal_next;
		c->steal_next = v + 1 >= s->cl.n ? 1 : v + 1;
		if (v == cls || v == 0 || !pc_slab(s, cpu)->stacks[v].capacity)
			continue;
		pc_cpu_shrink(s, cpu, v, s->cl.batch[v]);
		c->steals++;
	}
}

/* Grows class @cls's capacity by up to @want objects, within the budget
 * (stealing from other classes first when it is spent). */
static void pc_cpu_grow(pc_state_t *s, unsigned cpu, unsigned cls, unsigned want)
{
	pc_stack_t *st = &pc_slab(s, cpu)->stacks[cls];
	pc_cpu_t *c = &s->cpus[cpu];
	if (want > s->max_cap[cls] - st->capacity)
		want = s->max_cap[cls] - st->capacity;
	if (!want)
		return;
	size_t size = s->cl.size[cls];
	if (c->capacity_bytes + want * size > s->cpu_cache_bytes)
		pc_cpu_steal(s, cpu, cls, want * size);
	size_t room = c->capacity_bytes < s->cpu_cache_bytes ? s->cpu_cache_bytes - c->capacity_bytes : 0;
	if (want * size > room)
		want = (unsigned)(room / size);
	if (!want && !st->capacity)
		want = 1; /* every class may cache one object */
	st->capacity += want;
	c->capacity_bytes += want * size;
	c->grows += want != 0;
}

/* How many objects a miss moves (TCMalloc's TargetOverflowRefillCount):
 * half the capacity, rounded up, plus the one the caller takes or gives,
 * but no more than 2^successive batches.  At capacity 1 it moves only
 * that one until the third miss of a kind in a row. */
static unsigned pc_cpu_target(unsigned capacity, unsigned batch, unsigned successive)
{
	size_t most = ((size_t)1 << (successive < 10 ? successive : 10)) * batch;
	size_t target = (capacity + 1) / 2 + 1;
	if (target > most)
		target = most;
	if (capacity == 1 && successive < 3)
		target = 1;
	return (unsigned)target;
}

/* A miss on class @cls (TCMalloc's UpdateCapacity): records its kind,
 * grows the capacity as the header says and returns the target. */
static unsigned pc_cpu_miss(pc_state_t *s, unsigned cpu, unsigned cls, bool overflow)
{
	pc_cpu_t *c = &s->cpus[cpu];
	unsigned batch = s->cl.batch[cls];
	unsigned capacity = pc_slab(s, cpu)->stacks[cls].capacity;
	bool overflow_then_underflow = !overflow && c->last_overflow[cls];
	c->successive[cls] = overflow == c->last_overflow[cls] ? (uint16_t)(c->successive[cls] + 1) : 0;
	c->last_overflow[cls] = overflow;
	bool grow_by_one = capacity < 2 * batch;
	if (grow_by_one || overflow_then_underflow) {
		unsigned increase = 1;
		if (overflow_then_underflow)
			increase = batch;
		else if (!overflow && capacity < batch)
			increase = batch - capacity;
		pc_cpu_grow(s, cpu, cls, increase);
		capacity = pc_slab(s, cpu)->stacks[cls].capacity;
	}
	return pc_cpu_target(capacity, batch, c->successive[cls]);
}

/* The top object of a stack, taken off (the stack is not empty). */
static inline void *pc_cpu_take(pc_state_t *s, pc_slab_t *sl, unsigned cls)
{
	void *p = pc_slots(s, sl, cls)[--sl->stacks[cls].current];
	pc_handoff_take(p);
	return p;
}

/* @p p onto a stack (the stack is not full). */
static inline void pc_cpu_put(pc_state_t *s, pc_slab_t *sl, unsigned cls, void *p)
{
	pc_handoff_put(p);
	pc_slots(s, sl, cls)[sl->stacks[cls].current++] = p;
}

/* Takes up to @target objects from the transfer cache, PC_MAX_MOVE at a
 * time (TCMalloc's Refill).  The lowest address of the first lot is
 * returned and the rest of each lot goes on the stack lowest on top, so
 * that consecutive mallocs in a fresh span go up through memory (a
 * second lot goes on top of the first, as in TCMalloc).  What the stack
 * has no room for goes back and ends the refill.  NULL: out of memory. */
static void *pc_cpu_refill(pc_state_t *s, pc_slab_t *sl, unsigned cls, unsigned target)
{
	pc_stack_t *st = &sl->stacks[cls];
	void *lot[PC_MAX_MOVE], *result = NULL;
	unsigned total = 0, got, left;
	do {
		unsigned want = target - total < PC_MAX_MOVE ? target - total : PC_MAX_MOVE;
		got = pc_transfer_remove(s, cls, lot, want);
		if (!got)
			break;
		total += got;
		unsigned first = result ? 0 : 1;
		if (!result)
			result = lot[0];
		unsigned room = st->capacity - st->current;
		unsigned push = got - first < room ? got - first : room;
		for (unsigned i = first + push; i-- > first;)
			pc_cpu_put(s, sl, cls, lot[i]);
		left = got - first - push;
		if (left)
			pc_transfer_insert(s, cls, lot + first + push, left);
	} while (got == PC_MAX_MOVE && !left && total < target);
	return result;
}

/* Underflow, under the CPU's lock: class @cls's stack is empty.  Updates
 * its capacity, refills it and returns one object (NULL: out of memory).
 * Out of line, as the overflow below: inlined (gcc does when the events
 * are compiled out), it makes the hit save and restore the registers the
 * slow path uses, 6 pushes and pops. */
static __attribute__((noinline)) void *pc_cpu_underflow(pc_state_t *s, unsigned cpu, pc_slab_t *sl, unsigned cls)
{
	s->cpus[cpu].underflows++;
	HL_EV(s->heap, HL_EV_CACHE_MISS, "per-CPU slab, class", cls, s->cl.size[cls], NULL);
	unsigned target = pc_cpu_miss(s, cpu, cls, false);
	void *p = pc_cpu_refill(s, sl, cls, target);
	HL_EV_COUNT(s->heap, HL_EV_CACHE_FILL, "per-CPU slab from the transfer cache, class", cls, 0,
		    sl->stacks[cls].current, NULL);
	if (p)
		HL_EV(s->heap, HL_EV_LIST_POP, "refill: the first object, to the caller, class", cls, s->cl.size[cls], p);
	return p;
}

/* Overflow, under the CPU's lock: class @cls's stack is full.  Updates
 * its capacity, then gives @p p and up to target - 1 objects from the
 * top of the stack to the transfer cache, PC_MAX_MOVE at a time. */
static __attribute__((noinline)) void pc_cpu_overflow(pc_state_t *s, unsigned cpu, pc_slab_t *sl, unsigned cls, void *p)
{
	pc_stack_t *st = &sl->stacks[cls];
	s->cpus[cpu].overflows++;
	unsigned target = pc_cpu_miss(s, cpu, cls, true);
	HL_EV(s->heap, HL_EV_LIST_PUSH, "transfer cache (the CPU's stack is full), class", cls, s->cl.size[cls], p);
	void *lot[PC_MAX_MOVE];
	unsigned total = 0, count = 1;
	lot[0] = p;
	do {
		unsigned want = target - total < PC_MAX_MOVE ? target - total : PC_MAX_MOVE;
		if (count < want) {
			unsigned n = want - count < st->current ? want - count : st->current;
			if (n)
				HL_EV_COUNT(s->heap, HL_EV_CACHE_FLUSH, "per-CPU slab to the transfer cache, class", cls,
					    st->current, st->current - n, NULL);
			while (n--)
				lot[count++] = pc_cpu_take(s, sl, cls);
		}
		if (!count)
			break;
		total += count;
		pc_transfer_insert(s, cls, lot, count);
		if (count != PC_MAX_MOVE)
			break;
		count = 0;
	} while (total < target);
}

/* The fast paths are built twice from one body (event.h, "Quiet copies"):
 * pc_cpu_alloc and pc_cpu_free with the events of a hit and a push, in
 * rseq mode and under the CPU's lock, and pc_cpu_alloc_quiet and
 * pc_cpu_free_quiet without them (percpu.c calls those while nobody
 * listens to the heap).  The underflow and the overflow keep their
 * events in both. */
HL_EV_BODY void *pc_cpu_alloc_locked(pc_state_t *s, unsigned cls, bool listening)
{
	unsigned cpu = pc_cpu_now(s);
	pc_cpu_lock(s, cpu);
	pc_slab_t *sl = pc_slab(s, cpu);
	void *p;
	if (HL_UNLIKELY(!sl->stacks[cls].current)) {
		p = pc_cpu_underflow(s, cpu, sl, cls);
	} else {
		p = pc_cpu_take(s, sl, cls);
		if (listening)
			HL_EV(s->heap, HL_EV_CACHE_HIT, "per-CPU slab, class (under the CPU's lock)", cls, s->cl.size[cls], p);
	}
	pc_cpu_unlock(s, cpu);
	return p;
}

HL_EV_BODY void pc_cpu_free_locked(pc_state_t *s, unsigned cls, void *p, bool listening)
{
	unsigned cpu = pc_cpu_now(s);
	pc_cpu_lock(s, cpu);
	pc_slab_t *sl = pc_slab(s, cpu);
	if (HL_UNLIKELY(sl->stacks[cls].current >= sl->stacks[cls].capacity)) {
		pc_cpu_overflow(s, cpu, sl, cls, p);
	} else {
		pc_cpu_put(s, sl, cls, p);
		if (listening)
			HL_EV(s->heap, HL_EV_CACHE_PUT, "per-CPU slab, class (under the CPU's lock)", cls, s->cl.size[cls], p);
	}
	pc_cpu_unlock(s, cpu);
}

HL_EV_BODY void *pc_cpu_alloc_body(pc_state_t *s, unsigned cls, bool listening)
{
	void *p;
	if (HL_LIKELY(s->mode == PC_MODE_RSEQ) && pc_rseq_pop(s, cls, &p) == PC_RSEQ_DONE) {
		if (listening)
			HL_EV(s->heap, HL_EV_CACHE_HIT, "per-CPU slab, class (rseq)", cls, s->cl.size[cls], p);
		return p;
	}
	return pc_cpu_alloc_locked(s, cls, listening);
}

HL_EV_BODY void pc_cpu_free_body(pc_state_t *s, unsigned cls, void *p, bool listening)
{
	if (HL_LIKELY(s->mode == PC_MODE_RSEQ) && pc_rseq_push(s, cls, p) == PC_RSEQ_DONE) {
		if (listening)
			HL_EV(s->heap, HL_EV_CACHE_PUT, "per-CPU slab, class (rseq)", cls, s->cl.size[cls], p);
		return;
	}
	pc_cpu_free_locked(s, cls, p, listening);
}

void *pc_cpu_alloc(pc_state_t *s, unsigned cls) { return pc_cpu_alloc_body(s, cls, true); }
void *pc_cpu_alloc_quiet(pc_state_t *s, unsigned cls) { return pc_cpu_alloc_body(s, cls, false); }
void pc_cpu_free(pc_state_t *s, unsigned cls, void *p) { pc_cpu_free_body(s, cls, p, true); }
void pc_cpu_free_quiet(pc_state_t *s, unsigned cls, void *p) { pc_cpu_free_body(s, cls, p, false); }

void pc_cpu_drain_all(pc_state_t *s)
{
	for (unsigned cpu = 0; cpu < s->ncpus; cpu++) {
		pc_cpu_lock(s, cpu);
		for (unsigned cls = 1; cls < s->cl.n; cls++)
			pc_cpu_shrink(s, cpu, cls, pc_slab(s, cpu)->stacks[cls].capacity);
		pc_cpu_unlock(s, cpu);
	}
}

size_t pc_cpu_cached_bytes(const pc_state_t *s, unsigned cpu)
{
	size_t bytes = 0;
	const pc_slab_t *sl = pc_slab(s, cpu);
	for (unsigned cls = 1; cls < s->cl.n; cls++)
		bytes += (size_t)sl->stacks[cls].current * s->cl.size[cls];
	return bytes;
}

void pc_cpu_lock_all(pc_state_t *s)
{
	for (unsigned cpu = 0; cpu < s->ncpus; cpu++)
		pthread_mutex_lock(&s->cpus[cpu].lock);
}

void pc_cpu_unlock_all(pc_state_t *s)
{
	for (unsigned cpu = s->ncpus; cpu-- > 0;)
		pthread_mutex_unlock(&s->cpus[cpu].lock);
}

void pc_cpu_fork_child(pc_state_t *s)
{
	for (unsigned cpu = 0; cpu < s->ncpus; cpu++) {
		pthread_mutex_init(&s->cpus[cpu].lock, NULL);
		atomic_store(&s->open_slab[cpu], pc_slab(s, cpu));
	}
}
