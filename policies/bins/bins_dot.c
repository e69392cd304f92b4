/*
 * bins_dot.c -- the snapshot of policy `bins`: one cluster per arena with
 * its chunks in address order (one strip per region: the break or a
 * sub-heap), its non-empty bins as list heads pointing into the chunks,
 * then each thread's tcache, then the mapped chunks.  Long lists draw
 * their first BN_DOT_EDGES links and say how many more there are.  A cell
 * reads "<chunk size> <flags>" with the flags A, M, P of its size word.
 *
 * A cell's port is "c<offset in its region>" and a strip is named
 * "r<region number>", so an endpoint is stable from run to run.  Tcaches
 * of other threads are read without their owners' cooperation: take a
 * snapshot when the threads are quiet.
 */
#include "bins_tcache.h"
#include <stdio.h>
#include <string.h>

enum { BN_DOT_EDGES = 4, BN_DOT_COLUMNS = 12 };

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
	char port[24];
	(void)a;
	bn_strip_switch(st, sp, c);
	hl_os_locate(st->os, c, &off);
	snprintf(port, sizeof port, "c%zx", off);
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
		if (bn_is_tcache_record(st, c))
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

/** One list head per non-empty bin, with edges to its first chunks. */
static void bn_dot_bins(bn_state_t *st, bn_arena_t *a, hl_dot_t *d)
{
	char node[32], label[80], to[32];
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
		hl_dot_list_node(d, node, label);
		unsigned k = 0;
		for (bn_chunk_t *c = b->fd; c != b && k < BN_DOT_EDGES; c = c->fd, k++)
			hl_dot_edge(d, node, bn_port(st, c, to, sizeof to), HL_EDGE_LIST, k ? NULL : "fd");
		if (n > BN_DOT_EDGES) {
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
		hl_dot_list_node(d, node, label);
		unsigned k = 0;
		for (bn_chunk_t *c = a->fast[i]; c && k < BN_DOT_EDGES; c = c->fd, k++)
			hl_dot_edge(d, node, bn_port(st, c, to, sizeof to), HL_EDGE_LIST, NULL);
	}
}

static void bn_dot_arena(bn_state_t *st, bn_arena_t *a, hl_dot_t *d)
{
	char label[96];
	bn_lock(a);
	snprintf(label, sizeof label, "arena %u%s: %zu bytes from the system, %u thread(s)", a->index,
		 a->index ? "" : " (main, on the break)", a->system, a->attached);
	hl_dot_cluster_begin(d, label);
	struct bn_strip s = { d, -1 };
	bn_arena_chunks(st, a, bn_dot_chunk, &s);
	if (s.region >= 0)
		hl_dot_strip_end(d);
	bn_dot_bins(st, a, d);
	hl_dot_cluster_end(d);
	bn_unlock(a);
}

/** Each thread's tcache: a head per non-empty bin, edges to its chunks. */
static void bn_dot_tcaches(bn_state_t *st, hl_dot_t *d)
{
	char node[32], label[80], to[32];
	pthread_mutex_lock(&st->list_lock);
	for (bn_tcache_t *tc = st->tcaches; tc; tc = tc->next) {
		for (unsigned i = 0; i < BN_TC_BINS; i++) {
			if (!tc->entries[i])
				continue;
			snprintf(node, sizeof node, "t%u_tc%u", tc->thread, i);
			snprintf(label, sizeof label, "thread %u tcache[%u] %u B (%u)", tc->thread, i,
				 BN_MINSIZE + 16 * i, tc->counts[i]);
			hl_dot_list_node(d, node, label);
			unsigned k = 0;
			for (bn_tentry_t *e = tc->entries[i]; e && k < BN_DOT_EDGES; k++) {
				hl_dot_edge(d, node, bn_port(st, bn_mem2chunk(e), to, sizeof to), HL_EDGE_CACHE,
					    k ? NULL : "next");
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
			bn_chunk_t *c = bn_at(mh, mh->offset);
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
	bn_arena_t *a = &st->main;
	do {
		bn_dot_arena(st, a, d);
		a = bn_ring_next(a);
	} while (a != &st->main);
	bn_dot_tcaches(st, d);
	bn_dot_mmaps(st, d);
}
