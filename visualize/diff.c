/*
 * The heap diff: what changed between two moments of a replay.
 *
 * A moment is the list of blocks the walker (hl_walk) reports, each named
 * by its stable address ("region#k+0xoff").  Two moments are compared by
 * overlap (see overlap(): the same start, or more than a word shared):
 * blocks of the earlier and the later moment whose byte ranges
 * overlap (directly or through a chain) form one group, and the group's
 * shape says what happened:
 *
 *   before  after   kind
 *     1       1     changed (state, size or start moved), or nothing
 *     1      2+     split        e.g. top → live 48 + top
 *    2+       1     merged       e.g. free 64 + free 48 + top → top
 *    2+      2+     reshaped
 *     1       0     disappeared  (its region was unmapped)
 *     0       1     appeared     (a new region)
 *
 * The same rule runs in the stepper page (stepper.js), which rebuilds each
 * moment from the per-op deltas recorded here; the browser test checks
 * that both give the same blocks.
 */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "vis.h"

static int capture_one(const hl_block_t *b, void *arg)
{
	vis_capture_t *c = arg;
	vis_blocks_t *s = c->out;
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		vis_block_t *nb = realloc(s->b, cap * sizeof *nb);
		if (!nb) {
			c->failed = true;
			return 1;
		}
		s->b = nb;
		s->cap = cap;
	}
	vis_block_t *v = &s->b[s->n++];
	memset(v, 0, sizeof *v);
	v->region = b->region;
	v->size = b->size;
	v->state = b->state;
	v->addr = b->addr;
	return 0;
}

int vis_block_place_cmp(const vis_block_t *a, const vis_block_t *b)
{
	if (a->region != b->region)
		return a->region < b->region ? -1 : 1;
	return a->off < b->off ? -1 : a->off > b->off;
}

bool vis_block_same(const vis_block_t *a, const vis_block_t *b)
{
	return a->region == b->region && a->off == b->off && a->size == b->size && a->state == b->state;
}

static int by_place(const void *x, const void *y)
{
	return vis_block_place_cmp(x, y);
}

int vis_blocks_capture(hl_heap_t *h, vis_blocks_t *out)
{
	vis_capture_t c = { out, false };
	out->n = 0;
	hl_walk(h, capture_one, &c);
	if (c.failed)
		return vis_fail("out of memory for the heap's block list");
	/* names after the walk: the walker may hold the policy's locks */
	for (size_t i = 0; i < out->n; i++) {
		vis_block_t *v = &out->b[i];
		hl_addr_name(h, v->addr, v->name, sizeof v->name);
		hl_block_id(h, v->addr, v->id, sizeof v->id);
		const char *plus = strchr(v->name, '+');
		v->off = plus ? strtoull(plus + 1, NULL, 16) : 0;
	}
	if (out->n)    /* an empty heap has no list to sort (b may be NULL) */
		qsort(out->b, out->n, sizeof *out->b, by_place);
	return 0;
}

void vis_blocks_free(vis_blocks_t *s)
{
	free(s->b);
	memset(s, 0, sizeof *s);
}

/* Whether two blocks are the same memory seen at two moments: they start
 * at the same byte, or share more than one word.  A word is not enough:
 * glibc lends a chunk's first word (prev_size) to the block before it, so
 * a live block's usable bytes reach 8 bytes into its free neighbour. */
static bool overlap(const vis_blocks_t *x, size_t i, const vis_blocks_t *y, size_t j)
{
	enum { LENT = 8 };
	const vis_block_t *a = &x->b[i], *b = &y->b[j];
	if (a->region != b->region)
		return false;
	if (a->off == b->off)
		return true;
	size_t lo = a->off > b->off ? a->off : b->off;
	size_t ea = a->off + a->size, eb = b->off + b->size, hi = ea < eb ? ea : eb;
	return hi > lo && hi - lo > LENT;
}

/* Whether a block that starts the group reaches the next block on either
 * side: the group grows while the next block of A or B overlaps a block
 * already in it.  Both lists are sorted and hold disjoint blocks, so a
 * group is a run in each list. */
static bool joins(const vis_blocks_t *x, size_t xi, size_t xe, const vis_blocks_t *y, size_t next)
{
	for (size_t i = xi; i < xe; i++)
		if (overlap(x, i, y, next))
			return true;
	return false;
}

static vis_change_kind_t kind_of(size_t nbefore, size_t nafter)
{
	if (nbefore == 0)
		return VIS_APPEARED;
	if (nafter == 0)
		return VIS_DISAPPEARED;
	if (nbefore == 1 && nafter == 1)
		return VIS_CHANGED;
	if (nbefore == 1)
		return VIS_SPLIT;
	return nafter == 1 ? VIS_MERGED : VIS_RESHAPED;
}

static int push(vis_diff_t *d, vis_change_t c)
{
	if (d->n == d->cap) {
		size_t cap = d->cap ? 2 * d->cap : 16;
		vis_change_t *nc = realloc(d->c, cap * sizeof *nc);
		if (!nc)
			return vis_fail("out of memory for the heap diff");
		d->c = nc;
		d->cap = cap;
	}
	d->c[d->n++] = c;
	return 0;
}

/* Whether block @p b sorts before block @p a (region, then offset). */
static bool earlier(const vis_block_t *b, const vis_block_t *a)
{
	return vis_block_place_cmp(b, a) < 0;
}

int vis_diff(const vis_blocks_t *a, const vis_blocks_t *b, vis_diff_t *d)
{
	memset(d, 0, sizeof *d);
	size_t i = 0, j = 0;
	while (i < a->n || j < b->n) {
		size_t ie = i, je = j;
		/* seed the group with whichever block comes first */
		if (j == b->n || (i < a->n && !earlier(&b->b[j], &a->b[i])))
			ie++;
		else
			je++;
		for (bool grew = true; grew;) {
			grew = false;
			if (ie < a->n && joins(b, j, je, a, ie)) {
				ie++;
				grew = true;
			}
			if (je < b->n && joins(a, i, ie, b, je)) {
				je++;
				grew = true;
			}
		}
		size_t nb = ie - i, na = je - j;
		if (!(nb == 1 && na == 1 && vis_block_same(&a->b[i], &b->b[j]))) {
			vis_change_t c = { kind_of(nb, na), i, nb, j, na };
			if (push(d, c) < 0)
				return -1;
		}
		i = ie;
		j = je;
	}
	return 0;
}

void vis_diff_free(vis_diff_t *d)
{
	free(d->c);
	memset(d, 0, sizeof *d);
}

const char *vis_change_name(vis_change_kind_t k)
{
	static const char *const names[] = { "changed", "split", "merged", "reshaped", "appeared",
					     "disappeared" };
	return k < sizeof names / sizeof names[0] ? names[k] : "?";
}
