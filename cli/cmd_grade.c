/* heaplab grade: the malloc-lab score of a policy.
 *
 * For every trace, the graded policy and a reference policy each replay it
 * in a child process (so a crashing or looping student policy costs that
 * trace, not the grader): one checked pass (payloads filled and verified,
 * alignment, overlap, the policy's checker), then timed passes without
 * checks.  The score, in the spirit of the CMU lab's driver:
 *
 *   U  = mean over scored traces of utilization (0 for a failed trace)
 *   T  = total ops / total seconds of the graded policy over the traces
 *        both policies replayed correctly, scaled by the fraction correct
 *   Tr = the same for the reference policy, measured in the same run
 *   index = 100 * (w U + (1 - w) min(1, T / Tr)),   w = 0.6 by default
 *
 * Trace weights: the classic header's fourth number is unused (every trace
 * counts); the 64-bit lab's header starts with a weight code: 0 = not
 * scored, 1 = utilization and throughput, 2 = utilization only,
 * 3 = throughput only.
 */
#include "config.h"
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cli.h"
#include "../visualize/bound.h"

#ifndef HL_BOOK_DIR
#define HL_BOOK_DIR "book"
#endif
/* The shipped traces sit next to the book in the source tree. */
#define GRADE_TRACE_DIR HL_BOOK_DIR "/../traces"

enum { SCORE_UTIL = 1, SCORE_TPUT = 2, SCORE_ALL = 3, MAX_TRACES = 512 };

/* The classic scored set of the lab (balanced versions) and the two short
 * debugging traces. */
static const char *const default_traces[] = {
	"amptjp-bal.rep", "cccp-bal.rep", "cp-decl-bal.rep", "expr-bal.rep",
	"coalescing-bal.rep", "random-bal.rep", "random2-bal.rep", "binary-bal.rep",
	"binary2-bal.rep", "realloc-bal.rep", "realloc2-bal.rep", "short1-bal.rep",
	"short2-bal.rep", NULL,
};

typedef struct grade_args {
	const char *policy, *reference, *conf, *ref_conf;
	double weight;      /* w: share of utilization in the index */
	int repeat;         /* timed passes per trace */
	unsigned timeout;   /* seconds per replay, 0 = none */
	bool json;
	char *traces[MAX_TRACES];
	int ntraces;
} grade_args_t;

/* One policy on one trace. */
typedef struct run {
	bool ok;
	char error[256];
	double util, seconds;
	size_t ops;         /* ops timed: trace ops x passes */
} run_t;

typedef struct row {
	const char *name;
	int scoring;        /* SCORE_* bits from the trace's weight */
	double best;        /* utilization of the best layout found knowing the
	                       trace (heaplab bound): the peak of live bytes
	                       over that layout's span; 0 when not computed */
	run_t mine, ref;
} row_t;

static int grade_usage(FILE *out)
{
	fprintf(out,
		"usage: heaplab grade [--policy=NAME] [--reference=NAME] [--conf=S] [--ref-conf=S]\n"
		"                     [--weight=W] [--repeat=N] [--timeout=SECONDS] [--json]\n"
		"                     [TRACE|DIR ...]\n"
		"Scores a policy like the malloc lab's driver: each trace is replayed with full\n"
		"checking (any error scores zero for that trace), then timed.  The index is\n"
		"100 * (W * mean utilization + (1 - W) * min(1, throughput / reference throughput)),\n"
		"the reference being measured in the same run.  Defaults: policy student (when\n"
		"compiled in), reference firstfit, W 0.6, 3 timed passes, 60 s per replay of the\n"
		"graded policy.  A DIR means every *.rep in it; a name that is not a file is\n"
		"looked up in $HEAPLAB_TRACES or %s.  Without traces the\n"
		"classic set is used: %s ...\n"
		"Exit 0 when every trace is correct, 1 otherwise, 2 on bad usage.\n",
		GRADE_TRACE_DIR, default_traces[0]);
	return out == stdout ? 0 : 2;
}

/* ---- traces ------------------------------------------------------------- */

static int add_trace(grade_args_t *a, const char *path)
{
	if (a->ntraces >= MAX_TRACES)
		return cli_error("too many traces (at most %d)", MAX_TRACES);
	a->traces[a->ntraces++] = strdup(path);
	return 0;
}

