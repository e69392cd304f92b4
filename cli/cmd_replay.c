/* heaplab replay and heaplab compare: traces through policies, checked,
 * with utilization and throughput. */
#include "config.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cli.h"
#include "../diagnose/diagnose.h"
#include "../visualize/vis.h"

#define MAX_POLICIES 16

typedef struct replay_args {
	const char *policies[MAX_POLICIES];
	int npolicies;
	const char *conf;
	bool json, stats, quiet;
	bool lenient;            /* a trace cut short is replayed as far as it goes */
	int explain;             /* 0 no, 1 plain English, 2 JSON */
	long long check_every;   /* -1: chosen from the trace length */
	int repeat;
	long long op_ns;         /* clock per op for a trace without "#@t" */
	const char *snapshot;    /* DOT of the heap at the end */
	const char *snapshot_dir;/* DOT at every `s label` op */
	char **traces;
	int ntraces;
} replay_args_t;

static int replay_usage(FILE *out)
{
	fprintf(out,
		"usage: heaplab replay [--policy=NAME[,NAME]|all] [--conf=S] [--json] [--stats]\n"
		"                      [--check-every N] [--repeat N] [--op-ns N] [--snapshot FILE.dot]\n"
		"                      [--snapshot-dir DIR] [--explain[=json]] [--lenient] TRACE...\n"
		"Replays each trace on a fresh heap of each policy: fills every block with a\n"
		"pattern, checks alignment, overlap and contents, runs the heap checker every\n"
		"N ops (default: every op up to 20,000 ops, else 200 times), then times\n"
		"N more passes without checks (default 1).  Prints ops, utilization (peak live\n"
		"requested / peak committed) and Kops/s.  Exit 1 when a check fails, 2 on bad input:\n"
		"a trace cut short (fewer ops than its header says, a last line cut mid-field)\n"
		"is bad input unless --lenient, which replays what is there, with a warning.\n"
		"--snapshot-dir creates DIR and writes the heap's DOT at every `s LABEL` op as\n"
		"DIR/POLICY-LABEL.dot; a file it cannot write is an error (exit 2).\n"
		"The heap's clock (decay, purge delays, release rates, background threads)\n"
		"follows the trace: a recording's \"#@t\" times, else N ns per op (--op-ns,\n"
		"default 0: no time passes); after the last op it runs on to the trace's end.\n"
		"--explain prints, instead of the table, every operation with the steps the\n"
		"policy took (its decision events, one line each) and the net change in live (usable),\n"
		"committed and resident bytes and OS calls; --explain=json prints one JSON\n"
		"object per operation (fields: policy, op, line, text, kind, id, size, addr,\n"
		"events[kind, what, index, size, size2, before, after, addr, text],\n"
		"lost_events, delta and after{live, committed, resident, os_calls}).  No timed\n"
		"passes are run with --explain.\n");
	return out == stdout ? 0 : 2;
}

