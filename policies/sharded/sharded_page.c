/*
 * sharded_page.c — pages and page queues of the `sharded` policy.
 *
 * Everything here runs on the owning thread of a heap, except
 * shd_free_remote (any thread) and shd_set_delay's CAS loop, which is the
 * one place owner and remote threads meet on a page.
 */
#include "config.h"
#include <sched.h>
#include "sharded.h"

uint64_t shd_random(shd_heap_t *hp)
{
	hp->rnd = hl_mix64(hp->rnd);
	return hp->rnd;
}

/* ---- queues ------------------------------------------------------------ */

shd_queue_t *shd_queue_of(shd_heap_t *hp, const shd_page_t *pg)
{
	return &hp->queues[(shd_flags(pg) & SHD_PF_FULL) ? SHD_BIN_FULL : pg->bin];
}

/* Points every direct[w] of queue @p q's bin at its first page. */
static void shd_direct_update(shd_heap_t *hp, shd_queue_t *q)
{
	unsigned bin = (unsigned)(q - hp->queues);
	if (bin >= SHD_BIN_HUGE || q->block_size > SHD_SMALL_SIZE_MAX)
		return;
	shd_page_t *first = q->first ? q->first : &hp->st->empty;
	size_t w = q->block_size / 8;
	for (;;) {
		hp->direct[w] = first;
		if (w == 0 || shd_bin_of_wsize(w - 1) != bin)
			break;
		w--;
	}
}

void shd_queue_remove(shd_heap_t *hp, shd_queue_t *q, shd_page_t *pg)
{
	bool was_first = q->first == pg;
	if (pg->prev)
		pg->prev->next = pg->next;
	else
		q->first = pg->next;
	if (pg->next)
		pg->next->prev = pg->prev;
	else
		q->last = pg->prev;
	pg->next = pg->prev = NULL;
	q->count--;
	if (was_first)
		shd_direct_update(hp, q);
}

void shd_queue_push(shd_heap_t *hp, shd_queue_t *q, shd_page_t *pg, bool at_end)
{
	if (at_end && q->last) {
		pg->prev = q->last;
		pg->next = NULL;
		q->last->next = pg;
		q->last = pg;
	} else {
		pg->prev = NULL;
		pg->next = q->first;
		if (q->first)
			q->first->prev = pg;
		else
			q->last = pg;
		q->first = pg;
	}
	q->count++;
	if (q->first == pg)
		shd_direct_update(hp, q);
}

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

/* ---- collecting frees ------------------------------------------------- */

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
	pg->used -= count;
}

