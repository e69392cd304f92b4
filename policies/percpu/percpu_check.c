/*
 * percpu_check.c — the checker and the walker of `percpu`.
 *
 * Both expect a quiet heap (no thread allocating or freeing meanwhile;
 * in debug mode the guard runs the checker between two calls, and
 * hl_check takes the guard too): they read every CPU's stacks, every
 * thread's lists and every transfer cache without those locks, and hold
 * the page heap's lock from the first pass to the last, so a walker or
 * a snapshot (which mark too) cannot run in between.  First pass: every
 * cached object is marked in its span (span->mark), which finds an
 * object cached twice, cached while free in its span, or a cache entry
 * that is no object at all.  Second pass: the regions are tiled span by
 * span from base to frontier; in a small span (checker only) each object
 * neither free in its bitmap nor marked is asked for in the heap's
 * request ledger: the program holds it, or it was handed out of the span
 * and then dropped — lost, and named.
 *
 * Why the ledger: the model does not know which objects are live (the
 * fronts' hits count nothing, and a dropped object looks exactly like a
 * malloc that the hit served).  The ledger already records every block
 * handed out, so asking it costs the fast path nothing, and the checker
 * one lookup per live small object; with ledger:off the checker checks
 * the counts only (free + allocated == objects, cached <= allocated) and
 * cannot tell a lost object from a live one.
 */
#include "config.h"
#include <string.h>
#include "percpu.h"

/* Visits every span of every region in address order; stops (returning
 * non-zero) when @fn does or the tiling is broken. */
typedef int (*pc_span_fn)(pc_state_t *s, pc_span_t *sp, void *arg);

static int pc_tile(pc_state_t *s, pc_span_fn fn, void *arg, hl_report_t *r, int *bad)
{
	for (unsigned i = 0; i < s->ph.nregions; i++) {
		const pc_region_t *rg = &s->ph.regions[i];
		for (uintptr_t at = rg->base; at < rg->base + rg->frontier;) {
			pc_span_t *sp = pc_pagemap_get(&s->ph.map, at);
			if (!sp || sp->start != at || !sp->npages || sp->region != i ||
			    sp->start + sp->npages * PC_PAGE > rg->base + rg->frontier) {
				(*bad)++;
				if (r)
					hl_report(r, "region %u: no span starts at page %p", i, (void *)at);
				return -1;
			}
			int rc = fn(s, sp, arg);
			if (rc)
				return rc;
			at += sp->npages * PC_PAGE;
		}
	}
	return 0;
}

static int pc_clear_marks(pc_state_t *s, pc_span_t *sp, void *arg)
{
	(void)s, (void)arg;
	memset(sp->mark, 0, sizeof sp->mark);
	return 0;
}

/* Marks one cached object of class @cls found in @where. */
static void pc_mark_one(pc_state_t *s, const void *p, unsigned cls, const char *where, hl_report_t *r,
			int *bad)
{
	pc_span_t *sp = pc_ph_span_of(&s->ph, p);
	long i = sp && sp->state == PC_SPAN_SMALL && sp->cls == cls ? pc_obj_index(s, sp, p) : -1;
	if (i < 0) {
		(*bad)++;
		if (r)
			hl_report_at(r, p, "%s holds %p, no object of class %u", where, p, cls);
	} else if (hl_bit_get(sp->free_bits, (size_t)i)) {
		(*bad)++;
		if (r)
			hl_report_at(r, p, "%s holds %p, which is free in its span", where, p);
	} else if (hl_bit_get(sp->mark, (size_t)i)) {
		(*bad)++;
		if (r)
			hl_report_at(r, p, "%s holds %p, which is cached twice", where, p);
	} else {
		hl_bit_set(sp->mark, (size_t)i);
	}
}

