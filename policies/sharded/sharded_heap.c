/*
 * sharded_heap.c — the heap layer of the `sharded` policy: one heap per
 * thread, with a page queue per size class, the direct table that points
 * at each small class's first page, the full queue, retired pages, the
 * delayed-free list, and what happens to a heap when its thread ends
 * (abandon) and to abandoned segments when another thread's slow path
 * finds them (reclaim).
 *
 * It calls the segment layer (sharded_segment.c) for pages and whole
 * segments and the page layer (sharded_page.c) for block lists, never
 * the other way round.  Everything runs on the heap's own thread except
 * shd_free_remote (any thread) and the lists of heaps (st->lock).
 */
#include "config.h"
#include "sharded_heap.h"

/* ---- life cycle ----------------------------------------------------------- */

/* Pushes @p hp on the front of heap list @p list (st->lock held). */
static void shd_heap_push(shd_heap_t **list, shd_heap_t *hp)
{
	hp->prev = NULL;
	hp->next = *list;
	if (*list)
		(*list)->prev = hp;
	*list = hp;
}

shd_heap_t *shd_heap_new(shd_state_t *st, hl_thread_t *t)
{
	shd_heap_t *hp = hl_meta_alloc(&st->heap_pool);
	if (!hp)
		return NULL;
	hp->st = st;
	hp->t = t;
	hp->tid = t->index;
	hp->rnd = hl_mix64((uintptr_t)hp ^ st->key ^ ((uint64_t)t->index << 32));
	for (size_t w = 0; w < SHD_DIRECT; w++)
		hp->direct[w] = &st->empty;
	for (unsigned b = 1; b < SHD_BIN_HUGE; b++)
		hp->queues[b].block_size = shd_bin_wsize(b) * 8;
	hp->retired_min = SHD_BIN_FULL;
	pthread_mutex_lock(&st->lock);
	shd_heap_push(&st->heaps, hp);
	pthread_mutex_unlock(&st->lock);
	t->policy_tls = hp;
	return hp;
}

/* The empty page every direct[] entry of shd_no_heap names: no free
 * block, so the hit misses; read, never written. */
static const shd_page_t shd_no_page;
const shd_heap_t shd_no_heap = { .direct = { [0 ... SHD_DIRECT - 1] = (shd_page_t *)&shd_no_page } };

void shd_counts_add(shd_counts_t *to, const shd_counts_t *from)
{
	to->remote_frees += from->remote_frees;
	to->delayed_frees += from->delayed_frees;
	to->purges += from->purges;
	to->purged_bytes += from->purged_bytes;
	to->pages_fresh += from->pages_fresh;
	to->pages_freed += from->pages_freed;
	to->reclaimed += from->reclaimed;
	to->extends += from->extends;
}

static void shd_heap_abandon(shd_heap_t *hp);
static void shd_abandoned_collect(shd_heap_t *hp);

void shd_heap_delete(shd_heap_t *hp)
{
	shd_state_t *st = hp->st;
	shd_heap_abandon(hp);
	pthread_mutex_lock(&st->lock);
	shd_counts_add(&st->gone, &hp->c);
	if (hp->prev)
		hp->prev->next = hp->next;
	else
		st->heaps = hp->next;
	if (hp->next)
		hp->next->prev = hp->prev;
	pthread_mutex_unlock(&st->lock);
	hl_meta_free(&st->heap_pool, hp);
}

/* Only the forking thread lives on in a fork child.  The other threads'
 * heaps may have been halfway through a change (a queue relinked, a page
 * being cut, a segment being reclaimed) when the fork froze them, so
 * nothing reads their insides: as in mimalloc, their memory stays where
 * it is, and frees into their pages wait on thread_free for good. */
void shd_heaps_fork_child(shd_state_t *st)
{
	shd_heap_t *hp = st->heaps, *next;
	st->heaps = NULL;
	for (; hp; hp = next) {
		next = hp->next;
		hp->orphan = hp->t->exited; /* the core marked every other thread exited */
		if (!hp->orphan)
			for (shd_page_t *pg = hp->queues[SHD_BIN_FULL].first; pg; pg = pg->next)
				shd_page_fork_child(pg);
		shd_heap_push(hp->orphan ? &st->orphans : &st->heaps, hp);
	}
	shd_segments_fork_child(st);
}

/* ---- queues ------------------------------------------------------------ */