static int parse_args(int argc, char **argv, replay_args_t *a, int (*usage)(FILE *))
{
	const char *policy = NULL, *every = NULL, *repeat = NULL, *op_ns = NULL;
	memset(a, 0, sizeof *a);
	a->check_every = -1;
	a->repeat = 1;
	a->traces = calloc((size_t)argc, sizeof *a->traces);
	for (int i = 1; i < argc; i++) {
		int r;
		if ((r = cli_opt(argc, argv, &i, "--policy", &policy)) || (r = cli_opt(argc, argv, &i, "--conf", &a->conf)) ||
		    (r = cli_opt(argc, argv, &i, "--check-every", &every)) ||
		    (r = cli_opt(argc, argv, &i, "--repeat", &repeat)) ||
		    (r = cli_opt(argc, argv, &i, "--op-ns", &op_ns)) ||
		    (r = cli_opt(argc, argv, &i, "--snapshot-dir", &a->snapshot_dir)) ||
		    (r = cli_opt(argc, argv, &i, "--snapshot", &a->snapshot))) {
			if (r < 0)
				return 2;
		} else if (!strcmp(argv[i], "--json"))
			a->json = true;
		else if (!strcmp(argv[i], "--stats"))
			a->stats = true;
		else if (!strcmp(argv[i], "--lenient"))
			a->lenient = true;
		else if (!strcmp(argv[i], "--explain") || !strcmp(argv[i], "--explain=text"))
			a->explain = 1;
		else if (!strcmp(argv[i], "--explain=json"))
			a->explain = 2;
		else if (!strncmp(argv[i], "--explain=", 10))
			return cli_error("bad --explain '%s' (text or json)", argv[i] + 10);
		else if (!strcmp(argv[i], "--help"))
			return usage(stdout) == 0 ? -1 : 2;
		else if (argv[i][0] == '-' && argv[i][1])
			return cli_error("unknown option '%s' (try --help)", argv[i]);
		else
			a->traces[a->ntraces++] = argv[i];
	}
	if (!a->ntraces) {
		usage(stderr);
		return 2;
	}
	if (every && (a->check_every = cli_parse_size(every)) < 0)
		return cli_error("bad --check-every '%s'", every);
	if (repeat) {
		long long r = cli_parse_size(repeat);
		if (r < 0 || r > 1000)
			return cli_error("bad --repeat '%s' (0..1000)", repeat);
		a->repeat = (int)r;
	}
	if (op_ns && (a->op_ns = cli_parse_size(op_ns)) < 0)
		return cli_error("bad --op-ns '%s'", op_ns);
	if (a->explain)
		a->repeat = 0;
	a->npolicies = cli_policy_list(policy ? policy : hl_default_policy(), a->policies, MAX_POLICIES);
	return a->npolicies ? 0 : 2;
}

typedef struct progress_ctx {
	const char *what;
	const replay_args_t *args;
	const char *policy;
	size_t passes;
	size_t done;
	vis_explain_t *explain;  /* NULL unless --explain */
	bool write_failed;       /* a snapshot could not be written */
} progress_ctx_t;

/* Writes the heap's DOT to @p path; 2 after one line when it cannot. */
static int write_snapshot(hl_heap_t *h, const char *path, const char *title)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return cli_error("cannot write %s: %s", path, strerror(errno));
	hl_snapshot_dot(h, f, title);
	if (ferror(f) | (fclose(f) != 0))
		return cli_error("cannot write %s: %s", path, strerror(errno));
	return 0;
}

/* mkdir -p @p dir; 2 after one line when it cannot. */
static int make_dir(const char *dir)
{
	char path[4096];
	if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path)
		return cli_error("cannot create %s: name too long", dir);
	for (char *p = path + 1;; p++) {
		bool end = *p == 0;
		if (*p != '/' && !end)
			continue;
		*p = 0;
		struct stat st;
		if (mkdir(path, 0777) != 0 && !(errno == EEXIST && stat(path, &st) == 0 && S_ISDIR(st.st_mode)))
			return cli_error("cannot create %s: %s", path, strerror(errno == EEXIST ? ENOTDIR : errno));
		if (end)
			return 0;
		*p = '/';
	}
}

static int after_op(const hl_replay_t *rp, void *arg)
{
	hl_heap_t *h = hl_replay_heap(rp);
	const hl_trace_t *t = hl_replay_trace(rp);
	size_t op = hl_replay_op(rp);
	progress_ctx_t *pc = arg;
	pc->done++;
	if (pc->explain && pc->done <= hl_trace_ops(t))
		vis_explain_op(pc->explain, rp, stdout, pc->args->explain == 2);
	cli_progress(pc->what, pc->done, hl_trace_ops(t) * pc->passes);
	const char *label = hl_trace_op_label(t, op);
	if (label && pc->args->snapshot_dir && pc->done <= hl_trace_ops(t)) {
		char path[4096];
		snprintf(path, sizeof path, "%s/%s-%s.dot", pc->args->snapshot_dir, pc->policy, label);
		if (!pc->write_failed && write_snapshot(h, path, label) != 0)
			pc->write_failed = true; /* one line, not one per label */
	}
	return 0;
}

/* Replays one trace on one policy; fills *r.  Returns 0, 1 (check failed)
 * or 2 (the heap could not be made, or a snapshot not written). */