static void pc_mark_cpus(pc_state_t *s, hl_report_t *r, int *bad)
{
	char where[48];
	/* a quiet heap has no slab stopped, and no entry past the slabs */
	for (unsigned cpu = 0; cpu < PC_MAX_CPUS; cpu++) {
		pc_slab_t *open = atomic_load(&s->open_slab[cpu]), *want = cpu < s->ncpus ? pc_slab(s, cpu) : NULL;
		if (open != want) {
			(*bad)++;
			if (r)
				hl_report(r, "cpu %u: open_slab is %p, not %p", cpu, (void *)open, (void *)want);
		}
	}
	for (unsigned cpu = 0; cpu < s->ncpus; cpu++) {
		pc_slab_t *sl = pc_slab(s, cpu);
		for (unsigned cls = 1; cls < s->cl.n; cls++) {
			const pc_stack_t *st = &sl->stacks[cls];
			snprintf(where, sizeof where, "cpu %u class %u", cpu, cls);
			if (st->current > st->capacity || st->capacity > s->max_cap[cls]) {
				(*bad)++;
				if (r)
					hl_report(r, "%s: current %u, capacity %u, largest %u", where, st->current,
						  st->capacity, s->max_cap[cls]);
				continue;
			}
			for (unsigned k = 0; k < st->current; k++)
				pc_mark_one(s, pc_slots(s, sl, cls)[k], cls, where, r, bad);
		}
	}
}

static void pc_mark_threads(pc_state_t *s, hl_report_t *r, int *bad)
{
	char where[48];
	unsigned n = 0;
	for (pc_tcache_t *tc = s->tcaches; tc; tc = tc->next, n++) {
		size_t bytes = 0;
		for (unsigned cls = 1; cls < s->cl.n; cls++) {
			uint32_t length = tc->length[cls];
			uint32_t len = 0;
			snprintf(where, sizeof where, "thread cache %u class %u", n, cls);
			for (const pc_link_t *o = tc->head[cls]; o && len <= length; o = o->next, len++) {
				pc_span_t *sp = pc_ph_span_of(&s->ph, o);
				pc_mark_one(s, o, cls, where, r, bad);
				if (!sp || sp->state != PC_SPAN_SMALL || pc_obj_index(s, sp, o) < 0)
					break; /* never follow a link out of an object */
			}
			if (len != length) {
				(*bad)++;
				if (r)
					hl_report(r, "%s: %u objects on the list, length says %u", where, len, length);
			}
			bytes += (size_t)length * s->cl.size[cls];
		}
		if (bytes != tc->size) {
			(*bad)++;
			if (r)
				hl_report(r, "thread cache %u: %zu bytes on its lists, size says %zu", n, bytes, tc->size);
		}
	}
}

int pc_mark_cached(pc_state_t *s, hl_report_t *r)
{
	int bad = 0;
	pc_tile(s, pc_clear_marks, NULL, r, &bad);
	pc_mark_cpus(s, r, &bad);
	for (unsigned cls = 1; cls < s->cl.n; cls++) {
		pc_transfer_t *t = &s->transfer[cls];
		if (t->count > t->capacity) {
			bad++;
			if (r)
				hl_report(r, "transfer cache %u: %u objects, capacity %u", cls, t->count, t->capacity);
			continue;
		}
		if (s->mode == PC_MODE_THREAD && (t->count % s->cl.batch[cls] ||
						  t->count / s->cl.batch[cls] > t->slots_now || t->slots_now > t->slots_max)) {
			bad++;
			if (r)
				hl_report(r, "transfer cache %u: %u objects in batches of %u, %u of %u slots", cls, t->count,
					  s->cl.batch[cls], t->slots_now, t->slots_max);
		}
		for (unsigned k = 0; k < t->count; k++)
			pc_mark_one(s, t->slots[k], cls, "transfer cache", r, &bad);
	}
	pc_mark_threads(s, r, &bad);
	return bad;
}

/* ---- lost objects (checker) ---------------------------------------------- */

/* Objects of small span @sp neither free nor cached, by the ledger:
 * those the program holds in *@live, the others returned, the first of
 * them in *@first. */
