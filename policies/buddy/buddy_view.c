/**
 * @file buddy_view.c
 * @brief Looking inside `buddy`: the checker, the walker, the statistics
 *        (internal fragmentation: requested against rounded bytes; the
 *        free blocks of each order, as /proc/buddyinfo shows Linux's) and
 *        the picture.
 *
 *   ┌ region#0: 4 MiB ───────────────────────────────────────┐
 *   │ [live 128][free 128 ·A1][free 256 ·B1][free 512] ...    │
 *   └─────────────────────────────────────────────────────────┘
 *   free[7] 128 B: 1 → A      free[8] 256 B: 1 → B   ...
 */
#include "config.h"
#include <stdio.h>
#include "buddy.h"

/* ---- the checker ------------------------------------------------------------ */

/** Totals of the region walk, compared with the state's counters. */
typedef struct bd_tally {
	size_t live[BD_ORDERS];
	size_t requested, rounded;
} bd_tally_t;

/** One list element of free[k]: what is wrong with it; false stops the walk. */
static bool bd_check_element(bd_state_t *s, hl_report_t *rep, char *prev, char *x, unsigned k)
{
	bd_region_t *r = bd_region_of(s, x);

	if (!HL_EXPECT(rep, r && ((size_t)(x - r->base) & (bd_bytes(k) - 1)) == 0,
		       "free[%u]: element %p is not a block of order %u in a region", k, (void *)x, k))
		return false;
	uint8_t *m = bd_map_at(s, r, x);
	if (!HL_EXPECT(rep, !(*m & BD_MARK), "free[%u]: block %p is listed twice", k, (void *)x))
		return false;
	if (!HL_EXPECT(rep, (*m & ~BD_MARK) == (BD_HEAD | BD_FREE | k),
		       "free[%u]: block %p is not a free block of order %u in the map (map byte 0x%02x)", k,
		       (void *)x, k, *m))
		return false;
	*m |= BD_MARK;
	HL_EXPECT(rep, bd_links(x)->prev == prev, "free[%u]: back link of %p is %p, not %p", k, (void *)x,
		  (void *)bd_links(x)->prev, (void *)prev);
	return true;
}

static void bd_check_lists(bd_state_t *s, hl_report_t *rep)
{
	size_t limit = s->nregions * bd_units(s);

	for (unsigned k = s->min_order; k <= s->max_order; k++) {
		size_t n = 0;
		char *prev = NULL;
		for (char *x = s->free[k]; x; prev = x, x = bd_links(x)->next, n++)
			if (!HL_EXPECT(rep, n <= limit, "free[%u]: longer than the heap allows (a cycle?)", k) ||
			    !bd_check_element(s, rep, prev, x, k))
				break;
		HL_EXPECT(rep, n == s->nfree[k], "free[%u]: %zu blocks on the list, count says %zu", k, n, s->nfree[k]);
	}
}

/** Units inside block [u, u + span) after its head hold 0. */
static bool bd_inside_clear(const bd_region_t *r, size_t u, size_t span)
{
	for (size_t i = u + 1; i < u + span; i++)
		if (r->map[i])
			return false;
	return true;
}

/** One block of the region walk at unit @p u; returns its span in units,
 *  0 to stop. */
static size_t bd_check_block(bd_state_t *s, hl_report_t *rep, bd_region_t *r, size_t u, bd_tally_t *t)
{
	uint8_t m = r->map[u];
	unsigned k = m & BD_ORDER_MASK;
	size_t span = (size_t)1 << (k - s->min_order), units = bd_units(s);
	char *b = r->base + (u << s->min_order);

	if (!HL_EXPECT_AT(rep, (m & BD_HEAD) && k >= s->min_order && k <= s->max_order && (u & (span - 1)) == 0 &&
				       u + span <= units, b, "region#%d: no block of a sound order starts at offset 0x%zx (map byte 0x%02x)",
			  r->seq, (size_t)(b - r->base), m))
		return 0;
	r->map[u] = m & (uint8_t)~BD_MARK;
	HL_EXPECT_AT(rep, bd_inside_clear(r, u, span), b, "region#%d: a unit inside the block at 0x%zx has a map byte",
		     r->seq, (size_t)(b - r->base));
	if (m & BD_FREE) {
		HL_EXPECT_AT(rep, m & BD_MARK, b, "region#%d: free block at 0x%zx (order %u) is on no free list", r->seq,
			     (size_t)(b - r->base), k);
		if (k < s->max_order) {
			uint8_t bm = *bd_map_at(s, r, bd_buddy(r, b, k)) & (uint8_t)~BD_MARK;
			HL_EXPECT_AT(rep, bm != (BD_HEAD | BD_FREE | k), b,
				     "region#%d: free block at 0x%zx and its buddy are both free of order %u (not merged)",
				     r->seq, (size_t)(b - r->base), k);
		}
	} else {
		HL_EXPECT_AT(rep, r->req[u] <= bd_bytes(k), b, "region#%d: live block at 0x%zx asked %u bytes, more than its %zu",
			     r->seq, (size_t)(b - r->base), r->req[u], bd_bytes(k));
		t->live[k]++;
		t->requested += r->req[u];
		t->rounded += bd_bytes(k);
	}
	return span;
}

