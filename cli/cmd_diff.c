/* heaplab diff: what changed in the heap between two moments of a trace. */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "../visualize/vis.h"

typedef struct diff_args {
	const char *trace, *policy, *conf;
	const char *from, *to;    /* moments: "start", an op number, a label */
	bool json;
} diff_args_t;

static int usage(FILE *out)
{
	fputs("usage: heaplab diff TRACE FROM TO [--policy=NAME] [--conf=S] [--json]\n"
	      "Replays TRACE and says what changed in the heap between two moments: FROM\n"
	      "and TO are each 'start' (the empty heap), an op number N (the heap after\n"
	      "op N, counting from 1, as the stepper numbers them) or a label ('s NAME' in\n"
	      "the trace, given as NAME).  Blocks are matched by the bytes they cover:\n"
	      "  changed      one block, now in another state, size or start\n"
	      "  split        one block became several (a chunk carved from top)\n"
	      "  merged       several became one (coalescing)\n"
	      "  reshaped     several became several\n"
	      "  appeared     a block where nothing was (a new region)\n"
	      "  disappeared  nothing left where a block was (a region returned)\n"
	      "then the change in live, committed and resident bytes and in OS calls.\n"
	      "--json prints the same as one JSON object (the stepper's 'compare' uses the\n"
	      "same rule).\n",
	      out);
	return out == stdout ? 0 : 2;
}

static int parse(int argc, char **argv, diff_args_t *a)
{
	memset(a, 0, sizeof *a);
	for (int i = 1; i < argc; i++) {
		int r;
		if ((r = cli_opt(argc, argv, &i, "--policy", &a->policy)) ||
		    (r = cli_opt(argc, argv, &i, "--conf", &a->conf))) {
			if (r < 0)
				return 2;
		} else if (!strcmp(argv[i], "--json"))
			a->json = true;
		else if (!strcmp(argv[i], "--help"))
			return usage(stdout) ? 2 : -1;
		else if (argv[i][0] == '-' && argv[i][1])
			return cli_error("diff: unknown option '%s' (try --help)", argv[i]);
		else if (!a->trace)
			a->trace = argv[i];
		else if (!a->from)
			a->from = argv[i];
		else if (!a->to)
			a->to = argv[i];
		else
			return cli_error("diff: one trace and two moments ('%s' is one too many)", argv[i]);
	}
	if (!a->to)
		return usage(stderr);
	const char *names[1];
	if (!cli_policy_list(a->policy ? a->policy : hl_default_policy(), names, 1))
		return 2;
	a->policy = names[0];
	return 0;
}

/* The frame of moment @p s, or -1 after an error message. */
static long moment(const vis_walk_t *w, const char *s)
{
	if (!strcmp(s, "start"))
		return 0;
	char *end;
	unsigned long long n = strtoull(s, &end, 10);
	if (*s >= '0' && *s <= '9' && !*end) {
		if (n >= w->nframes)
			return cli_error("diff: op %s is past the trace's last op (%zu)", s, w->nframes - 1), -1;
		return (long)n;
	}
	const char *name = !strncmp(s, "s ", 2) ? s + 2 : s;
	for (size_t k = 1; k < w->nframes; k++)
		if (w->frames[k].label && !strcmp(w->frames[k].label, name))
			return (long)k;
	return cli_error("diff: no label '%s' in the trace (a moment is 'start', an op number or a label)",
			 name), -1;
}

static void text_blocks(const vis_blocks_t *s, size_t first, size_t n)
{
	if (!n)
		fputs("nothing", stdout);
	for (size_t i = first; i < first + n; i++)
		printf("%s%s %s %zu", i > first ? " + " : "", s->b[i].name, hl_block_state_name(s->b[i].state),
		       s->b[i].size);
}

static void json_blocks(const vis_blocks_t *s, size_t first, size_t n)
{
	putchar('[');
	for (size_t i = first; i < first + n; i++) {
		printf("%s{", i > first ? "," : "");
		cli_json_str("name", s->b[i].name, true);
		cli_json_str("id", s->b[i].id, true);
		cli_json_str("state", hl_block_state_name(s->b[i].state), true);
		printf("\"size\":%zu}", s->b[i].size);
	}
	putchar(']');
}

