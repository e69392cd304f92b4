/*
 * The terminal stepper: a trace one op at a time, with a map of the heap
 * after each op, and the quiz that asks where the next allocation goes.
 *
 * The map comes from hl_walk (every policy has a walker): one bar per
 * region, one character per block at least and wider blocks in
 * proportion, then the blocks in address order.  Blocks that could serve
 * an allocation (free, cached, dirty, muzzy, returned, top) are numbered
 * [0], [1] ...; those numbers are the quiz's choices:
 *
 *   region#1 |#.#______________________________________| 64.0 KiB
 *        region#1+0x10          112  live     id 0
 *    [0] region#1+0x80         1024  free
 *
 * A quiz answer is a choice number, an address (the block's, or the exact
 * one malloc returns), or "new" when no block on the map can serve it.
 * Runs of four or more alike blocks (same state, size and region) are
 * folded into one line and one stretch of the bar; their choices share
 * the line, "[3-9]", and any number of the run is a right answer for a
 * block inside it.  ANSI colour only when the caller says the output is
 * a terminal.
 */
#include "config.h"
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include "vis.h"

enum { BAR_WIDTH = 64, BAR_MAX = 3 * BAR_WIDTH, FOLD_AT = 4 };

static const struct {
	char mark;
	const char *ansi;
} tty_look[HL_BLOCK_NSTATES] = {
	[HL_BLOCK_LIVE] = { '#', "\033[31m" },     [HL_BLOCK_FREE] = { '.', "\033[32m" },
	[HL_BLOCK_CACHED] = { 'c', "\033[36m" },   [HL_BLOCK_DIRTY] = { 'd', "\033[33m" },
	[HL_BLOCK_MUZZY] = { 'm', "\033[35m" },    [HL_BLOCK_RETURNED] = { '~', "\033[2m" },
	[HL_BLOCK_META] = { '=', "\033[2m" },      [HL_BLOCK_TOP] = { '_', "" },
	[HL_BLOCK_GUARD] = { 'X', "\033[1m" },
};

/** Alike blocks drawn as one line and one stretch of the bar. */
typedef struct tty_run {
	size_t first, count;    /**< blocks[first .. first + count) */
	long choice;            /**< choice number of its first block, or -1 */
} tty_run_t;

/** The walk's state (one per vis_tty_walk). */
typedef struct tty_ctx {
	const vis_tty_opts_t *o;
	const hl_trace_t *t;
	hl_heap_t *h;
	const hl_replay_t *rp;  /**< the replay, once it runs (NULL before) */
	long max_id;            /**< highest block id of the trace */
	hl_block_t *blocks;     /**< the map last drawn, in walk order */
	size_t nblocks, cap;
	tty_run_t *runs;        /**< the same map cut into runs */
	size_t nruns, runs_cap;
	long pending;           /**< op whose answer awaits judging, or -1 */
	char answer[128];       /**< the student's answer to it */
	size_t asked, right;    /**< quiz score */
	bool out_of_answers;    /**< stdin ended: stop asking */
	bool quit;              /**< the user answered 'q': stop the walk */
	vis_explain_t *explain; /**< the steps of each op (explain.c) */
} tty_ctx_t;

static bool is_choice(hl_block_state_t st)
{
	return st != HL_BLOCK_LIVE && st != HL_BLOCK_META && st != HL_BLOCK_GUARD;
}

static bool is_allocation(char kind)
{
	return kind == 'a' || kind == 'c' || kind == 'm';
}

static int collect(const hl_block_t *b, void *arg)
{
	tty_ctx_t *c = arg;
	if (c->nblocks == c->cap) {
		size_t ncap = c->cap ? 2 * c->cap : 256;
		hl_block_t *nb = realloc(c->blocks, ncap * sizeof *nb);
		if (!nb)
			return 1;
		c->blocks = nb;
		c->cap = ncap;
	}
	c->blocks[c->nblocks++] = *b;
	return 0;
}