static void bd_check_regions(bd_state_t *s, hl_report_t *rep, bd_tally_t *t)
{
	size_t units = bd_units(s);

	for (size_t i = 0; i < s->nregions; i++) {
		bd_region_t *r = &s->regions[i];
		size_t u = 0, span;
		while (u < units && (span = bd_check_block(s, rep, r, u, t)) != 0)
			u += span;
		HL_EXPECT(rep, u == units, "region#%d: blocks tile %zu of %zu units", r->seq, u, units);
		for (size_t v = 0; v < units; v++)   /* a walk cut short leaves marks */
			r->map[v] &= (uint8_t)~BD_MARK;
		HL_EXPECT(rep, bd_region_of(s, r->base) == r, "region#%d: not found by its own base", r->seq);
	}
}

int bd_check(void *state, hl_report_t *rep)
{
	bd_state_t *s = state;
	bd_tally_t t = { { 0 }, 0, 0 };
	size_t large = 0, bytes = 0;

	pthread_mutex_lock(&s->lock);
	bd_check_lists(s, rep);
	bd_check_regions(s, rep, &t);
	for (unsigned k = s->min_order; k <= s->max_order; k++)
		HL_EXPECT(rep, t.live[k] == s->nlive[k], "order %u: %zu live blocks in the regions, count says %zu", k,
			  t.live[k], s->nlive[k]);
	HL_EXPECT(rep, t.requested == s->requested && t.rounded == s->rounded,
		  "live blocks ask %zu bytes in %zu, counts say %zu in %zu", t.requested, t.rounded, s->requested,
		  s->rounded);
	for (size_t i = 0; i < s->large_high; i++)
		if (s->large[i].base) {
			large++;
			bytes += s->large[i].size;
			HL_EXPECT(rep, bd_large_of(s, s->large[i].base) == &s->large[i],
				  "large block %p: its mapping does not name it", (void *)s->large[i].base);
		}
	HL_EXPECT(rep, large == s->large_live && bytes == s->large_bytes,
		  "large blocks: %zu of %zu bytes found, counts say %zu of %zu", large, bytes, s->large_live,
		  s->large_bytes);
	pthread_mutex_unlock(&s->lock);
	return rep->problems;
}

/* ---- the walker ------------------------------------------------------------- */

static int bd_walk_region(bd_state_t *s, const bd_region_t *r, hl_walk_fn fn, void *arg)
{
	size_t units = bd_units(s);

	for (size_t u = 0; u < units;) {
		uint8_t m = r->map[u];
		unsigned k = m & BD_ORDER_MASK;
		if (!(m & BD_HEAD) || k < s->min_order || k > s->max_order)
			return 0;   /* damage: the checker says where */
		hl_block_t b = { r->base + (u << s->min_order), bd_bytes(k), m & BD_FREE ? HL_BLOCK_FREE : HL_BLOCK_LIVE,
				 r->seq, k };
		if (fn(&b, arg))
			return 1;
		u += (size_t)1 << (k - s->min_order);
	}
	return 0;
}

int bd_walk(void *state, hl_walk_fn fn, void *arg)
{
	bd_state_t *s = state;
	int rc = 0;

	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; !rc && i < s->nregions; i++)
		rc = bd_walk_region(s, &s->regions[i], fn, arg);
	for (size_t i = 0; !rc && i < s->large_high; i++) {
		const bd_large_t *l = &s->large[i];
		if (l->base) {
			hl_block_t b = { l->base, l->size, HL_BLOCK_LIVE, l->seq, 0 };
			rc = fn(&b, arg);
		}
	}
	pthread_mutex_unlock(&s->lock);
	return rc;
}

