/*
 * Snapshot of policy `slab`: per arena a cluster holding, per size class
 * in use, its slabs drawn as grids of regions (live / free / cached in a
 * thread cache) with the bin pointing at slabcur, then per chunk a strip
 * of its extents in address order (slabs and large blocks live, free
 * extents coloured dirty / muzzy / returned).  Like the walker it reads
 * thread caches unlocked: take snapshots of a quiet heap.
 */
#include "config.h"
#include <stdio.h>
#include "slab.h"

enum {
	SL_DOT_SLABS = 6,     /* slabs drawn one by one per class and arena, at most */
	SL_DOT_EXTENTS = 48,  /* extents of a chunk drawn one by one, at most */
};

static const char *const sl_state_name[SL_NSTATES] = { "slab", "large", "tcache stacks", "dirty", "muzzy", "returned" };

/* How many regions of slab @p e are live, cached in a thread cache, free. */
static void sl_dot_counts(sl_state_t *s, sl_extent_t *e, void *const *cached, size_t ncached, unsigned *live,
			  unsigned *incache, unsigned *nfree)
{
	unsigned n = s->sc.nregs[e->szind], size = s->sc.stride[e->szind];
	*live = *incache = *nfree = 0;
	for (unsigned i = 0; i < n; i++) {
		void *p = (void *)(e->base + (uintptr_t)i * size);
		if (!hl_bit_get(e->bitmap, i))
			++*nfree;
		else if (sl_cached_has(cached, ncached, p))
			++*incache;
		else
			++*live;
	}
}

/* Draws slab @p e as a grid. */
static void sl_dot_slab(sl_state_t *s, hl_dot_t *d, sl_extent_t *e, const char *node, void *const *cached,
			size_t ncached)
{
	char label[96], addr[48];
	unsigned n = s->sc.nregs[e->szind], size = s->sc.stride[e->szind];
	snprintf(label, sizeof label, "slab %s  %u x %u B, %u free", hl_dot_addr(d, (void *)e->base, addr, sizeof addr),
		 n, size, e->nfree);
	hl_dot_strip_begin(d, node, label, n > 16 ? 16 : (int)n);
	for (unsigned i = 0; i < n; i++) {
		void *p = (void *)(e->base + (uintptr_t)i * size);
		hl_block_state_t st = !hl_bit_get(e->bitmap, i) ? HL_BLOCK_FREE
				      : sl_cached_has(cached, ncached, p) ? HL_BLOCK_CACHED : HL_BLOCK_LIVE;
		hl_dot_block_cell(d, st, p, NULL, "%u", i);
	}
	hl_dot_strip_end(d);
}

/* Slabs of one class alike in what their regions are: drawn once, with a count. */
typedef struct sl_dot_group {
	unsigned live, cached, nfree;
	unsigned long n;
} sl_dot_group_t;

enum { SL_DOT_GROUPS = 6 };

static void sl_dot_group(sl_state_t *s, hl_dot_t *d, const char *head, const char *node, unsigned b,
			 const sl_dot_group_t *g, bool other)
{
	char label[128], n[32], sz[32];
	unsigned nregs = s->sc.nregs[b];
	if (other)
		snprintf(label, sizeof label, "× %s other slabs of %u × %s: %u live, %u cached, %u free in all",
			 hl_dot_count(g->n, n, sizeof n), nregs, hl_dot_size(s->sc.size[b], sz, sizeof sz), g->live,
			 g->cached, g->nfree);
	else
		snprintf(label, sizeof label, "× %s slabs of %u × %s, %u live, %u cached, %u free each",
			 hl_dot_count(g->n, n, sizeof n), nregs, hl_dot_size(s->sc.size[b], sz, sizeof sz), g->live,
			 g->cached, g->nfree);
	hl_dot_strip_begin(d, node, label, nregs > 16 ? 16 : (int)nregs);
	if (other) {
		hl_dot_run_cell(d, HL_BLOCK_LIVE, g->live, 0, "live");
		hl_dot_run_cell(d, HL_BLOCK_CACHED, g->cached, 0, "cached");
		hl_dot_run_cell(d, HL_BLOCK_FREE, g->nfree, 0, "free");
	} else {
		for (unsigned i = 0; i < g->live; i++)
			hl_dot_cell(d, HL_BLOCK_LIVE, NULL, "live");
		for (unsigned i = 0; i < g->cached; i++)
			hl_dot_cell(d, HL_BLOCK_CACHED, NULL, "cached");
		for (unsigned i = 0; i < g->nfree; i++)
			hl_dot_cell(d, HL_BLOCK_FREE, NULL, "free");
	}
	hl_dot_strip_end(d);
	if (g->nfree)
		hl_dot_edge(d, head, node, HL_EDGE_LIST, NULL);
}

