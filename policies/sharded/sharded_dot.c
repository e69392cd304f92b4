/*
 * sharded_dot.c — the snapshot of the `sharded` policy.
 *
 *   ┌ segment region#k (thread 1) ──────────────────────────────┐
 *   │ page 64 B  [live ×12][f][l][t][live ×3][unused ×990]      │
 *   └───────────────▲───▲──▲───────────────────────────────────┘
 *         free ─────┘   │  └──── thread_free   (edge kinds: list,
 *         local_free ───┘                       cache, remote)
 *   thread 1 ──owner──► page   (one colour per owning thread)
 *
 * Runs of blocks in the same state become one cell "live ×N"; the first
 * few blocks of each list get ports, and edges follow each list for a few
 * links so a student sees its order.
 */
#include "config.h"
#include <stdio.h>
#include <string.h>
#include "sharded_page.h"

enum { SHD_DOT_LINKS = 4 };   /* links drawn per list */

/* One colour per owning thread (grey for abandoned pages). */
static const char *shd_thread_color(const shd_heap_t *hp)
{
	static const char *palette[] = { "#1f77b4", "#d62728", "#2ca02c", "#9467bd",
					 "#ff7f0e", "#8c564b", "#e377c2", "#17becf" };
	return hp ? palette[hp->tid % 8] : "#7f7f7f";
}

/* Block indexes that get ports: the first links of each list. */
static void shd_dot_ports(const shd_page_t *pg, uint8_t *port)
{
	const shd_block_t *heads[3] = { pg->free, pg->local_free,
		(const shd_block_t *)shd_tf_ptr(atomic_load(&pg->thread_free)) };
	for (int l = 0; l < 3; l++) {
		const shd_block_t *b = heads[l];
		for (int k = 0; b && k <= SHD_DOT_LINKS && shd_in_page(pg, b); k++, b = shd_next_raw(pg, b))
			port[((const uint8_t *)b - pg->start) / pg->block_size] = 1;
	}
}

static const char *shd_on_label(uint8_t on)
{
	static const char *labels[] = { "live", "free", "local", "remote", "delayed" };
	return labels[on];
}

/* The block map of one page, as run-length cells. */
static void shd_dot_cells(hl_dot_t *d, const shd_page_t *pg, const shd_marks_t *m, const uint8_t *port)
{
	for (uint32_t i = 0; i < pg->capacity;) {
		uint8_t on = m->on[i];
		hl_block_state_t st = on == SHD_ON_NONE ? HL_BLOCK_LIVE
			: on == SHD_ON_FREE ? HL_BLOCK_FREE : HL_BLOCK_CACHED;
		const void *block = pg->start + (size_t)i * pg->block_size;   /* as shd_walk_page gives it */
		if (port[i]) {
			char name[24];
			snprintf(name, sizeof name, "b%u", i);
			hl_dot_block_cell(d, st, block, name, "%s", shd_on_label(on));
			i++;
			continue;
		}
		uint32_t k = i;
		while (k < pg->capacity && m->on[k] == on && !port[k])
			k++;
		if (k - i == 1)
			hl_dot_block_cell(d, st, block, NULL, "%s", shd_on_label(on));
		else
			hl_dot_cell(d, st, NULL, "%s ×%u", shd_on_label(on), k - i);
		i = k;
	}
	if (pg->capacity < pg->reserved)
		hl_dot_cell(d, HL_BLOCK_TOP, NULL, "unused ×%u", pg->reserved - pg->capacity);
}

/* A list head node and edges along its first links. */
static void shd_dot_list(hl_dot_t *d, const char *node, const char *label, const shd_page_t *pg,
			 const shd_block_t *b, hl_dot_edge_kind_t kind)
{
	if (!b || !shd_in_page(pg, b))
		return;
	char head[64], text[64], from[80], to[80];
	snprintf(head, sizeof head, "%s_%s", node, label);
	snprintf(text, sizeof text, "%s of %s", label, node);
	hl_dot_list_node(d, head, text);
	snprintf(from, sizeof from, "%s", head);
	for (int k = 0; b && k < SHD_DOT_LINKS && shd_in_page(pg, b); k++, b = shd_next_raw(pg, b)) {
		snprintf(to, sizeof to, "%s:b%zu", node, (size_t)((const uint8_t *)b - pg->start) / pg->block_size);
		hl_dot_edge(d, from, to, kind, NULL);
		snprintf(from, sizeof from, "%s", to);
	}
}

