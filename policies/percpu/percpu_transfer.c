/*
 * percpu_transfer.c — the transfer cache of each class: a stack of
 * objects that moves whole batches between the fronts (one CPU's
 * overflow becomes another's refill) without touching a span.  It holds
 * PC_TC_BATCHES batches, at most 1 MiB of a class; what does not fit goes
 * on to the central free list, and a refill it cannot serve comes from
 * there.
 *
 * front:thread keeps gperftools 2.10's rule (CentralFreeList::InsertRange
 * and RemoveRange, src/central_freelist.cc): the transfer cache holds
 * whole batches only.  A range goes in only when it is exactly a batch and
 * a batch's room is left, else every object goes to its span; a fetch is
 * served from it only when it asks for exactly a batch.  A thread list in
 * slow start (max_length below the batch) therefore fetches from the
 * spans, not the batches other lists gave back.
 *
 * Its room is counted in slots of a batch (16 at first, at most 64 and
 * 1 MiB of a class, CentralFreeList::Init).  A batch that finds every
 * slot full takes one from another class (MakeCacheSpace): the classes
 * are asked in turn, the next after the last one asked, first for a slot
 * they do not use, then for one they do, whose batch goes back to its
 * spans (EvictRandomSizeClass, ShrinkCache).
 */
#include "config.h"
#include <string.h>
#include "percpu.h"

/* Whether front:thread's whole-batch rule keeps a range of @n objects out
 * of the transfer cache (src/central_freelist.cc). */
static bool pc_transfer_not_a_batch(const pc_state_t *s, unsigned cls, unsigned n)
{
	return s->mode == PC_MODE_THREAD && n != s->cl.batch[cls];
}

/* Batches in transfer cache @t of class @cls. */
static unsigned pc_transfer_used(const pc_state_t *s, const pc_transfer_t *t, unsigned cls)
{
	return cls ? t->count / s->cl.batch[cls] : 0;
}

/* Class @cls gives up a slot to class @locked, whose lock is held and
 * given up meanwhile; with @force a used slot too, its batch to the
 * spans (ShrinkCache; gperftools tests first without the lock, which
 * changes nothing for one thread and would be a data race here). */
static bool pc_transfer_shrink(pc_state_t *s, unsigned locked, unsigned cls, bool force)
{
	pc_transfer_t *t = &s->transfer[cls];
	void *batch[512];
	unsigned n = 0, held = 0;
	bool done = true;
	pthread_mutex_unlock(&s->transfer[locked].lock);
	pthread_mutex_lock(&t->lock);
	if (t->slots_now == 0 || (!force && pc_transfer_used(s, t, cls) == t->slots_now)) {
		done = false;
	} else {
		if (pc_transfer_used(s, t, cls) == t->slots_now) {
			held = t->count;
			n = s->cl.batch[cls];
			t->count -= n;
			memcpy(batch, t->slots + t->count, n * sizeof *batch);
		}
		t->slots_now--;
	}
	pthread_mutex_unlock(&t->lock);
	if (n) {
		HL_EV_COUNT(s->heap, HL_EV_CACHE_FLUSH, "transfer cache: a slot taken, its batch to the spans, class",
			    cls, held, held - n, NULL);
		pc_central_insert(s, cls, batch, n);
	}
	pthread_mutex_lock(&s->transfer[locked].lock);
	return done;
}

/* The next class in turn gives class @locked a slot (EvictRandomSizeClass:
 * the turn passes the last class, starts again at 0, and asks that class
 * twice). */
static bool pc_transfer_evict(pc_state_t *s, unsigned locked, bool force)
{
	unsigned cls = atomic_fetch_add_explicit(&s->evict_next, 1, memory_order_relaxed);
	if (cls >= s->cl.n) {
		cls %= s->cl.n;
		atomic_store_explicit(&s->evict_next, cls, memory_order_relaxed);
	}
	return cls != locked && pc_transfer_shrink(s, locked, cls, force);
}

/* Whether class @cls (lock held) has a free slot, after taking one from
 * another class when all of its own are used (MakeCacheSpace). */
static bool pc_transfer_room(pc_state_t *s, unsigned cls)
{
	pc_transfer_t *t = &s->transfer[cls];
	if (pc_transfer_used(s, t, cls) < t->slots_now)
		return true;
	if (t->slots_now == t->slots_max)
		return false;
	if ((pc_transfer_evict(s, cls, false) || pc_transfer_evict(s, cls, true)) && t->slots_now < t->slots_max) {
		t->slots_now++;
		return true;
	}
	return false;
}

unsigned pc_transfer_remove(pc_state_t *s, unsigned cls, void **out, unsigned n)
{
	pc_transfer_t *t = &s->transfer[cls];
	if (pc_transfer_not_a_batch(s, cls, n))
		return pc_central_remove(s, cls, out, n);
	pthread_mutex_lock(&t->lock);
	unsigned k = t->count < n ? t->count : n;
	if (s->mode == PC_MODE_THREAD && k < n)
		k = 0; /* a batch or nothing: the cache holds whole batches */
	if (k)
		HL_EV_COUNT(s->heap, HL_EV_LIST_POP, "transfer cache: a batch, class", cls, t->count, t->count - k, NULL);
	t->count -= k;
	memcpy(out, t->slots + t->count, k * sizeof *out);
	if (k)
		t->hits++;
	else
		t->misses++;
	pthread_mutex_unlock(&t->lock);
	if (k == n)
		return k;
	return k + pc_central_remove(s, cls, out + k, n - k);
}

void pc_transfer_insert(pc_state_t *s, unsigned cls, void *const *objs, unsigned n)
{
	pc_transfer_t *t = &s->transfer[cls];
	if (pc_transfer_not_a_batch(s, cls, n)) {
		pc_central_insert(s, cls, objs, n);
		return;
	}
	pthread_mutex_lock(&t->lock);
	unsigned k = t->capacity - t->count < n ? t->capacity - t->count : n;
	if (s->mode == PC_MODE_THREAD)
		k = pc_transfer_room(s, cls) ? n : 0; /* no slot: all of it to the spans */
	if (k)
		HL_EV_COUNT(s->heap, HL_EV_LIST_PUSH, "transfer cache: a batch, class", cls, t->count, t->count + k, NULL);
	memcpy(t->slots + t->count, objs, k * sizeof *objs);
	t->count += k;
	pthread_mutex_unlock(&t->lock);
	if (k < n)
		pc_central_insert(s, cls, objs + k, n - k);
}

void pc_transfer_drain(pc_state_t *s)
{
	for (unsigned cls = 1; cls < s->cl.n; cls++) {
		pc_transfer_t *t = &s->transfer[cls];
		void *batch[64];
		for (;;) {
			pthread_mutex_lock(&t->lock);
			unsigned k = t->count < 64 ? t->count : 64;
			t->count -= k;
			memcpy(batch, t->slots + t->count, k * sizeof *batch);
			pthread_mutex_unlock(&t->lock);
			if (!k)
				break;
			pc_central_insert(s, cls, batch, k);
		}
	}
}
