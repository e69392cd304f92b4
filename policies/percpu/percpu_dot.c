/*
 * percpu_dot.c — the snapshot of `percpu`.
 *
 *   cpu 0: 3.2 KiB ──cache──┐     transfer: 64 objects ──list──┐
 *   ┌ region#k ─────────────▼──────────────────────────────────▼───────┐
 *   │ [c3 48B 170: live 12 cached 40 free 118][c9 ...][free 120 pages] │
 *   └──────────────────▲───────────────────────────────────────────────┘
 *   central c3 (fullest first) ──list──┘
 *
 * One cell per span in address order (a small span is coloured by what
 * most of its objects are: live, cached in a front or the transfer cache,
 * free in the span), list heads for the CPUs (or threads), the transfer
 * caches and the central lists, with an edge to the span holding the
 * first object or span of each.
 */
#include "config.h"
#include <stdio.h>
#include "percpu.h"

enum { PC_DOT_SPANS = 400, PC_DOT_HEADS = 12 };

/* A span's port: its first page within its region (the same from run to run). */
static void pc_dot_port(const pc_state_t *s, char *buf, size_t len, const pc_span_t *sp)
{
	snprintf(buf, len, "p%zu", (size_t)((sp->start - s->ph.regions[sp->region].base) >> PC_PAGE_SHIFT));
}

static unsigned pc_dot_count(const uint64_t *bits)
{
	unsigned n = 0;
	for (unsigned w = 0; w < PC_BITMAP_WORDS; w++)
		n += (unsigned)__builtin_popcountll(bits[w]);
	return n;
}

static void pc_dot_cell(pc_state_t *s, hl_dot_t *d, const pc_span_t *sp)
{
	char port[24];
	pc_dot_port(s, port, sizeof port, sp);
	if (sp->state == PC_SPAN_FREE || sp->state == PC_SPAN_RETURNED) {
		hl_dot_block_cell(d, sp->state == PC_SPAN_FREE ? HL_BLOCK_DIRTY : HL_BLOCK_RETURNED, (void *)sp->start,
				  port, "%s %zu pg", sp->state == PC_SPAN_FREE ? "free" : "returned", sp->npages);
		return;
	}
	if (sp->state == PC_SPAN_LARGE) {
		hl_dot_block_cell(d, HL_BLOCK_LIVE, (void *)sp->start, port, "large %zu KiB", sp->npages * PC_PAGE >> 10);
		return;
	}
	unsigned nfree = pc_dot_count(sp->free_bits), ncached = pc_dot_count(sp->mark);
	unsigned live = sp->nobjs - nfree - ncached;
	hl_block_state_t st = live >= ncached && live >= nfree ? HL_BLOCK_LIVE
			      : ncached >= nfree ? HL_BLOCK_CACHED : HL_BLOCK_FREE;
	hl_dot_cell(d, st, port, "c%u %uB: %u live %u cached %u free", sp->cls, s->cl.size[sp->cls], live,
		    ncached, nfree);
}

static void pc_dot_regions(pc_state_t *s, hl_dot_t *d)
{
	char label[96], node[32], addr[48];
	for (unsigned i = 0; i < s->ph.nregions; i++) {
		const pc_region_t *rg = &s->ph.regions[i];
		snprintf(label, sizeof label, "region %s: %zu MiB committed", hl_dot_addr(d, (void *)rg->base, addr,
			 sizeof addr), rg->frontier >> 20);
		hl_dot_cluster_begin(d, label);
		snprintf(node, sizeof node, "pcregion%u", i);
		hl_dot_strip_begin(d, node, "spans", 8);
		unsigned n = 0;
		for (uintptr_t at = rg->base; at < rg->base + rg->frontier && n < PC_DOT_SPANS; n++) {
			pc_span_t *sp = pc_pagemap_get(&s->ph.map, at);
			if (!sp || sp->start != at || !sp->npages)
				break;
			pc_dot_cell(s, d, sp);
			at += sp->npages * PC_PAGE;
		}
		hl_dot_strip_end(d);
		hl_dot_cluster_end(d);
	}
}

/* True when span @sp has a cell: pc_dot_regions draws the first
 * PC_DOT_SPANS spans of each region only. */
