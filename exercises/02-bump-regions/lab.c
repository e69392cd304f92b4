/*
 * Lab 2: bump and region allocation.
 *
 * A parser-like workload: for each document, build a tree of 50,000 nodes
 * (each node 24..120 bytes, children linked from their parent), use it,
 * and throw it away.  With `bump` the tree dies in one hl_reset; with a
 * general allocator every node needs its own free.  The program prints the
 * work each way (allocator calls, bytes committed, and — for people, not
 * for the check — the time per document).  A last row runs the same
 * parser on a region written inline in this program, without heaplab:
 * what a bump allocator costs when nothing stands between it and the
 * caller.  LAB_CONF=ledger:off in the environment turns off the core's
 * ledger of live bytes for every heap.
 */
#include "config.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "../lab.h"

enum { NODES = 50000 };

typedef struct node {
	struct node *first_child, *next_sibling;
	uint32_t kind, length;
	char text[];
} node_t;

/* A small deterministic generator, so every run builds the same trees. */
static uint32_t lcg(uint32_t *s) { return *s = *s * 1103515245u + 12345u; }

/* A region inlined into the program, as a parser would write it: what
 * bump costs without heaplab's core (dispatch, counters, ledger, lock). */
static struct {
	char *base;
	size_t used, size;
} inline_region;

static void *inline_alloc(hl_heap_t *h, size_t n)
{
	(void)h;
	size_t at = inline_region.used;
	inline_region.used += (n + 15) & ~(size_t)15;
	return inline_region.used <= inline_region.size ? inline_region.base + at : NULL;
}

typedef void *(*alloc_fn)(hl_heap_t *h, size_t n);

/* Builds one document's tree: each new node hangs under a recent one. */
static node_t *build(hl_heap_t *h, alloc_fn alloc, uint32_t seed, node_t **all)
{
	for (size_t i = 0; i < NODES; i++) {
		uint32_t len = 8 + lcg(&seed) % 96;
		node_t *n = alloc(h, sizeof *n + len);
		memset(n, 0, sizeof *n);
		n->kind = lcg(&seed) % 7;
		n->length = len;
		n->text[0] = (char)('a' + n->kind);
		if (i) {
			node_t *parent = all[i - 1 - lcg(&seed) % (i < 16 ? i : 16)];
			n->next_sibling = parent->first_child;
			parent->first_child = n;
		}
		all[i] = n;
	}
	return all[0];
}

static size_t count(const node_t *n)
{
	size_t c = 0;
	for (; n; n = n->next_sibling)
		c += 1 + count(n->first_child);
	return c;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

typedef struct result {
	double calls;         /* allocator calls per document */
	double committed_mib; /* committed after the last document */
	double first_mib;     /* committed after the first document */
	double us;            /* microseconds per document (shown, never checked) */
	void *first_root[2];  /* where the first two documents' roots landed */
	bool ok;
} result_t;

static void run(const char *policy, int docs, result_t *r)
{
	memset(r, 0, sizeof *r);
	hl_heap_t *h = lab_heap(policy, getenv("LAB_CONF"));
	if (!h)
		return;
	static node_t *all[NODES];
	bool region = !strcmp(policy, "bump");
	double t0 = now(), calls0 = lab_stat(h, "ops.malloc") + lab_stat(h, "ops.free");
	r->ok = true;
	for (int d = 0; d < docs; d++) {
		node_t *root = build(h, hl_malloc, 7u + (uint32_t)d, all);
		r->ok &= count(root) == NODES;
		if (d < 2)
			r->first_root[d] = root;
		if (d == 0) {
			lab_snapshot(h, policy, "one document's tree");
			r->first_mib = lab_stat(h, "committed_bytes") / (1 << 20);
		}
		if (region)
			hl_reset(h);
		else
			for (size_t i = 0; i < NODES; i++)
				hl_free(h, all[i]);
	}
	double calls = lab_stat(h, "ops.malloc") + lab_stat(h, "ops.free") - calls0 + (region ? docs : 0);
	r->us = (now() - t0) / docs * 1e6;
	r->calls = calls / docs;
	r->committed_mib = lab_stat(h, "committed_bytes") / (1 << 20);
	hl_heap_destroy(h);
}

/* Microseconds per document with the inline region (shown, never checked). */
static double inline_run(int docs)
{
	static node_t *all[NODES];
	inline_region.size = (size_t)NODES * 160;
	inline_region.base = malloc(inline_region.size);
	double t0 = now();
	for (int d = 0; d < docs; d++) {
		inline_region.used = 0;
		count(build(NULL, inline_alloc, 7u + (uint32_t)d, all));
	}
	double us = (now() - t0) / docs * 1e6;
	free(inline_region.base);
	return us;
}

int main(int argc, char **argv)
{
	lab_begin(argc, argv, "Lab 2: bump and region allocation");
	int docs = lab_full() ? 200 : 10;
	static const char *const policies[] = { "bump", "firstfit", "bins", "slab", "sharded", NULL };
	result_t r[5];
	printf("%d documents of %d nodes each\n\n%-9s %14s %14s %14s\n", docs, NODES, "policy", "calls/doc",
	       "committed MiB", "us/doc (info)");
	for (int i = 0; policies[i]; i++) {
		run(policies[i], docs, &r[i]);
		if (r[i].ok)
			printf("%-9s %14.0f %14.1f %14.0f\n", policies[i], r[i].calls, r[i].committed_mib, r[i].us);
	}
	printf("%-9s %14d %14s %14.0f\n", "inline", NODES, "-", inline_run(docs));
	if (!r[0].ok) {
		lab_skip("bump is not compiled in");
		return lab_end();
	}
	lab_expect(r[0].calls == NODES + 1, "bump: one call per node plus one reset per document (%.0f)", r[0].calls);
	lab_expect(r[0].first_root[0] == r[0].first_root[1], "bump: after hl_reset the next tree starts where the last one did");
	lab_expect(r[0].committed_mib <= 1.1 * r[0].first_mib,
		   "bump: %d documents commit no more than one (%.1f vs %.1f MiB)", docs, r[0].committed_mib, r[0].first_mib);
	for (int i = 1; policies[i]; i++)
		if (r[i].ok)
			lab_expect(r[i].calls == 2 * NODES, "%s: every node costs a malloc and a free (%.0f calls)", policies[i],
				   r[i].calls);
	return lab_end();
}
