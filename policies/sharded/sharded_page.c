/*
 * sharded_page.c — the page layer of the `sharded` policy: the block
 * lists of one page.  Collecting remote frees, carving never-used blocks,
 * and the thread_free word that owner and remote threads share: its CAS
 * loops are the one place they meet on a page.
 *
 * Everything here runs on the owning thread of the page, except
 * shd_page_push_remote and shd_page_delayed_done (any thread).  Nothing
 * here knows heaps, queues or segments (see sharded.h, "Layers").
 */
#include "config.h"
#include <sched.h>
#include "sharded_page.h"

/* ---- the delayed-free state -------------------------------------------- */

/* Sets the delay bits of thread_free, waiting while a remote thread is in
 * the middle of a delayed free; NEVER stays unless @p override_never. */
void shd_set_delay(shd_page_t *pg, unsigned delay, bool override_never)
{
	uintptr_t tf = atomic_load_explicit(&pg->thread_free, memory_order_acquire);
	for (;;) {
		unsigned old = shd_tf_delay(tf);
		if (old == SHD_DELAYED_FREEING) {
			sched_yield();
			tf = atomic_load_explicit(&pg->thread_free, memory_order_acquire);
			continue;
		}
		if (old == delay || (old == SHD_NEVER_DELAYED && !override_never))
			return;
		if (atomic_compare_exchange_weak_explicit(&pg->thread_free, &tf,
				shd_tf_ptr(tf) | delay, memory_order_acq_rel, memory_order_acquire))
			return;
	}
}

/* ---- remote frees ------------------------------------------------------ */

/* One CAS onto thread_free; or, when the owner asked to hear about a free
 * into this full page, DELAYED_FREEING and false. */
bool shd_page_push_remote(shd_page_t *pg, shd_block_t *b)
{
	uintptr_t tf = atomic_load_explicit(&pg->thread_free, memory_order_relaxed), nt;
	bool delayed;
	do {
		delayed = shd_tf_delay(tf) == SHD_USE_DELAYED;
		if (delayed) {
			nt = shd_tf_ptr(tf) | SHD_DELAYED_FREEING;
		} else {
			shd_set_next(pg, b, (shd_block_t *)shd_tf_ptr(tf));
			nt = (uintptr_t)b | shd_tf_delay(tf);
		}
	} while (!atomic_compare_exchange_weak_explicit(&pg->thread_free, &tf, nt, memory_order_release,
							memory_order_relaxed));
	return !delayed;
}

void shd_page_delayed_done(shd_page_t *pg)
{
	uintptr_t tf = atomic_load_explicit(&pg->thread_free, memory_order_relaxed);
	while (!atomic_compare_exchange_weak_explicit(&pg->thread_free, &tf,
						     shd_tf_ptr(tf) | SHD_NO_DELAYED,
						     memory_order_release, memory_order_relaxed))
		;
}

void shd_page_fork_child(shd_page_t *pg)
{
	uintptr_t tf = atomic_load_explicit(&pg->thread_free, memory_order_relaxed);
	if (shd_tf_delay(tf) == SHD_DELAYED_FREEING)
		atomic_store_explicit(&pg->thread_free, shd_tf_ptr(tf) | SHD_USE_DELAYED,
				      memory_order_relaxed);
}

/* ---- collecting frees ------------------------------------------------- */

/* The heap a page's events are about: its owner's (none when abandoned). */
static hl_heap_t *shd_page_events_heap(const shd_page_t *pg)
{
	shd_heap_t *owner = atomic_load_explicit(&((shd_page_t *)pg)->heap, memory_order_relaxed);
	return owner ? owner->st->h : NULL;
}

/* Moves thread_free onto local_free with one atomic exchange of the head. */
static void shd_collect_thread_free(shd_page_t *pg)
{
	uintptr_t tf = atomic_load_explicit(&pg->thread_free, memory_order_relaxed);
	while (shd_tf_ptr(tf) &&
	       !atomic_compare_exchange_weak_explicit(&pg->thread_free, &tf, tf & 3,
						     memory_order_acq_rel, memory_order_relaxed))
		;
	shd_block_t *head = (shd_block_t *)shd_tf_ptr(tf);
	if (!head)
		return;
	shd_block_t *tail = head, *n;
	uint32_t count = 1;
	while ((n = shd_next(pg, tail)) != NULL) {
		tail = n;
		if (HL_UNLIKELY(++count > pg->used))
			hl_fatal(&hl_policy_sharded, "thread_free list longer than the used blocks", head);
	}
	shd_set_next(pg, tail, pg->local_free);
	pg->local_free = head;
	HL_EVENT(shd_page_events_heap(pg), HL_EV_COLLECT, "thread_free taken in one atomic exchange, onto local_free, bin", pg->bin, pg->block_size, 0, count, -1, pg->start);
	pg->used -= count;
}

/* Collects remote frees; when `free` is dry, local_free becomes `free`. */
void shd_page_collect(shd_page_t *pg)
{
	if (shd_tf_ptr(atomic_load_explicit(&pg->thread_free, memory_order_relaxed)))
		shd_collect_thread_free(pg);
	if (!pg->free && pg->local_free) {
		HL_EV(shd_page_events_heap(pg), HL_EV_COLLECT, "free list empty: local_free becomes the free list, bin", pg->bin, pg->block_size, pg->start);
		pg->free = pg->local_free;
		pg->local_free = NULL;
	}
}

/* ---- extending the free list ------------------------------------------- */

/* Blocks to carve next: 4 KiB worth, at least 4, at most what is left. */
static size_t shd_extend_count(const shd_page_t *pg)
{
	size_t n = SHD_MAX_EXTEND / pg->block_size;
	if (n < SHD_MIN_EXTEND)
		n = SHD_MIN_EXTEND;
	return n < pg->reserved - pg->capacity ? n : pg->reserved - pg->capacity;
}

/* Secure mode: the new blocks are linked in a random order (Fisher-Yates
 * over their indexes), so addresses handed out are hard to predict. */
static shd_block_t *shd_link_shuffled(shd_page_t *pg, uint64_t *rnd, uint8_t *base, size_t n)
{
	uint16_t order[SHD_MAX_EXTEND / 8];
	size_t bsize = pg->block_size;
	for (size_t i = 0; i < n; i++)
		order[i] = (uint16_t)i;
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = shd_random(rnd) % (i + 1);
		uint16_t x = order[i];
		order[i] = order[j];
		order[j] = x;
	}
	for (size_t i = 0; i < n; i++)
		shd_set_next(pg, (shd_block_t *)(base + order[i] * bsize),
			     i + 1 < n ? (shd_block_t *)(base + order[i + 1] * bsize) : NULL);
	return (shd_block_t *)(base + order[0] * bsize);
}

/* Carves the next never-used blocks into `free` (which is empty), in
 * address order (shuffled in secure mode). */
void shd_page_extend(shd_page_t *pg, uint64_t *rnd)
{
	size_t n = shd_extend_count(pg), bsize = pg->block_size;
	uint8_t *base = pg->start + (size_t)pg->capacity * bsize;
	if (pg->keys[0]) {
		pg->free = shd_link_shuffled(pg, rnd, base, n);
	} else {
		for (size_t i = 0; i + 1 < n; i++)
			((shd_block_t *)(base + i * bsize))->next = (uintptr_t)(base + (i + 1) * bsize);
		((shd_block_t *)(base + (n - 1) * bsize))->next = 0;
		pg->free = (shd_block_t *)base;
	}
	pg->capacity += (uint32_t)n;
}