/* ---- statistics ------------------------------------------------------------- */

static void bd_stats_orders(bd_state_t *s, hl_statw_t *w, const char *key, const size_t *count)
{
	char name[16];

	hl_statw_object(w, key);
	for (unsigned k = s->min_order; k <= s->max_order; k++) {
		snprintf(name, sizeof name, "order%u", k);
		hl_statw_u64(w, name, count[k]);
	}
	hl_statw_end(w);
}

void bd_stats(void *state, hl_statw_t *w)
{
	bd_state_t *s = state;
	size_t nfree = 0, free_bytes = 0, nlive = 0, largest = 0;

	pthread_mutex_lock(&s->lock);
	for (unsigned k = s->min_order; k <= s->max_order; k++) {
		nfree += s->nfree[k];
		nlive += s->nlive[k];
		free_bytes += s->nfree[k] * bd_bytes(k);
		if (s->nfree[k])
			largest = bd_bytes(k);
	}
	hl_statw_u64(w, "min_order", s->min_order);
	hl_statw_u64(w, "max_order", s->max_order);
	hl_statw_u64(w, "min_block", bd_bytes(s->min_order));
	hl_statw_u64(w, "region_bytes", bd_region_bytes(s));
	hl_statw_u64(w, "regions", s->nregions);
	hl_statw_u64(w, "live_blocks", nlive);
	hl_statw_u64(w, "free_blocks", nfree);
	hl_statw_u64(w, "free_bytes", free_bytes);
	hl_statw_u64(w, "largest_free_block", largest);
	hl_statw_u64(w, "requested_bytes", s->requested);
	hl_statw_u64(w, "rounded_bytes", s->rounded);
	hl_statw_u64(w, "internal_fragmentation_bytes", s->rounded - s->requested);
	hl_statw_f64(w, "internal_fragmentation_percent",
		     s->rounded ? 100.0 * (double)(s->rounded - s->requested) / (double)s->rounded : 0.0);
	bd_stats_orders(s, w, "free_by_order", s->nfree);
	bd_stats_orders(s, w, "live_by_order", s->nlive);
	hl_statw_u64(w, "splits", s->c.splits);
	hl_statw_u64(w, "merges", s->c.merges);
	hl_statw_u64(w, "merges_refused", s->c.refused);
	hl_statw_u64(w, "large_blocks", s->large_live);
	hl_statw_u64(w, "large_bytes", s->large_bytes);
	hl_statw_u64(w, "large_requested_bytes", s->large_requested);
	hl_statw_u64(w, "large_maps", s->c.maps);
	hl_statw_u64(w, "large_unmaps", s->c.unmaps);
	hl_statw_u64(w, "decommitted_bytes", s->c.decommitted);
	pthread_mutex_unlock(&s->lock);
}

/* ---- the picture ------------------------------------------------------------ */

/* Regions drawn block by block (the others are counted in a note), and
 * list elements marked per order. */
enum { BD_DOT_REGIONS = 4, BD_DOT_MARKS = 4, BD_DOT_COLUMNS = 16 };

/** Port of free block @p b: its region and offset, so pictures are stable. */
static const char *bd_port(const bd_state_t *s, const bd_region_t *r, const char *b, char *buf, size_t len)
{
	snprintf(buf, len, "r%zu_%zx", (size_t)(r - s->regions), (size_t)(b - r->base));
	return buf;
}

/** True when free block @p b of order @p k is among the first
 *  BD_DOT_MARKS of its list (the ones that get a port and a mark). */
static bool bd_marked(const bd_state_t *s, const char *b, unsigned k)
{
	int n = 0;

	for (char *x = s->free[k]; x && n < BD_DOT_MARKS; x = bd_links(x)->next, n++)
		if (x == b)
			return true;
	return false;
}

