/*
 * sharded_segment.c — the segment layer of the `sharded` policy: cutting
 * segments into pages, committing and purging their slices, and moving
 * whole segments onto the abandoned list and off it.  Which pages a heap
 * queues, and what happens to the pages of an abandoned segment, is the
 * heap layer's business (sharded_heap.c); this file calls only the segment
 * cache and the page layer below it.
 *
 * A segment is touched by its owning heap's thread only; the global lists
 * (every segment, the abandoned ones, the segment map) are behind st->lock
 * or atomics.
 */
#include "config.h"
#include <string.h>
#include "sharded_segment.h"

_Static_assert(sizeof(shd_segment_t) <= SHD_INFO_SLICES * SHD_SLICE_SIZE - 4096,
	       "segment header and page descriptors fit the info slices, guard page aside");

/* ---- slice masks ------------------------------------------------------- */

static inline bool shd_bit(const uint64_t *m, size_t i) { return (m[i >> 6] >> (i & 63)) & 1; }
static inline void shd_bit_set(uint64_t *m, size_t i) { m[i >> 6] |= (uint64_t)1 << (i & 63); }
static inline void shd_bit_clear(uint64_t *m, size_t i) { m[i >> 6] &= ~((uint64_t)1 << (i & 63)); }

/* Commits the slices of [i, i+n) not committed yet, one call per run.  A
 * run is marked committed only once the kernel has said yes: a refused
 * commit leaves its slices as they were (the runs before it stay
 * committed, as mimalloc's do, and are counted). */
static int shd_slices_commit(shd_state_t *st, shd_segment_t *s, size_t i, size_t n)
{
	for (size_t j = i; j < i + n;) {
		if (shd_bit(s->committed, j)) {
			j++;
			continue;
		}
		size_t k = j;
		while (k < i + n && !shd_bit(s->committed, k))
			k++;
		if (hl_os_commit(st->os, shd_slice_addr(s, j), (k - j) * SHD_SLICE_SIZE) < 0)
			return -1;
		s->committed_bytes += (k - j) * SHD_SLICE_SIZE;
		for (; j < k; j++)
			shd_bit_set(s->committed, j);
	}
	return 0;
}

/* ---- the segment map: one byte per 32 MiB, so free can tell ours ------ */

static void shd_segmap_set(shd_state_t *st, const void *seg, bool on)
{
	atomic_store(&st->segmap[(uintptr_t)seg >> SHD_SEGMENT_SHIFT], (uint8_t)on);
}

/* ---- free spans and the span queues ------------------------------------- */

/* mimalloc 2.0.9 (segment.c, "Slice span queues"): each run of free slices
 * of a segment, as long as it goes, is one span.  The descriptor of its
 * first slice holds its length (slice_count) and, while the segment is
 * queued, its links (next, prev) on the owning heap's queue of the span's
 * length bin; the descriptor of its last slice holds the way back to the
 * first (slice_offset), so a freed page finds the span before it.  Every
 * other descriptor of a free slice is zero.  A span goes on the front of
 * its queue; a new page of n slices takes the first span of n slices or
 * more, searching the queue of n's bin first, then the bins above. */

/* Puts span @p d (first descriptor, slice_count set) on the front of its
 * queue of heap @p hp. */
static void shd_span_link(shd_heap_t *hp, shd_page_t *d)
{
	shd_span_queue_t *q = &hp->spans[shd_span_bin(d->slice_count)];
	d->prev = NULL;
	d->next = q->first;
	if (q->first)
		q->first->prev = d;
	else
		q->last = d;
	q->first = d;
}

static void shd_span_unlink(shd_heap_t *hp, shd_page_t *d)
{
	shd_span_queue_t *q = &hp->spans[shd_span_bin(d->slice_count)];
	if (d->prev)
		d->prev->next = d->next;
	else
		q->first = d->next;
	if (d->next)
		d->next->prev = d->prev;
	else
		q->last = d->prev;
	d->next = d->prev = NULL;
}

/* Records slices [i, i+n) of @p s as one span, on the front of its queue
 * when @p s is queued (on heap @p hp, its owner). */
static void shd_span_set(shd_heap_t *hp, shd_segment_t *s, size_t i, size_t n)
{
	shd_page_t *d = &s->pages[i];
	d->slice_count = (uint32_t)n;
	d->slice_offset = 0;
	if (n > 1)
		s->pages[i + n - 1].slice_offset = (uint32_t)((n - 1) * sizeof(shd_page_t));
	if (s->queued)
		shd_span_link(hp, d);
}

/* Takes span @p d of @p s off its queue (when queued) and clears its first
 * and last descriptors; returns its length. */
