/*
 * Extents of policy `slab`: runs of pages, split to fit and merged when
 * freed, kept in three esets by state (dirty, muzzy, returned).
 *
 * Allocation looks in dirty, then muzzy, then returned pages (jemalloc's
 * order: the cheapest to reuse first) and takes the oldest extent that is
 * large enough: lowest serial number (the order chunks were reserved in),
 * then lowest address, across the page size class buckets (an extent filed,
 * and a search started, by its size quantized as jemalloc's with the large
 * blocks' page of pad: sl_eset_bucket), in dirty pages
 * only among extents up to 64 times the request (jemalloc 5.3's
 * opt_lg_extent_max_active_fit: a slab does not break up a big freed
 * block, it takes returned pages and the RSS grows); only when none fits
 * does the arena reserve a new chunk, each one a page size class larger
 * than the last (2 MiB, 2.5 MiB, 3 MiB ...) or, skipping ahead, as large
 * as the request needs.
 * The unused end of a chunk is a returned extent.  Freed extents merge
 * with their free neighbours of the same state, except that a dirty one
 * under 16 KiB (the smallest large class) is filed unmerged and merges
 * only when decay reaches it, one neighbour at a time, going back to the
 * young end of the list after each (jemalloc's delay_coalesce of the dirty
 * ecache: extent_record, ecache_evict).  Every function here runs under
 * the arena's ext lock.
 *
 * Each extent carries jemalloc 5.3's zeroed mark (slab.h, sl_zeroed_t),
 * set and cleared where src/extent.c does: a new chunk is zeroed (the
 * kernel's fresh pages: extent_alloc_mmap), a purge to returned zeroes
 * (MADV_DONTNEED: extent_dalloc_wrapper), a free to dirty and a lazy purge
 * to muzzy do not (ecache_dalloc clears it), a split keeps it on both
 * parts (extent_split_impl) and a merge keeps it only when both had it
 * (extent_merge_impl).
 */
#include "config.h"
#include <string.h>
#include "slab.h"

/* ---- pairing heap, oldest extent first ---------------------------------- */

static inline bool sl_ph_less(sl_phn_t *a, sl_phn_t *b)
{
	return sl_extent_older(sl_ph_extent(a), sl_ph_extent(b));
}

/* Melds two roots (their prev and next are NULL). */
static sl_phn_t *sl_ph_meld(sl_phn_t *a, sl_phn_t *b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	if (sl_ph_less(b, a)) {
		sl_phn_t *t = a;
		a = b;
		b = t;
	}
	b->prev = a;
	b->next = a->child;
	if (a->child)
		a->child->prev = b;
	a->child = b;
	return a;
}

/* Two-pass merge of a sibling list into one root. */
static sl_phn_t *sl_ph_merge_pairs(sl_phn_t *first)
{
	sl_phn_t *pairs = NULL;
	while (first) {
		sl_phn_t *a = first, *b = a->next;
		first = b ? b->next : NULL;
		a->next = a->prev = NULL;
		if (b)
			b->next = b->prev = NULL;
		sl_phn_t *m = sl_ph_meld(a, b);
		m->next = pairs;
		pairs = m;
	}
	sl_phn_t *root = NULL;
	while (pairs) {
		sl_phn_t *n = pairs->next;
		pairs->next = NULL;
		root = sl_ph_meld(pairs, root);
		pairs = n;
	}
	return root;
}

void sl_ph_insert(sl_phn_t **root, sl_phn_t *n)
{
	n->child = n->next = n->prev = NULL;
	*root = sl_ph_meld(*root, n);
}

void sl_ph_remove(sl_phn_t **root, sl_phn_t *n)
{
	if (n == *root) {
		*root = sl_ph_merge_pairs(n->child);
		return;
	}
	if (n->prev->child == n)
		n->prev->child = n->next;
	else
		n->prev->next = n->next;
	if (n->next)
		n->next->prev = n->prev;
	*root = sl_ph_meld(*root, sl_ph_merge_pairs(n->child));
}

