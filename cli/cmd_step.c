/* heaplab step: a trace one op at a time, as an HTML page or in a terminal;
 * with several policies, in lockstep (a column each, visualize/lockstep.c). */
#include "config.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "../visualize/vis.h"

/* A page carries every frame's numbers; beyond this it would not open.
 * Its pictures may weigh this much; past it fewer are kept. */
enum { STEP_MAX_OPS = 200000, STEP_SVG_BUDGET = 24 << 20 };
/* Up to this many ops the page also says what each op changed and can
 * compare two steps (the block lists grow with the trace). */
enum { STEP_DIFF_MAX_OPS = 20000 };
/* Columns of a lockstep page or table at the most. */
enum { STEP_MAX_POLICIES = 32 };
/* The committed rule's N when --diverge=committed names none. */
#define STEP_DEFAULT_PCT 10.0

typedef struct step_args {
	const char *trace, *policy, *conf, *out;
	long long every;    /* -1: vis_default_every */
	bool tty, quiz;
	bool strict;        /* Graphviz warnings fail the run */
	const char *policies[STEP_MAX_POLICIES];
	size_t npolicies;   /* more than one: in lockstep */
	int rule;           /* --diverge's rule, or -1 */
	double pct;         /* the committed rule's N */
} step_args_t;

static int usage(FILE *out)
{
	fprintf(out,
		"usage: heaplab step TRACE [--policy=NAME] [--conf=S] [-o stepper.html] [--every N]\n"
		"                    [--strict]\n"
		"       heaplab step TRACE --policy=A,B,... [--diverge=RULE] [--conf=S] [-o stepper.html]\n"
		"                    [--every N] [--strict]\n"
		"       heaplab step --tty [--quiz] TRACE [--policy=NAME] [--conf=S]\n"
		"       heaplab step --tty TRACE --policy=A,B,... [--diverge=RULE] [--conf=S]\n"
		"Replays TRACE one op at a time.  The page (default stepper.html) shows the ops\n"
		"beside the heap's picture after each one and its statistics, with buttons and\n"
		"keys to move; it needs no network.  --every N keeps a picture every N ops and\n"
		"at each 's label' op (default: every op up to 400 ops, else about 200 pictures,\n"
		"fewer when they would make the page heavier than %d MiB).  Up to %d ops the\n"
		"page also lists what each op changed, outlines those blocks in the picture,\n"
		"and compares any two steps ('compare with'; see heaplab diff).\n"
		"--strict: a Graphviz warning about any picture is an error (exit 1).\n"
		"--tty walks in the terminal: under each op the steps the policy took (as\n"
		"replay --explain says them) and a map of the heap; --quiz asks\n"
		"before each allocation which block it will take (answers read from stdin, one a\n"
		"line: a number from the map, an address such as region#1+0x40, or 'new').\n"
		"With several policies (a list, or 'all') the policies run in lockstep, each on\n"
		"its own heap on the trace's clock: the page has a column per policy, all at the\n"
		"same op, each with its picture, figures and steps, and 'next divergence' goes\n"
		"to the next op where the columns differ by a rule: os (an OS call in one\n"
		"column, none in another), reuse (the op's block reuses bytes a freed block held\n"
		"in one column, not in another) or committed:N (the op changes a column's\n"
		"committed bytes, and the columns' then differ by more than N %%; N is %g when\n"
		"not given).  --diverge=RULE picks the page's rule at first.  With --tty the\n"
		"lockstep is a table, a row per op and a column per policy, and --diverge keeps\n"
		"only the rows where RULE holds.\n",
		STEP_SVG_BUDGET >> 20, STEP_DIFF_MAX_OPS, STEP_DEFAULT_PCT);
	return out == stdout ? 0 : 2;
}