shd_queue_t *shd_queue_of(shd_heap_t *hp, const shd_page_t *pg)
{
	return &hp->queues[(shd_flags(pg) & SHD_PF_FULL) ? SHD_BIN_FULL : pg->bin];
}

/* Points every direct[w] of queue @p q's bin at its first page; direct[0]
 * stays the empty page, so malloc's hit misses 0 bytes without a test of
 * its own (the core turns 0 into 1 before any call). */
static void shd_direct_update(shd_heap_t *hp, shd_queue_t *q)
{
	unsigned bin = (unsigned)(q - hp->queues);
	if (bin >= SHD_BIN_HUGE || q->block_size > SHD_SMALL_SIZE_MAX)
		return;
	shd_page_t *first = q->first ? q->first : &hp->st->empty;
	size_t w = q->block_size / 8;
	for (;;) {
		hp->direct[w] = first;
		if (w == 1 || shd_bin_of_wsize(w - 1) != bin)
			break;
		w--;
	}
}

/* Unlinks @p pg from queue @p q; when it was the first page, the direct
 * table entries of the bin follow the new first page. */
static void shd_queue_remove(shd_heap_t *hp, shd_queue_t *q, shd_page_t *pg)
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

/* ---- moving pages between queues --------------------------------------- */

/* Moves @p pg from its bin queue to the full queue, sets SHD_PF_FULL and
 * asks for delayed frees (USE_DELAYED). */
static void shd_page_to_full(shd_heap_t *hp, shd_page_t *pg)
{
	HL_EV(hp->st->h, HL_EV_MOVE, "page full: to the full queue, bin", pg->bin, pg->block_size, pg->start);
	shd_queue_remove(hp, shd_queue_of(hp, pg), pg);
	shd_flags_set(pg, shd_flags(pg) | SHD_PF_FULL);
	shd_queue_push(hp, &hp->queues[SHD_BIN_FULL], pg, true);
	shd_set_delay(pg, SHD_USE_DELAYED, false);
}

/* Undoes shd_page_to_full(): remote frees go to thread_free again, and
 * @p pg is appended to its bin's queue. */
static void shd_page_unfull(shd_heap_t *hp, shd_page_t *pg)
{
	HL_EV(hp->st->h, HL_EV_MOVE, "page no longer full: back to its bin queue, bin", pg->bin, pg->block_size, pg->start);
	shd_set_delay(pg, SHD_NO_DELAYED, false);
	shd_queue_remove(hp, &hp->queues[SHD_BIN_FULL], pg);
	shd_flags_set(pg, shd_flags(pg) & ~(unsigned)SHD_PF_FULL);
	shd_queue_push(hp, &hp->queues[pg->bin], pg, true);
}

/* Takes empty page @p pg off its queue, clears its flags and retire count
 * and gives its slices back to the segment. */
static void shd_page_free_empty(shd_heap_t *hp, shd_page_t *pg)
{
	shd_queue_remove(hp, shd_queue_of(hp, pg), pg);
	shd_flags_set(pg, 0);
	pg->retire = 0;
	shd_segment_page_free(hp, pg);
}

/* The last block of a page came back.  The only page of its bin is kept
 * ("retired") for a few searches for a fresh page, so a program that allocates and frees
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
		HL_EV(hp->st->h, HL_EV_LOOK, "page empty, the only one of its bin: retired (kept a few slow paths), bin", pg->bin, pg->block_size, pg->start);
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
	if (shd_page_push_remote(pg, b))
		return;
	shd_heap_t *owner = atomic_load_explicit(&pg->heap, memory_order_acquire);
	if (owner) {
		shd_block_t *head = atomic_load_explicit(&owner->delayed, memory_order_relaxed);
		do
			shd_set_next(pg, b, head);
		while (!atomic_compare_exchange_weak_explicit(&owner->delayed, &head, b, memory_order_release,
							      memory_order_relaxed));
	}
	shd_page_delayed_done(pg);
}

/* Takes the whole delayed list and frees each block as its owner would. */
void shd_delayed_drain(shd_heap_t *hp)
{
	shd_block_t *b = atomic_exchange_explicit(&hp->delayed, NULL, memory_order_acquire);
	while (b) {
		shd_page_t *pg = shd_page_of(shd_segment_of(b), b);
		shd_block_t *next = shd_next_raw(pg, b);
		shd_page_collect(pg);
		HL_EV(hp->st->h, HL_EV_COLLECT, "delayed list: a remote free into a full page, freed by the owner, bin", pg->bin, pg->block_size, b);
		shd_page_push_local(pg, b);
		hp->c.delayed_frees++;
		shd_free_local_slow(hp, pg);
		b = next;
	}
}

