/*
 * Checker and walker of policy `slab`.
 *
 * The checker takes every arena lock and verifies the invariants of
 * slab.h: extents tile each chunk and agree with the rtree, slab bitmaps
 * agree with nfree and with the bins' counts, esets hold exactly the free
 * extents of their state and no two free neighbours of one state were
 * left unmerged (but dirty ones: their merging is delayed).  Thread caches are private to their threads, so only the
 * calling thread's cache is checked (every cached block taken in its slab,
 * of the bin's class, held once).
 *
 * The walker visits every region and extent in address order per chunk.
 * It reads every thread cache without their owners' cooperation, so it
 * assumes a quiet heap; its visitor must not call into the heap.
 */
#include "config.h"
#include <string.h>
#include "slab.h"

/* ---- cached pointers of every tcache ------------------------------------ */

static void sl_sort(void **v, size_t n)
{
	for (size_t gap = n / 2; gap > 0; gap /= 2)   /* shell sort: no malloc */
		for (size_t i = gap; i < n; i++)
			for (size_t j = i; j >= gap && (uintptr_t)v[j - gap] > (uintptr_t)v[j]; j -= gap) {
				void *x = v[j];
				v[j] = v[j - gap];
				v[j - gap] = x;
			}
}

/* The scratch buffer holds at least @p n pointers: first the array inside
 * the state, then (many threads) metadata that stays reserved until the
 * heap goes.  So walking and drawing a heap add no system calls to the
 * counts students read. */
static void **sl_scratch(sl_state_t *s, size_t n)
{
	if (!s->scratch) {
		s->scratch = s->scratch_fixed;
		s->scratch_cap = SL_SCRATCH_FIXED;
	}
	if (n <= s->scratch_cap)
		return s->scratch;
	size_t bytes = hl_align_up(2 * n * sizeof(void *), s->sc.page);
	void **v = hl_os_reserve_meta(s->os, bytes);
	if (v) {
		s->scratch = v;
		s->scratch_cap = bytes / sizeof(void *);
	}
	return v;
}

void **sl_cached_collect(sl_state_t *s, size_t *n)
{
	size_t total = 0, k = 0;
	for (sl_tcache_t *tc = s->tcaches; tc; tc = tc->next)
		for (unsigned i = 0; i < s->nhbins; i++)
			total += sl_cbin_ncached(tc, i);
	void **v = sl_scratch(s, total + 1);
	for (sl_tcache_t *tc = s->tcaches; v && tc; tc = tc->next)
		for (unsigned i = 0; i < s->nhbins; i++) {
			void **head = __atomic_load_n(&tc->head[i], __ATOMIC_RELAXED);
			for (unsigned j = 0, n = sl_cbin_count_from(&tc->bins[i], sl_cbin_bits(head));
			     j < n && k < total; j++)
				v[k++] = head[j];
		}
	*n = k;
	if (v)
		sl_sort(v, k);
	return v;
}

bool sl_cached_has(void *const *v, size_t n, const void *p)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if ((uintptr_t)v[mid] < (uintptr_t)p)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo] == p;
}

/* ---- checker ------------------------------------------------------------ */

/* Per-arena tallies gathered while walking the chunks. */
typedef struct sl_tally {
	size_t slabs[SL_NBINS_MAX], taken[SL_NBINS_MAX], nonfull[SL_NBINS_MAX];
	size_t pages[SL_NSTATES], extents[SL_NSTATES];
} sl_tally_t;

static void sl_check_slab(sl_state_t *s, hl_report_t *r, sl_extent_t *e, sl_tally_t *t)
{
	const sl_sc_t *sc = &s->sc;
	if (!HL_EXPECT(r, e->szind < sc->nbins && e->size == sc->slab_size[e->szind],
		       "slab at %#lx: class %u with %zu bytes", (unsigned long)e->base, e->szind, e->size))
		return;
	unsigned nregs = sc->nregs[e->szind], taken = 0;
	for (unsigned i = 0; i < SL_BITMAP_WORDS * 64; i++) {
		if (i < nregs)
			taken += hl_bit_get(e->bitmap, i);
		else
			HL_EXPECT(r, hl_bit_get(e->bitmap, i), "slab %#lx: padding bit %u clear",
				  (unsigned long)e->base, i);
	}
	HL_EXPECT(r, taken + e->nfree == nregs, "slab %#lx: %u bits set but nfree %u of %u",
		  (unsigned long)e->base, taken, e->nfree, nregs);
	HL_EXPECT(r, taken > 0, "slab %#lx: empty slab kept", (unsigned long)e->base);
	for (uintptr_t p = e->base; p < e->base + e->size; p += sc->page)
		HL_EXPECT(r, sl_rtree_get(&s->rtree, p) == e, "slab %#lx: page %#lx not mapped to it",
			  (unsigned long)e->base, (unsigned long)p);
	t->slabs[e->szind]++;
	t->taken[e->szind] += taken;
	t->nonfull[e->szind] += e->in_heap;
	HL_EXPECT(r, !e->in_heap || e->nfree > 0, "slab %#lx: full slab on the nonfull heap",
		  (unsigned long)e->base);
}