static int by_name(const void *x, const void *y) { return strcmp(*(char *const *)x, *(char *const *)y); }

/* Adds every *.rep of a directory, in name order. */
static int add_dir(grade_args_t *a, const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return cli_error("cannot read %s: %s", dir, strerror(errno));
	int first = a->ntraces, rc = 0;
	for (struct dirent *e; !rc && (e = readdir(d));) {
		size_t n = strlen(e->d_name);
		if (n > 4 && !strcmp(e->d_name + n - 4, ".rep")) {
			char path[4096];
			snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
			rc = add_trace(a, path);
		}
	}
	closedir(d);
	qsort(a->traces + first, (size_t)(a->ntraces - first), sizeof *a->traces, by_name);
	return rc;
}

/* A name that is neither a file nor a directory is looked up among the
 * shipped traces ("random-bal" or "random-bal.rep"). */
static int add_arg(grade_args_t *a, const char *arg)
{
	struct stat sb;
	if (stat(arg, &sb) == 0)
		return S_ISDIR(sb.st_mode) ? add_dir(a, arg) : add_trace(a, arg);
	const char *dir = getenv("HEAPLAB_TRACES") ? getenv("HEAPLAB_TRACES") : GRADE_TRACE_DIR;
	char path[4096];
	bool has_ext = strlen(arg) > 4 && !strcmp(arg + strlen(arg) - 4, ".rep");
	snprintf(path, sizeof path, "%s/%s%s", dir, arg, has_ext ? "" : ".rep");
	if (stat(path, &sb) != 0)
		return cli_error("no trace '%s' (nor %s)", arg, path);
	return add_trace(a, path);
}

static int add_defaults(grade_args_t *a)
{
	for (int i = 0; default_traces[i]; i++)
		if (add_arg(a, default_traces[i]))
			return 2;
	return 0;
}

/* Which measures a trace counts in, from its header's weight. */
static int trace_scoring(const hl_trace_t *t)
{
	long header[4];
	if (!hl_trace_header(t, header))
		return SCORE_ALL;
	/* 64-bit lab: weight code first, peak bytes last.  Classic: heap size
	 * first, weight (unused) last. */
	bool later_style = header[0] >= 0 && header[0] <= 3 && header[3] > 3;
	if (!later_style)
		return SCORE_ALL;
	static const int codes[4] = { 0, SCORE_ALL, SCORE_UTIL, SCORE_TPUT };
	return codes[header[0]];
}

/* ---- one replay in a child process --------------------------------------- */

static void child_replay(const grade_args_t *a, const hl_trace_t *t, const char *policy, const char *conf,
			 bool timed, int fd)
{
	run_t out = { 0 };
	if (timed && a->timeout)
		alarm(a->timeout);
	hl_heap_t *h = hl_heap_new(policy, conf);
	if (!h) {
		snprintf(out.error, sizeof out.error, "%s", hl_last_error());
	} else {
		size_t n = hl_trace_ops(t);
		hl_replay_opts_t o = { .verify = true, .check_heap = true,
				       .check_every = n <= 20000 ? 1 : n / 200, .repeat = a->repeat };
		hl_replay_result_t r;
		out.ok = hl_replay(h, t, &o, &r) == 0;
		snprintf(out.error, sizeof out.error, "%s", out.ok ? "" : r.message);
		out.util = r.utilization;
		out.seconds = r.seconds;
		out.ops = r.ops * (size_t)a->repeat;
		hl_heap_destroy(h);
	}
	ssize_t w = write(fd, &out, sizeof out);
	_exit(w == (ssize_t)sizeof out ? 0 : 3);
}

/* Last line a dead child wrote to its stderr file (the policy's fatal message). */
static void last_line(FILE *f, char *buf, size_t len)
{
	char line[512];
	rewind(f);
	while (fgets(line, sizeof line, f))
		if (line[0] != '\n') {
			line[strcspn(line, "\n")] = 0;
			snprintf(buf, len, "%.255s", line);
		}
}