/* "os", "reuse", "committed" or "committed:N". */
static int parse_rule(const char *s, step_args_t *a)
{
	char name[32];
	snprintf(name, sizeof name, "%s", s);
	char *colon = strchr(name, ':');
	if (colon)
		*colon = 0;
	a->rule = vis_rule_parse(name);
	char *end = NULL;
	if (colon && a->rule == VIS_RULE_COMMITTED)
		a->pct = strtod(colon + 1, &end);
	if (a->rule < 0 || (colon && (a->rule != VIS_RULE_COMMITTED || end == colon + 1 || *end || a->pct < 0)))
		return cli_error("step: bad --diverge '%s' (os, reuse, or committed:N with N a percentage)", s);
	return 0;
}

static int parse(int argc, char **argv, step_args_t *a)
{
	const char *every = NULL, *diverge = NULL;
	memset(a, 0, sizeof *a);
	a->every = -1;
	a->rule = -1;
	a->pct = STEP_DEFAULT_PCT;
	for (int i = 1; i < argc; i++) {
		int r;
		if ((r = cli_opt(argc, argv, &i, "--policy", &a->policy)) ||
		    (r = cli_opt(argc, argv, &i, "--conf", &a->conf)) || (r = cli_opt(argc, argv, &i, "-o", &a->out)) ||
		    (r = cli_opt(argc, argv, &i, "--output", &a->out)) ||
		    (r = cli_opt(argc, argv, &i, "--every", &every)) ||
		    (r = cli_opt(argc, argv, &i, "--diverge", &diverge))) {
			if (r < 0)
				return 2;
		} else if (!strcmp(argv[i], "--tty"))
			a->tty = true;
		else if (!strcmp(argv[i], "--strict"))
			a->strict = true;
		else if (!strcmp(argv[i], "--quiz"))
			a->quiz = a->tty = true;
		else if (!strcmp(argv[i], "--help"))
			return usage(stdout) ? 2 : -1;
		else if (argv[i][0] == '-' && argv[i][1])
			return cli_error("step: unknown option '%s' (try --help)", argv[i]);
		else if (a->trace)
			return cli_error("step: one trace at a time ('%s' and '%s')", a->trace, argv[i]);
		else
			a->trace = argv[i];
	}
	if (!a->trace)
		return usage(stderr);
	if (every && ((a->every = cli_parse_size(every)) < 1))
		return cli_error("step: bad --every '%s' (a number of ops, at least 1)", every);
	if (diverge && parse_rule(diverge, a))
		return 2;
	const char *list = a->policy ? a->policy : hl_default_policy();
	int n = cli_policy_list(list, a->policies, STEP_MAX_POLICIES);
	if (!n)
		return 2;
	a->npolicies = (size_t)n;
	a->policy = a->policies[0];
	if (a->npolicies > 1 && a->quiz)
		return cli_error("step: --quiz asks about one policy at a time (not '%s')", list);
	if (a->npolicies == 1 && diverge)
		return cli_error("step: --diverge compares policies: name two or more (--policy=bins,slab)");
	return 0;
}

/* Draws every kept picture with one dot run. */
static int draw(const vis_walk_t *w, bool strict, char ***svgs_out)
{
	char **dots = calloc(w->kept + 1, sizeof *dots);
	char **svgs = calloc(w->kept + 1, sizeof *svgs);
	if (!dots || !svgs) {
		free(dots);
		free(svgs);
		return cli_error("out of memory");
	}
	for (size_t i = 0, k = 0; i < w->nframes; i++)
		if (w->frames[i].dot)
			dots[k++] = w->frames[i].dot;
	/* in batches, so that a long run can show how far it is */
	enum { BATCH = 25 };
	char *diag = NULL;
	int rc = 0;
	for (size_t done = 0; done < w->kept && rc < 2; done += BATCH) {
		size_t n = w->kept - done < BATCH ? w->kept - done : BATCH;
		int one = vis_dot_svgs(dots + done, n, svgs + done, &diag);
		rc = one > rc ? one : rc;
		cli_progress("drawing pictures with Graphviz", done + n, w->kept);
	}
	cli_progress_done();
	if (rc == 2) {
		if (diag)
			fputs(diag, stderr);
		cli_last_error();
	}
	if (rc == 1)
		fprintf(stderr, "heaplab: step: Graphviz warned:\n%s", diag);
	free(diag);
	free(dots);
	*svgs_out = svgs;
	return rc == 2 ? 2 : rc == 1 && strict ? 1 : 0;
}