/* ---- esets -------------------------------------------------------------- */

void sl_eset_init(sl_eset_t *es, sl_estate_t st)
{
	memset(es, 0, sizeof *es);
	es->state = (uint8_t)st;
}

static inline sl_eset_t *sl_eset_of(sl_arena_t *a, sl_estate_t st)
{
	return &a->esets[st - SL_DIRTY];
}

static void sl_eset_insert(sl_state_t *s, sl_eset_t *es, sl_extent_t *e, bool oldest)
{
	size_t pages = sl_npages(s, e->size);
	unsigned b = sl_eset_bucket(pages);
	sl_ph_insert(&es->bucket[b], &e->ph);
	es->nonempty[b / 64] |= 1ull << (b % 64);
	e->in_heap = 1;
	e->lru_prev = e->lru_next = NULL;
	if (oldest) {
		e->lru_next = es->lru_head;
		if (es->lru_head)
			es->lru_head->lru_prev = e;
		else
			es->lru_tail = e;
		es->lru_head = e;
	} else {
		e->lru_prev = es->lru_tail;
		if (es->lru_tail)
			es->lru_tail->lru_next = e;
		else
			es->lru_head = e;
		es->lru_tail = e;
	}
	es->npages += pages;
	es->nextents++;
}

void sl_eset_remove(sl_state_t *s, sl_eset_t *es, sl_extent_t *e)
{
	size_t pages = sl_npages(s, e->size);
	unsigned b = sl_eset_bucket(pages);
	sl_ph_remove(&es->bucket[b], &e->ph);
	if (!es->bucket[b])
		es->nonempty[b / 64] &= ~(1ull << (b % 64));
	e->in_heap = 0;
	if (e->lru_prev)
		e->lru_prev->lru_next = e->lru_next;
	else
		es->lru_head = e->lru_next;
	if (e->lru_next)
		e->lru_next->lru_prev = e->lru_prev;
	else
		es->lru_tail = e->lru_prev;
	e->lru_prev = e->lru_next = NULL;
	es->npages -= pages;
	es->nextents--;
}

/* The oldest extent of at least @p pages pages, or NULL (jemalloc's
 * eset_first_fit).  With @p lg_max_fit (the dirty eset: jemalloc 5.3's
 * opt_lg_extent_max_active_fit, 6) the search stops at the first bucket
 * whose extents are over 2^lg_max_fit times the request: jemalloc does not
 * cut a big dirty extent for a small request (a slab), which then takes
 * pages from further down (muzzy, returned, a new chunk) instead. */
static sl_extent_t *sl_eset_fit(sl_eset_t *es, size_t pages, unsigned lg_max_fit)
{
	sl_extent_t *best = NULL;
	unsigned first = sl_eset_first_bucket(pages);
	for (unsigned w = first / 64; w < (SL_NPSZ + 63) / 64; w++) {
		uint64_t bits = es->nonempty[w];
		if (w == first / 64)
			bits &= ~0ull << (first % 64);
		while (bits) {
			unsigned b = w * 64 + (unsigned)__builtin_ctzll(bits);
			bits &= bits - 1;
			if (lg_max_fit && sl_psz_pages(b) > pages << lg_max_fit)
				return best;
			sl_extent_t *e = sl_ph_extent(es->bucket[b]);
			if (!best || sl_extent_older(e, best))
				best = e;
		}
	}
	return best;
}

/* ---- rtree registration, split and merge ------------------------------- */

static inline uintptr_t sl_last_page(const sl_state_t *s, const sl_extent_t *e)
{
	return e->base + e->size - s->sc.page;
}

/* Maps first and last page (leaves exist for the whole chunk: see grow). */
static void sl_map_bounds(sl_state_t *s, sl_extent_t *e)
{
	sl_rtree_set(s, e->base, e);
	sl_rtree_set(s, sl_last_page(s, e), e);
}

