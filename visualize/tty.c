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
 * Runs of four or more alike blocks are folded into one line.  ANSI
 * colour only when the caller says the output is a terminal.
 */
#include "config.h"
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include "../cli/cli.h"
#include "dot.h"
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

/** The walk's state (one per vis_tty_walk). */
typedef struct tty_ctx {
	const vis_tty_opts_t *o;
	const hl_trace_t *t;
	hl_heap_t *h;
	long max_id;            /**< highest block id of the trace */
	hl_block_t *blocks;     /**< the map last drawn, in walk order */
	size_t nblocks, cap;
	long pending;           /**< op whose answer awaits judging, or -1 */
	char answer[128];       /**< the student's answer to it */
	size_t asked, right;    /**< quiz score */
	bool out_of_answers;    /**< stdin ended: stop asking */
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

/* One bar for the blocks [from, to) of one region. */
static void bar(tty_ctx_t *c, size_t from, size_t to)
{
	double span = 0;
	for (size_t i = from; i < to; i++)
		span += (double)c->blocks[i].size;
	char size[32];
	fprintf(c->o->out, "  region#%d |", c->blocks[from].region);
	int drawn = 0;
	for (size_t i = from; i < to && drawn < BAR_MAX; i++) {
		int w = (int)((double)c->blocks[i].size * BAR_WIDTH / (span > 0 ? span : 1) + 0.5);
		w = w < 1 ? 1 : w;
		w = drawn + w > BAR_MAX ? BAR_MAX - drawn : w;
		paint(c, c->blocks[i].state, w);
		drawn += w;
	}
	fprintf(c->o->out, "%s| %s\n", drawn >= BAR_MAX ? "..." : "", vis_bytes(span, size, sizeof size));
}

/* The trace id whose block starts at @p addr, or -1. */
static long owner(tty_ctx_t *c, const void *addr)
{
	for (long id = 0; id <= c->max_id; id++)
		if (hl_replay_block(c->t, id) == addr)
			return id;
	return -1;
}

static bool alike(const hl_block_t *a, const hl_block_t *b)
{
	return a->state == b->state && a->size == b->size && a->region == b->region &&
	       a->state != HL_BLOCK_LIVE;
}

/* Lists blocks [from, to), numbering the choices from *choice on. */
static void listing(tty_ctx_t *c, size_t from, size_t to, size_t *choice)
{
	FILE *out = c->o->out;
	char name[64], num[32];
	for (size_t i = from; i < to;) {
		size_t run = 1;
		while (i + run < to && alike(&c->blocks[i], &c->blocks[i + run]))
			run++;
		if (run < FOLD_AT)
			run = 1;
		const hl_block_t *b = &c->blocks[i];
		num[0] = 0;
		if (is_choice(b->state)) {
			if (run > 1)
				snprintf(num, sizeof num, "[%zu-%zu]", *choice, *choice + run - 1);
			else
				snprintf(num, sizeof num, "[%zu]", *choice);
			*choice += run;
		}
		fprintf(out, "  %9s %-22s %9zu  ", num, hl_addr_name(c->h, b->addr, name, sizeof name), b->size);
		paint(c, b->state, 1);
		fprintf(out, " %s", hl_block_state_name(b->state));
		long id = b->state == HL_BLOCK_LIVE ? owner(c, b->addr) : -1;
		if (run > 1)
			fprintf(out, "  x%zu (same size, in a row)", run);
		else if (id >= 0)
			fprintf(out, "  id %ld", id);
		fputc('\n', out);
		i += run;
	}
}

static void show_map(tty_ctx_t *c)
{
	c->nblocks = 0;
	hl_walk(c->h, collect, c);
	if (!c->nblocks) {
		fprintf(c->o->out, "  (no memory yet)\n");
		return;
	}
	size_t choice = 0;
	for (size_t from = 0; from < c->nblocks;) {
		size_t to = from + 1;
		while (to < c->nblocks && c->blocks[to].region == c->blocks[from].region)
			to++;
		bar(c, from, to);
		listing(c, from, to, &choice);
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
			   "      (a [number] from the map, an address, or 'new'): ",
		op + 1, hl_trace_op_text(c->t, op, text, sizeof text));
	fflush(c->o->out);
	if (!read_line(c->o->in, c->answer, sizeof c->answer)) {
		fprintf(c->o->out, "\n(no more answers: the quiz stops here)\n");
		c->out_of_answers = true;
		return;
	}
	if (!isatty(fileno(c->o->in)))
		fprintf(c->o->out, "%s\n", c->answer);
	c->pending = (long)op;
}

/* Index among the choices of the map block holding @p p, or -1. */
static long choice_holding(tty_ctx_t *c, const void *p, const hl_block_t **block)
{
	long k = 0;
	for (size_t i = 0; i < c->nblocks; i++) {
		const hl_block_t *b = &c->blocks[i];
		if (!is_choice(b->state))
			continue;
		const char *lo = b->addr;
		if ((const char *)p >= lo && (const char *)p < lo + b->size) {
			*block = b;
			return k;
		}
		k++;
	}
	return -1;
}

static bool judge_answer(tty_ctx_t *c, long truth, const hl_block_t *b, const char *exact)
{
	const char *a = c->answer;
	char name[64];
	if (!*a)
		return false;
	if (isdigit((unsigned char)a[0]) || (a[0] == '[' && isdigit((unsigned char)a[1]))) {
		char *end;
		long k = strtol(a + (a[0] == '['), &end, 10);
		return (*end == 0 || !strcmp(end, "]")) && k == truth;
	}
	if (!strcasecmp(a, "new") || !strcasecmp(a, "n"))
		return truth < 0;
	if (!strcasecmp(a, exact))
		return true;
	return b && !strcasecmp(a, hl_addr_name(c->h, b->addr, name, sizeof name));
}

/* After op @p op ran: reveals where it went (using the map drawn before it). */
static void judge(tty_ctx_t *c, size_t op)
{
	void *p = hl_replay_block(c->t, hl_trace_op_id(c->t, op));
	char exact[64];
	hl_addr_name(c->h, p, exact, sizeof exact);
	const hl_block_t *b = NULL;
	long truth = choice_holding(c, p, &b);
	bool ok = judge_answer(c, truth, b, exact);
	c->asked++;
	c->right += ok;
	const char *yes = c->o->color ? "\033[32mright\033[0m" : "right";
	const char *no = c->o->color ? "\033[31mwrong\033[0m" : "wrong";
	if (truth >= 0)
		fprintf(c->o->out, "quiz: %s: it took block [%ld] and returned %s", ok ? yes : no, truth, exact);
	else
		fprintf(c->o->out, "quiz: %s: no block on the map could serve it: new memory, %s", ok ? yes : no,
			exact);
	fprintf(c->o->out, " (you said '%s'; score %zu/%zu)\n", c->answer, c->right, c->asked);
	c->pending = -1;
}

static int after_op(hl_heap_t *h, const hl_trace_t *t, size_t op, void *arg)
{
	tty_ctx_t *c = arg;
	char text[64];
	fprintf(c->o->out, "\nop %zu (line %u): %s\n", op + 1, hl_trace_op_line(t, op),
		hl_trace_op_text(t, op, text, sizeof text));
	if (c->pending == (long)op)
		judge(c, op);
	show_map(c);
	if (c->o->quiz) {
		ask(c, op + 1);
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
	hl_heap_t *h = hl_heap_new(policy, conf);
	if (!h)
		return cli_error("%s", hl_last_error());
	tty_ctx_t c = { .o = o, .t = t, .h = h, .max_id = highest_id(t), .pending = -1 };
	fprintf(o->out, "heaplab step: %zu ops on %s%s%s\n", hl_trace_ops(t), policy, conf && *conf ? ", " : "",
		conf ? conf : "");
	legend(o->out, &c);
	fprintf(o->out, "\nthe empty heap:\n");
	show_map(&c);
	if (o->quiz)
		ask(&c, 0);
	hl_replay_opts_t ro = { .verify = true, .check_heap = true, .check_every = 1, .after_op = after_op, .arg = &c };
	hl_replay_result_t r;
	int rc = hl_replay(h, t, &ro, &r) == 0 ? 0 : 1;
	if (rc)
		fprintf(o->out, "\nthe replay stopped: %s\n", r.message);
	if (o->quiz)
		fprintf(o->out, "\nscore: %zu of %zu right\n", c.right, c.asked);
	free(c.blocks);
	hl_heap_destroy(h);
	return rc;
}