static void paint(tty_ctx_t *c, hl_block_state_t st, int n)
{
	FILE *out = c->o->out;
	if (c->o->color && tty_look[st].ansi[0])
		fputs(tty_look[st].ansi, out);
	for (int i = 0; i < n; i++)
		fputc(tty_look[st].mark, out);
	if (c->o->color && tty_look[st].ansi[0])
		fputs("\033[0m", out);
}

/* One bar for the runs [from, to) of one region. */
static void bar(tty_ctx_t *c, size_t from, size_t to)
{
	double span = 0;
	for (size_t r = from; r < to; r++)
		for (size_t i = 0; i < c->runs[r].count; i++)
			span += (double)c->blocks[c->runs[r].first + i].size;
	char size[32];
	fprintf(c->o->out, "  region#%d |", c->blocks[c->runs[from].first].region);
	int drawn = 0;
	for (size_t r = from; r < to && drawn < BAR_MAX; r++) {
		const hl_block_t *b = &c->blocks[c->runs[r].first];
		double bytes = (double)b->size * (double)c->runs[r].count;
		int w = (int)(bytes * BAR_WIDTH / (span > 0 ? span : 1) + 0.5);
		w = w < 1 ? 1 : w;
		w = drawn + w > BAR_MAX ? BAR_MAX - drawn : w;
		paint(c, b->state, w);
		drawn += w;
	}
	fprintf(c->o->out, "%s| %s\n", drawn >= BAR_MAX ? "..." : "", vis_bytes(span, size, sizeof size));
}

/* The trace id whose block starts at @p addr, or -1. */
static long owner(tty_ctx_t *c, const void *addr)
{
	for (long id = 0; id <= c->max_id; id++)
		if (hl_replay_block(c->rp, id) == addr)
			return id;
	return -1;
}

static bool alike(const hl_block_t *a, const hl_block_t *b)
{
	return a->state == b->state && a->size == b->size && a->region == b->region &&
	       a->state != HL_BLOCK_LIVE;
}

static bool add_run(tty_ctx_t *c, size_t first, size_t count, long *choice)
{
	if (c->nruns == c->runs_cap) {
		size_t ncap = c->runs_cap ? 2 * c->runs_cap : 256;
		tty_run_t *nr = realloc(c->runs, ncap * sizeof *nr);
		if (!nr)
			return false;
		c->runs = nr;
		c->runs_cap = ncap;
	}
	bool numbered = is_choice(c->blocks[first].state);
	c->runs[c->nruns++] = (tty_run_t){ first, count, numbered ? *choice : -1 };
	*choice += numbered ? (long)count : 0;
	return true;
}

/* Cuts the blocks into runs (a run shorter than FOLD_AT is single blocks). */
static void make_runs(tty_ctx_t *c)
{
	long choice = 0;
	c->nruns = 0;
	for (size_t i = 0; i < c->nblocks;) {
		size_t n = 1;
		while (i + n < c->nblocks && alike(&c->blocks[i], &c->blocks[i + n]))
			n++;
		if (n < FOLD_AT)
			n = 1;
		if (!add_run(c, i, n, &choice))
			return;
		i += n;
	}
}

/* Lists the runs [from, to). */
static void listing(tty_ctx_t *c, size_t from, size_t to)
{
	FILE *out = c->o->out;
	char name[64], num[48];
	for (size_t r = from; r < to; r++) {
		const tty_run_t *run = &c->runs[r];
		const hl_block_t *b = &c->blocks[run->first];
		num[0] = 0;
		if (run->choice >= 0 && run->count > 1)
			snprintf(num, sizeof num, "[%ld-%ld]", run->choice, run->choice + (long)run->count - 1);
		else if (run->choice >= 0)
			snprintf(num, sizeof num, "[%ld]", run->choice);
		fprintf(out, "  %9s %-22s %9zu  ", num, hl_addr_name(c->h, b->addr, name, sizeof name), b->size);
		paint(c, b->state, 1);
		fprintf(out, " %s", hl_block_state_name(b->state));
		long id = b->state == HL_BLOCK_LIVE ? owner(c, b->addr) : -1;
		if (run->count > 1)
			fprintf(out, "  x%zu (same size, in a row)", run->count);
		else if (id >= 0)
			fprintf(out, "  id %ld", id);
		fputc('\n', out);
	}
}