static void text_report(const diff_args_t *a, const vis_walk_t *w, long from, long to, const vis_blocks_t *x,
			const vis_blocks_t *y, const vis_diff_t *d)
{
	char f[32] = "the start", t[32] = "the start";
	if (from)
		snprintf(f, sizeof f, "after op %ld", from);
	if (to)
		snprintf(t, sizeof t, "after op %ld", to);
	printf("heaplab diff: %s on %s, %s -> %s: %zu change%s\n", a->trace, a->policy, f, t, d->n,
	       d->n == 1 ? "" : "s");
	for (size_t i = 0; i < d->n; i++) {
		const vis_change_t *c = &d->c[i];
		printf("  %-11s ", vis_change_name(c->kind));
		text_blocks(x, c->before, c->nbefore);
		fputs(" -> ", stdout);
		text_blocks(y, c->after, c->nafter);
		putchar('\n');
	}
	const vis_stats_t *p = &w->frames[from].st, *q = &w->frames[to].st;
	printf("live requested %+.0f B, committed %+.0f B, resident %+.0f B, OS calls %+.0f\n",
	       q->live - p->live, q->committed - p->committed, q->resident - p->resident,
	       q->oscalls - p->oscalls);
}

static void json_report(const diff_args_t *a, const vis_walk_t *w, long from, long to, const vis_blocks_t *x,
			const vis_blocks_t *y, const vis_diff_t *d)
{
	putchar('{');
	cli_json_str("trace", a->trace, true);
	cli_json_str("policy", a->policy, true);
	printf("\"from\":%ld,\"to\":%ld,\"changes\":[", from, to);
	for (size_t i = 0; i < d->n; i++) {
		const vis_change_t *c = &d->c[i];
		printf("%s{", i ? "," : "");
		cli_json_str("kind", vis_change_name(c->kind), true);
		fputs("\"before\":", stdout);
		json_blocks(x, c->before, c->nbefore);
		fputs(",\"after\":", stdout);
		json_blocks(y, c->after, c->nafter);
		putchar('}');
	}
	const vis_stats_t *p = &w->frames[from].st, *q = &w->frames[to].st;
	printf("],\"live\":%.0f,\"committed\":%.0f,\"resident\":%.0f,\"os_calls\":%.0f}\n", q->live - p->live,
	       q->committed - p->committed, q->resident - p->resident, q->oscalls - p->oscalls);
}

int cmd_diff(int argc, char **argv)
{
	diff_args_t a;
	int rc = parse(argc, argv, &a);
	if (rc)
		return rc < 0 ? 0 : rc;
	hl_trace_t *t = cli_load_trace(a.trace, false);
	if (!t)
		return 2;
	vis_walk_t w;
	rc = vis_walk_trace_blocks(a.policy, a.conf, t, 0, a.trace, cli_progress_cb, &w);
	if (rc == 2) {
		vis_walk_free(&w);
		hl_trace_free(t);
		return cli_last_error();
	}
	if (rc == 1)
		fprintf(stderr, "heaplab: diff: %s\n", w.result.message);
	long from = moment(&w, a.from), to = from < 0 ? -1 : moment(&w, a.to);
	vis_blocks_t x = { 0 }, y = { 0 };
	vis_diff_t d = { 0 };
	if (from < 0 || to < 0)
		rc = 2;
	else if (vis_walk_blocks_at(&w, (size_t)from, &x) < 0 || vis_walk_blocks_at(&w, (size_t)to, &y) < 0 ||
		 vis_diff(&x, &y, &d) < 0)
		rc = cli_last_error();
	else if (a.json)
		json_report(&a, &w, from, to, &x, &y, &d);
	else
		text_report(&a, &w, from, to, &x, &y, &d);
	vis_diff_free(&d);
	vis_blocks_free(&x);
	vis_blocks_free(&y);
	vis_walk_free(&w);
	hl_trace_free(t);
	return rc;
}
