/*
 * bins_check.c -- the walker and the checker of policy `bins`.
 *
 * The walker visits each arena's chunks in address order through the
 * boundary tags alone (sub-heaps oldest first), then every mapped chunk.
 * The checker verifies the invariants listed in bins.h: tags agree with
 * each other, no two free neighbours, every free chunk on exactly one bin
 * (bins are well-formed doubly linked rings and hold as many chunks as the
 * tags call free), bin contents and ordering, the skip lists, the binmap,
 * the top, the fastbins and the calling thread's tcache counts (that
 * tcache is found through the core's record of the thread, and only
 * believed when bins' own registry lists it).
 * Both hold each arena's lock while they look at it.
 */
#include "bins_tcache.h"
#include "../../core/report.h"

hl_block_state_t bn_chunk_state(bn_state_t *st, bn_arena_t *a, bn_chunk_t *c)
{
	if (c == a->top)
		return HL_BLOCK_TOP;
	if (bn_csize(c) < BN_MINSIZE || bn_csize(bn_next(c)) == 0)
		return HL_BLOCK_META;            /* a sub-heap's fencepost */
	if (!bn_inuse(c))
		return HL_BLOCK_FREE;
	uint64_t key = ((const bn_tentry_t *)bn_chunk2mem(c))->key;
	if (key == st->key)
		return HL_BLOCK_CACHED;
	if (bn_is_tcache_record(a, c))
		return HL_BLOCK_META;            /* a thread's tcache record */
	if (st->max_fast && key == st->fast_key)
		return HL_BLOCK_FREE;            /* in a fastbin */
	return HL_BLOCK_LIVE;
}

/** Walks one stretch [c, end) of arena @p a; -1 when a size is broken. */
static int bn_stretch(bn_state_t *st, bn_arena_t *a, bn_chunk_t *c, char *end,
		      bn_chunk_fn fn, void *arg)
{
	while ((char *)c < end) {
		size_t sz = bn_csize(c);
		if (sz == 0)                     /* second fencepost: sub-heap ends */
			return 0;
		if ((sz & 15) || (char *)c + sz > end)
			return -1;
		int r = fn(st, a, c, bn_chunk_state(st, a, c), arg);
		if (r || c == a->top)
			return r;
		c = bn_next(c);
	}
	return 0;
}

static int bn_heap_chunks(bn_state_t *st, bn_arena_t *a, bn_heap_t *hp, bn_chunk_fn fn, void *arg)
{
	if (hp->prev) {
		int r = bn_heap_chunks(st, a, hp->prev, fn, arg);
		if (r)
			return r;
	}
	return bn_stretch(st, a, bn_heap_first(hp), (char *)hp + hp->size, fn, arg);
}

int bn_arena_chunks(bn_state_t *st, bn_arena_t *a, bn_chunk_fn fn, void *arg)
{
	if (a->index)
		return bn_heap_chunks(st, a, a->heap, fn, arg);
	if (!a->top)
		return 0;
	return bn_stretch(st, a, bn_main_first(st), hl_brk_current(&st->brk), fn, arg);
}

/* --- walker ------------------------------------------------------------------ */

struct bn_walk_ctx {
	hl_walk_fn fn;
	void *arg;
};

static int bn_walk_one(bn_state_t *st, bn_arena_t *a, bn_chunk_t *c, hl_block_state_t s, void *arg)
{
	struct bn_walk_ctx *w = arg;
	size_t off, sz = bn_csize(c);
	(void)a;
	hl_block_t b = {
		.addr = s == HL_BLOCK_LIVE ? bn_chunk2mem(c) : (void *)c,
		.size = s == HL_BLOCK_LIVE ? bn_usable(c) : sz,
		.state = s,
		.region = hl_os_locate(st->os, c, &off),
		.size_class = s == HL_BLOCK_META || s == HL_BLOCK_TOP ? 0 : bn_bin_index(sz),
	};
	return w->fn(&b, w->arg);
}

static int bn_walk_mmaps(bn_state_t *st, struct bn_walk_ctx *w)
{
	int r = 0;
	pthread_mutex_lock(&st->mmap_lock);
	for (bn_mmap_t *mh = st->mmaps; mh && !r; mh = mh->next) {
		bn_chunk_t *c = bn_at(mh->base, mh->offset);
		size_t off;
		hl_block_t b = { bn_chunk2mem(c), bn_usable(c), HL_BLOCK_LIVE,
				 hl_os_locate(st->os, c, &off), 0 };
		r = w->fn(&b, w->arg);
	}
	pthread_mutex_unlock(&st->mmap_lock);
	return r;
}