static void bd_dot_region(bd_state_t *s, hl_dot_t *d, const bd_region_t *r)
{
	size_t units = bd_units(s), blocks = 0;
	char label[128], node[32], port[40], size[32];

	for (size_t u = 0; u < units && (r->map[u] & BD_HEAD); u += (size_t)1 << ((r->map[u] & BD_ORDER_MASK) - s->min_order))
		blocks++;
	snprintf(label, sizeof label, "region#%d: %s, orders %u to %u, blocks in address order", r->seq,
		 hl_dot_size(bd_region_bytes(s), size, sizeof size), s->min_order, s->max_order);
	snprintf(node, sizeof node, "bdregion%zu", (size_t)(r - s->regions));
	hl_dot_cluster_begin(d, label);
	hl_dot_strip_begin(d, node, "address →", blocks > BD_DOT_COLUMNS ? BD_DOT_COLUMNS : 0);
	for (size_t u = 0; u < units;) {
		uint8_t m = r->map[u];
		unsigned k = m & BD_ORDER_MASK;
		char *b = r->base + (u << s->min_order);
		if (!(m & BD_HEAD) || k < s->min_order || k > s->max_order)
			break;
		if (m & BD_FREE)
			hl_dot_block_cell(d, HL_BLOCK_FREE, b, bd_marked(s, b, k) ? bd_port(s, r, b, port, sizeof port) : NULL,
					  "free %s", hl_dot_size(bd_bytes(k), size, sizeof size));
		else
			hl_dot_block_cell(d, HL_BLOCK_LIVE, b, NULL, "%s (asked %u)",
					  hl_dot_size(bd_bytes(k), size, sizeof size), r->req[u]);
		hl_dot_cell_bytes(d, bd_bytes(k));
		u += (size_t)1 << (k - s->min_order);
	}
	hl_dot_strip_end(d);
	hl_dot_cluster_end(d);
}

/** The head of free[k] and marks on its first blocks (those in a drawn region). */
static void bd_dot_list(bd_state_t *s, hl_dot_t *d, unsigned k)
{
	char node[32], label[96], from[64], to[64], port[40], size[32];
	int n = 0;

	snprintf(node, sizeof node, "bdfree%u", k);
	snprintf(label, sizeof label, "free[%u] %s: %zu", k, hl_dot_size(bd_bytes(k), size, sizeof size), s->nfree[k]);
	hl_dot_list_node(d, node, label);
	snprintf(from, sizeof from, "%s", node);
	for (char *x = s->free[k]; x && n < BD_DOT_MARKS; x = bd_links(x)->next, n++) {
		bd_region_t *r = bd_region_of(s, x);
		if (!r || r - s->regions >= BD_DOT_REGIONS)
			break;
		snprintf(to, sizeof to, "bdregion%zu:%s", (size_t)(r - s->regions), bd_port(s, r, x, port, sizeof port));
		hl_dot_edge(d, from, to, HL_EDGE_LIST, NULL);
		snprintf(from, sizeof from, "%s", to);
	}
}

void bd_snapshot(void *state, hl_dot_t *d)
{
	bd_state_t *s = state;
	char text[160], a[32], b[32];

	pthread_mutex_lock(&s->lock);
	if (!s->nregions && !s->large_live)
		hl_dot_note(d, "bdempty", "no region reserved yet");
	for (size_t i = 0; i < s->nregions && i < BD_DOT_REGIONS; i++)
		bd_dot_region(s, d, &s->regions[i]);
	if (s->nregions > BD_DOT_REGIONS) {
		snprintf(text, sizeof text, "%zu more regions of %s not drawn", s->nregions - BD_DOT_REGIONS,
			 hl_dot_size(bd_region_bytes(s), a, sizeof a));
		hl_dot_note(d, "bdmore", text);
	}
	for (unsigned k = s->min_order; k <= s->max_order; k++)
		if (s->nfree[k])
			bd_dot_list(s, d, k);
	if (s->rounded) {
		snprintf(text, sizeof text, "internal fragmentation: %s asked, %s handed out (%.1f%% lost to rounding)",
			 hl_dot_size(s->requested, a, sizeof a), hl_dot_size(s->rounded, b, sizeof b),
			 100.0 * (double)(s->rounded - s->requested) / (double)s->rounded);
		hl_dot_note(d, "bdfrag", text);
	}
	if (s->large_live) {
		snprintf(text, sizeof text, "%zu large blocks in mappings of their own: %s", s->large_live,
			 hl_dot_size(s->large_bytes, a, sizeof a));
		hl_dot_note(d, "bdlarge", text);
	}
	pthread_mutex_unlock(&s->lock);
}