bool sl_extent_map_slab(sl_state_t *s, sl_extent_t *e)
{
	for (uintptr_t p = e->base; p < e->base + e->size; p += s->sc.page)
		sl_rtree_set(s, p, e);
	return true;
}

static void sl_unmap_interior(sl_state_t *s, sl_extent_t *e)
{
	for (uintptr_t p = e->base + s->sc.page; p < sl_last_page(s, e); p += s->sc.page)
		sl_rtree_set(s, p, NULL);
}

/* Cuts @p e after @p lead bytes; returns the upper part (NULL: no record). */
static sl_extent_t *sl_split(sl_state_t *s, sl_extent_t *e, size_t lead)
{
	sl_extent_t *t = hl_meta_alloc(&sl_arena_get(s, e->arena)->ext_pool);
	if (!t)
		return NULL;
	t->base = e->base + lead;
	t->size = e->size - lead;
	t->state = e->state;
	t->arena = e->arena;
	t->chunk = e->chunk;
	t->sn = e->sn;
	t->zeroed = e->zeroed;
	e->size = lead;
	HL_EV_SIZES(s->heap, HL_EV_SPLIT, "extent", -1, lead, t->size, (void *)e->base);
	sl_map_bounds(s, t);
	sl_rtree_set(s, sl_last_page(s, e), e);
	return t;
}

/* Absorbs @p b, which starts where @p a ends; b's record is freed. */
static void sl_merge(sl_state_t *s, sl_extent_t *a, sl_extent_t *b)
{
	if (a->size > s->sc.page)
		sl_rtree_set(s, sl_last_page(s, a), NULL);
	if (b->size > s->sc.page)
		sl_rtree_set(s, b->base, NULL);
	a->size += b->size;
	if (b->sn < a->sn)
		a->sn = b->sn;
	a->zeroed = a->zeroed == SL_ZEROED_YES && b->zeroed == SL_ZEROED_YES ? SL_ZEROED_YES : SL_ZEROED_NO;
	sl_rtree_set(s, sl_last_page(s, a), a);
	hl_meta_free(&sl_arena_get(s, b->arena)->ext_pool, b);
}

/* Merges free extent @p e (in no eset) with one free neighbour of its
 * state, the one after it first (jemalloc's extent_try_coalesce_impl);
 * sets *merged when it did. */
static sl_extent_t *sl_coalesce_step(sl_state_t *s, sl_arena_t *a, sl_extent_t *e, bool *merged)
{
	sl_eset_t *es = sl_eset_of(a, (sl_estate_t)e->state);
	*merged = false;
	uintptr_t end = e->base + e->size;
	if (end < e->chunk->base + e->chunk->size) {
		sl_extent_t *n = sl_rtree_get(&s->rtree, end);
		if (n && n != e && n->state == e->state && n->chunk == e->chunk) {
			sl_eset_remove(s, es, n);
			HL_EV_SIZES(s->heap, HL_EV_MERGE, "extent with the free one after it", -1, n->size, e->size + n->size, (void *)e->base);
			sl_merge(s, e, n);
			*merged = true;
			return e;
		}
	}
	if (e->base > e->chunk->base) {
		sl_extent_t *p = sl_rtree_get(&s->rtree, e->base - 1);
		if (p && p != e && p->state == e->state && p->chunk == e->chunk) {
			sl_eset_remove(s, es, p);
			HL_EV_SIZES(s->heap, HL_EV_MERGE, "extent with the free one before it", -1, e->size, p->size + e->size, (void *)p->base);
			sl_merge(s, p, e);
			*merged = true;
			return p;
		}
	}
	return e;
}

/* Merges free extent @p e (in no eset) with all free neighbours of its
 * state, however many (dirty ones may lie side by side, unmerged). */
static sl_extent_t *sl_coalesce(sl_state_t *s, sl_arena_t *a, sl_extent_t *e)
{
	bool merged;
	do
		e = sl_coalesce_step(s, a, e, &merged);
	while (merged);
	return e;
}

