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

enum { PC_DOT_HEADS = 12 };

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

/* The spans edges point at: found first, so that they get ports (and
 * their own cells) and the others can be folded. */
enum { PC_DOT_TARGETS = 256 };
typedef struct pc_dot_targets {
	const pc_span_t *span[PC_DOT_TARGETS];
	unsigned n;
	bool collecting;
} pc_dot_targets_t;

static bool pc_dot_targeted(const pc_dot_targets_t *t, const pc_span_t *sp)
{
	for (unsigned i = 0; i < t->n; i++)
		if (t->span[i] == sp)
			return true;
	return false;
}

/* A run of alike spans in address order (one class, or free, or returned). */
typedef struct pc_dot_run {
	int kind;                 /* class, or -1 free, -2 returned, -3 none */
	unsigned long spans;
	size_t pages, live, cached, nfree;
} pc_dot_run_t;

static void pc_dot_flush(pc_state_t *s, hl_dot_t *d, pc_dot_run_t *r)
{
	if (r->kind == -3 || !r->spans)
		return;
	size_t bytes = r->pages * PC_PAGE;
	if (r->kind < 0)
		hl_dot_run_cell(d, r->kind == -1 ? HL_BLOCK_DIRTY : HL_BLOCK_RETURNED, r->spans, r->spans > 1 ? bytes : 0,
				"%s %zu pg", r->kind == -1 ? "free" : "returned", r->pages);
	else {
		hl_block_state_t st = r->live >= r->cached && r->live >= r->nfree ? HL_BLOCK_LIVE
				      : r->cached >= r->nfree ? HL_BLOCK_CACHED : HL_BLOCK_FREE;
		hl_dot_run_cell(d, st, r->spans, bytes, "c%d %uB: %zu live %zu cached %zu free", r->kind,
				s->cl.size[r->kind], r->live, r->cached, r->nfree);
	}
	r->kind = -3;
	r->spans = r->pages = r->live = r->cached = r->nfree = 0;
}

static void pc_dot_cell(pc_state_t *s, hl_dot_t *d, const pc_span_t *sp, bool port_it, pc_dot_run_t *run)
{
	char port[24];
	pc_dot_port(s, port, sizeof port, sp);
	const char *pt = port_it ? port : NULL;
	unsigned nfree = 0, ncached = 0;
	int kind = sp->state == PC_SPAN_FREE ? -1 : sp->state == PC_SPAN_RETURNED ? -2 : sp->state == PC_SPAN_LARGE ? -4
		   : (int)sp->cls;
	if (kind >= 0) {
		nfree = pc_dot_count(sp->free_bits);
		ncached = pc_dot_count(sp->mark);
	}
	if (!pt && kind != -4) {   /* folded with its alike neighbours */
		if (run->kind != kind)
			pc_dot_flush(s, d, run);
		run->kind = kind;
		run->spans++;
		run->pages += sp->npages;
		if (kind >= 0) {
			run->live += sp->nobjs - nfree - ncached;
			run->cached += ncached;
			run->nfree += nfree;
		}
		return;
	}
	pc_dot_flush(s, d, run);
	if (sp->state == PC_SPAN_FREE || sp->state == PC_SPAN_RETURNED) {
		hl_dot_block_cell(d, sp->state == PC_SPAN_FREE ? HL_BLOCK_DIRTY : HL_BLOCK_RETURNED, (void *)sp->start,
				  pt, "%s %zu pg", sp->state == PC_SPAN_FREE ? "free" : "returned", sp->npages);
		return;
	}
	if (sp->state == PC_SPAN_LARGE) {
		hl_dot_block_cell(d, HL_BLOCK_LIVE, (void *)sp->start, pt, "large %zu KiB", sp->npages * PC_PAGE >> 10);
		return;
	}
	unsigned live = sp->nobjs - nfree - ncached;
	hl_block_state_t st = live >= ncached && live >= nfree ? HL_BLOCK_LIVE
			      : ncached >= nfree ? HL_BLOCK_CACHED : HL_BLOCK_FREE;
	hl_dot_cell(d, st, pt, "c%u %uB: %u live %u cached %u free", sp->cls, s->cl.size[sp->cls], live,
		    ncached, nfree);
}

static void pc_dot_regions(pc_state_t *s, hl_dot_t *d, const pc_dot_targets_t *t)
{
	char label[96], node[32], addr[48];
	for (unsigned i = 0; i < s->ph.nregions; i++) {
		const pc_region_t *rg = &s->ph.regions[i];
		snprintf(label, sizeof label, "region %s: %zu MiB committed", hl_dot_addr(d, (void *)rg->base, addr,
			 sizeof addr), rg->frontier >> 20);
		hl_dot_cluster_begin(d, label);
		snprintf(node, sizeof node, "pcregion%u", i);
		hl_dot_strip_begin(d, node, "spans in address order (alike neighbours folded)", 4);
		pc_dot_run_t run = { -3, 0, 0, 0, 0, 0 };
		for (uintptr_t at = rg->base; at < rg->base + rg->frontier;) {
			pc_span_t *sp = pc_pagemap_get(&s->ph.map, at);
			if (!sp || sp->start != at || !sp->npages)
				break;
			pc_dot_cell(s, d, sp, pc_dot_targeted(t, sp), &run);
			at += sp->npages * PC_PAGE;
		}
		pc_dot_flush(s, d, &run);
		hl_dot_strip_end(d);
		hl_dot_cluster_end(d);
	}
}

