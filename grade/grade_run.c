/* The traces on both policies.  Each native replay runs in a child process
 * (so a crashing or looping student policy costs that trace, not the
 * grading run): one checked pass (payloads filled and verified, alignment,
 * overlap, the policy's checker), then --repeat passes without checks.
 * Throughput is counted, not timed: valgrind's callgrind runs the heaplab
 * program's own `replay` of the trace and counts the instructions executed
 * inside the replay's allocator calls (the function call_allocator of
 * trace/replay.c and all it calls), so the figure is the same on every run
 * of the same build. */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "grade.h"
#include "../visualize/bound.h"

/* valgrind is about fifty times slower than the native replay; a child
 * that waits instead of computing (a deadlock) is stopped by the clock at
 * ten times its CPU limit. */
enum { COUNT_SLOWDOWN = 50, WALL_BACKSTOP = 10 };

/* The calling child may use @p seconds of CPU time (SIGXCPU after), and
 * ten times as long by the clock (SIGALRM): CPU time, not the clock, so
 * that a busy machine does not cost a student a trace. */
static void limit_child(unsigned seconds)
{
	if (!seconds)
		return;
	struct rlimit rl = { seconds, seconds + 1 };
	setrlimit(RLIMIT_CPU, &rl);
	alarm(seconds * WALL_BACKSTOP);
}

static void child_replay(const gr_opts_t *o, const hl_trace_t *t, const char *policy, const char *conf,
			 bool limited, int fd)
{
	gr_run_t out = { 0 };
	if (limited)
		limit_child(o->timeout);
	hl_heap_t *h = hl_heap_new(policy, conf);
	if (!h) {
		snprintf(out.error, sizeof out.error, "%s", hl_last_error());
	} else {
		size_t n = hl_trace_ops(t);
		hl_replay_opts_t ro = { .verify = true, .check_heap = true,
					.check_every = n <= 20000 ? 1 : n / 200, .repeat = o->repeat };
		hl_replay_result_t r;
		out.ok = hl_replay(h, t, &ro, &r) == 0;
		snprintf(out.error, sizeof out.error, "%s", out.ok ? "" : r.message);
		out.util = r.utilization;
		out.ops = r.ops;
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

static void explain_death(int status, FILE *err, unsigned timeout, char *buf, size_t len)
{
	char said[256] = "";
	last_line(err, said, sizeof said);
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGXCPU)
		snprintf(buf, len, "timed out after %u s", timeout);
	else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
		snprintf(buf, len, "timed out after %u s by the clock (waiting, not computing)", timeout * WALL_BACKSTOP);
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "crashed (%s)%s%.100s", strsignal(WTERMSIG(status)), said[0] ? ": " : "", said);
	else
		snprintf(buf, len, "died (exit %d)%s%.100s", WEXITSTATUS(status), said[0] ? ": " : "", said);
}

/* Replays in a child; only the graded policy is held to --timeout. */
static void run_isolated(const gr_opts_t *o, const hl_trace_t *t, const char *policy, const char *conf,
			 bool limited, gr_run_t *r)
{
	memset(r, 0, sizeof *r);
	int fds[2];
	FILE *err = tmpfile();
	if (!err || pipe(fds) < 0) {
		snprintf(r->error, sizeof r->error, "cannot start a replay: %s", strerror(errno));
		if (err)
			fclose(err);
		return;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[0]);
		dup2(fileno(err), STDERR_FILENO);
		child_replay(o, t, policy, conf, limited, fds[1]);
	}
	close(fds[1]);
	ssize_t got = pid < 0 ? -1 : read(fds[0], r, sizeof *r);
	close(fds[0]);
	int status = 0;
	if (pid > 0)
		waitpid(pid, &status, 0);
	if (got != (ssize_t)sizeof *r) {
		memset(r, 0, sizeof *r);
		explain_death(status, err, o->timeout, r->error, sizeof r->error);
	}
	fclose(err);
}

/* ---- counting instructions ---------------------------------------------- */

/* The total of a callgrind output file ("summary:" or "totals:"), 0 when
 * it has none. */
static uint64_t callgrind_total(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	char line[512];
	unsigned long long v = 0;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "summary: %llu", &v) == 1 || sscanf(line, "totals: %llu", &v) == 1)
			break;
	fclose(f);
	return v;
}

/* The options of a counted replay: @p conf, with a break of 32 GiB for a
 * policy that has one (valgrind cannot reserve the 64 GiB that firstfit's
 * and student's break reserve by default, and the skeleton commits 1.5 GB
 * on realloc-bal; the size of the reservation changes no instruction of a
 * replay that fits in it). */