static size_t shd_span_take(shd_heap_t *hp, shd_segment_t *s, shd_page_t *d)
{
	size_t n = d->slice_count;
	if (s->queued)
		shd_span_unlink(hp, d);
	d->slice_count = 0;
	s->pages[shd_page_index(s, d) + n - 1].slice_offset = 0;
	return n;
}

/* Slices [i, i+n) of @p s became free: one span with the free spans on
 * either side (mi_segment_span_free_coalesce). */
static void shd_span_free(shd_heap_t *hp, shd_segment_t *s, size_t i, size_t n)
{
	if (i + n < SHD_SLICES && !shd_bit(s->slice_used, i + n))
		n += shd_span_take(hp, s, &s->pages[i + n]);
	if (i > SHD_INFO_SLICES && !shd_bit(s->slice_used, i - 1)) {
		size_t first = i - 1 - s->pages[i - 1].slice_offset / sizeof(shd_page_t);
		n += shd_span_take(hp, s, &s->pages[first]);
		i = first;
	}
	shd_span_set(hp, s, i, n);
}

/* Puts every span of @p s on heap @p hp's queues, in address order (so the
 * last one is first), or takes them all off. */
static void shd_spans_queue(shd_heap_t *hp, shd_segment_t *s, bool on)
{
	if (s->huge || s->queued == on)
		return;
	for (size_t i = SHD_INFO_SLICES; i < SHD_SLICES;) {
		shd_page_t *d = &s->pages[i];
		if (!shd_bit(s->slice_used, i)) {
			if (on)
				shd_span_link(hp, d);
			else
				shd_span_unlink(hp, d);
		}
		i += d->slice_count ? d->slice_count : 1;
	}
	s->queued = on;
}

void shd_segment_spans_enqueue(shd_heap_t *hp, shd_segment_t *s)
{
	shd_spans_queue(hp, s, true);
}

/* ---- making and releasing segments ------------------------------------ */

static void shd_link_heap(shd_heap_t *hp, shd_segment_t *s)
{
	s->hprev = NULL;
	s->hnext = hp->segs;
	if (hp->segs)
		hp->segs->hprev = s;
	hp->segs = s;
	atomic_store_explicit(&s->owner, hp, memory_order_release);
	if (s->purge_expire && (!hp->purge_next || s->purge_expire < hp->purge_next))
		hp->purge_next = s->purge_expire;
}

static void shd_unlink_heap(shd_heap_t *hp, shd_segment_t *s)
{
	if (s->hprev)
		s->hprev->hnext = s->hnext;
	else
		hp->segs = s->hnext;
	if (s->hnext)
		s->hnext->hprev = s->hprev;
	s->hnext = s->hprev = NULL;
}

/* A new segment of @p size bytes (SHD_SEGMENT_SIZE, or what one @p huge
 * block needs), aligned to 32 MiB, its info slices committed as the
 * header (a huge segment is committed whole); a regular one is the
 * parked segment of the cache's lowest slot when there is one. */
static shd_segment_t *shd_segment_new(shd_heap_t *hp, size_t size, bool huge)
{
	shd_state_t *st = hp->st;
	shd_segment_t *s = huge ? NULL : shd_cache_take(st);
	HL_EV(st->h, HL_EV_NEW, s ? "segment (a parked one from the cache)" : "segment (reserved, 32 MiB aligned)", -1, size, s);
	if (!s) {
		if (!(s = hl_os_reserve(st->os, size, SHD_SEGMENT_SIZE, false)))
			return NULL;
		size_t head = huge ? size : SHD_INFO_SLICES * SHD_SLICE_SIZE;
		if (hl_os_commit(st->os, s, head) < 0) {
			hl_os_release(st->os, s, 0);
			return NULL;
		}
		s->committed_bytes = head;
	}
	s->cookie = (uintptr_t)s ^ st->key;
	s->size = size;
	s->huge = huge;
	for (size_t i = 0; i < SHD_INFO_SLICES; i++) {
		shd_bit_set(s->committed, i);
		shd_bit_set(s->slice_used, i);
	}
	size_t info = SHD_INFO_SLICES * SHD_SLICE_SIZE;
	if (st->secure && sizeof *s <= info - st->ospage)
		hl_os_guard(st->os, (uint8_t *)s + info - st->ospage, st->ospage);
	shd_segmap_set(st, s, true);
	shd_link_heap(hp, s);
	if (!huge) { /* every slice past the header: one span, queued */
		s->queued = true;
		shd_span_set(hp, s, SHD_INFO_SLICES, SHD_SLICES - SHD_INFO_SLICES);
	}
	pthread_mutex_lock(&st->lock);
	s->gnext = st->segs;
	if (st->segs)
		st->segs->gprev = s;
	st->segs = s;
	st->segments_made++;
	pthread_mutex_unlock(&st->lock);
	return s;
}