int bn_walk(void *stp, hl_walk_fn fn, void *arg)
{
	bn_state_t *st = stp;
	struct bn_walk_ctx w = { fn, arg };
	bn_arena_t *a = &st->main;
	int r = 0;
	do {
		bn_lock(a);
		r = bn_arena_chunks(st, a, bn_walk_one, &w);
		bn_unlock(a);
		a = bn_ring_next(a);
	} while (!r && a != &st->main);
	return r > 0 ? r : (r ? r : bn_walk_mmaps(st, &w));
}

/* --- checker: the heap by address ---------------------------------------------- */

struct bn_tags {
	hl_report_t *r;
	bn_chunk_t *last;        /* last chunk visited: the one after it is where a
				    walk stopped on a broken size */
	bn_chunk_t *prev;        /* previous chunk of the stretch, NULL at a start */
	bool prev_free;
	size_t nfree;            /* free by the tags (fastbin chunks excluded) */
	unsigned arena;
};

static int bn_tag_one(bn_state_t *st, bn_arena_t *a, bn_chunk_t *c, hl_block_state_t s, void *arg)
{
	struct bn_tags *t = arg;
	hl_report_t *r = t->r;
	bool is_free = s == HL_BLOCK_FREE && !bn_inuse(c);
	(void)st;
	t->last = c;
	if (t->prev && bn_at(t->prev, bn_csize(t->prev)) != c)
		t->prev = NULL;                  /* a new sub-heap starts */
	HL_EXPECT(r, (c->size & BN_A) == a->aflag, "arena %u: chunk %p has A=%d", t->arena,
		  (void *)c, (int)!!(c->size & BN_A));
	HL_EXPECT(r, !bn_mmapped(c), "arena %u: chunk %p has M set", t->arena, (void *)c);
	if (t->prev) {
		HL_EXPECT(r, bn_prev_inuse(c) == !t->prev_free, "arena %u: P of %p says %d, chunk below is %s",
			  t->arena, (void *)c, (int)bn_prev_inuse(c), t->prev_free ? "free" : "in use");
		HL_EXPECT(r, !t->prev_free || c->prev_size == bn_csize(t->prev),
			  "arena %u: prev_size of %p is %zu, chunk below is %zu", t->arena, (void *)c,
			  c->prev_size, bn_csize(t->prev));
		HL_EXPECT(r, !(t->prev_free && is_free), "arena %u: free neighbours %p and %p not merged",
			  t->arena, (void *)t->prev, (void *)c);
	} else {
		HL_EXPECT(r, bn_prev_inuse(c), "arena %u: first chunk %p lacks P", t->arena, (void *)c);
	}
	if (s == HL_BLOCK_TOP)
		HL_EXPECT(r, bn_prev_inuse(c) && bn_csize(c) >= BN_MINSIZE, "arena %u: top %p lacks P or is %zu bytes",
			  t->arena, (void *)c, bn_csize(c));
	else if (s != HL_BLOCK_META)
		HL_EXPECT(r, bn_csize(c) >= BN_MINSIZE, "arena %u: chunk %p of %zu bytes", t->arena, (void *)c, bn_csize(c));
	t->nfree += is_free;
	t->prev = c;
	t->prev_free = is_free;
	return 0;
}

/* --- checker: the lists ----------------------------------------------------------- */

/** Checks a large bin's order and its skip list of distinct sizes. */
static void bn_check_large(hl_report_t *r, unsigned ai, unsigned i, bn_chunk_t *b, bn_chunk_t *c)
{
	bool leader = c->bk == b || bn_csize(c->bk) != bn_csize(c);
	if (c->bk != b)
		HL_EXPECT(r, bn_csize(c->bk) >= bn_csize(c), "arena %u: large bin %u not sorted at %p", ai, i, (void *)c);
	if (!leader) {
		HL_EXPECT(r, c->fd_nextsize == NULL, "arena %u: bin %u: same-size chunk %p in the skip list",
			  ai, i, (void *)c);
		return;
	}
	if (!HL_EXPECT(r, c->fd_nextsize && c->bk_nextsize, "arena %u: bin %u: leader %p off the skip list",
		       ai, i, (void *)c))
		return;
	HL_EXPECT(r, c->fd_nextsize->bk_nextsize == c && c->bk_nextsize->fd_nextsize == c,
		  "arena %u: bin %u: skip list broken at %p", ai, i, (void *)c);
}