static void explain_death(int status, FILE *err, const grade_args_t *a, run_t *r)
{
	char said[256] = "";
	last_line(err, said, sizeof said);
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
		snprintf(r->error, sizeof r->error, "timed out after %u s", a->timeout);
	else if (WIFSIGNALED(status))
		snprintf(r->error, sizeof r->error, "crashed (%s)%s%.200s", strsignal(WTERMSIG(status)),
			 said[0] ? ": " : "", said);
	else
		snprintf(r->error, sizeof r->error, "died (exit %d)%s%.200s", WEXITSTATUS(status), said[0] ? ": " : "",
			 said);
}

/* Replays in a child; only the graded policy (timed) is held to --timeout. */
static void run_isolated(const grade_args_t *a, const hl_trace_t *t, const char *policy, const char *conf,
			 bool timed, run_t *r)
{
	memset(r, 0, sizeof *r);
	int fds[2];
	FILE *err = tmpfile();
	if (pipe(fds) < 0 || !err) {
		snprintf(r->error, sizeof r->error, "cannot start a replay: %s", strerror(errno));
		return;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[0]);
		dup2(fileno(err), STDERR_FILENO);
		child_replay(a, t, policy, conf, timed, fds[1]);
	}
	close(fds[1]);
	ssize_t got = pid < 0 ? -1 : read(fds[0], r, sizeof *r);
	close(fds[0]);
	int status = 0;
	if (pid > 0)
		waitpid(pid, &status, 0);
	if (got != (ssize_t)sizeof *r) {
		memset(r, 0, sizeof *r);
		explain_death(status, err, a, r);
	}
	fclose(err);
}

/* ---- the score ---------------------------------------------------------- */

typedef struct totals {
	int scored_util, scored_tput, correct, total;
	double util_sum, secs, ops, ref_secs, ref_ops;
	double util, kops, ref_kops, ratio, index;
} totals_t;

static void add_row(totals_t *s, const row_t *w)
{
	s->total++;
	s->correct += w->mine.ok;
	if (w->scoring & SCORE_UTIL) {
		s->scored_util++;
		s->util_sum += w->mine.ok ? w->mine.util : 0;
	}
	if (w->scoring & SCORE_TPUT) {
		s->scored_tput++;
		if (w->mine.ok && w->ref.ok) {
			s->secs += w->mine.seconds;
			s->ops += (double)w->mine.ops;
			s->ref_secs += w->ref.seconds;
			s->ref_ops += (double)w->ref.ops;
		}
	}
}

static void finish(totals_t *s, const row_t *rows, int n, double weight)
{
	for (int i = 0; i < n; i++)
		add_row(s, &rows[i]);
	int tput_ok = 0;
	for (int i = 0; i < n; i++)
		tput_ok += (rows[i].scoring & SCORE_TPUT) && rows[i].mine.ok && rows[i].ref.ok;
	s->util = s->scored_util ? s->util_sum / s->scored_util : 0;
	s->kops = s->secs > 0 ? s->ops / s->secs / 1000 : 0;
	s->ref_kops = s->ref_secs > 0 ? s->ref_ops / s->ref_secs / 1000 : 0;
	double ratio = s->ref_kops > 0 ? s->kops / s->ref_kops : 0;
	double share = s->scored_tput ? (double)tput_ok / s->scored_tput : 0;
	s->ratio = (ratio > 1 ? 1 : ratio) * share;
	s->index = 100 * (weight * s->util + (1 - weight) * s->ratio);
}

/* ---- output ------------------------------------------------------------- */

static double kops_of(const run_t *r) { return r->seconds > 0 ? (double)r->ops / r->seconds / 1000 : 0; }