/* An edge from head @node to the cell of the span holding @p; while
 * collecting, only notes the span. */
static void pc_dot_edge_to(pc_state_t *s, hl_dot_t *d, pc_dot_targets_t *t, const char *node, const void *p,
			   hl_dot_edge_kind_t k)
{
	pc_span_t *sp = pc_ph_span_of(&s->ph, p);
	if (!sp || sp->region >= s->ph.nregions)
		return;
	if (t->collecting) {
		if (t->n < PC_DOT_TARGETS && !pc_dot_targeted(t, sp))
			t->span[t->n++] = sp;
		return;
	}
	if (!pc_dot_targeted(t, sp))
		return;
	char to[64], port[24];
	pc_dot_port(s, port, sizeof port, sp);
	snprintf(to, sizeof to, "pcregion%u:%s", sp->region, port);
	hl_dot_edge(d, node, to, k, NULL);
}

static void pc_dot_fronts(pc_state_t *s, hl_dot_t *d, pc_dot_targets_t *t)
{
	char node[32], label[96];
	for (unsigned cpu = 0; cpu < s->ncpus && s->mode != PC_MODE_THREAD; cpu++) {
		size_t bytes = pc_cpu_cached_bytes(s, cpu);
		if (!bytes)
			continue;
		snprintf(node, sizeof node, "pccpu%u", cpu);
		snprintf(label, sizeof label, "cpu %u (%s): %zu B cached", cpu, s->mode == PC_MODE_RSEQ ? "rseq" : "lock",
			 bytes);
		if (!t->collecting)
			hl_dot_list_node(d, node, label);
		pc_slab_t *sl = pc_slab(s, cpu);
		for (unsigned cls = 1, shown = 0; cls < s->cl.n && shown < 3; cls++)
			if (sl->stacks[cls].current) {
				pc_dot_edge_to(s, d, t, node, pc_slots(s, sl, cls)[sl->stacks[cls].current - 1], HL_EDGE_CACHE);
				shown++;
			}
	}
	unsigned n = 0;
	for (pc_tcache_t *tc = s->tcaches; tc && n < PC_DOT_HEADS; tc = tc->next, n++) {
		snprintf(node, sizeof node, "pcthread%u", n);
		snprintf(label, sizeof label, "thread cache %u: %zu B", n, tc->size);
		if (!t->collecting)
			hl_dot_list_node(d, node, label);
		for (unsigned cls = 1, shown = 0; cls < s->cl.n && shown < 3; cls++)
			if (tc->head[cls]) {
				pc_dot_edge_to(s, d, t, node, tc->head[cls], HL_EDGE_CACHE);
				shown++;
			}
	}
}

static void pc_dot_middle(pc_state_t *s, hl_dot_t *d, pc_dot_targets_t *t)
{
	char node[32], label[96];
	unsigned shown = 0;
	for (unsigned cls = 1; cls < s->cl.n && shown < PC_DOT_HEADS; cls++) {
		pc_transfer_t *tr = &s->transfer[cls];
		if (tr->count) {
			snprintf(node, sizeof node, "pctransfer%u", cls);
			snprintf(label, sizeof label, "transfer c%u (%u B): %u objects", cls, s->cl.size[cls], tr->count);
			if (!t->collecting)
				hl_dot_list_node(d, node, label);
			pc_dot_edge_to(s, d, t, node, tr->slots[tr->count - 1], HL_EDGE_LIST);
			shown++;
		}
		pc_central_t *c = &s->central[cls];
		for (unsigned b = PC_FULLNESS; b-- > 0;)
			if (c->lists[b].head) {
				snprintf(node, sizeof node, "pccentral%u", cls);
				snprintf(label, sizeof label, "central c%u: %zu spans, fullest list %u", cls, c->spans, b);
				if (!t->collecting)
					hl_dot_list_node(d, node, label);
				pc_dot_edge_to(s, d, t, node, (void *)c->lists[b].head->start, HL_EDGE_LIST);
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
	static pc_dot_targets_t t;   /* under the page heap's lock */
	t.n = 0;
	t.collecting = true;
	pc_dot_fronts(s, d, &t);
	pc_dot_middle(s, d, &t);
	t.collecting = false;
	pc_dot_regions(s, d, &t);
	pc_dot_fronts(s, d, &t);
	pc_dot_middle(s, d, &t);
	pthread_mutex_unlock(&s->ph.lock);
}
