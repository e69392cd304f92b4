/* heaplab fidelity: running one row.  The probe runs twice
 * (fidelity_spawn.c), each side in an environment of its own (the real
 * allocator, then heaplab's preload library with the row's policy); the two
 * values of the row's key in its key=value output are compared. */
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
#include "fidelity_spawn.h"

/* The value of "key=value" in the probe's output, into @p value. */
static bool find_key(const fid_outcome_t *o, const char *key, char *value, size_t len)
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


#define set_verdict(r, st, ...) fid_say((r)->verdict, sizeof (r)->verdict, &(r)->status, (st), __VA_ARGS__)

/* One side, start to value (its output kept in *o).  Returns true with the
 * value in @p value, or false with the row's verdict set (SKIP when the
 * probe exits 77). */
static bool side_value(const fid_row_t *row, const fid_side_t *s, const fid_words_t *argv, fid_outcome_t *o, char *value,
		       size_t len, fid_result_t *res)
{
	if (!fid_side_run(s, argv, o)) {
		set_verdict(res, FID_FAIL, "%s side: %s", s->name, o->err);
		return false;
	}
	const char *why = fid_outcome_last_line(o);
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
static bool replay_value(const fid_row_t *row, const fid_side_t *s, const char *recorder, const fid_words_t *argv, fid_outcome_t *o,
			 char *value, size_t len, fid_result_t *res)
{
	char dir[] = "/tmp/heaplab-fidelity-XXXXXX", prefix[64], env[512], path[320] = "";
	if (!mkdtemp(dir)) {
		set_verdict(res, FID_FAIL, "model side: cannot make a directory: %s", strerror(errno));
		return false;
	}
	snprintf(prefix, sizeof prefix, "%s/rec", dir);
	snprintf(env, sizeof env, "HEAPLAB_RECORD=%s%s%s", prefix, s->env ? " " : "", s->env ? s->env : "");
	fid_side_t rec = { s->name, recorder, NULL, NULL, env, s->timeout };
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
static void note_first_difference(const fid_outcome_t *a, const fid_outcome_t *b, fid_result_t *res)
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
		set_verdict(res, FID_SKIP, "no real allocator known for family %s (its rows file names none: real_preload)", row->family);
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
	fid_words_t argv = { 0 }, model = { 0 };
	fid_words_split(&argv, row->probe);
	char *probe_path = argv.v[0];
	argv.v[0] = malloc(strlen(probes_dir) + strlen(probe_path) + 2);
	sprintf(argv.v[0], "%s/%s", probes_dir, probe_path);
	free(probe_path);
	fid_words_split(&model, row->model ? row->model : hl_policy_of_family(row->family));
	const char *policy = model.n ? model.v[0] : NULL;
	const char *conf = row->model ? strpbrk(row->model, " \t") : NULL;
	while (conf && (*conf == ' ' || *conf == '\t'))
		conf++;
	double timeout = row->timeout > 0 ? row->timeout : 20;
	const char *real_lib = fid_real_preload(row->family, row->real_preload);
	if (!row_unrunnable(row, argv.v[0], real_lib, policy, preload, res)) {
		fid_side_t real = { "real", real_lib, NULL, NULL, row->real_env, timeout };
		fid_side_t modeled = { "model", preload, policy, conf && *conf ? conf : NULL, row->model_env, timeout };
		fid_outcome_t *outs = calloc(2, sizeof *outs);
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
	fid_words_free(&argv);
	fid_words_free(&model);
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
