/* heaplab fidelity: running a probe on one side.  A program runs through
 * posix_spawn in an environment of its own (the caller's, minus anything
 * that picks or tunes an allocator, plus the side's preload library,
 * policy and words); its stdout and the end of its stderr are read through
 * pipes under a deadline. */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
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
#include "fidelity_spawn.h"

extern char **environ;

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

void fid_words_add(fid_words_t *w, const char *s)
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

void fid_words_addf(fid_words_t *w, const char *fmt, ...)
{
	char buf[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	fid_words_add(w, buf);
}

/* Splits @p text on blanks and adds each word. */
void fid_words_split(fid_words_t *w, const char *text)
{
	if (!text)
		return;
	char *copy = strdup(text);
	for (char *save = NULL, *t = strtok_r(copy, " \t", &save); t; t = strtok_r(NULL, " \t", &save))
		fid_words_add(w, t);
	free(copy);
}

void fid_words_free(fid_words_t *w)
{
	for (size_t i = 0; i < w->n; i++)
		free(w->v[i]);
	free(w->v);
}

static void keep_tail(fid_outcome_t *o, const char *buf, size_t n)
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
static void collect(int out_fd, int err_fd, double deadline, fid_outcome_t *o)
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

static void build_env(const fid_side_t *s, fid_words_t *env)
{
	for (char **e = environ; *e; e++)
		if (!inherited_allocator_setting(*e))
			fid_words_add(env, *e);
	fid_words_addf(env, "FIDELITY_SIDE=%s", s->name);
	if (*s->preload)
		fid_words_addf(env, "LD_PRELOAD=%s", s->preload);
	if (s->policy)
		fid_words_addf(env, "HEAPLAB_POLICY=%s", s->policy);
	if (s->conf)
		fid_words_addf(env, "HEAPLAB_CONF=%s", s->conf);
	fid_words_split(env, s->env);
}

/* Runs the probe on one side; returns false (with *o untouched but for
 * err) when it could not even start. */
bool fid_side_run(const fid_side_t *s, const fid_words_t *argv, fid_outcome_t *o)
{
	memset(o, 0, sizeof *o);
	fid_words_t env = { 0 };
	build_env(s, &env);
	int out_pipe[2], err_pipe[2];
	/* close-on-exec: the child keeps only the copies dup2 makes (1 and 2) */
	if (pipe2(out_pipe, O_CLOEXEC) || pipe2(err_pipe, O_CLOEXEC)) {
		snprintf(o->err, sizeof o->err, "pipe: %s", strerror(errno));
		fid_words_free(&env);
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
	fid_words_free(&env);
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


const char *fid_outcome_last_line(fid_outcome_t *o)
{
	size_t n = strlen(o->err);
	while (n && o->err[n - 1] == '\n')
		o->err[--n] = 0;
	char *nl = strrchr(o->err, '\n');
	return nl ? nl + 1 : o->err;
}

void fid_say(char *buf, size_t len, fid_status_t *status, fid_status_t st, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	*status = st;
}