/* The slabs of class @p b in arena @p a, with the bin's head: each slab
 * drawn when there are few, else slabcur and the others folded by what
 * their regions are. */
static void sl_dot_class(sl_state_t *s, hl_dot_t *d, sl_arena_t *a, unsigned b, void *const *cached,
			 size_t ncached)
{
	sl_bin_t *bin = &a->bins[b];
	char node[64], head[64], label[96];
	snprintf(head, sizeof head, "a%u_bin%u", a->index, b);
	snprintf(label, sizeof label, "bin %u B: %zu slabs, %zu taken", s->sc.size[b], bin->nslabs, bin->curregs);
	hl_dot_list_node(d, head, label);
	bool each = bin->nslabs <= SL_DOT_SLABS;
	sl_dot_group_t group[SL_DOT_GROUPS + 1] = { { 0, 0, 0, 0 } };
	unsigned ngroups = 0, drawn = 0;
	for (sl_chunk_t *c = a->chunks; c; c = c->next)
		for (uintptr_t p = c->base; p < c->base + c->size;) {
			sl_extent_t *e = sl_rtree_get(&s->rtree, p);
			if (!e)
				break;
			p += e->size;
			if (e->state != SL_SLAB || e->szind != b)
				continue;
			if (each || e == bin->cur) {
				snprintf(node, sizeof node, "a%u_slab%u_%u", a->index, b, drawn++);
				sl_dot_slab(s, d, e, node, cached, ncached);
				if (e == bin->cur)   /* no edge labels: the legend names the kinds */
					hl_dot_edge(d, head, node, HL_EDGE_NEXT, NULL);
				else if (e->in_heap)
					hl_dot_edge(d, head, node, HL_EDGE_LIST, NULL);
				continue;
			}
			unsigned live, incache, nfree, k;
			sl_dot_counts(s, e, cached, ncached, &live, &incache, &nfree);
			for (k = 0; k < ngroups; k++)
				if (group[k].live == live && group[k].cached == incache && group[k].nfree == nfree)
					break;
			if (k == ngroups && ngroups < SL_DOT_GROUPS) {
				group[k] = (sl_dot_group_t){ live, incache, nfree, 0 };
				ngroups++;
			}
			if (k == ngroups) {   /* past the groups drawn: summed in "other" */
				k = SL_DOT_GROUPS;
				group[k].live += live;
				group[k].cached += incache;
				group[k].nfree += nfree;
			}
			group[k].n++;
		}
	for (unsigned k = 0; k <= SL_DOT_GROUPS; k++)
		if (group[k].n) {
			snprintf(node, sizeof node, "a%u_slabs%u_%u", a->index, b, k);
			sl_dot_group(s, d, head, node, b, &group[k], k == SL_DOT_GROUPS);
		}
}

static void sl_dot_chunk(sl_state_t *s, hl_dot_t *d, sl_arena_t *a, sl_chunk_t *c, unsigned k,
			 void *const *cached, size_t ncached)
{
	static const hl_block_state_t color[SL_NSTATES] = {
		HL_BLOCK_LIVE, HL_BLOCK_LIVE, HL_BLOCK_META, HL_BLOCK_DIRTY, HL_BLOCK_MUZZY, HL_BLOCK_RETURNED };
	char node[48], label[96], addr[48];
	snprintf(node, sizeof node, "a%u_chunk%u", a->index, k);
	snprintf(label, sizeof label, "chunk %s, %zu KiB", hl_dot_addr(d, (void *)c->base, addr, sizeof addr),
		 c->size >> 10);
	unsigned long count[SL_NSTATES] = { 0 }, total = 0;
	size_t bytes[SL_NSTATES] = { 0 };
	for (uintptr_t p = c->base; p < c->base + c->size; total++) {
		sl_extent_t *e = sl_rtree_get(&s->rtree, p);
		if (!e)
			break;
		count[e->state]++;
		bytes[e->state] += e->size;
		p += e->size;
	}
	if (total > SL_DOT_EXTENTS) {   /* too many to draw one by one: by kind */
		char n[32];
		snprintf(label, sizeof label, "chunk %s, %zu KiB: %s extents, by kind",
			 hl_dot_addr(d, (void *)c->base, addr, sizeof addr), c->size >> 10, hl_dot_count(total, n, sizeof n));
		hl_dot_strip_begin(d, node, label, 0);
		for (int k = 0; k < SL_NSTATES; k++)
			if (count[k])
				hl_dot_run_cell(d, color[k], count[k], bytes[k], "%s", sl_state_name[k]);
		hl_dot_strip_end(d);
		return;
	}
	hl_dot_strip_begin(d, node, label, 0);
	for (uintptr_t p = c->base; p < c->base + c->size;) {
		sl_extent_t *e = sl_rtree_get(&s->rtree, p);
		if (!e)
			break;
		hl_block_state_t st = color[e->state];
		if (e->state == SL_LARGE && sl_cached_has(cached, ncached, (void *)e->base))
			st = HL_BLOCK_CACHED;
		if (e->state == SL_SLAB)
			hl_dot_cell(d, st, NULL, "slab %u B", s->sc.size[e->szind]);
		else    /* one block, as the walker gives it (sl_walk_extent) */
			hl_dot_block_cell(d, st, (void *)e->base, NULL, "%s %zu K", sl_state_name[e->state],
					  e->size >> 10);
		p += e->size;
	}
	hl_dot_strip_end(d);
}