static void show_map(tty_ctx_t *c)
{
	c->nblocks = 0;
	hl_walk(c->h, collect, c);
	make_runs(c);
	if (!c->nruns) {
		fprintf(c->o->out, "  (no memory yet)\n");
		return;
	}
	for (size_t from = 0; from < c->nruns;) {
		int region = c->blocks[c->runs[from].first].region;
		size_t to = from + 1;
		while (to < c->nruns && c->blocks[c->runs[to].first].region == region)
			to++;
		bar(c, from, to);
		listing(c, from, to);
		from = to;
	}
}

/* Reads one line of @p in into @p buf, trimmed; false at end of input. */
static bool read_line(FILE *in, char *buf, size_t len)
{
	if (!fgets(buf, (int)len, in))
		return false;
	char *s = buf;
	while (isspace((unsigned char)*s))
		s++;
	memmove(buf, s, strlen(s) + 1);
	size_t n = strlen(buf);
	while (n && isspace((unsigned char)buf[n - 1]))
		buf[--n] = 0;
	return true;
}

static void ask(tty_ctx_t *c, size_t op)
{
	c->pending = -1;
	if (c->out_of_answers || op >= hl_trace_ops(c->t) || !is_allocation(hl_trace_op_kind(c->t, op)))
		return;
	char text[64];
	fprintf(c->o->out, "\nquiz: next is op %zu, '%s'.  Which block will it take?\n"
			   "      (a [number] from the map, an address, or 'new'; q quits): ",
		op + 1, hl_trace_op_text(c->t, op, text, sizeof text));
	fflush(c->o->out);
	if (!read_line(c->o->in, c->answer, sizeof c->answer)) {
		fprintf(c->o->out, "\n(no more answers: the quiz stops here)\n");
		c->out_of_answers = true;
		return;
	}
	if (!isatty(fileno(c->o->in)))
		fprintf(c->o->out, "%s\n", c->answer);
	if (!strcasecmp(c->answer, "q") || !strcasecmp(c->answer, "quit")) {
		c->quit = true;
		return;
	}
	c->pending = (long)op;
}

/* The numbered run and block of the map holding @p p; NULL when none. */
static const tty_run_t *run_holding(tty_ctx_t *c, const void *p, const hl_block_t **block)
{
	for (size_t r = 0; r < c->nruns; r++) {
		const tty_run_t *run = &c->runs[r];
		for (size_t i = 0; run->choice >= 0 && i < run->count; i++) {
			const hl_block_t *b = &c->blocks[run->first + i];
			const char *lo = b->addr;
			if ((const char *)p >= lo && (const char *)p < lo + b->size) {
				*block = b;
				return run;
			}
		}
	}
	return NULL;
}

static bool judge_answer(tty_ctx_t *c, const tty_run_t *run, const hl_block_t *b, const char *exact)
{
	const char *a = c->answer;
	char name[64];
	if (!*a)
		return false;
	if (isdigit((unsigned char)a[0]) || (a[0] == '[' && isdigit((unsigned char)a[1]))) {
		char *end;
		long k = strtol(a + (a[0] == '['), &end, 10);
		bool inside = run && k >= run->choice && k < run->choice + (long)run->count;
		return (*end == 0 || !strcmp(end, "]")) && inside;
	}
	if (!strcasecmp(a, "new") || !strcasecmp(a, "n"))
		return run == NULL;
	if (!strcasecmp(a, exact))
		return true;
	return b && !strcasecmp(a, hl_addr_name(c->h, b->addr, name, sizeof name));
}

