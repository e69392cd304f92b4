/*
 * The lockstep: one trace on several policies, op by op.  Each column is
 * a walk (walk.c) on its own replay heap, so frame k of every column is
 * the heap after the same op; beside each frame this file keeps what the
 * divergence rules compare and the page shows: the place of the block the
 * op handed out, and whether that block holds bytes a block the trace
 * freed earlier held.  Then the rules (vis.h says them) and the terminal's
 * table:
 *
 *                                  | bins                              | slab  ...
 *   op line operation           live |  committed   resident    os +op   |  ...   | differs
 *    0      (the empty heap)       0 |        0 B        0 B     3       |  ...   |
 *    1    6 a 0 32                32 |  132.0 KiB   4.00 KiB     6  +3   |  ...   | committed
 *   10   15 a 5 90               234 |  132.0 KiB   4.00 KiB     6     r |  ...   | os reuse
 *
 * Places are counted inside a region ("region#k+0xoff"): a region the
 * page source maps later has a new number, so memory that went back to
 * the kernel and came again at the same address is not a reuse.
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "vis.h"

static const char *const rule_names[VIS_NRULES] = { "os", "reuse", "committed" };

const char *vis_rule_name(vis_rule_t r)
{
	return r >= 0 && r < VIS_NRULES ? rule_names[r] : "?";
}

int vis_rule_parse(const char *name)
{
	for (int r = 0; r < VIS_NRULES; r++)
		if (!strcmp(name, rule_names[r]))
			return r;
	return -1;
}

/* ---- the bytes freed blocks held ----------------------------------------- */

/** Bytes [lo, hi) of a region; a freed range remembers its block's id. */
typedef struct range {
	int region;
	size_t lo, hi;
	long id;
} range_t;

/** Where each trace id's block is, and the bytes freed blocks held (sorted
 *  by region, then lo; no two overlap: a later free owns the bytes). */
typedef struct tracker {
	vis_lockstep_column_t *col;
	range_t *place;          /* by trace id; region -1 when not live */
	long nids;
	range_t *freed;
	size_t nfreed, cap;
} tracker_t;

/* The index of the first freed range that ends after @p lo in @p region
 * (or the first of a later region). */
static size_t first_after(const tracker_t *tk, int region, size_t lo)
{
	size_t a = 0, b = tk->nfreed;
	while (a < b) {
		size_t m = a + (b - a) / 2;
		const range_t *r = &tk->freed[m];
		if (r->region < region || (r->region == region && r->hi <= lo))
			a = m + 1;
		else
			b = m;
	}
	return a;
}

/* A freed range overlapping @p r, or NULL. */
static const range_t *freed_overlap(const tracker_t *tk, const range_t *r)
{
	size_t i = first_after(tk, r->region, r->lo);
	return i < tk->nfreed && tk->freed[i].region == r->region && tk->freed[i].lo < r->hi ? &tk->freed[i] : NULL;
}

static int make_room(tracker_t *tk, size_t more)
{
	if (tk->nfreed + more <= tk->cap)
		return 0;
	size_t cap = tk->cap ? 2 * tk->cap : 64;
	while (cap < tk->nfreed + more)
		cap *= 2;
	range_t *n = realloc(tk->freed, cap * sizeof *n);
	if (!n)
		return vis_fail("out of memory for the freed blocks' places");
	tk->freed = n;
	tk->cap = cap;
	return 0;
}

/* Adds @p r to the freed bytes: the parts of older ranges it covers are
 * now its. */
static int add_freed(tracker_t *tk, const range_t *r)
{
	if (make_room(tk, 2))
		return 2;
	size_t i = first_after(tk, r->region, r->lo);
	range_t *f = tk->freed;
	/* an older range that starts before r and ends inside or after it */
	if (i < tk->nfreed && f[i].region == r->region && f[i].lo < r->lo && f[i].hi > r->lo) {
		range_t tail = f[i];
		f[i].hi = r->lo;
		i++;
		if (tail.hi > r->hi) {   /* r sits inside it: keep its tail */
			tail.lo = r->hi;
			memmove(&f[i + 1], &f[i], (tk->nfreed - i) * sizeof *f);
			f[i] = tail;
			tk->nfreed++;
		}
	}
	/* drop the ranges r covers whole; trim the one it covers in part */
	size_t j = i;
	while (j < tk->nfreed && f[j].region == r->region && f[j].hi <= r->hi)
		j++;
	if (j < tk->nfreed && f[j].region == r->region && f[j].lo < r->hi)
		f[j].lo = r->hi;
	memmove(&f[i + 1], &f[j], (tk->nfreed - j) * sizeof *f);
	f[i] = *r;
	tk->nfreed = tk->nfreed - (j - i) + 1;
	return 0;
}