static void shd_segment_release(shd_heap_t *hp, shd_segment_t *s)
{
	shd_state_t *st = hp->st;
	shd_unlink_heap(hp, s);
	pthread_mutex_lock(&st->lock);
	if (s->gprev)
		s->gprev->gnext = s->gnext;
	else
		st->segs = s->gnext;
	if (s->gnext)
		s->gnext->gprev = s->gprev;
	st->segments_released++;
	pthread_mutex_unlock(&st->lock);
	HL_EV(st->h, HL_EV_RETIRE, "segment (no page used)", -1, s->size, s);
	shd_segmap_set(st, s, false);
	if (!shd_cache_park(st, s))
		hl_os_release(st->os, s, s->committed_bytes);
}

/* ---- pages inside segments ------------------------------------------- */

/* Turns slices [i, i+n) of @p s into a page of @p bsize blocks. */
static shd_page_t *shd_page_init(shd_heap_t *hp, shd_segment_t *s, size_t i, size_t n, size_t bsize,
				 unsigned kind)
{
	shd_state_t *st = hp->st;
	if (!s->huge && shd_slices_commit(st, s, i, n) < 0)
		return NULL;
	size_t span = s->huge ? s->size - SHD_INFO_SLICES * SHD_SLICE_SIZE : n * SHD_SLICE_SIZE;
	for (size_t j = 0; j < n && i + j < SHD_SLICES; j++) {
		memset(&s->pages[i + j], 0, sizeof s->pages[0]);
		s->pages[i + j].slice_offset = (uint32_t)(j * sizeof(shd_page_t));
		shd_bit_set(s->slice_used, i + j);
		shd_bit_clear(s->purge_mask, i + j);
		shd_bit_clear(s->purged, i + j);
	}
	shd_page_t *pg = &s->pages[i];
	pg->slice_count = (uint32_t)n;
	pg->kind = (uint8_t)kind;
	pg->bin = (uint8_t)(kind >= SHD_PAGE_LARGE ? SHD_BIN_HUGE : shd_bin_of(bsize));
	pg->block_size = bsize;
	pg->start = shd_slice_addr(s, i);
	if (kind == SHD_PAGE_SMALL) {
		pg->start += shd_page_offset(bsize);
		span -= shd_page_offset(bsize);
	}
	if (st->secure) {
		span -= st->ospage;
		hl_os_guard(st->os, pg->start + span, st->ospage);
		pg->keys[0] = shd_random(&hp->rnd) | 1;
		pg->keys[1] = shd_random(&hp->rnd);
	}
	pg->reserved = (uint32_t)(span / pg->block_size);
	atomic_store_explicit(&pg->thread_free, SHD_NO_DELAYED, memory_order_relaxed);
	shd_page_set_heap(pg, hp);
	s->used++;
	hp->c.pages_fresh++;
	HL_EV(st->h, HL_EV_NEW, "page from a segment's free slices, bin", pg->bin, span, pg->start);
	return pg;
}

size_t shd_page_slices(const shd_state_t *st, size_t bsize, unsigned kind)
{
	if (kind == SHD_PAGE_SMALL)
		return 1;
	if (kind == SHD_PAGE_MEDIUM)
		return SHD_MEDIUM_SLICES;
	return hl_align_up(bsize + (st->secure ? st->ospage : 0), SHD_SLICE_SIZE) / SHD_SLICE_SIZE;
}

bool shd_segment_has_run(const shd_segment_t *s, size_t n)
{
	if (s->huge)
		return false;
	for (size_t i = SHD_INFO_SLICES; i < SHD_SLICES;) {
		size_t k = s->pages[i].slice_count;
		if (!shd_bit(s->slice_used, i) && k >= n)
			return true;
		i += k ? k : 1;
	}
	return false;
}

/* A page of @p n slices for blocks of @p bsize from heap @p hp's span
 * queues (mi_segments_page_find_and_allocate): the first span of n slices
 * or more, from the queue of n's bin up; what it has beyond n slices is
 * a span of its own again, on the front of its queue.  NULL when no span
 * is long enough, or the commit failed (the span is given back). */