static void count_conf(const char *policy, const char *conf, char *buf, size_t len)
{
	snprintf(buf, len, "%s", conf ? conf : "");
	if (strstr(buf, "brk_max"))
		return;
	char with[1024];
	if (snprintf(with, sizeof with, "%s%sbrk_max:32G", buf, buf[0] ? "," : "") >= (int)len)
		return;
	hl_heap_t *h = hl_heap_new(policy, with);
	if (h) {
		hl_heap_destroy(h);
		memcpy(buf, with, strlen(with) + 1);
	}
}

/* Counts the instructions of one replay of @p path under @p policy:
 * valgrind --tool=callgrind runs `PROGRAM replay --repeat 0`, collecting
 * only inside call_allocator. */
static void count_run(const gr_opts_t *o, const char *path, const char *policy, const char *conf, bool limited,
		      gr_run_t *r)
{
	char out[] = "/tmp/heaplab-grade-XXXXXX";
	int fd = mkstemp(out);
	FILE *err = tmpfile();
	if (fd < 0 || !err) {
		snprintf(r->count_error, sizeof r->count_error, "cannot count: %s", strerror(errno));
		if (fd >= 0)
			close(fd), unlink(out);
		if (err)
			fclose(err);
		return;
	}
	close(fd);
	char file_opt[64 + sizeof out], policy_opt[256], conf_opt[1024];
	snprintf(file_opt, sizeof file_opt, "--callgrind-out-file=%s", out);
	snprintf(policy_opt, sizeof policy_opt, "--policy=%s", policy);
	char cc[1000];
	count_conf(policy, conf, cc, sizeof cc);
	snprintf(conf_opt, sizeof conf_opt, "--conf=%s", cc);
	char *argv[] = { "valgrind", "-q", "--tool=callgrind", file_opt, "--collect-atstart=no",
			 "--toggle-collect=call_allocator", (char *)o->program, "replay", policy_opt,
			 conf_opt, "--repeat", "0", (char *)path, NULL };
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		dup2(null, STDOUT_FILENO);
		dup2(fileno(err), STDERR_FILENO);
		if (limited)
			limit_child(o->timeout * COUNT_SLOWDOWN);
		execvp("valgrind", argv);
		fprintf(stderr, "cannot run valgrind: %s\n", strerror(errno));
		_exit(127);
	}
	int status = 0;
	if (pid > 0)
		waitpid(pid, &status, 0);
	r->instructions = pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? callgrind_total(out) : 0;
	r->counted = r->instructions > 0;
	if (!r->counted)
		explain_death(status, err, o->timeout * COUNT_SLOWDOWN, r->count_error, sizeof r->count_error);
	unlink(out);
	fclose(err);
}

/* ---- every trace -------------------------------------------------------- */

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

int gr_grade_traces(const gr_opts_t *o, gr_row_t *rows)
{
	for (int i = 0; i < o->ntraces; i++) {
		hl_trace_t *t = hl_trace_load(o->traces[i]);
		if (!t) {
			fprintf(stderr, "%s\n", hl_last_error());
			return 2;
		}
		gr_row_t *w = &rows[i];
		w->name = base_name(o->traces[i]);
		w->hidden = o->hidden[i];
		w->scoring = gr_trace_scoring(t);
		vis_bound_t b;
		if (vis_bound(t, 5000, false, &b) == 0 && b.found)
			w->best = (double)b.bound / (double)b.found;
		if (o->progress)
			o->progress("grading", (size_t)i, (size_t)o->ntraces);
		run_isolated(o, t, o->reference, o->ref_conf, false, &w->ref);
		run_isolated(o, t, o->policy, o->conf, true, &w->mine);
		hl_trace_free(t);
		if (o->count && (w->scoring & GR_TPUT) && w->mine.ok && w->ref.ok) {
			count_run(o, o->traces[i], o->reference, o->ref_conf, false, &w->ref);
			count_run(o, o->traces[i], o->policy, o->conf, true, &w->mine);
			if (!w->ref.counted) {
				fprintf(stderr, "heaplab: cannot count the reference's instructions on %s: %s "
					"(valgrind counts them; --no-throughput grades without)\n", w->name,
					w->ref.count_error);
				return 2;
			}
		}
	}
	if (o->progress)
		o->progress("grading", (size_t)o->ntraces, (size_t)o->ntraces);
	return 0;
}