/* One extent at @p addr of chunk @p c; returns its end (0 to stop). */
static uintptr_t sl_check_extent(sl_state_t *s, hl_report_t *r, sl_arena_t *a, sl_chunk_t *c,
				 uintptr_t addr, sl_extent_t **prev, sl_tally_t *t)
{
	sl_extent_t *e = sl_rtree_get(&s->rtree, addr);
	if (!HL_EXPECT(r, e && e->base == addr, "chunk %#lx: no extent starts at %#lx",
		       (unsigned long)c->base, (unsigned long)addr))
		return 0;
	if (!HL_EXPECT(r, e->size && e->size % s->sc.page == 0 && addr + e->size <= c->base + c->size &&
			       e->chunk == c && e->arena == a->index && e->state < SL_NSTATES,
		       "extent %#lx: bad size %zu, chunk, arena or state", (unsigned long)addr, e->size))
		return 0;
	HL_EXPECT(r, sl_rtree_get(&s->rtree, addr + e->size - s->sc.page) == e,
		  "extent %#lx: last page not mapped to it", (unsigned long)addr);
	if (e->state == SL_SLAB)
		sl_check_slab(s, r, e, t);
	if (e->state >= SL_DIRTY) {
		HL_EXPECT(r, e->in_heap, "free extent %#lx is in no eset", (unsigned long)addr);
		HL_EXPECT(r, e->zeroed == SL_ZEROED_NO || (e->zeroed == SL_ZEROED_YES && e->state == SL_RETURNED),
			  "free extent %#lx in state %u has zeroed mark %u", (unsigned long)addr, e->state, e->zeroed);
		HL_EXPECT(r, !*prev || (*prev)->state != e->state || e->state == SL_DIRTY, "free extents %#lx and %#lx not merged",
			  (unsigned long)(*prev)->base, (unsigned long)addr);
	}
	t->pages[e->state] += sl_npages(s, e->size);
	t->extents[e->state]++;
	*prev = e;
	return addr + e->size;
}

static void sl_check_arena(sl_state_t *s, hl_report_t *r, sl_arena_t *a)
{
	sl_tally_t t;
	memset(&t, 0, sizeof t);
	for (sl_chunk_t *c = a->chunks; c; c = c->next) {
		for (sl_chunk_t *o = c->next; o; o = o->next)
			HL_EXPECT(r, o->base + o->size <= c->base || c->base + c->size <= o->base,
				  "chunks %#lx and %#lx overlap", (unsigned long)c->base, (unsigned long)o->base);
		sl_extent_t *prev = NULL;
		uintptr_t addr = c->base;
		while (addr && addr < c->base + c->size)
			addr = sl_check_extent(s, r, a, c, addr, &prev, &t);
	}
	for (int st = SL_DIRTY; st <= SL_RETURNED; st++) {
		sl_eset_t *es = &a->esets[st - SL_DIRTY];
		HL_EXPECT(r, es->npages == t.pages[st] && es->nextents == t.extents[st],
			  "arena %u: eset %d holds %zu pages in %zu extents, chunks show %zu in %zu",
			  a->index, st, es->npages, es->nextents, t.pages[st], t.extents[st]);
	}
	for (unsigned b = 0; b < s->sc.nbins; b++) {
		sl_bin_t *bin = &a->bins[b];
		HL_EXPECT(r, bin->nslabs == t.slabs[b] && bin->curregs == t.taken[b] &&
				     bin->nonfull_count == t.nonfull[b],
			  "arena %u bin %u: %zu slabs %zu taken %zu nonfull, bitmaps show %zu %zu %zu",
			  a->index, b, bin->nslabs, bin->curregs, bin->nonfull_count, t.slabs[b], t.taken[b],
			  t.nonfull[b]);
		HL_EXPECT(r, !bin->cur || (bin->cur->state == SL_SLAB && bin->cur->szind == b && !bin->cur->in_heap),
			  "arena %u bin %u: bad slabcur", a->index, b);
	}
}

/* A cached pointer: taken in its slab (or a whole large extent) of @p bin. */
static void sl_check_cached(sl_state_t *s, hl_report_t *r, unsigned bin, void *p)
{
	sl_extent_t *e = sl_rtree_get(&s->rtree, (uintptr_t)p);
	if (!HL_EXPECT(r, e != NULL, "tcache bin %u holds %p, which maps to no extent", bin, p))
		return;
	HL_EXPECT(r, e->szind == bin && (e->state == SL_SLAB || (e->state == SL_LARGE && e->base == (uintptr_t)p)),
		  "tcache bin %u holds %p of class %u state %u", bin, p, e->szind, e->state);
	if (e->state == SL_SLAB) {
		int idx = sl_region_index(&s->sc, e, (uintptr_t)p);
		HL_EXPECT(r, idx >= 0 && hl_bit_get(e->bitmap, (unsigned)idx),
			  "tcache bin %u holds %p, which its slab's bitmap counts as free", bin, p);
	}
}