/* ---- growing ----------------------------------------------------------- */

/* Reserves a new chunk of at least @p need bytes: one free returned extent. */
static sl_extent_t *sl_grow(sl_state_t *s, sl_arena_t *a, size_t need)
{
	size_t page = s->sc.page;
	size_t pages = sl_npages(s, need);
	unsigned idx = sl_psz_ceil(pages);
	if (idx < a->next_grow)
		idx = a->next_grow;
	size_t bytes = sl_psz_pages(idx) << s->sc.lg_page;
	void *base = hl_os_reserve(s->os, bytes, page, false);
	if (!base)
		return NULL;
	/* the next chunk is one page size class larger than this one, which
	 * may have skipped ahead for a big request (jemalloc's exp_grow) */
	if (idx + 1 < SL_NPSZ)
		a->next_grow = idx + 1;
	size_t span = page << s->rtree.leaf_bits;
	for (uintptr_t p = hl_align_down((uintptr_t)base, span); p < (uintptr_t)base + bytes; p += span)
		if (!sl_rtree_set(s, p < (uintptr_t)base ? (uintptr_t)base : p, NULL))
			goto fail;
	sl_chunk_t *c = hl_meta_alloc(&s->chunk_pool);
	sl_extent_t *e = c ? hl_meta_alloc(&a->ext_pool) : NULL;
	if (!e) {
		hl_meta_free(&s->chunk_pool, c);
		goto fail;
	}
	c->base = (uintptr_t)base;
	c->size = bytes;
	c->next = a->chunks;
	a->chunks = c;
	e->base = c->base;
	e->size = bytes;
	e->state = SL_RETURNED;
	e->zeroed = SL_ZEROED_YES;   /* never written: the kernel's zero pages */
	e->arena = (uint16_t)a->index;
	e->chunk = c;
	e->sn = a->next_sn++;
	sl_map_bounds(s, e);
	a->st.grows++;
	HL_EV(s->heap, HL_EV_GROW, "new chunk of address space (exp_grow)", a->index, bytes, base);
	return e;
fail:
	hl_os_release(s->os, base, 0);
	return NULL;
}

/* Makes chunk @p c read/write up to @p end at least: a chunk is reserved as
 * bare address space and committed front to back, in grains, as first fit
 * reaches further into it (so committed bytes track what was ever used). */
static bool sl_chunk_commit(sl_state_t *s, sl_chunk_t *c, uintptr_t end)
{
	if (end <= c->base + c->committed)
		return true;
	size_t want = hl_align_up(end - c->base, SL_COMMIT_GRAIN);
	if (want > c->size)
		want = c->size;
	if (hl_os_commit(s->os, (void *)(c->base + c->committed), want - c->committed) < 0)
		return false;
	c->committed = want;
	return true;
}

/* ---- allocation and release --------------------------------------------- */

/* Puts the part of @p e before @p lead back into its eset; returns the rest. */
static sl_extent_t *sl_trim_front(sl_state_t *s, sl_arena_t *a, sl_extent_t *e, size_t lead)
{
	if (!lead)
		return e;
	sl_extent_t *rest = sl_split(s, e, lead);
	if (!rest)
		return NULL;
	sl_eset_insert(s, sl_eset_of(a, (sl_estate_t)e->state), e, false);
	return rest;
}

