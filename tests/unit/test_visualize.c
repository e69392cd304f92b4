/*
 * Facts the pictures rest on, for every compiled-in policy:
 *  - a snapshot is deterministic: two heaps given the same ops draw
 *    byte-identical DOT (so no raw pointer, no clock, no hash order);
 *  - the walker's live blocks are the trace's live ids, after every op
 *    (the expected count comes from the trace text, not from a heap);
 *    but where free gives nothing back (the table's frees_nothing: a
 *    bump allocator) its blocks stay live until a reset, and there the
 *    count only never goes down and never falls below the trace's;
 *  - where a policy draws one cell per block (the table's cells,
 *    HL_CELLS_EVERY_BLOCK), its live cells (with runs "label x N" counted
 *    N times) are the walker's live blocks;
 *  - every colour a picture uses is explained by its legend, and every
 *    edge into a cell points at a port the picture defines.
 *  - the visualize library (libhlvis) is usable without the command: a
 *    walk keeps a frame per op and reports progress through its callback,
 *    and a failure is left in hl_last_error(), never printed.
 *  - the heap diff: each shape of change gets its name; the
 *    moments a walk rebuilds from its per-op deltas equal the walker's
 *    own list taken at that op; and a block that an op changed has its
 *    cell, by id, in that op's picture (the stepper outlines it).
 * The teaching trace is visualize/traces/teach.rep.
 */
#include "config.h"
#include <stdlib.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>
#include "testlib.h"
#include "policy.h" /* frees_nothing, cells */
#include "../../visualize/vis.h"

enum { MAX_OPS = 64, MAX_IDS = 64 };

/** DOT text after each op of one replay. */
typedef struct shots {
	char *dot[MAX_OPS];
	int walker_live[MAX_OPS];   /**< live blocks hl_walk saw after op i */
	size_t n;
} shots_t;

static hl_trace_t *teach(void)
{
	char path[1024];
	hl_trace_t *t = hl_trace_load(tl_trace_path("../visualize/traces/teach.rep", path, sizeof path));
	ck_assert_msg(t != NULL, "%s", hl_last_error());
	ck_assert_uint_le(hl_trace_ops(t), MAX_OPS);
	return t;
}

static int count_live(const hl_block_t *b, void *arg)
{
	*(int *)arg += b->state == HL_BLOCK_LIVE;
	return 0;
}

static int shoot(const hl_replay_t *rp, void *arg)
{
	hl_heap_t *h = hl_replay_heap(rp);
	size_t op = hl_replay_op(rp);
	shots_t *s = arg;
	size_t len;
	FILE *f = open_memstream(&s->dot[op], &len);
	ck_assert_ptr_nonnull(f);
	char title[32];
	snprintf(title, sizeof title, "op %zu", op + 1);
	ck_assert_int_eq(hl_snapshot_dot(h, f, title), 0);
	fclose(f);
	s->walker_live[op] = 0;
	hl_walk(h, count_live, &s->walker_live[op]);
	s->n = op + 1;
	return 0;
}

static void replay_shots(const char *policy, const hl_trace_t *t, shots_t *s)
{
	memset(s, 0, sizeof *s);
	hl_heap_t *h = tl_heap(policy, NULL);
	hl_replay_opts_t o = { .verify = true, .check_heap = true, .check_every = 1, .after_op = shoot, .arg = s };
	hl_replay_result_t r;
	ck_assert_msg(hl_replay(h, t, &o, &r) == 0, "%s: %s", policy, r.message);
	hl_heap_destroy(h);
}

static void free_shots(shots_t *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->dot[i]);
}

START_TEST(snapshots_are_deterministic)
{
	/* percpu's rseq front caches on the CPU the thread runs on, and its
	 * picture shows each CPU's cache: both replays stay on one CPU */
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu() >= 0 ? sched_getcpu() : 0, &one);
	ck_assert_int_eq(sched_setaffinity(0, sizeof one, &one), 0);
	hl_trace_t *t = teach();
	for (size_t p = 0; p < hl_policy_count(); p++) {
		shots_t a, b;
		replay_shots(hl_policy_name(p), t, &a);
		replay_shots(hl_policy_name(p), t, &b);
		ck_assert_uint_eq(a.n, hl_trace_ops(t));
		for (size_t i = 0; i < a.n; i++)
			ck_assert_msg(!strcmp(a.dot[i], b.dot[i]), "%s: op %zu drew two different pictures",
				      hl_policy_name(p), i + 1);
		free_shots(&a);
		free_shots(&b);
	}
	hl_trace_free(t);
}
END_TEST