/* ---- abandoning and reclaiming ---------------------------------------- */

/* Thread of @p hp is ending: no more delayed frees into it, every remote
 * free collected, empty pages freed, the rest of its segments put on the
 * abandoned list, where any thread's slow path will reclaim them. */
static void shd_heap_abandon(shd_heap_t *hp)
{
	for (unsigned b = 0; b <= SHD_BIN_FULL; b++)
		for (shd_page_t *pg = hp->queues[b].first; pg; pg = pg->next)
			shd_set_delay(pg, SHD_NEVER_DELAYED, false);
	shd_delayed_drain(hp);
	for (unsigned b = 0; b <= SHD_BIN_FULL; b++) {
		shd_page_t *pg;
		while ((pg = hp->queues[b].first) != NULL) {
			shd_page_collect(pg);
			if (pg->used == 0) {
				shd_page_free_empty(hp, pg);
				continue;
			}
			shd_queue_remove(hp, &hp->queues[b], pg);
			shd_flags_set(pg, shd_flags(pg) & ~(unsigned)SHD_PF_FULL);
			pg->retire = 0;
			shd_page_set_heap(pg, NULL);
		}
	}
	shd_segments_abandon(hp);
	shd_abandoned_collect(hp);
}

/* A page of a reclaimed segment joins heap @p hp's queues, after its
 * remote frees are collected (the caller frees it when used is then 0):
 * it names hp as its heap, leaves NEVER_DELAYED, and a huge-bin page with
 * every block used goes to the full queue. */