sl_extent_t *sl_extent_alloc(sl_state_t *s, sl_arena_t *a, size_t size, size_t align,
			     sl_estate_t as)
{
	size_t page = s->sc.page;
	size_t need = size + (align > page ? align - page : 0);
	sl_extent_t *e = NULL;
	for (int st = SL_DIRTY; st <= SL_RETURNED && !e; st++) {
		e = sl_eset_fit(sl_eset_of(a, (sl_estate_t)st), sl_npages(s, need),
				st == SL_DIRTY ? SL_LG_MAX_ACTIVE_FIT : 0);
		if (e)
			sl_eset_remove(s, sl_eset_of(a, (sl_estate_t)st), e);
		if (e)
			HL_EV(s->heap, HL_EV_LOOK, st == SL_DIRTY ? "reused a dirty extent" : st == SL_MUZZY ? "reused a muzzy extent" : "reused a returned extent", -1, e->size, (void *)e->base);
	}
	if (!e && !(e = sl_grow(s, a, need)))
		return NULL;
	sl_estate_t from = (sl_estate_t)e->state;
	sl_extent_t *r = sl_trim_front(s, a, e, hl_ptr_align_up(e->base, align > page ? align : page) - e->base);
	if (!r) {
		sl_eset_insert(s, sl_eset_of(a, from), e, false);
		return NULL;
	}
	if (r->size > size) {
		sl_extent_t *trail = sl_split(s, r, size);
		if (!trail) {
			sl_eset_insert(s, sl_eset_of(a, from), sl_coalesce(s, a, r), false);
			return NULL;
		}
		sl_eset_insert(s, sl_eset_of(a, from), trail, false);
	}
	if (!sl_chunk_commit(s, r->chunk, r->base + r->size)) {
		sl_eset_insert(s, sl_eset_of(a, from), sl_coalesce(s, a, r), false);
		return NULL;
	}
	r->state = (uint8_t)as;
	if (as == SL_SLAB)
		sl_extent_map_slab(s, r);
	return r;
}

static void sl_purge_one(sl_state_t *s, sl_arena_t *a, sl_extent_t *e, sl_estate_t to);

/* jemalloc's extent_record: a freed extent of a large size that merged
 * into one of at least the arena's oversize threshold is purged whole at
 * once (MADV_DONTNEED, straight to returned), unless a decay time is -1. */
static bool sl_purge_oversize(const sl_state_t *s, const sl_arena_t *a, size_t freed, const sl_extent_t *merged)
{
	return a->oversize && freed >= s->sc.large_min && merged->size >= a->oversize &&
	       a->decay[0].ms != -1 && a->decay[1].ms != -1;
}

void sl_extent_dalloc(sl_state_t *s, sl_arena_t *a, sl_extent_t *e)
{
	size_t freed = e->size;
	if (e->state == SL_SLAB)
		sl_unmap_interior(s, e);
	e->state = SL_DIRTY;
	e->zeroed = SL_ZEROED_NO;
	e->nfree = 0;
	/* jemalloc's dirty ecache delays coalescing: an extent under the
	 * smallest large size (a slab of a few pages) is filed as it is;
	 * a bigger one merges with every dirty neighbour (extent_record) */
	if (freed < s->sc.large_min) {
		sl_eset_insert(s, sl_eset_of(a, SL_DIRTY), e, false);
		if (a->decay[0].ms == 0)
			sl_decay_immediate(s, a);
		return;
	}
	e = sl_coalesce(s, a, e);
	if (sl_purge_oversize(s, a, freed, e)) {
		HL_EV(s->heap, HL_EV_PURGE, "oversize extent returned at once", -1, e->size, (void *)e->base);
		sl_purge_one(s, a, e, SL_RETURNED);
		return;
	}
	sl_eset_insert(s, sl_eset_of(a, SL_DIRTY), e, false);
	if (a->decay[0].ms == 0)
		sl_decay_immediate(s, a);
}

/* ---- purging ------------------------------------------------------------ */

