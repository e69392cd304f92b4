/*
 * bins_dot.c -- the snapshot of policy `bins`: one cluster per arena with
 * its chunks in address order (one strip per region: the break or a
 * sub-heap), its non-empty bins as list heads pointing into the chunks,
 * then each thread's tcache, then the mapped chunks.  Long lists draw
 * their first BN_DOT_EDGES links and say how many more there are.  A cell
 * reads "<chunk size> <flags>" with the flags A, M, P of its size word.
 *
 * A cell's port is "c<offset in its region>" and a strip is named
 * "r<region number>", so an endpoint is stable from run to run.  Only the
 * chunks an edge ends in get a port (and so a cell of their own): they
 * are found first, and the other chunks fold into runs.  Tcaches
 * of other threads are read without their owners' cooperation: take a
 * snapshot when the threads are quiet.
 */
#include "bins_tcache.h"
#include <stdio.h>
#include <string.h>

enum { BN_DOT_EDGES = 4, BN_DOT_COLUMNS = 12 };

/* The chunks edges end in, found before the strips are drawn (a hash set
 * on the stack: drawing allocates from no heap). */
enum { BN_DOT_TARGETS = 1024, BN_DOT_SLOTS = 2 * BN_DOT_TARGETS };
typedef struct bn_targets {
	const void *slot[BN_DOT_SLOTS];
	unsigned n;
	bool collecting;   /* finding them: nothing is drawn */
} bn_targets_t;

/* Whether chunk @p c is a target; with @p add, makes it one while room remains. */
static bool bn_target(bn_targets_t *t, const void *c, bool add)
{
	for (unsigned h = (unsigned)(((uintptr_t)c >> 4) * 2654435761u) % BN_DOT_SLOTS;; h = (h + 1) % BN_DOT_SLOTS) {
		if (t->slot[h] == c)
			return true;
		if (!t->slot[h]) {
			if (!add || t->n == BN_DOT_TARGETS)
				return false;
			t->slot[h] = c;
			t->n++;
			return true;
		}
	}
}

/** "r<k>:c<off>" for chunk @p c. */
static const char *bn_port(bn_state_t *st, const void *c, char *buf, size_t len)
{
	size_t off = 0;
	int k = hl_os_locate(st->os, c, &off);
	snprintf(buf, len, "r%d:c%zx", k, off);
	return buf;
}

struct bn_strip {
	hl_dot_t *d;
	int region;      /* region of the strip being drawn, -1 before any */
	bn_targets_t *t; /* the chunks that get a port */
};

static void bn_strip_switch(bn_state_t *st, struct bn_strip *s, const void *c)
{
	size_t off;
	int k = hl_os_locate(st->os, c, &off);
	if (k == s->region)
		return;
	if (s->region >= 0)
		hl_dot_strip_end(s->d);
	char node[24], label[64], addr[48];
	snprintf(node, sizeof node, "r%d", k);
	snprintf(label, sizeof label, "%s", hl_dot_addr(s->d, c, addr, sizeof addr));
	hl_dot_strip_begin(s->d, node, label, BN_DOT_COLUMNS);
	s->region = k;
}

static int bn_dot_chunk(bn_state_t *st, bn_arena_t *a, bn_chunk_t *c, hl_block_state_t s, void *arg)
{
	struct bn_strip *sp = arg;
	size_t off, sz = bn_csize(c);
	char port_name[24];
	(void)a;
	bn_strip_switch(st, sp, c);
	hl_os_locate(st->os, c, &off);
	snprintf(port_name, sizeof port_name, "c%zx", off);
	const char *port = bn_target(sp->t, c, false) ? port_name : NULL;
	char flags[8] = "";
	if (c->size & BN_FLAGS)
		snprintf(flags, sizeof flags, " %s%s%s", c->size & BN_A ? "A" : "", c->size & BN_M ? "M" : "",
			 c->size & BN_P ? "P" : "");
	if (c->size & BN_A)
		hl_dot_legend_note(sp->d, "A", "the chunk is not in the main arena");
	if (c->size & BN_M)
		hl_dot_legend_note(sp->d, "M", "the chunk has a mapping of its own");
	if (c->size & BN_P)
		hl_dot_legend_note(sp->d, "P", "the chunk below is in use (PREV_INUSE)");
	/* the address the walker gives the block (bn_walk_one) */
	const void *b = s == HL_BLOCK_LIVE ? bn_chunk2mem(c) : (void *)c;
	switch (s) {
	case HL_BLOCK_LIVE:
		hl_dot_block_cell(sp->d, s, b, NULL, "%zu%s", sz, flags);
		break;
	case HL_BLOCK_TOP:
		hl_dot_block_cell(sp->d, s, b, port, "top %zu%s", sz, flags);
		break;
	case HL_BLOCK_META:
		if (bn_is_tcache_record(a, c))
			hl_dot_block_cell(sp->d, s, b, NULL, "tcache %zu%s", sz, flags);
		else
			hl_dot_block_cell(sp->d, s, b, NULL, "fencepost");
		break;
	default:
		hl_dot_block_cell(sp->d, s, b, port, "%zu%s", sz, flags);
		break;
	}
	return 0;
}

/* An edge from head @p node to chunk @p c; while collecting, notes the chunk. */
static void bn_dot_link(bn_state_t *st, hl_dot_t *d, bn_targets_t *t, const char *node, const bn_chunk_t *c,
			hl_dot_edge_kind_t kind, const char *label)
{
	char to[32];
	if (t->collecting)
		bn_target(t, c, true);
	else if (bn_target(t, c, false))
		hl_dot_edge(d, node, bn_port(st, c, to, sizeof to), kind, label);
}