static unsigned pc_unaccounted(const pc_state_t *s, const pc_span_t *sp, unsigned *live, void **first)
{
	unsigned lost = 0;
	uint32_t stride = s->cl.stride[sp->cls];
	*live = 0;
	for (unsigned w = 0; w < PC_BITMAP_WORDS && w * 64 < sp->nobjs; w++) {
		uint64_t valid = hl_bits_first_n_word(sp->nobjs, w);
		uint64_t out = ~hl_bit_load_word(sp->free_bits, w) & ~hl_bit_load_word(sp->mark, w) & valid;
		for (; out; out &= out - 1) {
			void *p = (void *)(sp->start + (w * 64 + (unsigned)__builtin_ctzll(out)) * stride);
			if (hl_heap_block_live(s->heap, p) == 1)
				++*live;
			else if (!lost++)
				*first = p;
		}
	}
	return lost;
}

static int pc_count_lost_span(pc_state_t *s, pc_span_t *sp, void *arg)
{
	unsigned live;
	void *first;
	if (sp->state == PC_SPAN_SMALL)
		*(size_t *)arg += pc_unaccounted(s, sp, &live, &first);
	return 0;
}

size_t pc_count_lost(pc_state_t *s)
{
	size_t lost = 0;
	int bad;
	if (hl_heap_block_live(s->heap, NULL) < 0)
		return 0;
	pthread_mutex_lock(&s->ph.lock);
	bad = pc_mark_cached(s, NULL);
	pc_tile(s, pc_count_lost_span, &lost, NULL, &bad);
	pthread_mutex_unlock(&s->ph.lock);
	return lost;
}

/* ---- checker -------------------------------------------------------------- */

typedef struct pc_check_ctx {
	hl_report_t *r;
	int bad;
	bool live_known;                  /**< the heap keeps its ledger */
	bool tiled;                       /**< every span was visited */
	size_t lost;                      /**< objects lost, in every span */
	size_t small_spans, large_spans, listed_free[2];
	size_t class_spans[PC_MAX_CLASSES]; /**< small spans found per class */
} pc_check_ctx_t;

static unsigned pc_popcount(const uint64_t *bits)
{
	unsigned n = 0;
	for (unsigned w = 0; w < PC_BITMAP_WORDS; w++)
		n += (unsigned)__builtin_popcountll(bits[w]);
	return n;
}

/* Objects of span @sp neither free, cached nor live: lost, the first
 * named; the live ones in *@live.  After a fork that left objects
 * behind (s->fork_orphans) they are only counted, and pc_check_orphans
 * compares the total. */
static void pc_check_lost(pc_state_t *s, pc_span_t *sp, pc_check_ctx_t *c, unsigned *live)
{
	void *first = NULL;
	unsigned lost = pc_unaccounted(s, sp, live, &first);
	c->lost += lost;
	if (lost && !s->fork_orphans) {
		c->bad++;
		hl_report_at(c->r, first,
			     "object %p (class %u) lost: out of its span's free list, in no cache, not live "
			     "(span %p: %u lost of %u objects)",
			     first, sp->cls, (void *)sp->start, lost, sp->nobjs);
	}
}

static void pc_check_small(pc_state_t *s, pc_span_t *sp, pc_check_ctx_t *c)
{
	unsigned nfree = pc_popcount(sp->free_bits), ncached = pc_popcount(sp->mark), nlive = 0;
	void *at = (void *)sp->start;
	c->small_spans++;
	if (sp->cls == 0 || sp->cls >= s->cl.n || sp->nobjs != s->cl.nobjs[sp->cls] ||
	    sp->npages != s->cl.pages[sp->cls]) {
		c->bad++, hl_report_at(c->r, at, "span %p: class %u does not fit its shape", at, sp->cls);
		return;
	}
	c->class_spans[sp->cls]++;
	if (c->live_known)
		pc_check_lost(s, sp, c, &nlive);
	c->bad += !HL_EXPECT_AT(c->r, nfree + sp->allocated == sp->nobjs, at,
				"span %p: %u free + %u allocated != %u objects", at, nfree, sp->allocated, sp->nobjs);
	c->bad += !HL_EXPECT_AT(c->r, ncached + nlive <= sp->allocated, at,
				"span %p: %u objects cached + %u live but %u allocated", at, ncached, nlive, sp->allocated);
	unsigned want = nfree ? pc_fullness(sp, s->mode == PC_MODE_THREAD) : PC_NO_LIST;
	c->bad += !HL_EXPECT_AT(c->r, sp->bucket == want, at, "span %p: on central list %u, belongs on %u", at,
				sp->bucket, want);
}

