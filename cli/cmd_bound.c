/* heaplab bound: the least memory any allocator needs for a trace, the
 * best layout found knowing the whole trace, and every policy beside them
 * (visualize/bound.h does the work). */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "../visualize/vis.h"
#include "../visualize/bound.h"

#define MAX_POLICIES 16

static int bound_usage(FILE *out)
{
	fprintf(out,
		"usage: heaplab bound [--policy=NAME[,NAME]|all] [--conf=S] [--offline-max=N]\n"
		"                     [--verify] [--json] TRACE...\n"
		"The least memory any allocator needs for each trace (the peak of live bytes:\n"
		"the bound), the best layout found knowing the whole trace (first fit and best\n"
		"fit without headers, and an offline placement of every lifetime, largest\n"
		"block first, for traces of at most N blocks, default 5000), and each policy's\n"
		"peak committed and peak resident bytes as a multiple of the bound (default:\n"
		"every compiled-in policy).  The optimum lies between the bound and the best\n"
		"layout found.  --verify checks every layout block by block (slow on long\n"
		"traces).  --json prints one object per trace.  Exit 1 when a replay or a\n"
		"layout check fails, 2 on bad input.\n");
	return out == stdout ? 0 : 2;
}

typedef struct bound_args {
	const char *policies[MAX_POLICIES];
	int npolicies;
	const char *conf;
	long long offline_max;
	bool verify, json;
	char **traces;
	int ntraces;
} bound_args_t;

static int parse_args(int argc, char **argv, bound_args_t *a)
{
	const char *policy = NULL, *offline_max = NULL;
	memset(a, 0, sizeof *a);
	a->offline_max = 5000;
	a->traces = calloc((size_t)argc, sizeof *a->traces);
	if (!a->traces)
		return cli_error("out of memory");
	for (int i = 1; i < argc; i++) {
		int r;
		if ((r = cli_opt(argc, argv, &i, "--policy", &policy)) || (r = cli_opt(argc, argv, &i, "--conf", &a->conf)) ||
		    (r = cli_opt(argc, argv, &i, "--offline-max", &offline_max))) {
			if (r < 0)
				return 2;
		} else if (!strcmp(argv[i], "--json"))
			a->json = true;
		else if (!strcmp(argv[i], "--verify"))
			a->verify = true;
		else if (!strcmp(argv[i], "--help"))
			return bound_usage(stdout) == 0 ? -1 : 2;
		else if (argv[i][0] == '-' && argv[i][1])
			return cli_error("unknown option '%s' (try --help)", argv[i]);
		else
			a->traces[a->ntraces++] = argv[i];
	}
	if (!a->ntraces)
		return bound_usage(stderr);
	if (offline_max && (a->offline_max = cli_parse_size(offline_max)) < 0)
		return cli_error("bad --offline-max '%s'", offline_max);
	a->npolicies = cli_policy_list(policy ? policy : "all", a->policies, MAX_POLICIES);
	return a->npolicies ? 0 : 2;
}

static double times(size_t x, size_t bound)
{
	return bound ? (double)x / (double)bound : 0;
}

static void print_text(const char *path, const hl_trace_t *t, const vis_bound_t *b)
{
	char v[32], w[32];
	printf("%s: %zu ops, %zu blocks\n", path, hl_trace_ops(t), b->blocks);
	printf("  %-38s %12s  (after op %zu)\n", "bound: peak of live bytes", vis_bytes((double)b->bound, v, sizeof v),
	       b->bound_op + 1);
	for (int k = 0; k < VIS_LAYOUTS; k++) {
		char label[64];
		snprintf(label, sizeof label, "layout found by %s%s", vis_layout_name(k),
			 (vis_layout_kind_t)k == b->found_by ? " (best)" : "");
		if (b->span[k])
			printf("  %-38s %12s  %6.3f x bound\n", label, vis_bytes((double)b->span[k], w, sizeof w),
			       times(b->span[k], b->bound));
		else if (k == VIS_LAYOUT_OFFLINE)
			printf("  %-38s %12s  (more blocks than --offline-max)\n", label, "-");
	}
	printf("  %-10s %16s %9s %16s %9s\n", "policy", "peak committed", "x bound", "peak resident", "x bound");
}

static void print_json_head(const char *path, const hl_trace_t *t, const vis_bound_t *b)
{
	printf("{");
	cli_json_str("trace", path, true);
	printf("\"ops\":%zu,\"blocks\":%zu,\"bound_bytes\":%zu,\"bound_op\":%zu,\"found_bytes\":%zu,", hl_trace_ops(t),
	       b->blocks, b->bound, b->bound_op + 1, b->found);
	cli_json_str("found_by", vis_layout_name(b->found_by), true);
	printf("\"layouts\":{");
	for (int k = 0, n = 0; k < VIS_LAYOUTS; k++)
		if (b->span[k])
			printf("%s\"%s\":%zu", n++ ? "," : "", vis_layout_name(k), b->span[k]);
	printf("},\"policies\":[");
}

/* One trace: the bound, then each policy.  0, 1 (a replay failed) or 2. */
static int bound_one(const bound_args_t *a, const char *path)
{
	hl_trace_t *t = cli_load_trace(path, false);
	if (!t)
		return 2;
	vis_bound_t b;
	if (vis_bound(t, (size_t)a->offline_max, a->verify, &b)) {
		cli_last_error();
		hl_trace_free(t);
		return 1;
	}
	if (a->json)
		print_json_head(path, t, &b);
	else
		print_text(path, t, &b);
	int status = 0;
	for (int p = 0, n = 0; p < a->npolicies; p++) {
		vis_bound_policy_t m;
		cli_progress(a->policies[p], (size_t)p, (size_t)a->npolicies);
		if (vis_bound_policy(t, a->policies[p], a->conf, &m)) {
			cli_progress_done();
			cli_last_error();
			status = 1;
			continue;
		}
		cli_progress_done();
		char c[32], r[32];
		if (a->json) {
			printf("%s{", n++ ? "," : "");
			cli_json_str("policy", a->policies[p], true);
			printf("\"peak_committed\":%zu,\"peak_resident\":%zu,\"peak_resident_with_metadata\":%zu,"
			       "\"committed_x_bound\":%.4f,\"resident_x_bound\":%.4f}",
			       m.peak_committed, m.peak_resident, m.peak_resident_meta, times(m.peak_committed, b.bound),
			       times(m.peak_resident, b.bound));
		} else {
			printf("  %-10s %16s %9.3f %16s %9.3f\n", a->policies[p],
			       vis_bytes((double)m.peak_committed, c, sizeof c), times(m.peak_committed, b.bound),
			       vis_bytes((double)m.peak_resident, r, sizeof r), times(m.peak_resident, b.bound));
		}
		fflush(stdout);
	}
	printf(a->json ? "]}\n" : "\n");
	hl_trace_free(t);
	return status;
}

int cmd_bound(int argc, char **argv)
{
	bound_args_t a;
	int rc = parse_args(argc, argv, &a);
	int status = rc < 0 ? 0 : rc;
	for (int i = 0; rc == 0 && i < a.ntraces; i++) {
		int one = bound_one(&a, a.traces[i]);
		if (one > status)
			status = one;
	}
	free(a.traces);
	return status;
}