static void print_table(const grade_args_t *a, const row_t *rows, int n, const totals_t *s)
{
	printf("Results for policy %s (reference %s, measured in this run):\n", a->policy, a->reference);
	printf("%-22s %-5s %9s %7s %7s %10s %10s %7s\n", "trace", "valid", "ops", "util", "best", "Kops/s",
	       "ref Kops/s", "ratio");
	double best_sum = 0;
	for (int i = 0; i < n; i++) {
		const row_t *w = &rows[i];
		double k = kops_of(&w->mine), rk = kops_of(&w->ref);
		best_sum += w->best;
		printf("%-22s %-5s %9zu %6.1f%% %6.1f%% %10.0f %10.0f %7.2f%s\n", w->name, w->mine.ok ? "yes" : "NO",
		       w->mine.ops, 100 * w->mine.util, 100 * w->best, k, rk, rk > 0 ? k / rk : 0,
		       w->scoring == SCORE_ALL ? "" : w->scoring == SCORE_UTIL ? "  (util only)" :
		       w->scoring == SCORE_TPUT ? "  (throughput only)" : "  (not scored)");
	}
	printf("%-22s %-5s %9s %6.1f%% %6.1f%% %10.0f %10.0f %7.2f\n", "total", "", "", 100 * s->util,
	       n ? 100 * best_sum / n : 0, s->kops, s->ref_kops, s->ratio);
	printf("(best: the utilization of the best layout found knowing the whole trace, heaplab bound)\n");
	for (int i = 0; i < n; i++) {
		if (!rows[i].mine.ok)
			printf("ERROR %s: %s\n", rows[i].name, rows[i].mine.error);
		if (!rows[i].ref.ok)
			printf("warning: reference failed %s: %s\n", rows[i].name, rows[i].ref.error);
	}
	printf("Correct: %d of %d traces\n", s->correct, s->total);
	printf("Perf index = %.1f (util) + %.1f (thru) = %.1f/100\n", 100 * a->weight * s->util,
	       100 * (1 - a->weight) * s->ratio, s->index);
}

static void print_json(const grade_args_t *a, const row_t *rows, int n, const totals_t *s)
{
	printf("{");
	cli_json_str("policy", a->policy, true);
	cli_json_str("reference", a->reference, true);
	printf("\"weight\":%.3f,\"repeat\":%d,\"traces\":[", a->weight, a->repeat);
	for (int i = 0; i < n; i++) {
		const row_t *w = &rows[i];
		printf("%s{", i ? "," : "");
		cli_json_str("trace", w->name, true);
		printf("\"valid\":%s,\"scored_util\":%s,\"scored_throughput\":%s,\"ops\":%zu,\"utilization\":%.4f,"
		       "\"best_layout_utilization\":%.4f,\"kops\":%.1f,\"ref_valid\":%s,\"ref_kops\":%.1f",
		       w->mine.ok ? "true" : "false", w->scoring & SCORE_UTIL ? "true" : "false",
		       w->scoring & SCORE_TPUT ? "true" : "false", w->mine.ops, w->mine.util, w->best,
		       kops_of(&w->mine), w->ref.ok ? "true" : "false", kops_of(&w->ref));
		if (!w->mine.ok) {
			printf(",");
			cli_json_str("error", w->mine.error, false);
		}
		printf("}");
	}
	printf("],\"correct\":%d,\"total\":%d,\"utilization\":%.4f,\"kops\":%.1f,\"ref_kops\":%.1f,"
	       "\"throughput_ratio\":%.4f,\"score_util\":%.2f,\"score_throughput\":%.2f,\"index\":%.2f}\n",
	       s->correct, s->total, s->util, s->kops, s->ref_kops, s->ratio, 100 * a->weight * s->util,
	       100 * (1 - a->weight) * s->ratio, s->index);
}

/* ---- arguments ---------------------------------------------------------- */

static int parse_numbers(grade_args_t *a, const char *weight, const char *repeat, const char *timeout)
{
	char *end;
	if (weight) {
		a->weight = strtod(weight, &end);
		if (*end || end == weight || a->weight < 0 || a->weight > 1)
			return cli_error("bad --weight '%s' (0..1)", weight);
	}
	long long r = repeat ? cli_parse_size(repeat) : 3;
	if (r < 1 || r > 100)
		return cli_error("bad --repeat '%s' (1..100)", repeat);
	a->repeat = (int)r;
	long long s = timeout ? cli_parse_size(timeout) : 60;
	if (s < 0 || s > 86400)
		return cli_error("bad --timeout '%s' (0..86400 seconds)", timeout);
	a->timeout = (unsigned)s;
	return 0;
}

/* The policy is compiled in and accepts its options (checked once here,
 * so a typo is bad usage rather than a zero on every trace). */