/* Every page's entry: the span and its class on a small span's pages,
 * class 0 on any other page (free's hit trusts a nonzero class to name
 * the live small span the page is in).  The first wrong page is named. */
static void pc_check_page_classes(pc_state_t *s, const pc_span_t *sp, pc_check_ctx_t *c)
{
	unsigned want = sp->state == PC_SPAN_SMALL ? sp->cls : 0;
	for (size_t k = 0; k < sp->npages; k++) {
		uintptr_t at = sp->start + k * PC_PAGE;
		uintptr_t e = pc_pagemap_entry(&s->ph.map, at);
		if (pc_entry_class(e) != want || (want && pc_entry_span(e) != sp)) {
			c->bad++;
			hl_report_at(c->r, (void *)at, "page %p of span %p (class %u): the pagemap says class %u, span %p",
				     (void *)at, (void *)sp->start, want, pc_entry_class(e), (void *)pc_entry_span(e));
			return;
		}
	}
}

static int pc_check_span(pc_state_t *s, pc_span_t *sp, void *arg)
{
	pc_check_ctx_t *c = arg;
	/* a span that is not small has no objects: pc_ph_free_locked clears
	 * the count, and a count left on one is damage */
	c->bad += !HL_EXPECT(c->r, sp->state == PC_SPAN_SMALL || sp->nobjs == 0,
			     "span %p: state %u but %u objects", (void *)sp->start, sp->state, sp->nobjs);
	pc_check_page_classes(s, sp, c);
	if (sp->state == PC_SPAN_SMALL) {
		pc_check_small(s, sp, c);
	} else if (sp->state == PC_SPAN_LARGE) {
		c->large_spans++;
	} else if (sp->state == PC_SPAN_FREE || sp->state == PC_SPAN_RETURNED) {
		c->listed_free[sp->state == PC_SPAN_RETURNED]++;
		pc_span_t *after = pc_pagemap_get(&s->ph.map, sp->start + sp->npages * PC_PAGE);
		const pc_region_t *rg = &s->ph.regions[sp->region];
		bool inside = sp->start + sp->npages * PC_PAGE < rg->base + rg->frontier;
		c->bad += !HL_EXPECT(c->r, !inside || !after || after->state != sp->state ||
						   after->start != sp->start + sp->npages * PC_PAGE,
				     "free span %p: its free neighbour was not merged", (void *)sp->start);
		pc_span_t *last = pc_pagemap_get(&s->ph.map, sp->start + (sp->npages - 1) * PC_PAGE);
		c->bad += !HL_EXPECT(c->r, last == sp, "free span %p: its last page maps elsewhere",
				     (void *)sp->start);
	} else {
		c->bad++, hl_report(c->r, "span %p: state %u", (void *)sp->start, sp->state);
	}
	return 0;
}

/* Page-heap lists: kind, length, counts, pages. */
static void pc_check_ph_lists(pc_state_t *s, pc_check_ctx_t *c)
{
	size_t spans[2] = { 0, 0 }, pages[2] = { 0, 0 };
	for (int kind = 0; kind < 2; kind++)
		for (size_t i = 0; i <= PC_PH_LISTS; i++) {
			pc_list_t *l = kind ? &s->ph.returned[i] : &s->ph.normal[i];
			size_t n = 0;
			for (pc_span_t *sp = l->head; sp && n <= l->count; sp = sp->next, n++) {
				pages[kind] += sp->npages;
				c->bad += !HL_EXPECT(c->r, sp->state == (kind ? PC_SPAN_RETURNED : PC_SPAN_FREE) &&
								   pc_ph_list_index(sp->npages) == i,
						     "page-heap list %zu: span %p of %zu pages, state %u", i,
						     (void *)sp->start, sp->npages, sp->state);
			}
			c->bad += !HL_EXPECT(c->r, n == l->count, "page-heap list %zu: %zu spans, count says %zu", i,
					     n, l->count);
			spans[kind] += n;
		}
	c->bad += !HL_EXPECT(c->r, spans[0] == c->listed_free[0] && spans[1] == c->listed_free[1],
			     "page heap: %zu + %zu spans listed, %zu + %zu found tiling the regions", spans[0],
			     spans[1], c->listed_free[0], c->listed_free[1]);
	c->bad += !HL_EXPECT(c->r, pages[0] == s->ph.free_pages && pages[1] == s->ph.returned_pages,
			     "page heap: %zu + %zu pages listed, counters say %zu + %zu", pages[0], pages[1],
			     s->ph.free_pages, s->ph.returned_pages);
	c->bad += !HL_EXPECT(c->r, c->small_spans == s->ph.small_spans && c->large_spans == s->ph.large_spans,
			     "page heap: %zu small and %zu large spans, counters say %zu and %zu",
			     c->small_spans, c->large_spans, s->ph.small_spans, s->ph.large_spans);
}

