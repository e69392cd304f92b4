/* heaplab plot: live, committed and resident bytes over a trace replay or
 * over a program's run (`heaplab run --sample-ms N`), as SVG. */
#include "config.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "../visualize/vis.h"

/* About this many points per plot; more would not show. */
enum { PLOT_POINTS = 2000 };

static int usage(FILE *out)
{
	fprintf(out,
		"usage: heaplab plot TRACE [--policy=NAME] [--conf=S] [--op-ns N] [-o plot.svg]\n"
		"       heaplab plot --samples FILE [--pid N] [-o plot.svg]\n"
		"Draws live requested, committed and resident bytes: after each op of a trace\n"
		"replay (at most %d points; on the recording's time axis, in seconds, when\n"
		"the trace has \"#@t\" times or --op-ns N gives each op N ns, and then the\n"
		"heap's clock follows it: decay shows), or over the time of a program run with\n"
		"'heaplab run --sample-ms N --sample-file FILE -- PROGRAM' (every process\n"
		"of the run writes samples; --pid picks one, default the one with the most).\n",
		PLOT_POINTS);
	return out == stdout ? 0 : 2;
}

typedef struct plot_ctx {
	vis_point_t *p;
	size_t n, stride;
	const char *what;
	uint64_t op_ns;      /* --op-ns */
	bool timed;          /* x in seconds of the trace's clock, not ops */
	double min_dt;       /* seconds: a move of the clock this long samples too */
	double last_x;
	size_t cap;          /* points p holds (one kept for the end) */
} plot_ctx_t;

static void sample(plot_ctx_t *c, hl_heap_t *h, double x)
{
	vis_stats_t st;
	vis_read_stats(h, &st);
	c->p[c->n++] = (vis_point_t){ x, st.live, st.committed, st.resident };
}

static int after_op(const hl_replay_t *rp, void *arg)
{
	const hl_trace_t *t = hl_replay_trace(rp);
	size_t op = hl_replay_op(rp);
	plot_ctx_t *c = arg;
	size_t nops = hl_trace_ops(t);
	double x = c->timed ? (double)hl_trace_op_ns(t, op, c->op_ns) * 1e-9 : (double)(op + 1);
	if ((op + 1) % c->stride == 0 || op + 1 == nops || (c->timed && x - c->last_x >= c->min_dt)) {
		sample(c, hl_replay_heap(rp), x);
		c->last_x = x;
	}
	/* An idle stretch before the next op (or the end): the clock is moved
	 * across it in steps, so what decay and background threads do while
	 * the program sleeps shows where it happens. */
	double next = c->timed ? (double)(op + 1 < nops ? hl_trace_op_ns(t, op + 1, c->op_ns)
						     : hl_trace_end_ns(t, c->op_ns)) * 1e-9 : 0;
	while (c->timed && c->min_dt > 0 && c->last_x + c->min_dt < next && c->n < c->cap) {
		c->last_x += c->min_dt;
		hl_heap_set_time(hl_replay_heap(rp), (uint64_t)(c->last_x * 1e9));
		sample(c, hl_replay_heap(rp), c->last_x);
	}
	cli_progress(c->what, op + 1, nops);
	return 0;
}

