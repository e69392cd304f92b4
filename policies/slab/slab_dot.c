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

enum { SL_DOT_SLABS = 6 };   /* slabs drawn per class and arena */

static const char *const sl_state_name[SL_NSTATES] = { "slab", "large", "dirty", "muzzy", "returned" };

/* Draws slab @p e as a grid; returns how many of its regions are cached. */
static unsigned sl_dot_slab(sl_state_t *s, hl_dot_t *d, sl_extent_t *e, const char *node,
			    void *const *cached, size_t ncached)
{
	unsigned ncache = 0;
	char label[96], addr[48];
	unsigned n = s->sc.nregs[e->szind], size = s->sc.stride[e->szind];
	snprintf(label, sizeof label, "slab %s  %u x %u B, %u free", hl_dot_addr(d, (void *)e->base, addr, sizeof addr),
		 n, size, e->nfree);
	hl_dot_strip_begin(d, node, label, n > 16 ? 16 : (int)n);
	for (unsigned i = 0; i < n; i++) {
		void *p = (void *)(e->base + (uintptr_t)i * size);
		hl_block_state_t st = !hl_bit_get(e->bitmap, i) ? HL_BLOCK_FREE
				      : sl_cached_has(cached, ncached, p) ? HL_BLOCK_CACHED : HL_BLOCK_LIVE;
		ncache += st == HL_BLOCK_CACHED;
		hl_dot_block_cell(d, st, p, NULL, "%u", i);
	}
	hl_dot_strip_end(d);
	return ncache;
}

/* The slabs of class @p b in arena @p a, with the bin's head. */
static void sl_dot_class(sl_state_t *s, hl_dot_t *d, sl_arena_t *a, unsigned b, const char *tcnode,
			 void *const *cached, size_t ncached)
{
	sl_bin_t *bin = &a->bins[b];
	char node[64], head[64], label[96];
	snprintf(head, sizeof head, "a%u_bin%u", a->index, b);
	snprintf(label, sizeof label, "bin %u B: %zu slabs, %zu taken", s->sc.size[b], bin->nslabs, bin->curregs);
	hl_dot_list_node(d, head, label);
	unsigned drawn = 0;
	for (sl_chunk_t *c = a->chunks; c; c = c->next)
		for (uintptr_t p = c->base; p < c->base + c->size;) {
			sl_extent_t *e = sl_rtree_get(&s->rtree, p);
			if (!e)
				break;
			p += e->size;
			if (e->state != SL_SLAB || e->szind != b || drawn >= SL_DOT_SLABS)
				continue;
			snprintf(node, sizeof node, "a%u_slab%u_%u", a->index, b, drawn++);
			if (sl_dot_slab(s, d, e, node, cached, ncached))
				hl_dot_edge(d, tcnode, node, HL_EDGE_CACHE, NULL);
			if (e == bin->cur)
				hl_dot_edge(d, head, node, HL_EDGE_NEXT, "slabcur");
			else if (e->in_heap)
				hl_dot_edge(d, head, node, HL_EDGE_LIST, "nonfull");
		}
	if (bin->nslabs > drawn) {
		snprintf(node, sizeof node, "a%u_more%u", a->index, b);
		snprintf(label, sizeof label, "... %zu more slabs", bin->nslabs - drawn);
		hl_dot_note(d, node, label);
	}
}

static void sl_dot_chunk(sl_state_t *s, hl_dot_t *d, sl_arena_t *a, sl_chunk_t *c, unsigned k,
			 void *const *cached, size_t ncached)
{
	static const hl_block_state_t color[SL_NSTATES] = {
		HL_BLOCK_LIVE, HL_BLOCK_LIVE, HL_BLOCK_DIRTY, HL_BLOCK_MUZZY, HL_BLOCK_RETURNED };
	char node[48], label[96], addr[48];
	snprintf(node, sizeof node, "a%u_chunk%u", a->index, k);
	snprintf(label, sizeof label, "chunk %s, %zu KiB", hl_dot_addr(d, (void *)c->base, addr, sizeof addr),
		 c->size >> 10);
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
		snprintf(label, sizeof label, "thread caches (%u threads bound here)", a->nthreads);
		hl_dot_list_node(d, tcnode, label);
		for (unsigned b = 0; b < s->sc.nbins; b++)
			if (a->bins[b].nslabs)
				sl_dot_class(s, d, a, b, tcnode, cached, ncached);
		unsigned k = 0;
		for (sl_chunk_t *c = a->chunks; c; c = c->next)
			sl_dot_chunk(s, d, a, c, k++, cached, ncached);
		hl_dot_cluster_end(d);
	}
	sl_unlock_all(s);
}