/* Central lists: class, fullness, counts. */
static void pc_check_central(pc_state_t *s, pc_check_ctx_t *c)
{
	for (unsigned cls = 1; cls < s->cl.n; cls++) {
		pc_central_t *ce = &s->central[cls];
		size_t nfree = 0;
		for (unsigned b = 0; b < PC_FULLNESS; b++) {
			size_t n = 0;
			for (pc_span_t *sp = ce->lists[b].head; sp && n <= ce->lists[b].count; sp = sp->next, n++) {
				c->bad += !HL_EXPECT(c->r, sp->state == PC_SPAN_SMALL && sp->cls == cls && sp->bucket == b,
						     "central %u list %u: span %p of class %u on list %u", cls, b,
						     (void *)sp->start, sp->cls, sp->bucket);
				nfree += sp->nobjs - sp->allocated;
			}
			c->bad += !HL_EXPECT(c->r, n == ce->lists[b].count, "central %u list %u: %zu spans, count says %zu",
					     cls, b, n, ce->lists[b].count);
		}
		c->bad += !HL_EXPECT(c->r, nfree == ce->free_objects, "central %u: %zu free objects, counter says %zu",
				     cls, nfree, ce->free_objects);
		c->bad += !HL_EXPECT(c->r, !c->tiled || c->class_spans[cls] == ce->spans,
				     "central %u: %zu spans of the class tile the regions, counter says %zu", cls,
				     c->class_spans[cls], ce->spans);
	}
}

/* Hugepage @k of region @rg: its counts against the pages of spans found
 * in it. */
static void pc_check_hugepage(const pc_region_t *rg, unsigned i, size_t k, const size_t found[2],
			      pc_check_ctx_t *c)
{
	c->bad += !HL_EXPECT(c->r, rg->hp_used[k] == found[0] && rg->hp_released[k] == found[1],
			     "region %u hugepage %zu: counts say %u used + %u released pages, its spans hold %zu + %zu",
			     i, k, rg->hp_used[k], rg->hp_released[k], found[0], found[1]);
}

/* Per-hugepage counts: every span of a region, in address order, adds its
 * pages to the hugepages it covers (the tiling was checked before). */
static void pc_check_hugepages(pc_state_t *s, pc_check_ctx_t *c)
{
	for (unsigned i = 0; i < s->ph.nregions; i++) {
		const pc_region_t *rg = &s->ph.regions[i];
		uintptr_t top = rg->base + rg->frontier;
		size_t k = 0, found[2] = { 0, 0 };
		for (uintptr_t at = rg->base; at < top;) {
			const pc_span_t *sp = pc_pagemap_get(&s->ph.map, at);
			uintptr_t end = sp->start + sp->npages * PC_PAGE;
			int kind = sp->state == PC_SPAN_SMALL || sp->state == PC_SPAN_LARGE ? 0
				   : sp->state == PC_SPAN_RETURNED ? 1 : -1;
			for (; at < end; k++, found[0] = found[1] = 0) {
				uintptr_t next = rg->base + ((k + 1) << PC_HUGE_SHIFT);
				uintptr_t stop = next < end ? next : end;
				if (kind >= 0)
					found[kind] += (stop - at) / PC_PAGE;
				at = stop;
				if (at < next)
					break; /* the hugepage goes on in the next span */
				pc_check_hugepage(rg, i, k, found, c);
			}
		}
		if (top & (PC_HUGE - 1))
			pc_check_hugepage(rg, i, k, found, c); /* the frontier's, partly committed */
	}
}