static void sl_check_tcache(sl_state_t *s, hl_report_t *r, sl_tcache_t *tc)
{
	void *v[SL_TCACHE_SMALL_MAX];
	for (unsigned i = 0; i < s->nhbins; i++) {
		sl_cbin_t *b = &tc->bins[i];
		unsigned ncached = sl_cbin_ncached(tc, i), cap = sl_cbin_capacity(b);
		if (!HL_EXPECT(r, cap == s->ncached_max[i], "tcache bin %u: capacity %u, not %u", i, cap,
			       (unsigned)s->ncached_max[i]) ||
		    !HL_EXPECT(r, ncached <= cap, "tcache bin %u: %u cached > %u", i, ncached, cap) ||
		    !HL_EXPECT(r, sl_cbin_low_water(b) <= ncached, "tcache bin %u: low water %u above the %u cached", i,
			       sl_cbin_low_water(b), ncached))
			continue;
		memcpy(v, tc->head[i], ncached * sizeof(void *));
		sl_sort(v, ncached);
		for (unsigned j = 0; j < ncached; j++) {
			sl_check_cached(s, r, i, v[j]);
			HL_EXPECT(r, !j || v[j] != v[j - 1], "tcache bin %u holds %p twice", i, v[j]);
		}
	}
}

int sl_check(void *st, hl_report_t *r)
{
	sl_state_t *s = st;
	int before = r->problems;
	sl_lock_all(s);
	sl_arena_t *a;
	for (unsigned i = 0; (a = sl_arena_nth(s, i)); i++)
		sl_check_arena(s, r, a);
	sl_unlock_all(s);
	hl_thread_t *t = hl_thread_get(s->heap);
	if (t && sl_tcache_of(t))
		sl_check_tcache(s, r, sl_tcache_of(t));
	return r->problems - before;
}

/* ---- walker ------------------------------------------------------------- */

static const hl_block_state_t sl_walk_state[SL_NSTATES] = {
	[SL_SLAB] = HL_BLOCK_LIVE, [SL_LARGE] = HL_BLOCK_LIVE, [SL_META] = HL_BLOCK_META, [SL_DIRTY] = HL_BLOCK_DIRTY,
	[SL_MUZZY] = HL_BLOCK_MUZZY, [SL_RETURNED] = HL_BLOCK_RETURNED,
};

typedef struct sl_walk_ctx {
	hl_walk_fn fn;
	void *arg;
	void **cached;
	size_t ncached;
	int region;
} sl_walk_ctx_t;

static int sl_walk_extent(sl_state_t *s, sl_walk_ctx_t *w, sl_extent_t *e)
{
	hl_block_t b = { .addr = (void *)e->base, .size = e->size, .state = sl_walk_state[e->state],
			 .region = w->region, .size_class = e->szind };
	if (e->state == SL_LARGE && sl_cached_has(w->cached, w->ncached, b.addr))
		b.state = HL_BLOCK_CACHED;
	if (e->state != SL_SLAB)
		return w->fn(&b, w->arg);
	b.size = s->sc.size[e->szind];
	for (unsigned i = 0; i < s->sc.nregs[e->szind]; i++) {
		b.addr = (void *)(e->base + (uintptr_t)i * s->sc.stride[e->szind]);
		b.state = !hl_bit_get(e->bitmap, i) ? HL_BLOCK_FREE
			  : sl_cached_has(w->cached, w->ncached, b.addr) ? HL_BLOCK_CACHED : HL_BLOCK_LIVE;
		int rc = w->fn(&b, w->arg);
		if (rc)
			return rc;
	}
	return 0;
}

int sl_walk(void *st, hl_walk_fn fn, void *arg)
{
	sl_state_t *s = st;
	sl_walk_ctx_t w = { .fn = fn, .arg = arg };
	int rc = 0;
	sl_lock_all(s);
	w.cached = sl_cached_collect(s, &w.ncached);
	sl_arena_t *a;
	for (unsigned i = 0; !rc && (a = sl_arena_nth(s, i)); i++)
		for (sl_chunk_t *c = a->chunks; c && !rc; c = c->next) {
			size_t off;
			w.region = hl_os_locate(s->os, (void *)c->base, &off);
			for (uintptr_t p = c->base; p < c->base + c->size && !rc;) {
				sl_extent_t *e = sl_rtree_get(&s->rtree, p);
				if (!e)
					break;
				rc = sl_walk_extent(s, &w, e);
				p += e->size;
			}
		}
	sl_unlock_all(s);
	return rc;
}