/* Purges one extent to @p to and files it there. */
static void sl_purge_one(sl_state_t *s, sl_arena_t *a, sl_extent_t *e, sl_estate_t to)
{
	size_t pages = sl_npages(s, e->size);
	HL_EV(s->heap, HL_EV_DECAY, to == SL_MUZZY ? "pages dirty → muzzy (MADV_FREE)" : "pages → returned (MADV_DONTNEED)", -1, e->size, (void *)e->base);
	if (to == SL_MUZZY) {
		hl_os_purge_lazy(s->os, (void *)e->base, e->size);
		a->st.purge_lazy_calls++;
		a->st.purged_lazy_pages += pages;
		e->zeroed = SL_ZEROED_NO;   /* the kernel may keep the old contents */
	} else {
		bool zeroed = hl_os_purge(s->os, (void *)e->base, e->size) == 0;
		a->st.purge_calls++;
		a->st.purged_pages += pages;
		e->zeroed = zeroed ? SL_ZEROED_YES : SL_ZEROED_NO;
	}
	e->state = (uint8_t)to;
	e = sl_coalesce(s, a, e);
	sl_eset_insert(s, sl_eset_of(a, to), e, false);
}

size_t sl_purge(sl_state_t *s, sl_arena_t *a, sl_estate_t from, size_t npages, bool fully)
{
	sl_eset_t *es = sl_eset_of(a, from);
	sl_estate_t to = (from == SL_DIRTY && !fully && a->decay[1].ms != 0) ? SL_MUZZY : SL_RETURNED;
	size_t done = 0;
	while (done < npages && es->lru_head) {
		sl_extent_t *e = es->lru_head;
		sl_eset_remove(s, es, e);
		if (from == SL_DIRTY) {
			/* the delayed merge (ecache_evict): the oldest dirty
			 * extent merges with one neighbour and goes to the
			 * young end of the list, until it has none left */
			bool merged;
			e = sl_coalesce_step(s, a, e, &merged);
			if (merged) {
				sl_eset_insert(s, es, e, false);
				continue;
			}
		}
		size_t pages = sl_npages(s, e->size);
		if (pages > npages - done) {
			sl_extent_t *rest = sl_split(s, e, (npages - done) << s->sc.lg_page);
			if (rest)
				sl_eset_insert(s, es, rest, true);
		}
		done += sl_npages(s, e->size);
		sl_purge_one(s, a, e, to);
	}
	return done;
}

/* ---- resizing large extents in place ------------------------------------ */

bool sl_extent_shrink(sl_state_t *s, sl_arena_t *a, sl_extent_t *e, size_t size)
{
	sl_extent_t *trail = sl_split(s, e, size);
	if (!trail)
		return false;
	trail->state = SL_LARGE;
	sl_extent_dalloc(s, a, trail);
	return true;
}

bool sl_extent_expand(sl_state_t *s, sl_arena_t *a, sl_extent_t *e, size_t size)
{
	uintptr_t end = e->base + e->size;
	size_t more = size - e->size;
	if (end >= e->chunk->base + e->chunk->size)
		return false;
	sl_extent_t *n = sl_rtree_get(&s->rtree, end);
	if (!n || n->state < SL_DIRTY || n->chunk != e->chunk || n->size < more)
		return false;
	sl_estate_t from = (sl_estate_t)n->state;
	sl_eset_remove(s, sl_eset_of(a, from), n);
	if (n->size > more) {
		sl_extent_t *rest = sl_split(s, n, more);
		if (!rest) {
			sl_eset_insert(s, sl_eset_of(a, from), n, false);
			return false;
		}
		sl_eset_insert(s, sl_eset_of(a, from), rest, false);
	}
	if (!sl_chunk_commit(s, e->chunk, end + more)) {
		sl_eset_insert(s, sl_eset_of(a, from), sl_coalesce(s, a, n), false);
		return false;
	}
	sl_merge(s, e, n);
	return true;
}

/* Purges what a decay time of 0 ms demands right away (ext lock held). */
void sl_decay_immediate(sl_state_t *s, sl_arena_t *a)
{
	if (a->decay[0].ms == 0 && a->esets[0].npages)
		sl_purge(s, a, SL_DIRTY, a->esets[0].npages, true);
	if (a->decay[1].ms == 0 && a->esets[1].npages)
		sl_purge(s, a, SL_MUZZY, a->esets[1].npages, true);
}