static void pc_check_budgets(pc_state_t *s, pc_check_ctx_t *c)
{
	for (unsigned cpu = 0; cpu < s->ncpus; cpu++) {
		size_t bytes = 0;
		for (unsigned cls = 1; cls < s->cl.n; cls++)
			bytes += (size_t)pc_slab(s, cpu)->stacks[cls].capacity * s->cl.size[cls];
		c->bad += !HL_EXPECT(c->r, bytes == s->cpus[cpu].capacity_bytes,
				     "cpu %u: capacities add up to %zu bytes, counter says %zu", cpu, bytes,
				     s->cpus[cpu].capacity_bytes);
	}
}

/* After a fork: the objects the parent's other threads held are lost
 * for good; as many as the fork left may be, no more. */
static void pc_check_orphans(pc_state_t *s, pc_check_ctx_t *c)
{
	c->bad += !HL_EXPECT(c->r, c->lost == s->fork_orphans,
			     "%zu objects lost: out of their spans' free lists, in no cache, not live "
			     "(the fork left %zu behind)",
			     c->lost, s->fork_orphans);
}

int pc_check(void *st, hl_report_t *r)
{
	pc_state_t *s = st;
	pc_check_ctx_t c = { .r = r };
	c.live_known = hl_heap_block_live(s->heap, NULL) >= 0;
	pthread_mutex_lock(&s->ph.lock);
	c.bad = pc_mark_cached(s, r);
	c.tiled = pc_tile(s, pc_check_span, &c, r, &c.bad) == 0;
	if (c.tiled) {
		pc_check_ph_lists(s, &c);
		pc_check_hugepages(s, &c);
		if (c.live_known && s->fork_orphans)
			pc_check_orphans(s, &c);
	}
	pthread_mutex_unlock(&s->ph.lock);
	pc_check_central(s, &c);
	pc_check_budgets(s, &c);
	return c.bad;
}

/* ---- walker --------------------------------------------------------------- */

typedef struct pc_walk_ctx {
	hl_walk_fn fn;
	void *arg;
} pc_walk_ctx_t;

static int pc_walk_span(pc_state_t *s, pc_span_t *sp, void *arg)
{
	pc_walk_ctx_t *w = arg;
	size_t off;
	hl_block_t b = { .addr = (void *)sp->start, .size = sp->npages * PC_PAGE };
	b.region = hl_os_locate(s->os, b.addr, &off);
	if (sp->state != PC_SPAN_SMALL) {
		b.state = sp->state == PC_SPAN_LARGE ? HL_BLOCK_LIVE
			  : sp->state == PC_SPAN_FREE ? HL_BLOCK_DIRTY : HL_BLOCK_RETURNED;
		return w->fn(&b, w->arg);
	}
	b.size_class = sp->cls;
	for (size_t i = 0; i < sp->nobjs; i++) {
		b.addr = (void *)(sp->start + i * s->cl.stride[sp->cls]);
		b.size = s->cl.stride[sp->cls];
		b.state = hl_bit_get(sp->free_bits, i) ? HL_BLOCK_FREE : hl_bit_get(sp->mark, i) ? HL_BLOCK_CACHED
											 : HL_BLOCK_LIVE;
		int rc = w->fn(&b, w->arg);
		if (rc)
			return rc;
	}
	return 0;
}

int pc_walk(void *st, hl_walk_fn fn, void *arg)
{
	pc_state_t *s = st;
	pc_walk_ctx_t w = { fn, arg };
	int bad = 0;
	pthread_mutex_lock(&s->ph.lock);
	pc_mark_cached(s, NULL);
	int rc = pc_tile(s, pc_walk_span, &w, NULL, &bad);
	pthread_mutex_unlock(&s->ph.lock);
	return rc < 0 ? 0 : rc;
}