/* Whether chunk @p c is one free extent, all of it. */
static bool sl_dot_whole_free(sl_state_t *s, const sl_chunk_t *c)
{
	sl_extent_t *e = sl_rtree_get(&s->rtree, c->base);
	return e && e->size == c->size && e->state >= SL_DIRTY;
}

/* The chunks that are one free extent each, as one strip of a cell each
 * (a heap that grew and emptied has many). */
static void sl_dot_free_chunks(sl_state_t *s, hl_dot_t *d, sl_arena_t *a)
{
	static const hl_block_state_t color[SL_NSTATES] = {
		HL_BLOCK_LIVE, HL_BLOCK_LIVE, HL_BLOCK_META, HL_BLOCK_DIRTY, HL_BLOCK_MUZZY, HL_BLOCK_RETURNED };
	size_t n = 0, bytes = 0;
	for (sl_chunk_t *c = a->chunks; c; c = c->next)
		if (sl_dot_whole_free(s, c)) {
			n++;
			bytes += c->size;
		}
	if (n < 2)
		return;
	char node[48], label[128], sz[32], addr[48];
	snprintf(node, sizeof node, "a%u_freechunks", a->index);
	snprintf(label, sizeof label, "%zu chunks that are one free extent each, %s in all", n,
		 hl_dot_size(bytes, sz, sizeof sz));
	hl_dot_strip_begin(d, node, label, 6);
	for (sl_chunk_t *c = a->chunks; c; c = c->next)
		if (sl_dot_whole_free(s, c)) {
			sl_extent_t *e = sl_rtree_get(&s->rtree, c->base);
			hl_dot_block_cell(d, color[e->state], (void *)e->base, NULL, "%s %s %s",
					  hl_dot_addr(d, (void *)c->base, addr, sizeof addr), sl_state_name[e->state],
					  hl_dot_size(e->size, sz, sizeof sz));
		}
	hl_dot_strip_end(d);
}

static size_t sl_dot_count_whole_free(sl_state_t *s, sl_arena_t *a)
{
	size_t n = 0;
	for (sl_chunk_t *c = a->chunks; c; c = c->next)
		n += sl_dot_whole_free(s, c);
	return n;
}

void sl_snapshot(void *st, hl_dot_t *d)
{
	sl_state_t *s = st;
	size_t ncached;
	char label[128];
	sl_lock_all(s);
	void **cached = sl_cached_collect(s, &ncached);
	sl_arena_t *a;
	for (unsigned i = 0; (a = sl_arena_nth(s, i)); i++) {
		snprintf(label, sizeof label, "%s %u (%u threads; dirty %zu, muzzy %zu, returned %zu pages)",
			 a->index == SL_HUGE_ARENA ? "huge arena" : "arena", i,
			 a->nthreads, a->esets[0].npages, a->esets[1].npages, a->esets[2].npages);
		hl_dot_cluster_begin(d, label);
		char tcnode[32];
		snprintf(tcnode, sizeof tcnode, "a%u_tcache", i);
		snprintf(label, sizeof label, "thread caches (%u threads bound here): %zu regions, the cells marked cached",
			 a->nthreads, ncached);
		if (i == 0)
			hl_dot_list_node(d, tcnode, label);
		for (unsigned b = 0; b < s->sc.nbins; b++)
			if (a->bins[b].nslabs)
				sl_dot_class(s, d, a, b, cached, ncached);
		unsigned k = 0;
		bool fold = sl_dot_count_whole_free(s, a) >= 2;
		for (sl_chunk_t *c = a->chunks; c; c = c->next, k++)
			if (!fold || !sl_dot_whole_free(s, c))
				sl_dot_chunk(s, d, a, c, k, cached, ncached);
		if (fold)
			sl_dot_free_chunks(s, d, a);
		hl_dot_cluster_end(d);
	}
	sl_unlock_all(s);
}