static int check_policy(const char *name, const char *conf, const char *role)
{
	if (hl_policy_summary(name)) {
		hl_heap_t *h = hl_heap_new(name, conf);
		if (!h)
			return cli_error("%s policy: %s", role, hl_last_error());
		hl_heap_destroy(h);
		return 0;
	}
	fprintf(stderr, "heaplab: %s policy '%s' is not compiled in (configure --with-policy=...); compiled in:", role,
		name);
	for (size_t i = 0; i < hl_policy_count(); i++)
		fprintf(stderr, " %s", hl_policy_name(i));
	fputc('\n', stderr);
	return 2;
}

static int parse_args(int argc, char **argv, grade_args_t *a)
{
	const char *weight = NULL, *repeat = NULL, *timeout = NULL;
	memset(a, 0, sizeof *a);
	a->policy = hl_policy_summary("student") ? "student" : hl_default_policy();
	a->reference = "firstfit";
	a->weight = 0.6;
	for (int i = 1; i < argc; i++) {
		int r;
		if ((r = cli_opt(argc, argv, &i, "--policy", &a->policy)) ||
		    (r = cli_opt(argc, argv, &i, "--reference", &a->reference)) ||
		    (r = cli_opt(argc, argv, &i, "--conf", &a->conf)) ||
		    (r = cli_opt(argc, argv, &i, "--ref-conf", &a->ref_conf)) ||
		    (r = cli_opt(argc, argv, &i, "--weight", &weight)) ||
		    (r = cli_opt(argc, argv, &i, "--repeat", &repeat)) ||
		    (r = cli_opt(argc, argv, &i, "--timeout", &timeout))) {
			if (r < 0)
				return 2;
		} else if (!strcmp(argv[i], "--json"))
			a->json = true;
		else if (!strcmp(argv[i], "--help"))
			return grade_usage(stdout) == 0 ? -1 : 2;
		else if (argv[i][0] == '-' && argv[i][1])
			return cli_error("unknown option '%s' (try --help)", argv[i]);
		else if (add_arg(a, argv[i]))
			return 2;
	}
	if (parse_numbers(a, weight, repeat, timeout) || check_policy(a->policy, a->conf, "graded") ||
	    check_policy(a->reference, a->ref_conf, "reference"))
		return 2;
	return a->ntraces ? 0 : add_defaults(a);
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* Replays every trace on both policies; 2 when a trace cannot be read. */
static int grade_all(const grade_args_t *a, row_t *rows)
{
	for (int i = 0; i < a->ntraces; i++) {
		hl_trace_t *t = hl_trace_load(a->traces[i]);
		if (!t) {
			fprintf(stderr, "%s\n", hl_last_error());
			return 2;
		}
		rows[i].name = base_name(a->traces[i]);
		rows[i].scoring = trace_scoring(t);
		vis_bound_t b;
		if (vis_bound(t, 5000, false, &b) == 0 && b.found)
			rows[i].best = (double)b.bound / (double)b.found;
		cli_progress("grading", (size_t)i, (size_t)a->ntraces);
		run_isolated(a, t, a->reference, a->ref_conf, false, &rows[i].ref);
		run_isolated(a, t, a->policy, a->conf, true, &rows[i].mine);
		hl_trace_free(t);
	}
	cli_progress_done();
	return 0;
}

int cmd_grade(int argc, char **argv)
{
	grade_args_t a;
	int rc = parse_args(argc, argv, &a);
	row_t *rows = rc ? NULL : calloc((size_t)a.ntraces, sizeof *rows);
	if (!rc && !rows)
		rc = cli_error("out of memory");
	if (!rc)
		rc = grade_all(&a, rows);
	if (!rc) {
		totals_t s = { 0 };
		finish(&s, rows, a.ntraces, a.weight);
		if (a.json)
			print_json(&a, rows, a.ntraces, &s);
		else
			print_table(&a, rows, a.ntraces, &s);
		rc = s.correct == s.total ? 0 : 1;
	}
	free(rows);
	for (int i = 0; i < a.ntraces; i++)
		free(a.traces[i]);
	return rc < 0 ? 0 : rc;
}