/* Live ids after each op, read from the trace's ops alone. */
static void live_from_trace(const hl_trace_t *t, int *live_after)
{
	bool live[MAX_IDS] = { false };
	int n = 0;
	for (size_t i = 0; i < hl_trace_ops(t); i++) {
		char k = hl_trace_op_kind(t, i);
		long id = hl_trace_op_id(t, i);
		if (k != 't' && k != 's' && id >= 0) {
			ck_assert_int_lt(id, MAX_IDS);
			bool now = k != 'f' && !(k == 'r' && hl_trace_op_size(t, i) == 0);
			n += (int)now - (int)live[id];
			live[id] = now;
		}
		live_after[i] = n;
	}
}

START_TEST(walker_live_blocks_are_the_trace_live_ids)
{
	hl_trace_t *t = teach();
	int expect[MAX_OPS];
	live_from_trace(t, expect);
	for (size_t p = 0; p < hl_policy_count(); p++) {
		const char *name = hl_policy_name(p);
		bool never_frees = hl_policy_find(name)->frees_nothing;
		shots_t s;
		replay_shots(name, t, &s);
		for (size_t i = 0; i < s.n; i++) {
			int seen = s.walker_live[i];
			if (never_frees)
				ck_assert_msg(seen >= expect[i] && (i == 0 || seen >= s.walker_live[i - 1]),
					      "%s: after op %zu the walker sees %d live (trace %d, before %d)", name, i + 1,
					      seen, expect[i], i ? s.walker_live[i - 1] : 0);
			else
				ck_assert_msg(seen == expect[i], "%s: after op %zu the walker sees %d live, the trace %d", name,
					      i + 1, seen, expect[i]);
		}
		free_shots(&s);
	}
	hl_trace_free(t);
}
END_TEST

/* The part of a picture before its legend. */
static char *body_of(const char *dot)
{
	const char *legend = strstr(dot, "subgraph cluster_legend");
	ck_assert_ptr_nonnull(legend);
	return strndup(dot, (size_t)(legend - dot));
}

/* Cells filled with @p color, a folded run "x N" counting N. */
static int cells_of_color(const char *body, const char *color)
{
	char open[64];
	snprintf(open, sizeof open, "<TD BGCOLOR=\"%s\"", color);
	int n = 0;
	for (const char *c = strstr(body, open); c; c = strstr(c + 1, open)) {
		const char *end = strstr(c, "</TD>");
		const char *times = strstr(c, "&#215;");
		n += times && times < end ? atoi(times + strlen("&#215;")) : 1;
	}
	return n;
}

/* Whether @p policy's snapshot draws one cell per block (the others group
 * blocks into slabs, pools or pages and draw counts). */
static bool draws_every_block(const char *policy)
{
	return hl_policy_find(policy)->cells == HL_CELLS_EVERY_BLOCK;
}

/* Whether a block that @p policy's op changed may share its cell with
 * others in the picture (runs of equal blocks, small spans). */
static bool draws_runs(const char *policy)
{
	return hl_policy_find(policy)->cells == HL_CELLS_RUNS;
}

START_TEST(live_cells_are_the_live_blocks)
{
	hl_trace_t *t = teach();
	const char *live = hl_block_state_color(HL_BLOCK_LIVE);
	for (size_t p = 0; p < hl_policy_count(); p++) {
		if (!draws_every_block(hl_policy_name(p)))
			continue;
		shots_t s;
		replay_shots(hl_policy_name(p), t, &s);
		for (size_t i = 0; i < s.n; i++) {
			char *body = body_of(s.dot[i]);
			ck_assert_msg(cells_of_color(body, live) == s.walker_live[i], "%s: op %zu: %d live cells, %d live blocks",
				      hl_policy_name(p), i + 1, cells_of_color(body, live), s.walker_live[i]);
			free(body);
		}
		free_shots(&s);
	}
	hl_trace_free(t);
}
END_TEST