/** One list head per non-empty bin, with edges to its first chunks
 *  (while collecting, only the chunks are noted). */
static void bn_dot_bins(bn_state_t *st, bn_arena_t *a, hl_dot_t *d, bn_targets_t *t)
{
	char node[32], label[80];
	for (unsigned i = BN_UNSORTED; i < BN_NBINS; i++) {
		bn_chunk_t *b = bn_bin(a, i);
		size_t n = 0;
		for (bn_chunk_t *c = b->fd; c != b; c = c->fd)
			n++;
		if (!n)
			continue;
		snprintf(node, sizeof node, "a%u_bin%u", a->index, i);
		if (i == BN_UNSORTED)
			snprintf(label, sizeof label, "unsorted (%zu)", n);
		else
			snprintf(label, sizeof label, "%s bin %u (%zu)", i < BN_NSMALL ? "small" : "large", i, n);
		if (!t->collecting)
			hl_dot_list_node(d, node, label);
		unsigned k = 0;
		for (bn_chunk_t *c = b->fd; c != b && k < BN_DOT_EDGES; c = c->fd, k++)
			bn_dot_link(st, d, t, node, c, HL_EDGE_LIST, k ? NULL : "fd");
		if (n > BN_DOT_EDGES && !t->collecting) {
			snprintf(label, sizeof label, "+%zu more", n - BN_DOT_EDGES);
			snprintf(node + strlen(node), sizeof node - strlen(node), "_more");
			hl_dot_note(d, node, label);
		}
	}
	for (unsigned i = 0; i < BN_NFAST; i++) {
		if (!a->fast[i])
			continue;
		snprintf(node, sizeof node, "a%u_fast%u", a->index, i);
		snprintf(label, sizeof label, "fastbin %u (%u B)", i, 32 + 16 * i);
		if (!t->collecting)
			hl_dot_list_node(d, node, label);
		unsigned k = 0;
		for (bn_chunk_t *c = a->fast[i]; c && k < BN_DOT_EDGES; c = c->fd, k++)
			bn_dot_link(st, d, t, node, c, HL_EDGE_LIST, NULL);
	}
}

static void bn_dot_arena(bn_state_t *st, bn_arena_t *a, hl_dot_t *d, bn_targets_t *t)
{
	char label[96];
	bn_lock(a);
	if (t->collecting) {
		bn_dot_bins(st, a, d, t);
		bn_unlock(a);
		return;
	}
	snprintf(label, sizeof label, "arena %u%s: %zu bytes from the system, %u thread(s)", a->index,
		 a->index ? "" : " (main, on the break)", a->system, a->attached);
	hl_dot_cluster_begin(d, label);
	struct bn_strip s = { d, -1, t };
	bn_arena_chunks(st, a, bn_dot_chunk, &s);
	if (s.region >= 0)
		hl_dot_strip_end(d);
	bn_dot_bins(st, a, d, t);
	hl_dot_cluster_end(d);
	bn_unlock(a);
}

/** Each thread's tcache: a head per non-empty bin, edges to its chunks
 *  (while collecting, only the chunks are noted). */
static void bn_dot_tcaches(bn_state_t *st, hl_dot_t *d, bn_targets_t *t)
{
	char node[32], label[80];
	pthread_mutex_lock(&st->list_lock);
	for (bn_tcache_t *tc = st->tcaches; tc; tc = tc->next) {
		for (unsigned i = 0; i < BN_TC_BINS; i++) {
			if (!tc->entries[i])
				continue;
			snprintf(node, sizeof node, "t%u_tc%u", tc->thread, i);
			snprintf(label, sizeof label, "thread %u tcache[%u] %u B (%u)", tc->thread, i,
				 BN_MINSIZE + 16 * i, tc->counts[i]);
			if (!t->collecting)
				hl_dot_list_node(d, node, label);
			unsigned k = 0;
			for (bn_tentry_t *e = tc->entries[i]; e && k < BN_DOT_EDGES; k++) {
				bn_dot_link(st, d, t, node, bn_mem2chunk(e), HL_EDGE_CACHE, k ? NULL : "next");
				e = bn_tentry_next(e);
			}
		}
	}
	pthread_mutex_unlock(&st->list_lock);
}

static void bn_dot_mmaps(bn_state_t *st, hl_dot_t *d)
{
	char addr[48];
	pthread_mutex_lock(&st->mmap_lock);
	if (st->mmaps) {
		hl_dot_cluster_begin(d, "chunks with their own mapping");
		hl_dot_strip_begin(d, "mmapped", "mapped chunks", BN_DOT_COLUMNS);
		for (bn_mmap_t *mh = st->mmaps; mh; mh = mh->next) {
			bn_chunk_t *c = bn_at(mh->base, mh->offset);
			hl_dot_cell(d, HL_BLOCK_LIVE, NULL, "%s %zu M", hl_dot_addr(d, c, addr, sizeof addr),
				    bn_csize(c));
		}
		hl_dot_strip_end(d);
		hl_dot_cluster_end(d);
	}
	pthread_mutex_unlock(&st->mmap_lock);
}

void bn_snapshot(void *stp, hl_dot_t *d)
{
	bn_state_t *st = stp;
	bn_targets_t t;
	memset(&t, 0, sizeof t);
	for (t.collecting = true;; t.collecting = false) {
		bn_arena_t *a = &st->main;
		do {
			bn_dot_arena(st, a, d, &t);
			a = bn_ring_next(a);
		} while (a != &st->main);
		bn_dot_tcaches(st, d, &t);
		if (!t.collecting)
			break;
	}
	bn_dot_mmaps(st, d);
}
