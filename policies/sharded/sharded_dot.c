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
	if (owner) {
		char tnode[32];
		snprintf(tnode, sizeof tnode, "thread%u", owner->tid);
		hl_dot_edge(d, tnode, node, HL_EDGE_OWNER, NULL);
	}
}

static void shd_dot_segment(hl_dot_t *d, shd_state_t *st, const shd_segment_t *s, unsigned sidx)
{
	char label[128], addr[64];
	shd_heap_t *owner = atomic_load(&s->owner);
	snprintf(label, sizeof label, "segment %s (%zu MiB, %u pages, %s)", hl_dot_addr(d, s, addr, sizeof addr),
		 s->size >> 20, s->used, owner ? "owned" : "abandoned");
	hl_dot_cluster_begin(d, label);
	for (size_t i = shd_next_used(s, SHD_INFO_SLICES); i < SHD_SLICES; i = shd_next_page(s, i))
		shd_dot_page(d, st, s, &s->pages[i], sidx);
	hl_dot_cluster_end(d);
}

void shd_snapshot(void *vst, hl_dot_t *d)
{
	shd_state_t *st = vst;
	pthread_mutex_lock(&st->lock);
	for (shd_heap_t *hp = st->heaps; hp; hp = hp->next) {
		char node[32], label[48];
		snprintf(node, sizeof node, "thread%u", hp->tid);
		snprintf(label, sizeof label, "thread %u heap", hp->tid);
		hl_dot_list_node(d, node, label);
		hl_dot_raw(d, "  %s [color=\"%s\", fontcolor=\"%s\", penwidth=2];\n", node,
			shd_thread_color(hp), shd_thread_color(hp));
	}
	unsigned sidx = 0;
	for (shd_segment_t *s = st->segs; s; s = s->gnext)
		shd_dot_segment(d, st, s, sidx++);
	pthread_mutex_unlock(&st->lock);
}