/* After op @p op ran: reveals where it went (using the map drawn before it). */
static void judge(tty_ctx_t *c, size_t op)
{
	void *p = hl_replay_block(c->rp, hl_trace_op_id(c->t, op));
	char exact[64];
	hl_addr_name(c->h, p, exact, sizeof exact);
	const hl_block_t *b = NULL;
	const tty_run_t *run = run_holding(c, p, &b);
	bool ok = judge_answer(c, run, b, exact);
	c->asked++;
	c->right += ok;
	const char *yes = c->o->color ? "\033[32mright\033[0m" : "right";
	const char *no = c->o->color ? "\033[31mwrong\033[0m" : "wrong";
	if (run)
		fprintf(c->o->out, "quiz: %s: it took block [%ld] and returned %s", ok ? yes : no,
			run->choice + (long)(b - &c->blocks[run->first]), exact);
	else
		fprintf(c->o->out, "quiz: %s: no block on the map could serve it: new memory, %s", ok ? yes : no,
			exact);
	fprintf(c->o->out, " (you said '%s'; score %zu/%zu)\n", c->answer, c->right, c->asked);
	c->pending = -1;
}

static int after_op(const hl_replay_t *rp, void *arg)
{
	tty_ctx_t *c = arg;
	const hl_trace_t *t = hl_replay_trace(rp);
	size_t op = hl_replay_op(rp);
	c->rp = rp;
	char text[64];
	fprintf(c->o->out, "\nop %zu (line %u): %s\n", op + 1, hl_trace_op_line(t, op),
		hl_trace_op_text(t, op, text, sizeof text));
	if (c->pending == (long)op)
		judge(c, op);
	vis_explain_steps(c->explain, rp, c->o->out);
	show_map(c);
	if (c->o->quiz) {
		ask(c, op + 1);
		if (c->quit)
			return 1;
	} else if (c->o->pause && op + 1 < hl_trace_ops(t)) {
		char key[16];
		fprintf(c->o->out, "-- Enter: next op, q: quit -- ");
		fflush(c->o->out);
		if (!read_line(c->o->in, key, sizeof key) || key[0] == 'q')
			return 1;
	}
	fflush(c->o->out);
	return 0;
}

static long highest_id(const hl_trace_t *t)
{
	long max = -1;
	for (size_t i = 0; i < hl_trace_ops(t); i++) {
		char k = hl_trace_op_kind(t, i);
		long id = hl_trace_op_id(t, i);
		if (k != 't' && k != 's' && id > max)
			max = id;
	}
	return max;
}

static void legend(FILE *out, tty_ctx_t *c)
{
	fprintf(out, "map:");
	for (int s = 0; s < HL_BLOCK_NSTATES; s++) {
		fputs("  ", out);
		paint(c, (hl_block_state_t)s, 1);
		fprintf(out, " %s", hl_block_state_name((hl_block_state_t)s));
	}
	fputc('\n', out);
}

int vis_tty_walk(const char *policy, const char *conf, const hl_trace_t *t, const vis_tty_opts_t *o)
{
	hl_heap_t *h = hl_heap_new_replay(policy, conf);
	if (!h)
		return 2;
	tty_ctx_t c = { .o = o, .t = t, .h = h, .max_id = highest_id(t), .pending = -1 };
	if (!(c.explain = vis_explain_new(h))) {
		hl_heap_destroy(h);
		return 2;
	}
	fprintf(o->out, "heaplab step: %zu ops on %s%s%s\n", hl_trace_ops(t), policy, conf && *conf ? ", " : "",
		conf ? conf : "");
	legend(o->out, &c);
	fprintf(o->out, "\nthe empty heap:\n");
	show_map(&c);
	if (o->quiz)
		ask(&c, 0);
	hl_replay_opts_t ro = { .verify = true, .check_heap = true, .check_every = 1, .after_op = after_op, .arg = &c };
	hl_replay_result_t r;
	int rc = c.quit ? 0 : hl_replay(h, t, &ro, &r) == 0 ? 0 : 1;
	if (rc)
		fprintf(o->out, "\nthe replay stopped: %s\n", r.message);
	if (o->quiz)
		fprintf(o->out, "\nscore: %zu of %zu right\n", c.right, c.asked);
	free(c.blocks);
	free(c.runs);
	vis_explain_free(c.explain);
	hl_heap_destroy(h);
	return rc;
}