static shd_page_t *shd_span_alloc(shd_heap_t *hp, size_t n, size_t bsize, unsigned kind)
{
	for (unsigned b = shd_span_bin(n); b < SHD_SPAN_BINS; b++)
		for (shd_page_t *d = hp->spans[b].first; d; d = d->next) {
			if (d->slice_count < n)
				continue;
			shd_segment_t *s = shd_segment_of(d);
			size_t i = shd_page_index(s, d), k = shd_span_take(hp, s, d);
			if (k > n)
				shd_span_set(hp, s, i + n, k - n);
			shd_page_t *pg = shd_page_init(hp, s, i, n, bsize, kind);
			if (!pg)
				shd_span_free(hp, s, i, n);
			return pg;
		}
	return NULL;
}

/* A page for blocks of @p bsize: from the heap's span queues; huge blocks
 * get a segment of their own. */
shd_page_t *shd_segment_page_alloc(shd_heap_t *hp, size_t bsize, unsigned kind)
{
	if (hp->purge_next && shd_now_ms(hp->st) >= hp->purge_next)
		shd_segment_purge_due(hp, false);
	if (kind == SHD_PAGE_HUGE) {
		size_t size = hl_align_up(SHD_INFO_SLICES * SHD_SLICE_SIZE + bsize + (hp->st->secure ? hp->st->ospage : 0),
					  SHD_SLICE_SIZE);
		shd_segment_t *s = shd_segment_new(hp, size, true);
		return s ? shd_page_init(hp, s, SHD_INFO_SLICES, size / SHD_SLICE_SIZE - SHD_INFO_SLICES, bsize, kind)
			 : NULL;
	}
	return shd_span_alloc(hp, shd_page_slices(hp->st, bsize, kind), bsize, kind);
}

shd_page_t *shd_segment_page_new(shd_heap_t *hp, size_t bsize, unsigned kind)
{
	/* its one span is the only one long enough: the caller found none */
	if (!shd_segment_new(hp, SHD_SEGMENT_SIZE, false))
		return NULL;
	return shd_span_alloc(hp, shd_page_slices(hp->st, bsize, kind), bsize, kind);
}

/* Purges slices [i, i+n) (MADV_DONTNEED). */
static void shd_purge_run(shd_heap_t *hp, shd_segment_t *s, size_t i, size_t n)
{
	HL_EV(hp->st->h, HL_EV_PURGE, "free slices whose purge delay is over", -1, n * SHD_SLICE_SIZE, shd_slice_addr(s, i));
	hl_os_purge(hp->st->os, shd_slice_addr(s, i), n * SHD_SLICE_SIZE);
	for (size_t j = i; j < i + n; j++) {
		shd_bit_clear(s->purge_mask, j);
		shd_bit_set(s->purged, j);
	}
	hp->c.purges++;
	hp->c.purged_bytes += n * SHD_SLICE_SIZE;
}

static void shd_segment_purge(shd_heap_t *hp, shd_segment_t *s);

/* The slices of a freed page: purged now, later, or never. */
static void shd_schedule_purge(shd_heap_t *hp, shd_segment_t *s, size_t i, size_t n)
{
	int64_t delay = hp->st->purge_delay;
	if (delay == 0) {
		shd_purge_run(hp, s, i, n);
		return;
	}
	if (delay < 0)
		return;
	int64_t now = shd_now_ms(hp->st);
	if (s->purge_expire && s->purge_expire <= now) {
		shd_segment_purge(hp, s); /* what was due goes now; this page */
		s->purge_expire = now + SHD_PURGE_EXTEND; /* follows shortly */
	} else if (s->purge_expire) {
		s->purge_expire += SHD_PURGE_EXTEND;
	} else {
		s->purge_expire = now + delay;
	}
	for (size_t j = i; j < i + n; j++)
		shd_bit_set(s->purge_mask, j);
	if (!hp->purge_next || s->purge_expire < hp->purge_next)
		hp->purge_next = s->purge_expire;
}

void shd_segment_page_free(shd_heap_t *hp, shd_page_t *pg)
{
	shd_state_t *st = hp->st;
	shd_segment_t *s = shd_segment_of(pg);
	size_t i = shd_page_index(s, pg), n = pg->slice_count;
	if (st->secure && !s->huge) {
		uint8_t *guard = shd_slice_addr(s, i + n) - st->ospage;
		hl_os_decommit(st->os, guard, st->ospage);
		hl_os_commit(st->os, guard, st->ospage);
	}
	hp->c.pages_freed++;
	HL_EV(st->h, HL_EV_RETIRE, "page back to its segment, bin", pg->bin, n * SHD_SLICE_SIZE, pg->start);
	s->used--;
	if (s->huge) {
		shd_segment_release(hp, s);
		return;
	}
	for (size_t j = i; j < i + n; j++) {
		memset(&s->pages[j], 0, sizeof s->pages[0]);
		shd_bit_clear(s->slice_used, j);
	}
	shd_span_free(hp, s, i, n);
	if (s->used == 0) {
		shd_spans_queue(hp, s, false);
		shd_segment_release(hp, s);
		return;
	}
	shd_schedule_purge(hp, s, i, n);
	if (hp->purge_next && shd_now_ms(hp->st) >= hp->purge_next)
		shd_segment_purge_due(hp, false);
}