static bool pc_dot_drawn(const pc_state_t *s, const pc_span_t *sp)
{
	const pc_region_t *rg = &s->ph.regions[sp->region];
	unsigned n = 0;
	for (uintptr_t at = rg->base; at < rg->base + rg->frontier && n < PC_DOT_SPANS; n++) {
		const pc_span_t *x = pc_pagemap_get(&s->ph.map, at);
		if (!x || x->start != at || !x->npages)
			return false;
		if (x == sp)
			return true;
		at += x->npages * PC_PAGE;
	}
	return false;
}

/* An edge from head @node to the cell of the span holding @p (none when
 * that span is past the cells drawn). */
static void pc_dot_edge_to(pc_state_t *s, hl_dot_t *d, const char *node, const void *p, hl_dot_edge_kind_t k)
{
	pc_span_t *sp = pc_ph_span_of(&s->ph, p);
	if (!sp || sp->region >= s->ph.nregions || !pc_dot_drawn(s, sp))
		return;
	char to[64], port[24];
	pc_dot_port(s, port, sizeof port, sp);
	snprintf(to, sizeof to, "pcregion%u:%s", sp->region, port);
	hl_dot_edge(d, node, to, k, NULL);
}

static void pc_dot_fronts(pc_state_t *s, hl_dot_t *d)
{
	char node[32], label[96];
	for (unsigned cpu = 0; cpu < s->ncpus && s->mode != PC_MODE_THREAD; cpu++) {
		size_t bytes = pc_cpu_cached_bytes(s, cpu);
		if (!bytes)
			continue;
		snprintf(node, sizeof node, "pccpu%u", cpu);
		snprintf(label, sizeof label, "cpu %u (%s): %zu B cached", cpu, s->mode == PC_MODE_RSEQ ? "rseq" : "lock",
			 bytes);
		hl_dot_list_node(d, node, label);
		pc_slab_t *sl = pc_slab(s, cpu);
		for (unsigned cls = 1, shown = 0; cls < s->cl.n && shown < 3; cls++)
			if (sl->stacks[cls].current) {
				pc_dot_edge_to(s, d, node, pc_slots(s, sl, cls)[sl->stacks[cls].current - 1], HL_EDGE_CACHE);
				shown++;
			}
	}
	unsigned n = 0;
	for (pc_tcache_t *tc = s->tcaches; tc && n < PC_DOT_HEADS; tc = tc->next, n++) {
		snprintf(node, sizeof node, "pcthread%u", n);
		snprintf(label, sizeof label, "thread cache %u: %zu B", n, tc->size);
		hl_dot_list_node(d, node, label);
		for (unsigned cls = 1, shown = 0; cls < s->cl.n && shown < 3; cls++)
			if (tc->head[cls]) {
				pc_dot_edge_to(s, d, node, tc->head[cls], HL_EDGE_CACHE);
				shown++;
			}
	}
}

static void pc_dot_middle(pc_state_t *s, hl_dot_t *d)
{
	char node[32], label[96];
	unsigned shown = 0;
	for (unsigned cls = 1; cls < s->cl.n && shown < PC_DOT_HEADS; cls++) {
		pc_transfer_t *t = &s->transfer[cls];
		if (t->count) {
			snprintf(node, sizeof node, "pctransfer%u", cls);
			snprintf(label, sizeof label, "transfer c%u (%u B): %u objects", cls, s->cl.size[cls], t->count);
			hl_dot_list_node(d, node, label);
			pc_dot_edge_to(s, d, node, t->slots[t->count - 1], HL_EDGE_LIST);
			shown++;
		}
		pc_central_t *c = &s->central[cls];
		for (unsigned b = PC_FULLNESS; b-- > 0;)
			if (c->lists[b].head) {
				snprintf(node, sizeof node, "pccentral%u", cls);
				snprintf(label, sizeof label, "central c%u: %zu spans, fullest list %u", cls, c->spans, b);
				hl_dot_list_node(d, node, label);
				pc_dot_edge_to(s, d, node, (void *)c->lists[b].head->start, HL_EDGE_LIST);
				shown++;
				break;
			}
	}
}

void pc_snapshot(void *st, hl_dot_t *d)
{
	pc_state_t *s = st;
	pthread_mutex_lock(&s->ph.lock);
	pc_mark_cached(s, NULL);
	pc_dot_regions(s, d);
	pc_dot_fronts(s, d);
	pc_dot_middle(s, d);
	pthread_mutex_unlock(&s->ph.lock);
}