static void shd_dot_page(hl_dot_t *d, shd_state_t *st, const shd_segment_t *s, const shd_page_t *pg,
			 unsigned sidx)
{
	shd_marks_t m;
	uint8_t port[SHD_MAX_BLOCKS];
	for (uint32_t i = 0; i < pg->capacity; i++)
		port[i] = 0;
	shd_page_mark(st, pg, &m, NULL);
	shd_dot_ports(pg, port);
	char node[48], label[128];
	size_t idx = shd_page_index((shd_segment_t *)s, pg);
	snprintf(node, sizeof node, "s%u_p%zu", sidx, idx);
	snprintf(label, sizeof label, "page @slice %zu: %zu B blocks, used %u, capacity %u of %u", idx,
		 pg->block_size, pg->used, pg->capacity, pg->reserved);
	hl_dot_strip_begin(d, node, label, 16);
	shd_dot_cells(d, pg, &m, port);
	hl_dot_strip_end(d);
	shd_heap_t *owner = atomic_load(&pg->heap);
	hl_dot_raw(d, "  %s [color=\"%s\", penwidth=2];\n", node, shd_thread_color(owner));
	shd_dot_list(d, node, "free", pg, pg->free, HL_EDGE_LIST);
	shd_dot_list(d, node, "local_free", pg, pg->local_free, HL_EDGE_CACHE);
	shd_dot_list(d, node, "thread_free", pg,
		     (const shd_block_t *)shd_tf_ptr(atomic_load(&pg->thread_free)), HL_EDGE_REMOTE);
}

/* Pages of a segment alike in block size, use and owner: drawn once, with a count. */
typedef struct shd_dot_group {
	size_t block_size;
	uint32_t used, capacity, reserved;
	const shd_heap_t *owner;
	unsigned long n;
} shd_dot_group_t;

enum { SHD_DOT_PAGES = 3, SHD_DOT_GROUPS = 8, SHD_DOT_SEGMENTS = 1 };

static void shd_dot_group(hl_dot_t *d, const shd_dot_group_t *g, unsigned sidx, unsigned k, bool other)
{
	char node[48], label[128], n[32];
	snprintf(node, sizeof node, "s%u_g%u", sidx, k);
	if (other)
		snprintf(label, sizeof label, "× %s other pages: %u used of %u blocks carved, %u fit, in all",
			 hl_dot_count(g->n, n, sizeof n), g->used, g->capacity, g->reserved);
	else
		snprintf(label, sizeof label, "× %s pages of %zu B blocks, used %u, capacity %u of %u each",
			 hl_dot_count(g->n, n, sizeof n), g->block_size, g->used, g->capacity, g->reserved);
	hl_dot_strip_begin(d, node, label, 0);
	if (g->used)
		hl_dot_run_cell(d, HL_BLOCK_LIVE, g->used, 0, "live");
	if (g->capacity > g->used)
		hl_dot_run_cell(d, HL_BLOCK_FREE, g->capacity - g->used, 0, "free or cached");
	if (g->reserved > g->capacity)
		hl_dot_run_cell(d, HL_BLOCK_TOP, g->reserved - g->capacity, 0, "unused");
	hl_dot_strip_end(d);
	if (!other)
		hl_dot_raw(d, "  %s [color=\"%s\", penwidth=2];\n", node, shd_thread_color(g->owner));
}

/* Whether segment @p s is drawn page by page: the first few are. */
static void shd_dot_segment(hl_dot_t *d, shd_state_t *st, const shd_segment_t *s, unsigned sidx)
{
	char label[128], addr[64];
	shd_heap_t *owner = atomic_load(&s->owner);
	snprintf(label, sizeof label, "segment %s (%zu MiB, %u pages, %s)", hl_dot_addr(d, s, addr, sizeof addr),
		 s->size >> 20, s->used, owner ? "owned" : "abandoned");
	hl_dot_cluster_begin(d, label);
	shd_dot_group_t group[SHD_DOT_GROUPS + 1];
	memset(group, 0, sizeof group);
	unsigned drawn = 0, ngroups = 0;
	for (size_t i = shd_next_used(s, SHD_INFO_SLICES); i < SHD_SLICES; i = shd_next_page(s, i)) {
		const shd_page_t *pg = &s->pages[i];
		if (drawn < SHD_DOT_PAGES || s->used <= SHD_DOT_PAGES + 1) {
			shd_dot_page(d, st, s, pg, sidx);
			drawn++;
			continue;
		}
		const shd_heap_t *by = atomic_load(&pg->heap);
		unsigned k;
		for (k = 0; k < ngroups; k++)
			if (group[k].block_size == pg->block_size && group[k].used == pg->used &&
			    group[k].capacity == pg->capacity && group[k].reserved == pg->reserved && group[k].owner == by)
				break;
		if (k == ngroups && ngroups < SHD_DOT_GROUPS)
			group[ngroups++] = (shd_dot_group_t){ pg->block_size, pg->used, pg->capacity, pg->reserved, by, 0 };
		if (k == ngroups) {   /* past the groups drawn: summed in "other" */
			k = SHD_DOT_GROUPS;
			group[k].used += pg->used;
			group[k].capacity += pg->capacity;
			group[k].reserved += pg->reserved;
		}
		group[k].n++;
	}
	for (unsigned k = 0; k <= SHD_DOT_GROUPS; k++)
		if (group[k].n)
			shd_dot_group(d, &group[k], sidx, k, k == SHD_DOT_GROUPS);
	hl_dot_cluster_end(d);
}

