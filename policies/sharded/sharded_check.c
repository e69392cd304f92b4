/*
 * sharded_check.c — the checker and the walker of the `sharded` policy.
 *
 * Both read every segment under st->lock and expect the heap to be quiet
 * (no thread allocating or freeing meanwhile): they read the owner-only
 * lists of every thread's pages.  The walker's callback must not allocate
 * from the same heap.
 */
#include "config.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "sharded_page.h"

static void shd_problem(hl_report_t *r, int *count, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void shd_problem(hl_report_t *r, int *count, const char *fmt, ...)
{
	(*count)++;
	if (!r)
		return;
	char buf[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	hl_report(r, "%s", buf);
}

/* Marks one list; stops at a stray block or after more than capacity. */
static void shd_mark_list(const shd_page_t *pg, const shd_block_t *b, uint8_t kind, shd_marks_t *m,
			  hl_report_t *r, int *bad)
{
	static const char *names[] = { "", "free", "local_free", "thread_free", "delayed" };
	long steps = 0;
	for (; b; b = shd_next_raw(pg, b)) {
		if (!shd_in_page(pg, b)) {
			shd_problem(r, bad, "page %p: %s list leaves the page (%p)", (void *)pg, names[kind],
				    (const void *)b);
			return;
		}
		size_t i = (size_t)((const uint8_t *)b - pg->start) / pg->block_size;
		if (m->on[i]) {
			shd_problem(r, bad, "page %p: block %zu on %s and %s%s", (void *)pg, i,
				    names[m->on[i]], names[kind], m->on[i] == kind ? " (cycle)" : "");
			return;
		}
		m->on[i] = kind;
		m->n[kind]++;
		if (++steps > (long)pg->capacity)
			return;
	}
}

int shd_page_mark(shd_state_t *st, const shd_page_t *pg, shd_marks_t *m, hl_report_t *r)
{
	int bad = 0;
	memset(m->on, 0, pg->capacity < SHD_MAX_BLOCKS ? pg->capacity : SHD_MAX_BLOCKS);
	memset(m->n, 0, sizeof m->n);
	if (pg->capacity > SHD_MAX_BLOCKS) {
		shd_problem(r, &bad, "page %p: capacity %u too large", (void *)pg, pg->capacity);
		return bad;
	}
	shd_mark_list(pg, pg->free, SHD_ON_FREE, m, r, &bad);
	shd_mark_list(pg, pg->local_free, SHD_ON_LOCAL, m, r, &bad);
	shd_mark_list(pg, (const shd_block_t *)shd_tf_ptr(atomic_load(&pg->thread_free)), SHD_ON_THREAD,
		      m, r, &bad);
	shd_heap_t *owner = atomic_load(&pg->heap);
	if (owner) /* only the owner's delayed list can hold this page's blocks */
		for (shd_block_t *b = atomic_load(&owner->delayed); b;) {
			shd_page_t *bp = shd_page_of(shd_segment_of(b), b);
			if (bp == pg && shd_in_page(pg, b)) {
				size_t i = (size_t)((uint8_t *)b - pg->start) / pg->block_size;
				m->on[i] = SHD_ON_DELAYED;
				m->n[SHD_ON_DELAYED]++;
			}
			b = shd_next_raw(bp, b);
		}
	m->n[SHD_ON_NONE] = (long)pg->capacity - m->n[1] - m->n[2] - m->n[3] - m->n[4];
	return bad;
}

/* ---- the checker ---------------------------------------------------------- */

/* (used - |thread_free|) + |free| + |local_free| + |thread_free| ==
 * capacity, and the page's other invariants. */
static int shd_check_page(shd_state_t *st, const shd_page_t *pg, hl_report_t *r)
{
	shd_marks_t m;
	int bad = shd_page_mark(st, pg, &m, r);
	long tf = m.n[SHD_ON_THREAD], live = (long)pg->used - tf - m.n[SHD_ON_DELAYED];
	long lhs = (long)pg->used - tf + m.n[SHD_ON_FREE] + m.n[SHD_ON_LOCAL] + tf;
	if (lhs != (long)pg->capacity || live < 0)
		shd_problem(r, &bad, "page %p: (used %u - thread_free %ld) + free %ld + local_free %ld + "
			    "thread_free %ld = %ld != capacity %u (delayed %ld)", (void *)pg, pg->used, tf,
			    m.n[SHD_ON_FREE], m.n[SHD_ON_LOCAL], tf, lhs, pg->capacity, m.n[SHD_ON_DELAYED]);
	if (pg->capacity > pg->reserved)
		shd_problem(r, &bad, "page %p: capacity %u > reserved %u", (void *)pg, pg->capacity, pg->reserved);
	if ((size_t)pg->reserved * pg->block_size > (size_t)pg->slice_count * SHD_SLICE_SIZE)
		shd_problem(r, &bad, "page %p: reserved blocks overrun the page", (void *)pg);
	if ((shd_flags(pg) & SHD_PF_FULL) && (pg->free || pg->local_free || pg->capacity != pg->reserved))
		shd_problem(r, &bad, "page %p: in the full queue with free blocks", (void *)pg);
	return bad;
}

static bool shd_is_abandoned(const shd_state_t *st, const shd_segment_t *s)
{
	for (const shd_segment_t *a = st->abandoned; a; a = a->hnext)
		if (a == s)
			return true;
	for (const shd_segment_t *a = st->visited; a; a = a->hnext)
		if (a == s)
			return true;
	return false;
}

/* Each run of free slices of regular segment @p s is one span: its first
 * descriptor gives its length, its last one the way back; off every queue
 * unless @p s is queued.  Returns the number of spans. */
static size_t shd_check_spans(const shd_segment_t *s, hl_report_t *r, int *bad)
{
	size_t spans = 0;
	for (size_t i = SHD_INFO_SLICES; i < SHD_SLICES;) {
		const shd_page_t *d = &s->pages[i];
		size_t n = d->slice_count;
		if (shd_slice_used(s, i)) {
			i += n ? n : 1;
			continue;
		}
		size_t end = shd_next_used(s, i);
		if (n != end - i) {
			shd_problem(r, bad, "segment %p: free slices %zu..%zu are a span of %zu", (const void *)s, i,
				    end - 1, n);
			return spans;
		}
		if (n > 1 && s->pages[end - 1].slice_offset != (n - 1) * sizeof(shd_page_t))
			shd_problem(r, bad, "segment %p: span at slice %zu: its last slice does not lead back", (const void *)s, i);
		if (!s->queued && (d->next || d->prev))
			shd_problem(r, bad, "segment %p: span at slice %zu linked, the segment not queued", (const void *)s, i);
		spans++;
		i = end;
	}
	return spans;
}

static int shd_check_segment(shd_state_t *st, const shd_segment_t *s, hl_report_t *r)
{
	int bad = 0;
	uint32_t pages = 0;
	if (s->cookie != ((uintptr_t)s ^ st->key))
		shd_problem(r, &bad, "segment %p: bad cookie", (const void *)s);
	for (size_t i = shd_next_used(s, SHD_INFO_SLICES); i < SHD_SLICES; i = shd_next_page(s, i)) {
		const shd_page_t *pg = &s->pages[i];
		pages++;
		bad += shd_check_page(st, pg, r);
		shd_heap_t *owner = atomic_load(&pg->heap);
		if (owner != atomic_load(&s->owner))
			shd_problem(r, &bad, "page %p: owner differs from its segment's", (const void *)pg);
	}
	if (pages != s->used)
		shd_problem(r, &bad, "segment %p: used %u but %u pages", (const void *)s, s->used, pages);
	if (!atomic_load(&s->owner) != shd_is_abandoned(st, s))
		shd_problem(r, &bad, "segment %p: owner and abandoned list disagree", (const void *)s);
	if (s->queued && (s->huge || !atomic_load(&s->owner)))
		shd_problem(r, &bad, "segment %p: queued without an owner, or huge", (const void *)s);
	if (!s->huge)
		shd_check_spans(s, r, &bad);
	return bad;
}

/* Every span on @p hp's queues is a free span of a queued segment of hp,
 * in the queue of its length, and every span of those segments is on one. */
static int shd_check_span_queues(shd_heap_t *hp, hl_report_t *r)
{
	int bad = 0;
	size_t queued = 0, spans = 0;
	for (unsigned b = 0; b < SHD_SPAN_BINS; b++) {
		const shd_span_queue_t *q = &hp->spans[b];
		for (const shd_page_t *d = q->first; d; d = d->next) {
			if (++queued > 1000000)
				break;
			const shd_segment_t *s = shd_segment_of(d);
			if (atomic_load(&s->owner) != hp || !s->queued)
				shd_problem(r, &bad, "heap %u: span queue %u holds a span of a segment not queued there", hp->tid, b);
			else if (shd_slice_used(s, (size_t)(d - s->pages)) || shd_span_bin(d->slice_count) != b)
				shd_problem(r, &bad, "heap %u: span queue %u holds a used slice or a span of %u slices", hp->tid,
					    b, d->slice_count);
			if ((d->next ? d->next->prev : q->last) != d)
				shd_problem(r, &bad, "heap %u: span queue %u links broken", hp->tid, b);
		}
	}
	for (const shd_segment_t *s = hp->segs; s; s = s->hnext)
		if (s->queued)
			spans += shd_check_spans(s, NULL, &(int){ 0 });
	if (queued != spans)
		shd_problem(r, &bad, "heap %u: %zu spans queued, its segments have %zu", hp->tid, queued, spans);
	return bad;
}

/* Queue links, membership versus in_full, and the direct table. */
static int shd_check_heap(shd_state_t *st, shd_heap_t *hp, hl_report_t *r)
{
	int bad = 0;
	for (unsigned b = 1; b <= SHD_BIN_FULL; b++) {
		shd_queue_t *q = &hp->queues[b];
		size_t count = 0;
		for (shd_page_t *pg = q->first; pg; pg = pg->next) {
			count++;
			if (atomic_load(&pg->heap) != hp)
				shd_problem(r, &bad, "heap %u: queue %u holds a page of another heap", hp->tid, b);
			if (((shd_flags(pg) & SHD_PF_FULL) != 0) != (b == SHD_BIN_FULL))
				shd_problem(r, &bad, "heap %u: page %p in queue %u with in_full %d", hp->tid,
					    (void *)pg, b, shd_flags(pg) & SHD_PF_FULL);
			if (b != SHD_BIN_FULL && pg->bin != b)
				shd_problem(r, &bad, "heap %u: page of bin %u in queue %u", hp->tid, pg->bin, b);
			if ((pg->next ? pg->next->prev : q->last) != pg)
				shd_problem(r, &bad, "heap %u: queue %u links broken", hp->tid, b);
			if (count > 1000000)
				break;
		}
		if (count != q->count)
			shd_problem(r, &bad, "heap %u: queue %u counts %zu, holds %zu", hp->tid, b, q->count, count);
	}
	bad += shd_check_span_queues(hp, r);
	if (hp->direct[0] != &st->empty)
		shd_problem(r, &bad, "heap %u: direct[0] is not the empty page", hp->tid);
	for (size_t w = 1; w < SHD_DIRECT; w++) {
		shd_page_t *first = hp->queues[shd_bin_of_wsize(w)].first;
		if (hp->direct[w] != (first ? first : &st->empty))
			shd_problem(r, &bad, "heap %u: direct[%zu] is not its bin's first page", hp->tid, w);
	}
	return bad;
}

/* An explicit hl_check sees every heap: the caller keeps the threads
 * quiet.  In a fork child the heaps of the threads left behind (orphans)
 * are not checked: the fork may have caught them halfway through a change
 * that nobody will finish.  The debug check after each call runs while other threads keep
 * allocating without locks, so it covers the calling thread's heap and the
 * abandoned segments — the parts nobody else can be changing (remote
 * frees only push onto thread_free, which the equation allows for). */
int shd_check(void *vst, hl_report_t *r)
{
	shd_state_t *st = vst;
	shd_heap_t *self = NULL;
	bool all = !st->debug;
	if (!all) {
		hl_thread_t *t = hl_thread_get(st->h);
		self = t ? shd_heap_of(t) : NULL;
	}
	int bad = 0;
	pthread_mutex_lock(&st->lock);
	for (shd_segment_t *s = st->segs; s; s = s->gnext) {
		shd_heap_t *owner = atomic_load(&s->owner);
		if (owner && owner->orphan) /* frozen by a fork, maybe mid-change */
			continue;
		if (all || !owner || owner == self)
			bad += shd_check_segment(st, s, r);
	}
	for (shd_heap_t *hp = st->heaps; hp; hp = hp->next)
		if (all || hp == self)
			bad += shd_check_heap(st, hp, r);
	pthread_mutex_unlock(&st->lock);
	return bad;
}

/* ---- the walker ---------------------------------------------------------- */

typedef struct shd_walker {
	hl_walk_fn fn;
	void *arg;
	int region;
	int stop;
} shd_walker_t;

static void shd_visit(shd_walker_t *w, const void *addr, size_t size, hl_block_state_t state, unsigned cls)
{
	if (w->stop || !size)
		return;
	hl_block_t b = { .addr = addr, .size = size, .state = state, .region = w->region, .size_class = cls };
	w->stop = w->fn(&b, w->arg);
}

/* The unused start of one page (SHD_PAGE_OFFSET), its blocks, then its
 * never-used tail and its guard page. */
static void shd_walk_page(shd_state_t *st, const shd_segment_t *s, const shd_page_t *pg, shd_walker_t *w)
{
	shd_marks_t m;
	shd_page_mark(st, pg, &m, NULL);
	const uint8_t *base = shd_slice_addr((shd_segment_t *)s, (size_t)(pg - s->pages));
	size_t lead = (size_t)(pg->start - base);
	shd_visit(w, base, lead, HL_BLOCK_TOP, pg->bin);
	for (uint32_t i = 0; i < pg->capacity && !w->stop; i++)
		shd_visit(w, pg->start + (size_t)i * pg->block_size, pg->block_size,
			  m.on[i] == SHD_ON_NONE ? HL_BLOCK_LIVE : HL_BLOCK_FREE, pg->bin);
	size_t span = (s->huge ? s->size - SHD_INFO_SLICES * SHD_SLICE_SIZE : (size_t)pg->slice_count * SHD_SLICE_SIZE) - lead;
	size_t guard = st->secure ? st->ospage : 0;
	size_t carved = (size_t)pg->capacity * pg->block_size;
	shd_visit(w, pg->start + carved, span - guard - carved, HL_BLOCK_TOP, pg->bin);
	shd_visit(w, pg->start + span - guard, guard, HL_BLOCK_GUARD, pg->bin);
}

/* Free slices [i, end): dirty while committed and not purged yet, else
 * only address space (returned); one visit per run of equal state. */
static void shd_walk_free(const shd_segment_t *s, size_t i, size_t end, shd_walker_t *w)
{
	while (i < end && !w->stop) {
		bool gone = !((s->committed[i >> 6] >> (i & 63)) & 1) || ((s->purged[i >> 6] >> (i & 63)) & 1);
		size_t k = i + 1;
		while (k < end && gone == (!((s->committed[k >> 6] >> (k & 63)) & 1) ||
					  ((s->purged[k >> 6] >> (k & 63)) & 1)))
			k++;
		shd_visit(w, shd_slice_addr((shd_segment_t *)s, i), (k - i) * SHD_SLICE_SIZE,
			  gone ? HL_BLOCK_RETURNED : HL_BLOCK_DIRTY, 0);
		i = k;
	}
}

int shd_walk(void *vst, hl_walk_fn fn, void *arg)
{
	shd_state_t *st = vst;
	shd_walker_t w = { .fn = fn, .arg = arg };
	pthread_mutex_lock(&st->lock);
	for (shd_segment_t *s = st->segs; s && !w.stop; s = s->gnext) {
		size_t off;
		w.region = hl_os_locate(st->os, s, &off);
		size_t guard = st->secure ? st->ospage : 0;
		size_t info = SHD_INFO_SLICES * SHD_SLICE_SIZE;
		shd_visit(&w, s, info - guard, HL_BLOCK_META, 0);
		shd_visit(&w, (uint8_t *)s + info - guard, guard, HL_BLOCK_GUARD, 0);
		size_t done = SHD_INFO_SLICES;
		for (size_t i = shd_next_used(s, SHD_INFO_SLICES); i < SHD_SLICES && !w.stop; i = shd_next_page(s, i)) {
			shd_walk_free(s, done, i, &w);
			shd_walk_page(st, s, &s->pages[i], &w);
			done = i + s->pages[i].slice_count;
		}
		if (!s->huge)
			shd_walk_free(s, done, SHD_SLICES, &w);
	}
	pthread_mutex_unlock(&st->lock);
	return w.stop;
}