static int write_page(const step_args_t *a, const vis_walk_t *w, char **svgs)
{
	const char *path = a->out ? a->out : "stepper.html";
	FILE *f = fopen(path, "w");
	if (!f)
		return cli_error("step: cannot write %s: %s", path, strerror(errno));
	int bad = vis_html_write(f, w, svgs, a->trace, a->policy, a->conf);
	if (fclose(f) != 0 || bad)
		return cli_error("step: writing %s failed", path);
	fprintf(stderr, "heaplab: step: wrote %s (%zu ops, %zu pictures)\n", path, w->nframes - 1, w->kept);
	return 0;
}

/* 0 when a page of @p nops ops can be made (not too long, Graphviz there). */
static int page_possible(const step_args_t *a, size_t nops)
{
	if (nops > STEP_MAX_OPS)
		return cli_error("step: %s has %zu ops; a page holds at most %d (cut the trace, or use "
				 "'heaplab plot' for the whole story)", a->trace, nops, STEP_MAX_OPS);
	return vis_need_dot() ? cli_last_error() : 0;
}

static int html_step(const step_args_t *a, const hl_trace_t *t)
{
	size_t nops = hl_trace_ops(t);
	if (page_possible(a, nops))
		return 2;
	size_t every = a->every > 0 ? (size_t)a->every : vis_default_every(nops);
	vis_walk_t w;
	int rc = nops <= STEP_DIFF_MAX_OPS
		? vis_walk_trace_blocks(a->policy, a->conf, t, every, a->trace, cli_progress_cb, &w)
		: vis_walk_trace(a->policy, a->conf, t, every, a->trace, cli_progress_cb, &w);
	if (rc == 2) {
		vis_walk_free(&w);
		return cli_last_error();
	}
	if (rc == 1)
		fprintf(stderr, "heaplab: step: %s\n", w.result.message);
	char **svgs = NULL;
	int drawn = draw(&w, a->strict, &svgs);
	if (!drawn && a->every < 0 && vis_walk_thin(&w, svgs, STEP_SVG_BUDGET))
		fprintf(stderr, "heaplab: step: the pictures were too big for one page: keeping one every %zu ops\n",
			w.every);
	if (!drawn)
		drawn = write_page(a, &w, svgs);
	for (size_t i = 0; svgs && i < w.kept; i++)
		free(svgs[i]);
	free(svgs);
	vis_walk_free(&w);
	return drawn ? drawn : rc;
}

/* The bytes of a walk's pictures. */
static size_t svg_bytes(const vis_walk_t *w, char *const *svgs)
{
	size_t total = 0;
	for (size_t i = 0; i < w->kept; i++)
		total += strlen(svgs[i]);
	return total;
}

/* Keeps fewer pictures in every column alike (the columns keep pictures of
 * the same ops) until all of them weigh at most the page's budget. */
static void thin_columns(vis_lockstep_t *ls, char ***svgs)
{
	size_t total = 0, every = ls->col[0].walk.every, rounds = 0;
	for (size_t c = 0; c < ls->ncols; c++)
		total += svg_bytes(&ls->col[c].walk, svgs[c]);
	while (total > STEP_SVG_BUDGET && every * 2 < ls->nframes) {
		every *= 2;
		rounds++;
		total = 0;
		for (size_t c = 0; c < ls->ncols; c++) {
			vis_walk_thin_to(&ls->col[c].walk, svgs[c], every);
			total += svg_bytes(&ls->col[c].walk, svgs[c]);
		}
	}
	if (rounds)
		fprintf(stderr, "heaplab: step: the pictures were too big for one page: keeping one every %zu ops\n",
			every);
}

