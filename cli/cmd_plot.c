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
		"usage: heaplab plot TRACE [--policy=NAME] [--conf=S] [-o plot.svg]\n"
		"       heaplab plot --samples FILE [--pid N] [-o plot.svg]\n"
		"Draws live requested, committed and resident bytes: after each op of a trace\n"
		"replay (at most %d points), or over the time of a program run with\n"
		"'heaplab run --sample-ms N --sample-file FILE -- PROGRAM' (every process\n"
		"of the run writes samples; --pid picks one, default the one with the most).\n",
		PLOT_POINTS);
	return out == stdout ? 0 : 2;
}

typedef struct plot_ctx {
	vis_point_t *p;
	size_t n, stride;
	const char *what;
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
	if ((op + 1) % c->stride == 0 || op + 1 == nops)
		sample(c, hl_replay_heap(rp), (double)(op + 1));
	cli_progress(c->what, op + 1, nops);
	return 0;
}

/* Replays the trace, sampling every `stride` ops; NULL after a message. */
static vis_point_t *plot_trace(const hl_trace_t *t, const char *path, const char *policy, const char *conf,
			       size_t *n)
{
	size_t nops = hl_trace_ops(t);
	plot_ctx_t c = { .stride = nops / PLOT_POINTS + 1, .what = path };
	c.p = calloc(nops / c.stride + 3, sizeof *c.p);
	hl_heap_t *h = c.p ? hl_heap_new(policy, conf) : NULL;
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
	hl_heap_destroy(h);
	if (bad)
		fprintf(stderr, "heaplab: plot: %s (plotting up to there)\n", r.message);
	*n = c.n;
	return c.p;
}

int cmd_plot(int argc, char **argv)
{
	const char *policy = NULL, *conf = NULL, *out = "plot.svg", *samples = NULL, *trace = NULL, *pid = NULL;
	for (int i = 1; i < argc; i++) {
		int r;
		if ((r = cli_opt(argc, argv, &i, "--policy", &policy)) || (r = cli_opt(argc, argv, &i, "--conf", &conf)) ||
		    (r = cli_opt(argc, argv, &i, "-o", &out)) || (r = cli_opt(argc, argv, &i, "--output", &out)) ||
		    (r = cli_opt(argc, argv, &i, "--samples", &samples)) || (r = cli_opt(argc, argv, &i, "--pid", &pid))) {
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
		p = t ? plot_trace(t, trace, names[0], conf, &n) : NULL;
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
	int bad = vis_plot_svg(f, p, n, title, samples ? "milliseconds since heaplab run started" : "ops");
	bad |= fclose(f);
	free(p);
	if (bad)
		return cli_error("plot: writing %s failed", out);
	fprintf(stderr, "heaplab: plot: wrote %s (%zu points)\n", out, n);
	return 0;
}