/* Every BGCOLOR of the body is a colour of the legend. */
static void check_legend(const char *policy, size_t op, const char *dot)
{
	const char *legend = strstr(dot, "subgraph cluster_legend");
	for (const char *c = strstr(dot, "BGCOLOR=\""); c && c < legend; c = strstr(c + 1, "BGCOLOR=\"")) {
		char color[16];
		snprintf(color, sizeof color, "%.7s", c + 9);
		char want[32];
		snprintf(want, sizeof want, "BGCOLOR=\"%s\"", color);
		ck_assert_msg(strstr(legend, want) != NULL, "%s: op %zu uses %s, which the legend does not explain",
			      policy, op, color);
	}
}

/* Every edge "a -> b:port" ends at a PORT="port" of the picture. */
static void check_ports(const char *policy, size_t op, const char *dot)
{
	for (const char *e = strstr(dot, " -> "); e; e = strstr(e + 1, " -> ")) {
		const char *to = e + 4;
		size_t node = strcspn(to, ": [;\n");
		if (to[node] != ':')
			continue;
		const char *port = to + node + 1;
		char want[80];
		snprintf(want, sizeof want, "PORT=\"%.*s\"", (int)strcspn(port, " [;\n"), port);
		ck_assert_msg(strstr(dot, want) != NULL, "%s: op %zu: an edge points at a missing %s", policy, op, want);
	}
}

START_TEST(legend_and_ports_are_consistent)
{
	hl_trace_t *t = teach();
	for (size_t p = 0; p < hl_policy_count(); p++) {
		shots_t s;
		replay_shots(hl_policy_name(p), t, &s);
		for (size_t i = 0; i < s.n; i++) {
			check_legend(hl_policy_name(p), i + 1, s.dot[i]);
			check_ports(hl_policy_name(p), i + 1, s.dot[i]);
		}
		free_shots(&s);
	}
	hl_trace_free(t);
}
END_TEST

/* ---- the visualize library, called directly ---------------------------- */

static size_t progress_calls, progress_last, progress_total;

static void count_progress(const char *what, size_t done, size_t total)
{
	ck_assert_str_eq(what, "teach");
	ck_assert_uint_ge(done, progress_last); /* never goes back */
	progress_calls++;
	progress_last = done;
	progress_total = total;
}

START_TEST(walk_keeps_a_frame_per_op)
{
	hl_trace_t *t = teach();
	size_t nops = hl_trace_ops(t);
	for (size_t p = 0; p < hl_policy_count(); p++) {
		progress_calls = progress_last = progress_total = 0;
		vis_walk_t w;
		int rc = vis_walk_trace(hl_policy_name(p), NULL, t, 1, "teach", count_progress, &w);
		ck_assert_msg(rc == 0, "%s: %s", hl_policy_name(p), w.result.message);
		ck_assert_uint_eq(w.nframes, nops + 1);
		ck_assert_uint_eq(w.kept, nops + 1); /* every op keeps its picture */
		for (size_t i = 0; i < w.nframes; i++) {
			ck_assert_int_eq(w.frames[i].op, (long)i - 1);
			ck_assert_ptr_nonnull(w.frames[i].dot);
			if (i > 0 && hl_trace_op_label(t, i - 1))
				ck_assert_str_eq(w.frames[i].label, hl_trace_op_label(t, i - 1));
		}
		/* one call per op, then the closing call with done == total */
		ck_assert_uint_eq(progress_calls, nops + 1);
		ck_assert_uint_eq(progress_last, nops);
		ck_assert_uint_eq(progress_total, nops);
		vis_walk_free(&w);
	}
	hl_trace_free(t);
}
END_TEST

START_TEST(walk_failure_is_left_in_last_error)
{
	hl_trace_t *t = teach();
	char path[] = "/tmp/heaplab-vis-stderr-XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	int saved = dup(2);
	dup2(fd, 2);
	vis_walk_t w;
	int rc = vis_walk_trace("no-such-policy", NULL, t, 1, "teach", NULL, &w);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	off_t printed = lseek(fd, 0, SEEK_END);
	close(fd);
	unlink(path);
	ck_assert_int_eq(rc, 2);
	ck_assert_msg(strstr(hl_last_error(), "no-such-policy") != NULL, "last error: %s", hl_last_error());
	ck_assert_int_eq(printed, 0); /* the library said nothing itself */
	vis_walk_free(&w);
	hl_trace_free(t);
}
END_TEST