/* Collects remote frees; when `free` is dry, local_free becomes `free`. */
void shd_page_collect(shd_page_t *pg)
{
	if (shd_tf_ptr(atomic_load_explicit(&pg->thread_free, memory_order_relaxed)))
		shd_collect_thread_free(pg);
	if (!pg->free && pg->local_free) {
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
static shd_block_t *shd_link_shuffled(shd_heap_t *hp, shd_page_t *pg, uint8_t *base, size_t n)
{
	uint16_t order[SHD_MAX_EXTEND / 16];
	size_t bsize = pg->block_size;
	for (size_t i = 0; i < n; i++)
		order[i] = (uint16_t)i;
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = shd_random(hp) % (i + 1);
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
static void shd_page_extend(shd_heap_t *hp, shd_page_t *pg)
{
	size_t n = shd_extend_count(pg), bsize = pg->block_size;
	uint8_t *base = pg->start + (size_t)pg->capacity * bsize;
	if (pg->keys[0]) {
		pg->free = shd_link_shuffled(hp, pg, base, n);
	} else {
		for (size_t i = 0; i + 1 < n; i++)
			((shd_block_t *)(base + i * bsize))->next = (uintptr_t)(base + (i + 1) * bsize);
		((shd_block_t *)(base + (n - 1) * bsize))->next = 0;
		pg->free = (shd_block_t *)base;
	}
	pg->capacity += (uint32_t)n;
	hp->c.extends++;
}

/* ---- moving pages between queues --------------------------------------- */

void shd_page_to_full(shd_heap_t *hp, shd_page_t *pg)
{
	shd_queue_remove(hp, shd_queue_of(hp, pg), pg);
	shd_flags_set(pg, shd_flags(pg) | SHD_PF_FULL);
	shd_queue_push(hp, &hp->queues[SHD_BIN_FULL], pg, true);
	shd_set_delay(pg, SHD_USE_DELAYED, false);
}

void shd_page_unfull(shd_heap_t *hp, shd_page_t *pg)
{
	shd_set_delay(pg, SHD_NO_DELAYED, false);
	shd_queue_remove(hp, &hp->queues[SHD_BIN_FULL], pg);
	shd_flags_set(pg, shd_flags(pg) & ~(unsigned)SHD_PF_FULL);
	shd_queue_push(hp, &hp->queues[pg->bin], pg, true);
}

/* Returns an empty page to its segment. */
void shd_page_free_empty(shd_heap_t *hp, shd_page_t *pg)
{
	shd_queue_remove(hp, shd_queue_of(hp, pg), pg);
	shd_flags_set(pg, 0);
	pg->retire = 0;
	shd_segment_page_free(hp, pg);
}

/* The last block of a page came back.  The only page of its bin is kept
 * ("retired") for a few slow paths, so a program that allocates and frees
 * one block in a loop does not make and unmake a page every time. */
void shd_page_emptied(shd_heap_t *hp, shd_page_t *pg)
{
	shd_queue_t *q = shd_queue_of(hp, pg);
	if (!(shd_flags(pg) & SHD_PF_FULL) && pg->bin < SHD_BIN_HUGE && q->first == pg && q->last == pg) {
		pg->retire = (uint8_t)(1 + (pg->block_size <= SHD_SMALL_OBJ_MAX ? SHD_RETIRE_CYCLES
									   : SHD_RETIRE_CYCLES / 4));
		if (pg->bin < hp->retired_min)
			hp->retired_min = pg->bin;
		if (pg->bin > hp->retired_max)
			hp->retired_max = pg->bin;
		return;
	}
	shd_page_free_empty(hp, pg);
}

/* Counts down retired pages; frees those still empty when time is up. */
void shd_collect_retired(shd_heap_t *hp, bool force)
{
	unsigned lo = SHD_BIN_FULL, hi = 0;
	for (unsigned bin = hp->retired_min; bin <= hp->retired_max; bin++) {
		shd_page_t *pg = hp->queues[bin].first;
		if (!pg || !pg->retire)
			continue;
		if (pg->used != 0) {
			pg->retire = 0;
		} else if (force || --pg->retire == 0) {
			shd_page_free_empty(hp, pg);
		} else {
			lo = bin < lo ? bin : lo;
			hi = bin > hi ? bin : hi;
		}
	}
	hp->retired_min = (uint8_t)lo;
	hp->retired_max = (uint8_t)hi;
}

/* ---- frees --------------------------------------------------------------- */

/* After a local free made used 0 or hit a full page. */
void shd_free_local_slow(shd_heap_t *hp, shd_page_t *pg)
{
	if (pg->used == 0)
		shd_page_emptied(hp, pg);
	else if (shd_flags(pg) & SHD_PF_FULL)
		shd_page_unfull(hp, pg);
}

/* Frees @p b of a page another heap owns (or nobody, when abandoned):
 * one CAS onto thread_free, or — when the page is full and its owner has
 * asked to hear about it — onto the owning heap's delayed list. */
void shd_free_remote(shd_page_t *pg, shd_block_t *b)
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
	if (!delayed)
		return;
	shd_heap_t *owner = atomic_load_explicit(&pg->heap, memory_order_acquire);
	if (owner) {
		shd_block_t *head = atomic_load_explicit(&owner->delayed, memory_order_relaxed);
		do
			shd_set_next(pg, b, head);
		while (!atomic_compare_exchange_weak_explicit(&owner->delayed, &head, b, memory_order_release,
							      memory_order_relaxed));
	}
	tf = atomic_load_explicit(&pg->thread_free, memory_order_relaxed);
	while (!atomic_compare_exchange_weak_explicit(&pg->thread_free, &tf,
						     shd_tf_ptr(tf) | SHD_NO_DELAYED,
						     memory_order_release, memory_order_relaxed))
		;
}

/* Takes the whole delayed list and frees each block as its owner would. */
void shd_delayed_drain(shd_heap_t *hp)
{
	shd_block_t *b = atomic_exchange_explicit(&hp->delayed, NULL, memory_order_acquire);
	while (b) {
		shd_page_t *pg = shd_page_of(shd_segment_of(b), b);
		shd_block_t *next = shd_next_raw(pg, b);
		shd_page_collect(pg);
		shd_set_next(pg, b, pg->local_free);
		pg->local_free = b;
		pg->used--;
		hp->c.delayed_frees++;
		shd_free_local_slow(hp, pg);
		b = next;
	}
}

/* ---- finding a page with a free block ----------------------------------- */

static shd_page_t *shd_fresh_page(shd_heap_t *hp, shd_queue_t *q)
{
	size_t bsize = q->block_size;
	unsigned kind = bsize <= SHD_SMALL_OBJ_MAX ? SHD_PAGE_SMALL : SHD_PAGE_MEDIUM;
	shd_page_t *pg = shd_segment_page_alloc(hp, bsize, kind);
	if (!pg)
		return NULL;
	shd_queue_push(hp, q, pg, false);
	shd_page_extend(hp, pg);
	return pg;
}

/* First page of the queue with a free block, collecting and extending on
 * the way, moving full pages aside; else a reclaimed or fresh page. */
static shd_page_t *shd_queue_find(shd_heap_t *hp, shd_queue_t *q)
{
	shd_page_t *pg = q->first;
	while (pg) {
		shd_page_t *next = pg->next;
		shd_page_collect(pg);
		if (!pg->free && pg->capacity < pg->reserved)
			shd_page_extend(hp, pg);
		if (pg->free) {
			pg->retire = 0;
			if (q->first != pg) {
				shd_queue_remove(hp, q, pg);
				shd_queue_push(hp, q, pg, false);
			}
			return pg;
		}
		shd_page_to_full(hp, pg);
		pg = next;
	}
	return NULL;
}

shd_page_t *shd_find_page(shd_heap_t *hp, size_t n)
{
	shd_queue_t *q = &hp->queues[shd_bin_of(n)];
	shd_page_t *pg = shd_queue_find(hp, q);
	for (int tries = 0; !pg && tries < 8 && atomic_load(&hp->st->nabandoned); tries++)
		if (shd_reclaim_one(hp))
			pg = shd_queue_find(hp, q);
	return pg ? pg : shd_fresh_page(hp, q);
}

/* A page of a reclaimed segment joins heap @p hp's queues, after its
 * remote frees are collected (the caller frees it when used is then 0). */
void shd_heap_adopt_page(shd_heap_t *hp, shd_page_t *pg)
{
	atomic_store_explicit(&pg->heap, hp, memory_order_release);
	shd_set_delay(pg, SHD_NO_DELAYED, true);
	shd_flags_set(pg, shd_flags(pg) & ~(unsigned)SHD_PF_FULL);
	pg->retire = 0;
	shd_page_collect(pg);
	if (pg->bin == SHD_BIN_HUGE && pg->used == pg->capacity) {
		shd_flags_set(pg, shd_flags(pg) | SHD_PF_FULL);
		shd_queue_push(hp, &hp->queues[SHD_BIN_FULL], pg, true);
		shd_set_delay(pg, SHD_USE_DELAYED, false);
	} else {
		shd_queue_push(hp, &hp->queues[pg->bin], pg, true);
	}
}