/** Walks bin @p i: a consistent ring of free chunks of the right sizes.
 *  Returns its length. */
static size_t bn_check_bin(bn_arena_t *a, hl_report_t *r, unsigned i, size_t limit)
{
	bn_chunk_t *b = bn_bin(a, i);
	size_t n = 0;
	for (bn_chunk_t *c = b->fd; c != b; c = c->fd) {
		if (!HL_EXPECT(r, ++n <= limit && c->fd->bk == c && c->bk->fd == c, "arena %u: bin %u: broken ring at %p",
			       a->index, i, (void *)c))
			break;
		size_t sz = bn_csize(c);
		HL_EXPECT(r, !bn_inuse(c) && c != a->top, "arena %u: bin %u holds chunk %p that is not free",
			  a->index, i, (void *)c);
		if (i == BN_UNSORTED)
			continue;
		HL_EXPECT(r, bn_bin_index(sz) == i, "arena %u: chunk %p of %zu bytes in bin %u", a->index,
			  (void *)c, sz, i);
		if (!bn_is_small(sz))
			bn_check_large(r, a->index, i, b, c);
	}
	if (n && i != BN_UNSORTED)
		HL_EXPECT(r, bn_bin_marked(a, i), "arena %u: bin %u not empty but its binmap bit is clear", a->index, i);
	return n;
}

static void bn_check_fast(bn_state_t *st, bn_arena_t *a, hl_report_t *r, size_t limit)
{
	bool any = false;
	for (unsigned i = 0; i < BN_NFAST; i++) {
		size_t n = 0;
		for (bn_chunk_t *c = a->fast[i]; c; c = c->fd) {
			if (!HL_EXPECT(r, ++n <= limit, "arena %u: fastbin %u loops", a->index, i))
				break;
			HL_EXPECT(r, bn_fast_index(bn_csize(c)) == i && bn_inuse(c) &&
				  bn_chunk_state(st, a, c) == HL_BLOCK_FREE,
				  "arena %u: fastbin %u holds a bad chunk %p", a->index, i, (void *)c);
			any = true;
		}
	}
	HL_EXPECT(r, !any || a->have_fast, "arena %u: fastbins in use but have_fast is clear", a->index);
}

static int bn_count_one(bn_state_t *st, bn_arena_t *a, bn_chunk_t *c, hl_block_state_t s, void *arg)
{
	(void)st, (void)a, (void)c, (void)s;
	++*(size_t *)arg;
	return 0;
}

/** The top ends where the arena's committed memory ends, and the arena's
 *  system bytes are what its break or its sub-heaps have committed. */
static void bn_check_top(bn_state_t *st, bn_arena_t *a, hl_report_t *r)
{
	size_t system = a->index ? 0 : st->brk.end;
	for (bn_heap_t *hp = a->index ? a->heap : NULL; hp; hp = hp->prev)
		system += hp->size;
	HL_EXPECT(r, a->system == system, "arena %u: system bytes %zu, its memory says %zu", a->index,
		  a->system, system);
	if (!a->top)
		return;
	char *end = a->index ? (char *)a->heap + a->heap->size : hl_brk_current(&st->brk);
	HL_EXPECT(r, (char *)bn_next(a->top) == end, "arena %u: top %p does not end at %p", a->index,
		  (void *)a->top, (void *)end);
}

static void bn_check_arena(bn_state_t *st, bn_arena_t *a, hl_report_t *r)
{
	struct bn_tags t = { .r = r, .arena = a->index };
	size_t nchunks = 0;
	if (bn_arena_chunks(st, a, bn_tag_one, &t) != 0) {
		bn_chunk_t *bad = t.last ? bn_next(t.last) : NULL;
		hl_report_at(r, bad ? bn_chunk2mem(bad) : NULL,
			     "arena %u: the size of chunk %p runs out of the arena (its header overwritten?)",
			     a->index, (void *)bad);
		return;
	}
	bn_arena_chunks(st, a, bn_count_one, &nchunks);
	size_t listed = 0;
	for (unsigned i = BN_UNSORTED; i < BN_NBINS - 1; i++)
		listed += bn_check_bin(a, r, i, nchunks);
	HL_EXPECT(r, listed == t.nfree, "arena %u: %zu free chunks by the tags, %zu on the bins",
		  a->index, t.nfree, listed);
	bn_check_fast(st, a, r, nchunks);
	bn_check_top(st, a, r);
}

/* --- checker: caches and mappings ------------------------------------------------ */