static vis_block_t blk(int region, size_t off, size_t size, hl_block_state_t st)
{
	vis_block_t b = { .region = region, .off = off, .size = size, .state = st };
	snprintf(b.name, sizeof b.name, "region#%d+0x%zx", region, off);
	return b;
}

START_TEST(diff_names_each_shape_of_change)
{
	vis_block_t before[] = {
		blk(1, 0, 32, HL_BLOCK_LIVE),        /* stays */
		blk(1, 32, 64, HL_BLOCK_LIVE),       /* freed */
		blk(1, 96, 1000, HL_BLOCK_TOP),      /* carved: live + top */
		blk(1, 1200, 64, HL_BLOCK_FREE),     /* merged with the next */
		blk(1, 1264, 64, HL_BLOCK_FREE),
		blk(3, 0, 4096, HL_BLOCK_LIVE),      /* its region goes back */
	};
	vis_block_t after[] = {
		blk(1, 0, 32, HL_BLOCK_LIVE),
		blk(1, 32, 64, HL_BLOCK_FREE),
		blk(1, 96, 48, HL_BLOCK_LIVE),
		blk(1, 144, 952, HL_BLOCK_TOP),
		blk(1, 1200, 128, HL_BLOCK_FREE),
		blk(2, 0, 8192, HL_BLOCK_LIVE),      /* a new region */
	};
	vis_blocks_t a = { before, 6, 6 }, b = { after, 6, 6 };
	vis_diff_t d;
	ck_assert_int_eq(vis_diff(&a, &b, &d), 0);
	ck_assert_uint_eq(d.n, 5);
	vis_change_kind_t want[] = { VIS_CHANGED, VIS_SPLIT, VIS_MERGED, VIS_APPEARED, VIS_DISAPPEARED };
	size_t nbefore[] = { 1, 1, 2, 0, 1 }, nafter[] = { 1, 2, 1, 1, 0 };
	for (size_t i = 0; i < d.n; i++) {
		ck_assert_msg(d.c[i].kind == want[i], "change %zu is %s", i, vis_change_name(d.c[i].kind));
		ck_assert_uint_eq(d.c[i].nbefore, nbefore[i]);
		ck_assert_uint_eq(d.c[i].nafter, nafter[i]);
	}
	vis_diff_free(&d);
}
END_TEST

/* glibc's chunks: a live block's usable bytes include the next chunk's
 * first word, and a live block is named by its payload, a free one by its
 * chunk.  Freeing the second of two live blocks is one change. */
START_TEST(diff_is_not_fooled_by_a_lent_word)
{
	vis_block_t before[] = { blk(1, 0x310, 40, HL_BLOCK_LIVE), blk(1, 0x340, 104, HL_BLOCK_LIVE),
				 blk(1, 0x3a0, 4096, HL_BLOCK_TOP) };
	vis_block_t after[] = { blk(1, 0x310, 40, HL_BLOCK_LIVE), blk(1, 0x330, 112, HL_BLOCK_CACHED),
				blk(1, 0x3a0, 4096, HL_BLOCK_TOP) };
	vis_blocks_t a = { before, 3, 3 }, b = { after, 3, 3 };
	vis_diff_t d;
	ck_assert_int_eq(vis_diff(&a, &b, &d), 0);
	ck_assert_uint_eq(d.n, 1);
	ck_assert_int_eq(d.c[0].kind, VIS_CHANGED);
	ck_assert_str_eq(b.b[d.c[0].after].name, "region#1+0x330");
	vis_diff_free(&d);
}
END_TEST

typedef struct moments {
	vis_blocks_t at[MAX_OPS + 1];
} moments_t;

static int take_moment(const hl_replay_t *rp, void *arg)
{
	moments_t *m = arg;
	ck_assert_int_eq(vis_blocks_capture(hl_replay_heap(rp), &m->at[hl_replay_op(rp) + 1]), 0);
	return 0;
}

