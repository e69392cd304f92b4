/* heaplab fidelity: running one row.  The probe runs twice through
 * posix_spawn, each side in an environment of its own (the real allocator,
 * then heaplab's preload library with the row's policy); its key=value
 * output is read through a pipe under a deadline, and the two values of
 * the row's key are compared. */
#include "config.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gnu/libc-version.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "heaplab.h"
#include "fidelity.h"

extern char **environ;

enum { OUT_MAX = 1 << 20, ERR_TAIL = 200 };

/* Seconds on the monotonic clock: the deadlines of the probes' pipes. */
static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Variables that would change which allocator a side runs on, or how:
 * the parent's are dropped, each side sets its own. */
static bool inherited_allocator_setting(const char *var)
{
	static const char *const prefixes[] = { "LD_PRELOAD=", "HEAPLAB_", "GLIBC_TUNABLES=", "MALLOC_",
						"MIMALLOC_", "JE_MALLOC_CONF=", "TCMALLOC_", "PYTHONMALLOC",
						"FIDELITY_SIDE=" };
	for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
		if (!strncmp(var, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

/* A growable NULL-terminated list of strings (argv or envp). */
typedef struct words {
	char **v;
	size_t n, cap;
} words_t;

static void words_add(words_t *w, const char *s)
{
	if (w->n + 2 > w->cap) {
		w->cap = w->cap ? 2 * w->cap : 32;
		w->v = realloc(w->v, w->cap * sizeof *w->v);
		if (!w->v) {
			fputs("heaplab: fidelity: out of memory\n", stderr);
			exit(2);
		}
	}
	w->v[w->n++] = strdup(s);
	w->v[w->n] = NULL;
}

static void words_addf(words_t *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void words_addf(words_t *w, const char *fmt, ...)
{
	char buf[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	words_add(w, buf);
}

/* Splits @p text on blanks and adds each word. */
static void words_split(words_t *w, const char *text)
{
	if (!text)
		return;
	char *copy = strdup(text);
	for (char *save = NULL, *t = strtok_r(copy, " \t", &save); t; t = strtok_r(NULL, " \t", &save))
		words_add(w, t);
	free(copy);
}

static void words_free(words_t *w)
{
	for (size_t i = 0; i < w->n; i++)
		free(w->v[i]);
	free(w->v);
}

/* What one side of a row needs to run. */
typedef struct side {
	const char *name;     /* "real" or "model" */
	const char *preload;  /* library for LD_PRELOAD, "" for none */
	const char *policy;   /* model side: HEAPLAB_POLICY */
	const char *conf;     /* model side: HEAPLAB_CONF, may be NULL */
	const char *env;      /* the row's extra NAME=value words */
	double timeout;       /* seconds */
} side_t;

/* How a run ended, and what it printed. */
typedef struct outcome {
	int status;           /* waitpid status */
	bool timed_out;
	char out[OUT_MAX];    /* stdout (truncated) */
	size_t out_len;
	char err[ERR_TAIL];   /* the end of stderr */
} outcome_t;

static void keep_tail(outcome_t *o, const char *buf, size_t n)
{
	size_t have = strlen(o->err);
	if (n >= sizeof o->err - 1) {
		memcpy(o->err, buf + n - (sizeof o->err - 1), sizeof o->err - 1);
		o->err[sizeof o->err - 1] = 0;
		return;
	}
	if (have + n >= sizeof o->err) {
		size_t drop = have + n - (sizeof o->err - 1);
		memmove(o->err, o->err + drop, have - drop + 1);
		have -= drop;
	}
	memcpy(o->err + have, buf, n);
	o->err[have + n] = 0;
}

/* Reads both pipes until they close or the deadline passes. */
static void collect(int out_fd, int err_fd, double deadline, outcome_t *o)
{
	struct pollfd fds[2] = { { out_fd, POLLIN, 0 }, { err_fd, POLLIN, 0 } };
	int open_fds = 2;
	while (open_fds) {
		double left = deadline - now_s();
		if (left <= 0) {
			o->timed_out = true;
			return;
		}
		int r = poll(fds, 2, (int)(left * 1000) + 1);
		if (r < 0 && errno != EINTR)
			return;
		for (int i = 0; i < 2 && r > 0; i++) {
			if (fds[i].fd < 0 || !fds[i].revents)
				continue;
			char buf[4096];
			ssize_t n = read(fds[i].fd, buf, sizeof buf);
			if (n <= 0) {
				fds[i].fd = -1;
				open_fds--;
			} else if (i == 1) {
				keep_tail(o, buf, (size_t)n);
			} else {
				size_t room = sizeof o->out - 1 - o->out_len;
				size_t take = (size_t)n < room ? (size_t)n : room;
				memcpy(o->out + o->out_len, buf, take);
				o->out_len += take;
			}
		}
	}
}

static void build_env(const side_t *s, words_t *env)
{
	for (char **e = environ; *e; e++)
		if (!inherited_allocator_setting(*e))
			words_add(env, *e);
	words_addf(env, "FIDELITY_SIDE=%s", s->name);
	if (*s->preload)
		words_addf(env, "LD_PRELOAD=%s", s->preload);
	if (s->policy)
		words_addf(env, "HEAPLAB_POLICY=%s", s->policy);
	if (s->conf)
		words_addf(env, "HEAPLAB_CONF=%s", s->conf);
	words_split(env, s->env);
}

/* Runs the probe on one side; returns false (with *o untouched but for
 * err) when it could not even start. */
static bool run_side(const side_t *s, const words_t *argv, outcome_t *o)
{
	memset(o, 0, sizeof *o);
	words_t env = { 0 };
	build_env(s, &env);
	int out_pipe[2], err_pipe[2];
	/* close-on-exec: the child keeps only the copies dup2 makes (1 and 2) */
	if (pipe2(out_pipe, O_CLOEXEC) || pipe2(err_pipe, O_CLOEXEC)) {
		snprintf(o->err, sizeof o->err, "pipe: %s", strerror(errno));
		words_free(&env);
		return false;
	}
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, out_pipe[1], 1);
	posix_spawn_file_actions_adddup2(&fa, err_pipe[1], 2);
	pid_t pid;
	int rc = posix_spawn(&pid, argv->v[0], &fa, NULL, argv->v, env.v);
	posix_spawn_file_actions_destroy(&fa);
	close(out_pipe[1]);
	close(err_pipe[1]);
	words_free(&env);
	if (rc == 0) {
		collect(out_pipe[0], err_pipe[0], now_s() + s->timeout, o);
		if (o->timed_out)
			kill(pid, SIGKILL);
		while (waitpid(pid, &o->status, 0) < 0 && errno == EINTR)
			;
	} else {
		snprintf(o->err, sizeof o->err, "cannot run %s: %s", argv->v[0], strerror(rc));
	}
	close(out_pipe[0]);
	close(err_pipe[0]);
	return rc == 0;
}

/* The value of "key=value" in the probe's output, into @p value. */
static bool find_key(const outcome_t *o, const char *key, char *value, size_t len)
{
	size_t klen = strlen(key);
	for (const char *line = o->out; line && *line;) {
		const char *nl = memchr(line, '\n', o->out + o->out_len - line);
		size_t n = nl ? (size_t)(nl - line) : strlen(line);
		if (n > klen && !strncmp(line, key, klen) && line[klen] == '=') {
			size_t v = n - klen - 1;
			if (v >= len)
				v = len - 1;
			memcpy(value, line + klen + 1, v);
			value[v] = 0;
			return true;
		}
		line = nl ? nl + 1 : NULL;
	}
	return false;
}

/* The last line of what the probe said on stderr, for a verdict. */
static const char *last_err_line(outcome_t *o)
{
	size_t n = strlen(o->err);
	while (n && o->err[n - 1] == '\n')
		o->err[--n] = 0;
	char *nl = strrchr(o->err, '\n');
	return nl ? nl + 1 : o->err;
}

static void set_verdict(fid_result_t *r, fid_status_t st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void set_verdict(fid_result_t *r, fid_status_t st, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->verdict, sizeof r->verdict, fmt, ap);
	va_end(ap);
	r->status = st;
}

/* One side, start to value (its output kept in *o).  Returns true with the
 * value in @p value, or false with the row's verdict set (SKIP when the
 * probe exits 77). */
static bool side_value(const fid_row_t *row, const side_t *s, const words_t *argv, outcome_t *o, char *value,
		       size_t len, fid_result_t *res)
{
	if (!run_side(s, argv, o)) {
		set_verdict(res, FID_FAIL, "%s side: %s", s->name, o->err);
		return false;
	}
	const char *why = last_err_line(o);
	if (o->timed_out) {
		set_verdict(res, FID_FAIL, "%s side timed out after %g s", s->name, s->timeout);
	} else if (WIFSIGNALED(o->status)) {
		set_verdict(res, FID_FAIL, "%s side killed by signal %d%s%s", s->name, WTERMSIG(o->status),
			    *why ? ": " : "", why);
	} else if (WEXITSTATUS(o->status) == 77) {
		set_verdict(res, FID_SKIP, "%s", *why ? why : "the probe skipped");
	} else if (WEXITSTATUS(o->status) != 0) {
		set_verdict(res, FID_FAIL, "%s side exited %d%s%s", s->name, WEXITSTATUS(o->status),
			    *why ? ": " : "", why);
	} else if (!find_key(o, row->key, value, len)) {
		set_verdict(res, FID_FAIL, "%s side printed no %s=", s->name, row->key);
	} else {
		return true;
	}
	return false;
}

/* The model side of a `model_by replay` row: the probe runs on glibc under
 * the recorder (libheaplab-record.so), and its recording is replayed under
 * the model on a replay heap, whose clock follows the recording's "#@t"
 * times (an idle gap passes as it did); the value is the heap's resident
 * bytes, its metadata's included (what heaplab diagnose predicts), once the
 * replay has reached the recording's end, in MiB. */
static bool replay_value(const fid_row_t *row, const side_t *s, const char *recorder, const words_t *argv, outcome_t *o,
			 char *value, size_t len, fid_result_t *res)
{
	char dir[] = "/tmp/heaplab-fidelity-XXXXXX", prefix[64], env[512], path[320] = "";
	if (!mkdtemp(dir)) {
		set_verdict(res, FID_FAIL, "model side: cannot make a directory: %s", strerror(errno));
		return false;
	}
	snprintf(prefix, sizeof prefix, "%s/rec", dir);
	snprintf(env, sizeof env, "HEAPLAB_RECORD=%s%s%s", prefix, s->env ? " " : "", s->env ? s->env : "");
	side_t rec = { s->name, recorder, NULL, NULL, env, s->timeout };
	char unused[128];
	bool ok = side_value(row, &rec, argv, o, unused, sizeof unused, res);
	DIR *d = opendir(dir);
	for (struct dirent *e; d && (e = readdir(d));)
		if (e->d_name[0] != '.') {
			if (ok && !*path)
				snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
			else {
				char other[320];
				snprintf(other, sizeof other, "%s/%s", dir, e->d_name);
				unlink(other);
			}
		}
	if (d)
		closedir(d);
	hl_trace_t *t = *path ? hl_trace_load(path) : NULL;
	hl_heap_t *h = t ? hl_heap_new_replay(s->policy, s->conf) : NULL;
	hl_replay_opts_t opts = { .repeat = 1, .touch = true };
	hl_replay_result_t r;
	double resident = 0, meta = 0;
	if (ok && !*path)
		set_verdict(res, FID_FAIL, "model side: the probe wrote no recording");
	else if (ok && !h)
		set_verdict(res, FID_FAIL, "model side: %s", hl_last_error());
	else if (ok && hl_replay(h, t, &opts, &r) < 0)
		set_verdict(res, FID_FAIL, "model side: replay: %s", r.message);
	else if (ok && (hl_stat(h, "resident_bytes", &resident) < 0 || hl_stat(h, "os.metadata_resident_bytes", &meta) < 0))
		set_verdict(res, FID_FAIL, "model side: no resident_bytes");
	else if (ok)
		snprintf(value, len, "%.1f", (resident + meta) / (1024.0 * 1024.0));
	ok = ok && res->status != FID_FAIL;
	hl_heap_destroy(h);
	hl_trace_free(t);
	if (*path)
		unlink(path);
	rmdir(dir);
	return ok;
}

/* Under a failed row: the first line where the two sides' outputs part
 * (for a ladder or an order, the first size or block that differs). */
static void note_first_difference(const outcome_t *a, const outcome_t *b, fid_result_t *res)
{
	const char *p = a->out, *q = b->out, *pend = a->out + a->out_len, *qend = b->out + b->out_len;
	while (p < pend && q < qend) {
		const char *pn = memchr(p, '\n', (size_t)(pend - p)), *qn = memchr(q, '\n', (size_t)(qend - q));
		size_t pl = pn ? (size_t)(pn - p) : (size_t)(pend - p), ql = qn ? (size_t)(qn - q) : (size_t)(qend - q);
		if (pl != ql || memcmp(p, q, pl)) {
			size_t used = strlen(res->verdict);
			snprintf(res->verdict + used, sizeof res->verdict - used, "; first difference: real '%.*s', model '%.*s'",
				 (int)(pl > 60 ? 60 : pl), p, (int)(ql > 60 ? 60 : ql), q);
			return;
		}
		p += pl + 1;
		q += ql + 1;
	}
}

/* Whatever would make the row unrunnable here: a SKIP or FAIL verdict. */
static bool row_unrunnable(const fid_row_t *row, const char *probe_path, const char *real_lib, const char *policy,
			   const char *preload, fid_result_t *res)
{
	if (*HL_SANITIZERS_BUILD)
		set_verdict(res, FID_SKIP, "this heaplab is built with -fsanitize=%s, which owns malloc: nothing can be preloaded",
			    HL_SANITIZERS_BUILD);
	else if (!real_lib)
		set_verdict(res, FID_SKIP, "no real allocator known for family %s", row->family);
	else if (*real_lib && access(real_lib, R_OK) != 0)
		set_verdict(res, FID_SKIP, "%s is not installed", real_lib);
	else if (row->real_version && strcmp(row->real_version, gnu_get_libc_version()))
		set_verdict(res, FID_SKIP, "the row is for glibc %s; this is glibc %s", row->real_version,
			    gnu_get_libc_version());
	else if (access(probe_path, X_OK) != 0)
		set_verdict(res, FID_SKIP, "probe %s was not built", probe_path);
	else if (!policy)
		set_verdict(res, FID_SKIP, "no compiled-in policy models family %s (the row names none)", row->family);
	else if (!hl_policy_summary(policy))
		set_verdict(res, FID_SKIP, "policy %s is not compiled in", policy);
	else if (access(preload, R_OK) != 0)
		set_verdict(res, FID_FAIL, "no preload library at %s", preload);
	else
		return false;
	return true;
}

void fid_row_run(const fid_row_t *row, const fid_paths_t *paths, fid_result_t *res)
{
	const char *probes_dir = paths->probes_dir, *preload = paths->preload;
	memset(res, 0, sizeof *res);
	words_t argv = { 0 }, model = { 0 };
	words_split(&argv, row->probe);
	char *probe_path = argv.v[0];
	argv.v[0] = malloc(strlen(probes_dir) + strlen(probe_path) + 2);
	sprintf(argv.v[0], "%s/%s", probes_dir, probe_path);
	free(probe_path);
	words_split(&model, row->model ? row->model : hl_policy_of_family(row->family));
	const char *policy = model.n ? model.v[0] : NULL;
	const char *conf = row->model ? strpbrk(row->model, " \t") : NULL;
	while (conf && (*conf == ' ' || *conf == '\t'))
		conf++;
	double timeout = row->timeout > 0 ? row->timeout : 20;
	const char *real_lib = fid_real_preload(row->family);
	if (!row_unrunnable(row, argv.v[0], real_lib, policy, preload, res)) {
		side_t real = { "real", real_lib, NULL, NULL, row->real_env, timeout };
		side_t modeled = { "model", preload, policy, conf && *conf ? conf : NULL, row->model_env, timeout };
		outcome_t *outs = calloc(2, sizeof *outs);
		if (!outs) {
			fputs("heaplab: fidelity: out of memory\n", stderr);
			exit(2);
		}
		if (side_value(row, &real, &argv, &outs[0], res->real, sizeof res->real, res) &&
		    (row->model_by ? replay_value(row, &modeled, paths->recorder, &argv, &outs[1], res->model, sizeof res->model, res)
				   : side_value(row, &modeled, &argv, &outs[1], res->model, sizeof res->model, res))) {
			fid_compare(row, res);
			if (res->status == FID_FAIL)
				note_first_difference(&outs[0], &outs[1], res);
		}
		free(outs);
	}
	words_free(&argv);
	words_free(&model);
}

/* A number with an optional K/M/G suffix (binary); false if not one. */
static bool number(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s)
		return false;
	switch (*end) {
	case 'K': v *= 1024; end++; break;
	case 'M': v *= 1024 * 1024; end++; break;
	case 'G': v *= 1024.0 * 1024 * 1024; end++; break;
	}
	*out = v;
	return !*end && isfinite(v);
}

void fid_compare(const fid_row_t *row, fid_result_t *res)
{
	bool same = !strcmp(res->real, res->model);
	double r, m;
	switch (row->compare) {
	case FID_EQUAL:
		if (same)
			set_verdict(res, FID_PASS, "equal");
		else
			set_verdict(res, FID_FAIL, "differ (the row says equal)");
		return;
	case FID_DEVIATION:
		set_verdict(res, FID_PASS, same ? "equal (a deviation is named)" : "deviation");
		return;
	case FID_WITHIN_PCT:
	case FID_WITHIN_ABS:
		if (!number(res->real, &r) || !number(res->model, &m)) {
			set_verdict(res, FID_FAIL, "not numbers (the row says %s)", row->compare_text);
			return;
		}
		double limit = row->compare == FID_WITHIN_PCT ? fabs(r) * row->tolerance / 100 : row->tolerance;
		if (fabs(m - r) <= limit)
			set_verdict(res, FID_PASS, "%s", same ? "equal" : row->compare_text);
		else
			set_verdict(res, FID_FAIL, "apart by %g (the row says %s)", fabs(m - r), row->compare_text);
		return;
	}
}