static void bn_check_tcache(bn_state_t *st, bn_tcache_t *tc, hl_report_t *r)
{
	for (unsigned i = 0; i < BN_TC_BINS; i++) {
		unsigned n = 0;
		for (bn_tentry_t *e = tc->entries[i]; e; e = bn_tentry_next(e)) {
			if (!HL_EXPECT(r, ++n <= tc->counts[i] && !((uintptr_t)e & 15),
				       "tcache bin %u: more entries than its count %u", i, tc->counts[i]))
				break;
			bn_chunk_t *c = bn_mem2chunk(e);
			HL_EXPECT(r, e->key == st->key && bn_csize(c) == BN_MINSIZE + 16u * i && bn_inuse(c),
				  "tcache bin %u: bad entry %p", i, (void *)e);
		}
		HL_EXPECT(r, n == tc->counts[i] && n <= st->tcache_count,
			  "tcache bin %u: count %u, %u entries, depth %u", i, tc->counts[i], n, st->tcache_count);
	}
	for (unsigned j = 0; j < BN_TC_LARGE; j++) {  /* tcache_max: sorted, in their bin's range */
		unsigned n = 0;
		size_t last = 0;
		for (bn_tentry_t *e = tc->large[j]; e && n <= st->tcache_count; e = bn_tentry_next(e), n++) {
			size_t sz = bn_csize(bn_mem2chunk(e));
			HL_EXPECT(r, !((uintptr_t)e & 15) && e->key == st->key && sz >= last && sz < st->tc_large_limit &&
				     bn_tc_large_index(sz) == BN_TC_BINS + j,
				  "tcache large bin %u: bad entry %p", BN_TC_BINS + j, (void *)e);
			last = sz;
		}
		HL_EXPECT(r, n == tc->large_counts[j] && n <= st->tcache_count,
			  "tcache large bin %u: count %u, %u entries", BN_TC_BINS + j, tc->large_counts[j], n);
	}
}

/** The calling thread's tcache, found as bins' entry points find it: the
 *  policy_tls word of the core's record for this heap (hl_thread_get), the
 *  same record a host policy such as pools must hand to bins unchanged.
 *  The word is trusted only once the registry lists it: a host that gave
 *  bins a record of its own would leave its own word there, and reading
 *  that as a tcache reports nonsense ("more entries than its count"). */
static bn_tcache_t *bn_own_tcache(bn_state_t *st, hl_report_t *r)
{
	hl_thread_t *t = hl_thread_get(st->heap);
	bn_tcache_t *word = t ? t->policy_tls : NULL;
	if (!word)
		return NULL;
	bool listed = false;
	pthread_mutex_lock(&st->list_lock);
	for (bn_tcache_t *tc = st->tcaches; tc && !listed; tc = tc->next)
		listed = tc == word;
	pthread_mutex_unlock(&st->list_lock);
	HL_EXPECT(r, listed, "this thread's record holds %p, which is not a tcache of this heap "
		  "(a host policy must pass its caller's record through)", (void *)word);
	return listed ? word : NULL;
}

static void bn_check_mmaps(bn_state_t *st, hl_report_t *r)
{
	size_t n = 0, bytes = 0;
	pthread_mutex_lock(&st->mmap_lock);
	for (bn_mmap_t *mh = st->mmaps; mh; mh = mh->next) {
		bn_chunk_t *c = bn_at(mh->base, mh->offset);
		HL_EXPECT(r, bn_mmapped(c) && c->prev_size == mh->offset &&
			  hl_os_data(st->os, mh->base) == mh &&
			  mh->offset + bn_csize(c) == mh->map_size && (!mh->next || mh->next->prev == mh),
			  "mapped chunk %p is inconsistent", (void *)c);
		n++;
		bytes += mh->map_size;
	}
	HL_EXPECT(r, n == st->n_mmaps && bytes == st->mmapped_bytes, "mapped chunks: %zu listed, %zu counted",
		  n, st->n_mmaps);
	pthread_mutex_unlock(&st->mmap_lock);
}

int bn_check(void *stp, hl_report_t *r)
{
	bn_state_t *st = stp;
	int before = r->problems;
	bn_arena_t *a = &st->main;
	do {
		bn_lock(a);
		bn_check_arena(st, a, r);
		bn_unlock(a);
		a = bn_ring_next(a);
	} while (a != &st->main);
	bn_tcache_t *tc = bn_own_tcache(st, r);
	if (tc)
		bn_check_tcache(st, tc, r);
	bn_check_mmaps(st, r);
	return r->problems - before;
}