/* The place of @p p, @p size bytes long; region -1 outside every region. */
static range_t place_of(hl_heap_t *h, const void *p, size_t size, long id)
{
	char name[64];
	range_t r = { -1, 0, 0, id };
	size_t off;
	if (p && sscanf(hl_addr_name(h, p, name, sizeof name), "region#%d+0x%zx", &r.region, &off) == 2) {
		r.lo = off;
		r.hi = off + (size ? size : 1);
	}
	return r;
}

static bool hands_out(char kind)
{
	return kind == 'a' || kind == 'c' || kind == 'm' || kind == 'r';
}

/* After op k - 1 of one column: where its block went, and whether it
 * holds bytes a freed block held. */
static int track(const hl_replay_t *rp, size_t k, void *arg)
{
	tracker_t *tk = arg;
	const hl_trace_t *t = hl_replay_trace(rp);
	hl_heap_t *h = hl_replay_heap(rp);
	size_t i = k - 1;
	char kind = hl_trace_op_kind(t, i);
	long id = hl_trace_op_id(t, i);
	vis_lockstep_op_t *o = &tk->col->op[k];
	o->reused_id = -1;
	if (id < 0 || id >= tk->nids)
		return 0;
	range_t was = tk->place[id];
	if (kind == 'f') {
		tk->place[id].region = -1;
		return was.region >= 0 ? add_freed(tk, &was) : 0;
	}
	if (!hands_out(kind))
		return 0;
	void *p = hl_replay_block(rp, id);
	range_t now = place_of(h, p, hl_trace_op_size(t, i), id);
	if (p) {
		hl_addr_name(h, p, o->addr, sizeof o->addr);
		hl_block_id(h, p, o->block_id, sizeof o->block_id);
	}
	const range_t *f = now.region >= 0 ? freed_overlap(tk, &now) : NULL;
	if (f) {
		o->reused = true;
		o->reused_id = f->id;
	}
	tk->place[id] = now;
	/* a realloc that moved left its old bytes behind: freed too */
	if (kind == 'r' && was.region >= 0 && (was.region != now.region || was.lo != now.lo))
		return add_freed(tk, &was);
	return 0;
}

/* ---- the walks ----------------------------------------------------------- */

int vis_lockstep_walk(const char *const *policies, size_t n, const char *conf, const hl_trace_t *t,
		      const vis_walk_opts_t *o, vis_lockstep_t *ls)
{
	memset(ls, 0, sizeof *ls);
	ls->col = calloc(n, sizeof *ls->col);
	long nids = hl_trace_max_id(t);
	range_t *place = malloc((nids > 0 ? (size_t)nids : 1) * sizeof *place);
	if (!ls->col || !place) {
		free(place);
		return vis_fail("out of memory for %zu columns", n);
	}
	ls->ncols = n;
	int worst = 0;
	for (size_t c = 0; c < n && worst < 2; c++) {
		vis_lockstep_column_t *col = &ls->col[c];
		col->policy = policies[c];
		if (!(col->op = calloc(hl_trace_ops(t) + 1, sizeof *col->op))) {
			worst = vis_fail("out of memory for %s's column", policies[c]);
			break;
		}
		for (long id = 0; id < nids; id++)
			place[id].region = -1;
		tracker_t tk = { col, place, nids, NULL, 0, 0 };
		vis_walk_opts_t wo = *o;
		wo.what = policies[c];
		wo.hook = track;
		wo.arg = &tk;
		col->rc = vis_walk_run(policies[c], conf, t, &wo, &col->walk);
		free(tk.freed);
		worst = col->rc > worst ? col->rc : worst;
		ls->nframes = col->walk.nframes > ls->nframes ? col->walk.nframes : ls->nframes;
	}
	free(place);
	return worst;
}

void vis_lockstep_free(vis_lockstep_t *ls)
{
	for (size_t c = 0; c < ls->ncols; c++) {
		vis_walk_free(&ls->col[c].walk);
		free(ls->col[c].op);
	}
	free(ls->col);
	memset(ls, 0, sizeof *ls);
}

/* ---- the rules ----------------------------------------------------------- */

static bool has(const vis_lockstep_column_t *col, size_t k)
{
	return k < col->walk.nframes;
}

/* Whether committed bytes after frame @p k spread more than @p pct %. */
static bool spread(const vis_lockstep_t *ls, size_t k, double pct)
{
	double lo = -1, hi = 0;
	for (size_t c = 0; c < ls->ncols; c++) {
		if (!has(&ls->col[c], k))
			continue;
		double v = ls->col[c].walk.frames[k].st.committed;
		lo = lo < 0 || v < lo ? v : lo;
		hi = v > hi ? v : hi;
	}
	return lo >= 0 && hi > lo * (1 + pct / 100);
}