/* Purges every run of free slices of @p s waiting in its purge mask. */
static void shd_segment_purge(shd_heap_t *hp, shd_segment_t *s)
{
	for (size_t i = SHD_INFO_SLICES; i < SHD_SLICES;) {
		size_t k = i;
		while (k < SHD_SLICES && shd_bit(s->purge_mask, k) && !shd_bit(s->slice_used, k))
			k++;
		if (k > i)
			shd_purge_run(hp, s, i, k - i);
		i = k + 1;
	}
	s->purge_expire = 0;
}

/* Purges every segment whose delay is over (all of them: force). */
void shd_segment_purge_due(shd_heap_t *hp, bool force)
{
	int64_t now = shd_now_ms(hp->st), next = 0;
	for (shd_segment_t *s = hp->segs; s; s = s->hnext) {
		if (!s->purge_expire)
			continue;
		if (force || now >= s->purge_expire)
			shd_segment_purge(hp, s);
		else
			next = !next || s->purge_expire < next ? s->purge_expire : next;
	}
	hp->purge_next = next;
}

/* ---- abandoning and reclaiming whole segments --------------------------- */

/* Pushes ownerless @p s on list @p list (st->lock held). */
static void shd_list_push(shd_state_t *st, shd_segment_t **list, shd_segment_t *s)
{
	atomic_store_explicit(&s->owner, NULL, memory_order_release);
	s->hprev = NULL;
	s->hnext = *list;
	if (*list)
		(*list)->hprev = s;
	*list = s;
	atomic_fetch_add(&st->nabandoned, 1);
}

void shd_segments_fork_child(shd_state_t *st)
{
	for (shd_segment_t *s = st->segs; s; s = s->gnext)
		for (size_t i = 0; i < SHD_SLICES; i++) {
			hl_thread_t *t = atomic_load_explicit(&s->pages[i].fast_owner, memory_order_relaxed);
			if (t && t->exited)
				atomic_store_explicit(&s->pages[i].fast_owner, NULL, memory_order_relaxed);
		}
}

void shd_segments_abandon(shd_heap_t *hp)
{
	shd_state_t *st = hp->st;
	shd_segment_t *s;
	while ((s = hp->segs) != NULL) {
		if (s->purge_expire && shd_now_ms(hp->st) >= s->purge_expire)
			shd_segment_purge(hp, s);
		shd_spans_queue(hp, s, false);
		shd_unlink_heap(hp, s);
		s->visits = 0;
		/* ownerless and on the abandoned list in one step under the lock,
		 * so a checker never sees one without the other */
		pthread_mutex_lock(&st->lock);
		shd_list_push(st, &st->abandoned, s);
		st->segments_abandoned++;
		pthread_mutex_unlock(&st->lock);
	}
}

/* Takes an abandoned segment for heap @p hp; it names its new owner while
 * the list is locked, so a checker never sees it owned by nobody and on
 * no list. */
shd_segment_t *shd_segment_reclaim(shd_heap_t *hp, bool revisit)
{
	shd_state_t *st = hp->st;
	pthread_mutex_lock(&st->lock);
	if (!st->abandoned && revisit) { /* the set-aside ones get their turn */
		st->abandoned = st->visited;
		st->visited = NULL;
	}
	shd_segment_t *s = st->abandoned;
	if (s) {
		atomic_store_explicit(&s->owner, hp, memory_order_release);
		st->abandoned = s->hnext;
		if (s->hnext)
			s->hnext->hprev = NULL;
		s->hnext = s->hprev = NULL;
		atomic_fetch_sub(&st->nabandoned, 1);
	}
	pthread_mutex_unlock(&st->lock);
	if (s)
		shd_link_heap(hp, s);
	return s;
}

void shd_segment_set_aside(shd_heap_t *hp, shd_segment_t *s, bool force_purge)
{
	shd_state_t *st = hp->st;
	if (s->purge_expire && (force_purge || shd_now_ms(hp->st) >= s->purge_expire))
		shd_segment_purge(hp, s);
	shd_spans_queue(hp, s, false);
	shd_unlink_heap(hp, s);
	pthread_mutex_lock(&st->lock);
	shd_list_push(st, &st->visited, s);
	pthread_mutex_unlock(&st->lock);
}