/* The segments past the first few, one cell each. */
static void shd_dot_more_segments(hl_dot_t *d, shd_state_t *st, shd_segment_t *from, unsigned n)
{
	char label[128], addr[64], sz[32];
	size_t bytes = 0, pages = 0;
	for (shd_segment_t *s = from; s; s = s->gnext) {
		bytes += s->size;
		pages += s->used;
	}
	snprintf(label, sizeof label, "%u more segments, %s reserved, %zu pages in use", n,
		 hl_dot_size(bytes, sz, sizeof sz), pages);
	hl_dot_cluster_begin(d, label);
	hl_dot_strip_begin(d, "more_segments", "one cell per segment (its pages are not drawn)", 4);
	for (shd_segment_t *s = from; s; s = s->gnext) {
		shd_heap_t *owner = atomic_load(&s->owner);
		hl_dot_cell(d, s->used ? HL_BLOCK_LIVE : HL_BLOCK_FREE, NULL, "%s %s, %u pages%s",
			    hl_dot_addr(d, s, addr, sizeof addr), hl_dot_size(s->size, sz, sizeof sz), s->used,
			    owner ? "" : ", abandoned");
	}
	hl_dot_strip_end(d);
	hl_dot_cluster_end(d);
	(void)st;
}

/* The segment cache: segments parked whole, still committed until purged. */
static void shd_dot_cache(hl_dot_t *d, shd_state_t *st)
{
	size_t n = 0, bytes = 0;
	for (size_t i = 0; i < SHD_CACHE_SLOTS; i++)
		if (st->cache[i]) {
			n++;
			bytes += st->cache[i]->size;
		}
	if (!n)
		return;
	char label[128], sz[32], addr[64];
	snprintf(label, sizeof label, "segment cache: %zu parked segments, %s, kept committed until purged", n,
		 hl_dot_size(bytes, sz, sizeof sz));
	hl_dot_cluster_begin(d, label);
	hl_dot_strip_begin(d, "segment_cache", "slots in order (a new segment takes the lowest)", 4);
	for (size_t i = 0; i < SHD_CACHE_SLOTS; i++)
		if (st->cache[i])
			hl_dot_cell(d, st->cache_expire[i] || st->segment_purge_delay < 0 ? HL_BLOCK_DIRTY : HL_BLOCK_RETURNED,
				    NULL, "%s %s", hl_dot_addr(d, st->cache[i], addr, sizeof addr),
				    hl_dot_size(st->cache[i]->size, sz, sizeof sz));
	hl_dot_strip_end(d);
	hl_dot_cluster_end(d);
}

void shd_snapshot(void *vst, hl_dot_t *d)
{
	shd_state_t *st = vst;
	pthread_mutex_lock(&st->lock);
	for (shd_heap_t *hp = st->heaps; hp; hp = hp->next) {
		char node[32], label[48];
		snprintf(node, sizeof node, "thread%u", hp->tid);
		snprintf(label, sizeof label, "thread %u heap: the pages outlined in its colour", hp->tid);
		hl_dot_list_node(d, node, label);
		hl_dot_raw(d, "  %s [color=\"%s\", fontcolor=\"%s\", penwidth=2];\n", node,
			shd_thread_color(hp), shd_thread_color(hp));
	}
	unsigned sidx = 0, nsegs = 0;
	for (shd_segment_t *s = st->segs; s; s = s->gnext)
		nsegs++;
	shd_segment_t *s = st->segs;
	for (; s && (sidx < SHD_DOT_SEGMENTS || nsegs <= SHD_DOT_SEGMENTS + 1); s = s->gnext)
		shd_dot_segment(d, st, s, sidx++);
	if (s)
		shd_dot_more_segments(d, st, s, nsegs - sidx);
	shd_dot_cache(d, st);
	pthread_mutex_unlock(&st->lock);
}
