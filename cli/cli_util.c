/* Helpers shared by the sub-commands (see cli.h). */
#include "config.h"
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"

int cli_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("heaplab: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	return 2;
}

int cli_opt(int argc, char **argv, int *i, const char *name, const char **value)
{
	const char *a = argv[*i];
	size_t n = strlen(name);
	if (strncmp(a, name, n) != 0)
		return 0;
	if (a[n] == '=') {
		*value = a + n + 1;
		return 1;
	}
	if (a[n] != 0)
		return 0;
	if (*i + 1 >= argc) {
		cli_error("option %s needs a value", name);
		return -1;
	}
	*value = argv[++*i];
	return 1;
}

long long cli_parse_size(const char *s)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || end == s || v < 0)
		return -1;
	int shift = 0;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	}
	if (*end || v > (LLONG_MAX >> shift))
		return -1;
	return v << shift;
}

int cli_policy_list(const char *arg, const char **names, int max)
{
	int n = 0;
	if (!arg || !strcmp(arg, "all")) {
		for (size_t i = 0; i < hl_policy_count() && n < max; i++)
			names[n++] = hl_policy_name(i);
		return n;
	}
	static char buf[512];
	snprintf(buf, sizeof buf, "%s", arg);
	for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok && n < max; tok = strtok_r(NULL, ",", &save)) {
		if (!hl_policy_summary(tok)) {
			fprintf(stderr, "heaplab: unknown policy '%s'; compiled in:", tok);
			for (size_t i = 0; i < hl_policy_count(); i++)
				fprintf(stderr, " %s", hl_policy_name(i));
			fputc('\n', stderr);
			return 0;
		}
		names[n++] = tok;
	}
	return n;
}

double cli_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double progress_start, progress_last;
static bool progress_shown;

void cli_progress(const char *what, size_t done, size_t total)
{
	double now = cli_now();
	if (progress_start == 0)
		progress_start = now;
	if (now - progress_start < 1.0 || now - progress_last < 0.2 || !isatty(2))
		return;
	progress_last = now;
	progress_shown = true;
	if (total)
		fprintf(stderr, "\r%s: %zu/%zu (%.0f%%)   ", what, done, total, 100.0 * (double)done / (double)total);
	else
		fprintf(stderr, "\r%s: %zu   ", what, done);
}

void cli_progress_done(void)
{
	if (progress_shown)
		fprintf(stderr, "\r%60s\r", "");
	progress_shown = false;
	progress_start = progress_last = 0;
}

void cli_progress_cb(const char *what, size_t done, size_t total)
{
	if (done >= total)
		cli_progress_done();
	else
		cli_progress(what, done, total);
}

int cli_last_error(void)
{
	return cli_error("%s", hl_last_error());
}

/* Finds @p lib (a shared library of this build) next to the command, in
 * the build tree, beside an installed command (../lib), or in the
 * configured libdir; @p env overrides. */
static const char *library_path(const char *env_name, const char *lib, char *path, size_t len)
{
	const char *env = getenv(env_name);
	if (env && *env)
		return env;
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = 0;
		char *slash = strrchr(exe, '/');
		if (slash) {
			*slash = 0;
			/* the build tree's libtool folders, then an installed
			 * PREFIX/bin/heaplab's PREFIX/lib (make install prefix=DIR
			 * puts it elsewhere than the configured HL_LIBDIR) */
			static const char *const candidates[] = { "%s/.libs/%s", "%s/%s", "%s/../.libs/%s", "%s/../lib/%s" };
			for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++) {
				snprintf(path, len, candidates[i], exe, lib);
				if (access(path, R_OK) == 0)
					return path;
			}
		}
	}
	snprintf(path, len, "%s/%s", HL_LIBDIR, lib);
	return path;
}

const char *cli_preload_path(void)
{
	static char path[PATH_MAX];
	return library_path("HEAPLAB_PRELOAD", "libheaplab-preload.so", path, sizeof path);
}

const char *cli_record_path(void)
{
	static char path[PATH_MAX];
	return library_path("HEAPLAB_RECORDER", "libheaplab-record.so", path, sizeof path);
}

hl_trace_t *cli_load_trace(const char *path, bool lenient)
{
	hl_trace_load_progress(cli_progress_cb);   /* a long file: "reading ..." */
	hl_trace_t *t = lenient ? hl_trace_load_lenient(path) : hl_trace_load(path);
	hl_trace_load_progress(NULL);
	if (!t) {
		fprintf(stderr, "%s\n", hl_last_error());
		return NULL;
	}
	fputs(hl_trace_warnings(t), stderr);
	return t;
}

void cli_json_str(const char *key, const char *v, bool comma)
{
	printf("\"%s\":\"", key);
	for (const char *c = v ? v : ""; *c; c++)
		if (*c == '"' || *c == '\\')
			printf("\\%c", *c);
		else if ((unsigned char)*c < 0x20)
			printf("\\u%04x", *c);
		else
			putchar(*c);
	printf("\"%s", comma ? "," : "");
}

int cli_prepend_preload(const char *who, const char *lib, const char *env_hint)
{
	if (access(lib, R_OK) != 0)
		return cli_error("%s: cannot find %s (set %s to its path)", who, lib, env_hint);
	const char *old = getenv("LD_PRELOAD");
	size_t n = strlen(lib) + (old ? strlen(old) : 0) + 2;
	char *v = malloc(n);
	if (!v)
		return cli_error("%s: out of memory", who);
	snprintf(v, n, "%s%s%s", lib, old && *old ? ":" : "", old ? old : "");
	setenv("LD_PRELOAD", v, 1);
	free(v);
	return 0;
}