static int replay_one(const replay_args_t *a, const hl_trace_t *t, const char *path, const char *policy,
		      hl_replay_result_t *r, bool print_stats)
{
	hl_heap_t *h = hl_heap_new_replay(policy, a->conf);
	if (!h)
		return cli_error("%s", hl_last_error());
	size_t nops = hl_trace_ops(t);
	progress_ctx_t pc = { path, a, policy, (size_t)(1 + a->repeat), 0, NULL, false };
	if (a->explain && !(pc.explain = vis_explain_new(h))) {
		hl_heap_destroy(h);
		return cli_last_error();
	}
	hl_replay_opts_t o = {
		.verify = true,
		.check_heap = a->check_every != 0,
		.check_every = a->check_every > 0 ? (size_t)a->check_every : (nops <= 20000 ? 1 : nops / 200),
		.repeat = a->repeat,
		.after_op = after_op,
		.arg = &pc,
		.op_ns = (uint64_t)a->op_ns,
	};
	int rc = hl_replay(h, t, &o, r) == 0 ? 0 : 1;
	vis_explain_free(pc.explain);
	cli_progress_done();
	if (print_stats)
		hl_stats_text(h, stdout);
	if (a->snapshot && write_snapshot(h, a->snapshot, path) != 0)
		pc.write_failed = true;
	hl_heap_destroy(h);
	return pc.write_failed && rc == 0 ? 2 : rc;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

static double kops(const hl_replay_result_t *r)
{
	return r->seconds > 0 ? (double)r->ops / r->seconds / 1000.0 : 0.0;
}

/* One row as JSON; with @p t, its "sampled" (diagnose/sample.c: null when
 * the trace is replayed whole). */
static void print_json(const char *trace, const char *policy, const hl_replay_result_t *r, const hl_trace_t *t)
{
	printf("{\"trace\":\"%s\",\"policy\":\"%s\",\"ops\":%zu,\"utilization\":%.4f,\"kops\":%.1f,"
	       "\"peak_requested\":%zu,\"peak_committed\":%zu,\"ok\":%s",
	       trace, policy, r->ops, r->utilization, kops(r), r->peak_requested, r->peak_committed,
	       r->ok ? "true" : "false");
	if (t) {
		printf(",\"sampled\":");
		dx_sampling_json(stdout, t);
	}
	if (!r->ok) {
		printf(",\"error\":\"");
		for (const char *c = r->message; *c; c++)
			printf(*c == '"' || *c == '\\' ? "\\%c" : "%c", *c);
		printf("\"");
	}
	printf("}\n");
}

static void free_all(hl_trace_t **traces, int n)
{
	for (int i = 0; i < n; i++)
		hl_trace_free(traces[i]);
	free(traces);
}

/* Reads every trace of @p a; NULL after their errors (exit status 2). */
static hl_trace_t **load_all(const replay_args_t *a)
{
	hl_trace_t **traces = calloc((size_t)a->ntraces, sizeof *traces);
	if (!traces) {
		cli_error("out of memory");
		return NULL;
	}
	bool ok = true;
	for (int i = 0; i < a->ntraces; i++)
		ok &= (traces[i] = cli_load_trace(a->traces[i], a->lenient)) != NULL;
	if (!ok) {
		free_all(traces, a->ntraces);
		return NULL;
	}
	return traces;
}

int cmd_replay(int argc, char **argv)
{
	replay_args_t a;
	int rc = parse_args(argc, argv, &a, replay_usage);
	if (rc) {
		free(a.traces);
		return rc < 0 ? 0 : rc;
	}
	/* every trace is read, and the snapshot folder made, before the table's
	 * header: bad input is one line and exit 2, with no table above it */
	hl_trace_t **traces = load_all(&a);
	int status = traces ? 0 : 2;
	if (status == 0 && a.snapshot_dir && (status = make_dir(a.snapshot_dir)) != 0)
		free_all(traces, a.ntraces);
	if (status != 0) {
		free(a.traces);
		return status;
	}
	if (!a.json && !a.explain)
		printf("%-22s %-9s %9s %7s %10s  %s\n", "trace", "policy", "ops", "util", "Kops/s", "result");
	for (int i = 0; i < a.ntraces; i++) {
		hl_trace_t *t = traces[i];
		for (int p = 0; p < a.npolicies; p++) {
			hl_replay_result_t r;
			int one = replay_one(&a, t, a.traces[i], a.policies[p], &r, a.stats);
			if (one == 2) {
				status = 2;
				continue;
			}
			if (a.explain == 1)
				printf("%s on %s: %s\n\n", base_name(a.traces[i]), a.policies[p], r.ok ? "ok" : "FAILED");
			else if (a.explain == 2)
				fflush(stdout);
			else if (a.json)
				print_json(base_name(a.traces[i]), a.policies[p], &r, t);
			else
				printf("%-22s %-9s %9zu %6.1f%% %10.0f  %s\n", base_name(a.traces[i]), a.policies[p], r.ops,
				       100 * r.utilization, kops(&r), r.ok ? "ok" : "FAILED");
			if (!r.ok) {
				fprintf(stderr, "%s\n", r.message);
				if (status == 0)
					status = 1;
			}
		}
		if (!a.json && !a.explain)
			dx_sampling_text(stdout, t, false);
		hl_trace_free(t);
	}
	free(traces);
	free(a.traces);
	return status;
}

static int compare_usage(FILE *out)
{
	fprintf(out, "usage: heaplab compare [--policy=LIST|all] [--conf=S] [--json] [--lenient] TRACE...\n"
		     "One table: utilization and Kops/s of every policy on every trace, and the means.\n"
		     "A trace cut short is bad input (exit 2) unless --lenient.\n");
	return out == stdout ? 0 : 2;
}

int cmd_compare(int argc, char **argv)
{
	replay_args_t a;
	int rc = parse_args(argc, argv, &a, compare_usage);
	if (rc)
		return rc < 0 ? 0 : rc;
	bool policy_given = false;
	for (int i = 1; i < argc; i++)
		policy_given |= !strncmp(argv[i], "--policy", 8);
	if (!policy_given)
		a.npolicies = cli_policy_list("all", a.policies, MAX_POLICIES);
	double util_sum[MAX_POLICIES] = { 0 }, kops_sum[MAX_POLICIES] = { 0 };
	int counted[MAX_POLICIES] = { 0 }, status = 0;
	hl_trace_t **traces = load_all(&a); /* bad input before any table */
	if (!traces) {
		free(a.traces);
		return 2;
	}
	if (!a.json) {
		printf("%-22s", "trace (util / Kops/s)");
		for (int p = 0; p < a.npolicies; p++)
			printf(" %16s", a.policies[p]);
		printf("\n");
	}
	for (int i = 0; i < a.ntraces; i++) {
		hl_trace_t *t = traces[i];
		if (!a.json)
			printf("%-22s", base_name(a.traces[i]));
		for (int p = 0; p < a.npolicies; p++) {
			hl_replay_result_t r;
			int one = replay_one(&a, t, a.traces[i], a.policies[p], &r, false);
			if (one != 0 || !r.ok) {
				status = status ? status : (one == 2 ? 2 : 1);
				if (!a.json)
					printf(" %16s", "FAILED");
				else
					print_json(base_name(a.traces[i]), a.policies[p], &r, NULL);
				if (one == 1)
					fprintf(stderr, "%s\n", r.message);
				continue;
			}
			util_sum[p] += r.utilization;
			kops_sum[p] += kops(&r);
			counted[p]++;
			if (a.json)
				print_json(base_name(a.traces[i]), a.policies[p], &r, NULL);
			else
				printf(" %6.1f%% / %6.0f", 100 * r.utilization, kops(&r));
		}
		if (!a.json)
			printf("\n");
		fflush(stdout);
		hl_trace_free(t);
	}
	if (!a.json) {
		printf("%-22s", "mean");
		for (int p = 0; p < a.npolicies; p++)
			if (counted[p])
				printf(" %6.1f%% / %6.0f", 100 * util_sum[p] / counted[p], kops_sum[p] / counted[p]);
			else
				printf(" %16s", "-");
		printf("\n");
	}
	free(traces);
	free(a.traces);
	return status;
}