static bool same_blocks(const vis_blocks_t *x, const vis_blocks_t *y)
{
	if (x->n != y->n)
		return false;
	for (size_t i = 0; i < x->n; i++)
		if (strcmp(x->b[i].name, y->b[i].name) || x->b[i].size != y->b[i].size ||
		    x->b[i].state != y->b[i].state)
			return false;
	return true;
}

START_TEST(walk_rebuilds_every_moment_from_its_deltas)
{
	hl_trace_t *t = teach();
	size_t nops = hl_trace_ops(t);
	for (size_t p = 0; p < hl_policy_count(); p++) {
		const char *policy = hl_policy_name(p);
		/* the walker's own lists, op by op, in a replay of their own */
		moments_t *m = calloc(1, sizeof *m);
		hl_heap_t *h = tl_heap(policy, NULL);
		ck_assert_int_eq(vis_blocks_capture(h, &m->at[0]), 0);
		hl_replay_opts_t o = { .verify = true, .after_op = take_moment, .arg = m };
		hl_replay_result_t r;
		ck_assert_msg(hl_replay(h, t, &o, &r) == 0, "%s: %s", policy, r.message);
		hl_heap_destroy(h);

		vis_walk_t w;
		ck_assert_int_eq(vis_walk_trace_blocks(policy, NULL, t, 1, "teach", NULL, &w), 0);
		size_t changed_cells = 0;
		for (size_t k = 0; k <= nops; k++) {
			vis_blocks_t got = { 0 };
			ck_assert_int_eq(vis_walk_blocks_at(&w, k, &got), 0);
			ck_assert_msg(same_blocks(&got, &m->at[k]), "%s: the blocks after op %zu differ", policy, k);
			if (k == 0) {
				vis_blocks_free(&got);
				continue;
			}
			/* what op k changed has its cell in op k's picture, unless
			 * the policy draws runs (HL_CELLS_RUNS: equal blocks in one
			 * cell) or the block is other than live, free or cached
			 * (such blocks may be drawn as runs by any policy) */
			vis_diff_t d;
			ck_assert_int_eq(vis_diff(&m->at[k - 1], &got, &d), 0);
			for (size_t c = 0; c < d.n; c++)
				for (size_t i = d.c[c].after; i < d.c[c].after + d.c[c].nafter; i++) {
					const vis_block_t *b = &got.b[i];
					if (draws_runs(policy) || b->state > HL_BLOCK_CACHED)
						continue;
					char id[80];
					snprintf(id, sizeof id, "ID=\"%s\"", b->id);
					ck_assert_msg(strstr(w.frames[k].dot, id) != NULL, "%s: op %zu changed %s, not in its picture",
						      policy, k, b->name);
					changed_cells++;
				}
			vis_diff_free(&d);
			vis_blocks_free(&got);
		}
		if (!draws_runs(policy))
			ck_assert_msg(changed_cells > 0, "%s: no changed block was found in a picture", policy);
		vis_walk_free(&w);
		for (size_t k = 0; k <= nops; k++)
			vis_blocks_free(&m->at[k]);
		free(m);
	}
	hl_trace_free(t);
}
END_TEST

static Suite *visualize_suite(void)
{
	Suite *s = suite_create("visualize");
	TCase *tc = tcase_create("snapshots");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, snapshots_are_deterministic);
	tcase_add_test(tc, walker_live_blocks_are_the_trace_live_ids);
	tcase_add_test(tc, live_cells_are_the_live_blocks);
	tcase_add_test(tc, legend_and_ports_are_consistent);
	suite_add_tcase(s, tc);
	TCase *lib = tcase_create("library");
	tcase_set_timeout(lib, 60);
	tcase_add_test(lib, walk_keeps_a_frame_per_op);
	tcase_add_test(lib, walk_failure_is_left_in_last_error);
	tcase_add_test(lib, diff_names_each_shape_of_change);
	tcase_add_test(lib, diff_is_not_fooled_by_a_lent_word);
	tcase_add_test(lib, walk_rebuilds_every_moment_from_its_deltas);
	suite_add_tcase(s, lib);
	return s;
}

TL_MAIN(visualize_suite)