static int write_lockstep(const step_args_t *a, const vis_lockstep_t *ls, char **const *svgs)
{
	const char *path = a->out ? a->out : "stepper.html";
	FILE *f = fopen(path, "w");
	if (!f)
		return cli_error("step: cannot write %s: %s", path, strerror(errno));
	int bad = vis_html_write_lockstep(f, ls, svgs, a->trace, a->conf,
					  a->rule >= 0 ? (vis_rule_t)a->rule : VIS_RULE_OS, a->pct);
	if (fclose(f) != 0 || bad)
		return cli_error("step: writing %s failed", path);
	fprintf(stderr, "heaplab: step: wrote %s (%zu ops, %zu policies in lockstep)\n", path, ls->nframes - 1,
		ls->ncols);
	return 0;
}

/* Walks every policy; says which replays stopped.  0, 1 or 2. */
static int lockstep_walk(const step_args_t *a, const hl_trace_t *t, const vis_walk_opts_t *o, vis_lockstep_t *ls)
{
	int rc = vis_lockstep_walk(a->policies, a->npolicies, a->conf, t, o, ls);
	if (rc == 2) {
		vis_lockstep_free(ls);
		return cli_last_error();
	}
	for (size_t c = 0; c < ls->ncols; c++)
		if (ls->col[c].rc == 1)
			fprintf(stderr, "heaplab: step: %s: %s\n", ls->col[c].policy, ls->col[c].walk.result.message);
	return rc;
}

static int lockstep_page(const step_args_t *a, const hl_trace_t *t)
{
	size_t nops = hl_trace_ops(t);
	if (page_possible(a, nops))
		return 2;
	vis_walk_opts_t o = {
		.every = a->every > 0 ? (size_t)a->every : vis_default_every(nops),
		.blocks = nops <= STEP_DIFF_MAX_OPS,   /* the steps of each op come with the blocks */
		.progress = cli_progress_cb,
	};
	vis_lockstep_t ls;
	int rc = lockstep_walk(a, t, &o, &ls);
	if (rc == 2)
		return 2;
	char ***svgs = calloc(ls.ncols, sizeof *svgs);
	int drawn = svgs ? 0 : cli_error("out of memory");
	for (size_t c = 0; c < ls.ncols && drawn != 2; c++) {
		int one = draw(&ls.col[c].walk, a->strict, &svgs[c]);
		drawn = one > drawn ? one : drawn;
	}
	if (!drawn && a->every < 0)
		thin_columns(&ls, svgs);
	if (!drawn)
		drawn = write_lockstep(a, &ls, svgs);
	for (size_t c = 0; svgs && c < ls.ncols; c++) {
		for (size_t i = 0; svgs[c] && i < ls.col[c].walk.kept; i++)
			free(svgs[c][i]);
		free(svgs[c]);
	}
	free(svgs);
	vis_lockstep_free(&ls);
	return drawn ? drawn : rc;
}

static int lockstep_table(const step_args_t *a, const hl_trace_t *t)
{
	vis_walk_opts_t o = { .every = 0 };
	vis_lockstep_t ls;
	int rc = lockstep_walk(a, t, &o, &ls);
	if (rc == 2)
		return 2;
	vis_lockstep_table(stdout, &ls, t, a->rule, a->pct);
	vis_lockstep_free(&ls);
	return rc;
}

int cmd_step(int argc, char **argv)
{
	step_args_t a;
	int rc = parse(argc, argv, &a);
	if (rc)
		return rc < 0 ? 0 : rc;
	hl_trace_t *t = cli_load_trace(a.trace, false);
	if (!t)
		return 2;
	if (a.npolicies > 1) {
		rc = a.tty ? lockstep_table(&a, t) : lockstep_page(&a, t);
	} else if (a.tty) {
		vis_tty_opts_t o = {
			.quiz = a.quiz,
			.color = isatty(1) && getenv("NO_COLOR") == NULL,
			.pause = !a.quiz && isatty(0) && isatty(1),
			.in = stdin,
			.out = stdout,
		};
		rc = vis_tty_walk(a.policy, a.conf, t, &o);
		if (rc == 2)
			cli_last_error();
	} else {
		rc = html_step(&a, t);
	}
	hl_trace_free(t);
	return rc;
}