static void shd_heap_adopt_page(shd_heap_t *hp, shd_page_t *pg)
{
	shd_page_set_heap(pg, hp);
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

/* Takes segment @p s, just reclaimed by heap @p hp, whole: its pages join
 * hp's queues with their remote frees collected; pages found empty are
 * freed (the last of them releases the segment).  True when one of the
 * pages joining the queues is of bin @p bin and has a block to give. */
static bool shd_adopt_segment(shd_heap_t *hp, shd_segment_t *s, unsigned bin)
{
	hp->c.reclaimed++;
	HL_EV(hp->st->h, HL_EV_COLLECT, "abandoned segment reclaimed", -1, s->size, s);
	shd_page_t *empty[SHD_SLICES];
	size_t nempty = 0;
	bool right = false;
	for (size_t i = shd_next_used(s, SHD_INFO_SLICES); i < SHD_SLICES; i = shd_next_page(s, i)) {
		shd_page_t *pg = &s->pages[i];
		shd_heap_adopt_page(hp, pg);
		if (pg->used == 0)
			empty[nempty++] = pg;
		else if (pg->bin == bin && (pg->free || pg->capacity < pg->reserved))
			right = true;
	}
	shd_segment_spans_enqueue(hp, s);
	for (size_t k = 0; k < nempty; k++)
		shd_page_free_empty(hp, empty[k]);
	return right;
}

/* Counts abandoned segment @p s, which shd_check_free() found empty and
 * released (only its address is left), as reclaimed. */
static void shd_reclaimed_empty(shd_heap_t *hp, const shd_segment_t *s)
{
	hp->c.reclaimed++;
	HL_EV(hp->st->h, HL_EV_COLLECT, "abandoned segment reclaimed: found empty, released", -1, SHD_SEGMENT_SIZE, s);
}

/* What a slow path does first with an abandoned segment @p s it holds
 * (mimalloc's mi_segment_check_free): collects every page's remote frees
 * and gives the pages found empty back to the segment, without adopting
 * any.  False when that released the segment (its last page was empty);
 * else *room tells whether it now has a run of @p slices free slices or a
 * page of bin @p bin with a block to give. */
static bool shd_check_free(shd_heap_t *hp, shd_segment_t *s, size_t slices, unsigned bin, bool *room)
{
	*room = false;
	for (size_t i = shd_next_used(s, SHD_INFO_SLICES); i < SHD_SLICES;) {
		shd_page_t *pg = &s->pages[i];
		size_t next = shd_next_page(s, i);
		shd_page_collect(pg);
		if (pg->used == 0) {
			bool last = s->used == 1;
			shd_segment_page_free(hp, pg);
			if (last)
				return false;
		} else if (pg->bin == bin && (pg->free || pg->capacity < pg->reserved)) {
			*room = true;
		}
		i = next;
	}
	*room = *room || shd_segment_has_run(s, slices);
	return true;
}

/* mimalloc's mi_segment_try_reclaim, when heap @p hp's own segments have
 * no run of @p slices free slices: looks at up to SHD_RECLAIM_TRIES
 * abandoned segments.  One left empty by remote frees is released; the
 * first with room for the request is reclaimed whole; one looked at for
 * the fourth time is reclaimed anyway; the others are set aside on the
 * visited list.  *right tells that a reclaimed page of bin @p bin has a
 * free block (it is in hp's queue now).
 * @return the segment with room, or NULL when none had any. */
static shd_segment_t *shd_try_reclaim(shd_heap_t *hp, size_t slices, unsigned bin, bool *right)
{
	*right = false;
	for (int tries = 0; tries < SHD_RECLAIM_TRIES && atomic_load(&hp->st->nabandoned); tries++) {
		shd_segment_t *s = shd_segment_reclaim(hp, true);
		if (!s)
			break;
		bool room;
		if (!shd_check_free(hp, s, slices, bin, &room)) {
			shd_reclaimed_empty(hp, s); /* which may let a later one be reclaimed */
			continue;
		}
		if (room || ++s->visits > 3) {
			*right = shd_adopt_segment(hp, s, bin) || *right;
			if (room)
				return s;
		} else {
			shd_segment_set_aside(hp, s, true);
		}
	}
	return NULL;
}

/* A new page of @p kind for blocks of @p bsize (bin @p bin): from the
 * heap's own free slices, else from a reclaimed abandoned segment, else
 * from a new segment (mimalloc's mi_segments_page_alloc and
 * mi_segment_reclaim_or_alloc).  NULL with *right set when a reclaimed
 * segment brought a page of the bin with a free block instead. */
static shd_page_t *shd_new_page(shd_heap_t *hp, size_t bsize, unsigned kind, unsigned bin, bool *right)
{
	*right = false;
	shd_page_t *pg = shd_segment_page_alloc(hp, bsize, kind);
	if (pg || kind == SHD_PAGE_HUGE)
		return pg;
	if (shd_try_reclaim(hp, shd_page_slices(hp->st, bsize, kind), bin, right))
		pg = shd_segment_page_alloc(hp, bsize, kind);
	else if (*right)
		return NULL;
	return pg ? pg : shd_segment_page_new(hp, bsize, kind);
}

/* When heap @p hp's thread ends, after its own segments went onto the
 * abandoned list: every abandoned segment gets its remote frees collected
 * and its empty pages freed; the segments left empty are released, the
 * others set aside (mimalloc's _mi_abandoned_collect, not forced). */
static void shd_abandoned_collect(shd_heap_t *hp)
{
	shd_segment_t *s;
	for (int tries = 0; tries < SHD_COLLECT_TRIES && (s = shd_segment_reclaim(hp, false)) != NULL; tries++) {
		bool room;
		if (shd_check_free(hp, s, SHD_SLICES, 0, &room))
			shd_segment_set_aside(hp, s, false);
		else
			shd_reclaimed_empty(hp, s);
	}
}

/* Takes one abandoned segment whole into heap @p hp (trim).  False when
 * none was waiting. */
static bool shd_reclaim_one(shd_heap_t *hp)
{
	shd_segment_t *s = shd_segment_reclaim(hp, true);
	if (!s)
		return false;
	shd_adopt_segment(hp, s, 0);
	return true;
}

/* ---- finding a page with a free block ----------------------------------- */

/* Carves blocks into @p pg's empty `free` list. */
static void shd_heap_extend(shd_heap_t *hp, shd_page_t *pg)
{
	shd_page_extend(pg, &hp->rnd);
	HL_EVENT(hp->st->h, HL_EV_NEW, "blocks carved into the page's free list (extend; capacity), bin", pg->bin, pg->block_size, 0, -1, pg->capacity, pg->start);
	hp->c.extends++;
}

static shd_page_t *shd_fresh_page(shd_heap_t *hp, shd_queue_t *q, bool *right)
{
	size_t bsize = q->block_size;
	unsigned kind = bsize <= SHD_SMALL_OBJ_MAX ? SHD_PAGE_SMALL : SHD_PAGE_MEDIUM;
	shd_page_t *pg = shd_new_page(hp, bsize, kind, (unsigned)(q - hp->queues), right);
	if (!pg)
		return NULL;
	shd_queue_push(hp, q, pg, false);
	shd_heap_extend(hp, pg);
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
			shd_heap_extend(hp, pg);
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

/* shd_find_page() past its first try: the whole queue, then a reclaimed
 * or fresh page.  Out of line, so that the first try saves no registers. */
static __attribute__((noinline)) shd_page_t *shd_find_page_more(shd_heap_t *hp, shd_queue_t *q)
{
	shd_page_t *pg = shd_queue_find(hp, q);
	if (pg)
		return pg;
	/* only now is a retired page counted down (mimalloc 2.0.9: "perhaps
	 * make a page available"), and its slices may serve the fresh page */
	if (hp->retired_min <= hp->retired_max)
		shd_collect_retired(hp, false);
	bool right;
	if (!(pg = shd_fresh_page(hp, q, &right)) && right)
		pg = shd_queue_find(hp, q);
	return pg;
}

shd_page_t *shd_find_page(shd_heap_t *hp, size_t n)
{
	shd_queue_t *q = &hp->queues[shd_bin_of(n)];
	/* First try (mimalloc's mi_find_free_page): the queue's first page,
	 * collected, is shd_queue_find()'s first step when it has a block
	 * then; otherwise the search starts over from that page. */
	shd_page_t *pg = q->first;
	if (pg) {
		shd_page_collect(pg);
		if (pg->free) {
			pg->retire = 0;
			return pg;
		}
	}
	return shd_find_page_more(hp, q);
}

/* The block size mimalloc 2.0.9 gives a request above the medium sizes
 * (page.c: mi_large_huge_page_alloc, os.c: _mi_os_good_alloc_size): the
 * request rounded up to 4 KiB below 512 KiB, to 64 KiB below 2 MiB, 256 KiB
 * below 8 MiB, 1 MiB below 32 MiB, 4 MiB above; and for a large page
 * (<= 16 MiB) the whole page, which takes 64 KiB slices up to 512 KiB and
 * whole 512 KiB medium-page spans above (segment.c:
 * mi_segments_page_alloc).  malloc_usable_size reports that whole page on
 * the real library: 131,073 bytes give 196,608, 524,289 give 1 MiB, 16 MiB
 * + 1 gives 17 MiB (measured here; tests/fidelity/fidelity.sh, row
 * mimalloc.ladder-large). */
static size_t shd_large_block_size(size_t n)
{
	size_t kib = 1024, mib = 1024 * kib;
	size_t b = hl_align_up(n, n < 512 * kib ? 4 * kib : n < 2 * mib ? 64 * kib : n < 8 * mib ? 256 * kib
				: n < 32 * mib ? mib : 4 * mib);
	if (b > SHD_LARGE_OBJ_MAX)
		return b;
	return hl_align_up(b, b > SHD_MEDIUM_PAGE ? SHD_MEDIUM_PAGE : SHD_SLICE_SIZE);
}

/* One block of a large page (<= 16 MiB) or a huge segment; such a page
 * is full from the start, so it waits in the full queue. */
void *shd_heap_alloc_large(shd_heap_t *hp, size_t n)
{
	size_t bsize = shd_large_block_size(n);
	unsigned kind = bsize <= SHD_LARGE_OBJ_MAX ? SHD_PAGE_LARGE : SHD_PAGE_HUGE;
	bool right;
	shd_page_t *pg = shd_new_page(hp, bsize, kind, SHD_BIN_HUGE, &right);
	if (!pg)
		return NULL;
	HL_EV(hp->st->h, HL_EV_MAP, kind == SHD_PAGE_LARGE ? "large page: one block, full from the start" : "huge segment: one block", -1, bsize, pg->start);
	pg->capacity = 1;
	pg->used = 1;
	shd_flags_set(pg, SHD_PF_FULL);
	shd_queue_push(hp, &hp->queues[SHD_BIN_FULL], pg, true);
	shd_set_delay(pg, SHD_USE_DELAYED, false);
	return pg->start;
}

/* ---- collecting everything (trim) ---------------------------------------- */

void shd_heap_collect(shd_heap_t *hp)
{
	while (shd_reclaim_one(hp))
		;
	shd_delayed_drain(hp);
	for (unsigned b = 1; b < SHD_BIN_FULL; b++) {
		shd_page_t *pg = hp->queues[b].first, *next;
		for (; pg; pg = next) {
			next = pg->next;
			shd_page_collect(pg);
			if (pg->used == 0)
				shd_page_free_empty(hp, pg);
		}
	}
	shd_collect_retired(hp, true);
	shd_segment_purge_due(hp, true);
}