bool vis_lockstep_differs(const vis_lockstep_t *ls, size_t k, vis_rule_t r, double pct)
{
	if (k == 0 || k >= ls->nframes)
		return false;
	bool yes = false, no = false;
	for (size_t c = 0; c < ls->ncols; c++) {
		const vis_lockstep_column_t *col = &ls->col[c];
		if (!has(col, k))
			continue;
		const vis_frame_t *f = col->walk.frames;
		bool did = r == VIS_RULE_OS ? f[k].st.oscalls > f[k - 1].st.oscalls
			 : r == VIS_RULE_REUSE ? col->op[k].reused
			 : f[k].st.committed != f[k - 1].st.committed;
		yes |= did;
		no |= !did;
	}
	/* committed: the op moved some column's figure, and they are apart */
	return r == VIS_RULE_COMMITTED ? yes && spread(ls, k, pct) : yes && no;
}

/* ---- the terminal's table ------------------------------------------------ */

enum { OP_WIDTH = 24, CELL_WIDTH = 33 };

static void head(FILE *out, const vis_lockstep_t *ls)
{
	fprintf(out, "%*s", 4 + 1 + 4 + 1 + OP_WIDTH + 1 + 9, "");
	for (size_t c = 0; c < ls->ncols; c++)
		fprintf(out, " | %-*.*s", CELL_WIDTH, CELL_WIDTH, ls->col[c].policy);
	fprintf(out, " |\n%4s %4s %-*s %9s", "op", "line", OP_WIDTH, "operation", "live");
	for (size_t c = 0; c < ls->ncols; c++)
		fprintf(out, " | %10s %10s %5s %3s  ", "committed", "resident", "os", "+op");
	fprintf(out, " | differs\n");
}

static void cell(FILE *out, const vis_lockstep_column_t *col, size_t k)
{
	if (!has(col, k)) {
		fprintf(out, " | %-*s", CELL_WIDTH, k == col->walk.nframes ? "(the replay stopped)" : "");
		return;
	}
	const vis_frame_t *f = &col->walk.frames[k];
	char committed[32], resident[32], now[24] = "";
	if (k > 0 && f->st.oscalls > f[-1].st.oscalls)
		snprintf(now, sizeof now, "+%.0f", f->st.oscalls - f[-1].st.oscalls);
	fprintf(out, " | %10s %10s %5.0f %3s %c", vis_bytes(f->st.committed, committed, sizeof committed),
		vis_bytes(f->st.resident, resident, sizeof resident), f->st.oscalls, now,
		col->op[k].reused ? 'r' : ' ');
}

void vis_lockstep_table(FILE *out, const vis_lockstep_t *ls, const hl_trace_t *t, int only, double pct)
{
	fprintf(out, "heaplab step: %zu ops on", hl_trace_ops(t));
	for (size_t c = 0; c < ls->ncols; c++)
		fprintf(out, "%s %s", c ? "," : "", ls->col[c].policy);
	fprintf(out, "\nafter each op, per policy: committed and resident bytes, the OS calls so far\n"
		     "and those this op made (+op), r: the op's block holds bytes a freed block held.\n"
		     "differs: os (an OS call in one column, none in another), reuse (a freed\n"
		     "block's bytes reused in one column, not in another), committed (the op\n"
		     "changed a column's committed bytes, and the columns' now differ by more\n"
		     "than %g %%)\n\n",
		pct);
	head(out, ls);
	size_t shown = 0;
	for (size_t k = 0; k < ls->nframes; k++) {
		bool any = false;
		for (int r = 0; r < VIS_NRULES; r++)
			any |= vis_lockstep_differs(ls, k, (vis_rule_t)r, pct) && (only < 0 || only == r);
		if (only >= 0 && k > 0 && !any)
			continue;
		const vis_frame_t *f = NULL;
		for (size_t c = 0; c < ls->ncols && !f; c++)
			f = has(&ls->col[c], k) ? &ls->col[c].walk.frames[k] : NULL;
		char line[16] = "";
		if (k > 0)
			snprintf(line, sizeof line, "%u", f->line);
		fprintf(out, "%4zu %4s %-*.*s %9.0f", k, line, OP_WIDTH, OP_WIDTH, k ? f->text : "(the empty heap)",
			f->st.live);
		for (size_t c = 0; c < ls->ncols; c++)
			cell(out, &ls->col[c], k);
		fputs(" |", out);
		for (int r = 0; r < VIS_NRULES; r++)
			if (vis_lockstep_differs(ls, k, (vis_rule_t)r, pct))
				fprintf(out, " %s", rule_names[r]);
		fputc('\n', out);
		shown += k > 0;
	}
	if (only >= 0)
		fprintf(out, "\n%zu of %zu ops differ by rule '%s'\n", shown, ls->nframes - 1, rule_names[only]);
	for (size_t c = 0; c < ls->ncols; c++)
		if (ls->col[c].rc == 1)
			fprintf(out, "%s: the replay stopped: %s\n", ls->col[c].policy, ls->col[c].walk.result.message);
}