/* Replays the trace, sampling every `stride` ops; NULL after a message. */
static vis_point_t *plot_trace(const hl_trace_t *t, const char *path, const char *policy, const char *conf,
			       uint64_t op_ns, size_t *n)
{
	size_t nops = hl_trace_ops(t);
	plot_ctx_t c = { .stride = nops / PLOT_POINTS + 1, .what = path, .op_ns = op_ns,
			 .timed = hl_trace_timed(t) || op_ns };
	c.min_dt = (double)hl_trace_end_ns(t, op_ns) * 1e-9 / PLOT_POINTS;
	/* the ops' points, as many again for moves of the clock, the start and the end */
	c.cap = 2 * (nops / c.stride + PLOT_POINTS) + 3;
	c.p = calloc(c.cap + 1, sizeof *c.p);
	hl_heap_t *h = c.p ? hl_heap_new_replay(policy, conf) : NULL;
	if (!h) {
		free(c.p);
		cli_error("%s", c.p ? hl_last_error() : "out of memory");
		return NULL;
	}
	sample(&c, h, 0);
	hl_replay_opts_t o = { .verify = true, .check_heap = true, .check_every = nops / 100 + 1,
			       .after_op = after_op, .arg = &c };
	hl_replay_result_t r;
	int bad = hl_replay(h, t, &o, &r);
	cli_progress_done();
	if (!bad && c.timed)   /* the clock ran on to the trace's end: what an idle end did */
		sample(&c, h, (double)hl_trace_end_ns(t, op_ns) * 1e-9);
	hl_heap_destroy(h);
	if (bad)
		fprintf(stderr, "heaplab: plot: %s (plotting up to there)\n", r.message);
	*n = c.n;
	return c.p;
}

int cmd_plot(int argc, char **argv)
{
	const char *policy = NULL, *conf = NULL, *out = "plot.svg", *samples = NULL, *trace = NULL, *pid = NULL;
	const char *op_ns = NULL;
	bool timed = false;
	for (int i = 1; i < argc; i++) {
		int r;
		if ((r = cli_opt(argc, argv, &i, "--policy", &policy)) || (r = cli_opt(argc, argv, &i, "--conf", &conf)) ||
		    (r = cli_opt(argc, argv, &i, "-o", &out)) || (r = cli_opt(argc, argv, &i, "--output", &out)) ||
		    (r = cli_opt(argc, argv, &i, "--samples", &samples)) || (r = cli_opt(argc, argv, &i, "--pid", &pid)) ||
		    (r = cli_opt(argc, argv, &i, "--op-ns", &op_ns))) {
			if (r < 0)
				return 2;
		} else if (!strcmp(argv[i], "--help"))
			return usage(stdout);
		else if (argv[i][0] == '-' && argv[i][1])
			return cli_error("plot: unknown option '%s' (try --help)", argv[i]);
		else if (trace)
			return cli_error("plot: one trace at a time ('%s' and '%s')", trace, argv[i]);
		else
			trace = argv[i];
	}
	if (!trace == !samples)
		return usage(stderr);
	long long ns = op_ns ? cli_parse_size(op_ns) : 0;
	if (ns < 0)
		return cli_error("plot: bad --op-ns '%s'", op_ns);
	const char *names[1];
	if (trace && !cli_policy_list(policy ? policy : hl_default_policy(), names, 1))
		return 2;
	size_t n = 0;
	char title[512];
	vis_point_t *p;
	if (samples) {
		p = vis_samples_load(samples, pid ? atol(pid) : 0, &n, title, sizeof title);
		if (!p)
			return cli_last_error();
	} else {
		hl_trace_t *t = cli_load_trace(trace, false);
		p = t ? plot_trace(t, trace, names[0], conf, (uint64_t)ns, &n) : NULL;
		timed = t && (hl_trace_timed(t) || ns);
		snprintf(title, sizeof title, "%s on %s%s%s: bytes after each op", trace, names[0],
			 conf && *conf ? ", " : "", conf ? conf : "");
		hl_trace_free(t);
	}
	if (!p)
		return 2;
	FILE *f = fopen(out, "w");
	if (!f) {
		free(p);
		return cli_error("plot: cannot write %s: %s", out, strerror(errno));
	}
	int bad = vis_plot_svg(f, p, n, title,
			       samples ? "milliseconds since heaplab run started"
			       : timed ? "seconds of the recording (the heap's clock)" : "ops");
	bad |= fclose(f);
	free(p);
	if (bad)
		return cli_error("plot: writing %s failed", out);
	fprintf(stderr, "heaplab: plot: wrote %s (%zu points)\n", out, n);
	return 0;
}
