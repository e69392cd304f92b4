/*
 * Running Graphviz: DOT in, SVG or PNG out, warnings captured.
 *
 * The dot program is the one configure found (HL_DOT_PATH), or the
 * environment's HEAPLAB_DOT when set (tests use it to see the "missing"
 * message).  dot runs with its three streams on files in a private
 * temporary folder, so nothing can deadlock on a full pipe.  Many
 * pictures go through one dot process: dot writes one SVG document per
 * graph of its input, one after the other on its standard output.
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "vis.h"

extern char **environ;

static const char *dot_path(void)
{
	const char *env = getenv("HEAPLAB_DOT");
	return env && *env ? env : HL_DOT_PATH;
}

bool vis_have_dot(void)
{
	const char *p = dot_path();
	if (strchr(p, '/'))
		return access(p, X_OK) == 0;
	const char *path = getenv("PATH");
	char buf[4096];
	for (const char *s = path ? path : ""; *s;) {
		size_t n = strcspn(s, ":");
		snprintf(buf, sizeof buf, "%.*s/%s", (int)n, s, p);
		if (n && access(buf, X_OK) == 0)
			return true;
		s += n + (s[n] == ':');
	}
	return false;
}

int vis_need_dot(void)
{
	if (vis_have_dot())
		return 0;
	return vis_fail("Graphviz 'dot' was not found at '%s' (Debian: apt-get install graphviz, then "
			 "re-run configure, or set HEAPLAB_DOT)", dot_path());
}

/* Reads a whole file into a NUL-terminated buffer; NULL on error. */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t cap = 0, n = 0, got;
	do {
		if (cap - n < 65536) {
			char *nb = realloc(buf, cap = cap * 2 + 65536);
			if (!nb) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
		}
		got = fread(buf + n, 1, cap - n - 1, f);
		n += got;
	} while (got > 0);
	fclose(f);
	buf[n] = 0;
	if (len)
		*len = n;
	return buf;
}

/* Appends the text of file @p path to *diag. */
static void append_file(char **diag, const char *path)
{
	size_t n;
	char *text = slurp(path, &n);
	if (!text || !diag || !n) {
		free(text);
		return;
	}
	size_t old = *diag ? strlen(*diag) : 0;
	char *d = realloc(*diag, old + n + 1);
	if (d) {
		memcpy(d + old, text, n + 1);
		*diag = d;
	}
	free(text);
}

/* Runs `dot -T<format> in` with stdout and stderr on files; returns the
 * exit status of dot, or -1 when it could not be started. */
static int run_dot(const char *format, const char *in, const char *out, const char *err)
{
	char fmt[32];
	snprintf(fmt, sizeof fmt, "-T%s", format);
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, in, O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	posix_spawn_file_actions_addopen(&fa, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	char *argv[] = { (char *)dot_path(), fmt, NULL };
	pid_t pid;
	int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0) {
		errno = rc;
		return -1;
	}
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* A private folder for dot's streams. */
static int tmp_dir(char *dir, size_t len)
{
	const char *base = getenv("TMPDIR");
	snprintf(dir, len, "%s/heaplab-dot-XXXXXX", base && *base ? base : "/tmp");
	if (!mkdtemp(dir))
		return vis_fail("cannot make a temporary folder %s: %s", dir, strerror(errno));
	return 0;
}

static void tmp_clean(const char *dir)
{
	static const char *const names[] = { "in.dot", "out", "err" };
	char path[4200];
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		unlink(path);
	}
	rmdir(dir);
}

/* Runs dot and judges it: 0 clean, 1 warnings, 2 failed. */
static int dot_judged(const char *format, const char *in, const char *out, const char *dir, char **diag)
{
	char err[4200];
	snprintf(err, sizeof err, "%s/err", dir);
	int rc = run_dot(format, in, out, err);
	if (rc < 0) {
		tmp_clean(dir);
		return vis_fail("cannot run %s: %s", dot_path(), strerror(errno));
	}
	size_t before = diag && *diag ? strlen(*diag) : 0;
	append_file(diag, err);
	bool said = diag && *diag && strlen(*diag) > before;
	if (rc != 0)
		return vis_fail("%s exited with status %d", dot_path(), rc);
	return said ? 1 : 0;
}

int vis_dot_file(const char *in, const char *format, const char *out, char **diag)
{
	if (vis_need_dot())
		return 2;
	char dir[4096];
	if (tmp_dir(dir, sizeof dir))
		return 2;
	int rc = dot_judged(format, in, out, dir, diag);
	tmp_clean(dir);
	return rc;
}

/* Splits dot's output into its <svg>...</svg> elements, one per graph. */
static int split_svgs(char *all, char **svgs, size_t n)
{
	char *p = all;
	for (size_t i = 0; i < n; i++) {
		char *start = p ? strstr(p, "<svg") : NULL;
		char *end = start ? strstr(start, "</svg>") : NULL;
		if (!end)
			return vis_fail("dot gave %zu pictures for %zu graphs", i, n);
		end += strlen("</svg>");
		svgs[i] = strndup(start, (size_t)(end - start));
		if (!svgs[i])
			return vis_fail("out of memory");
		p = end;
	}
	return 0;
}

int vis_dot_svgs(char *const *dots, size_t n, char **svgs, char **diag)
{
	if (vis_need_dot())
		return 2;
	char dir[4096], in[4200], out[4200];
	if (tmp_dir(dir, sizeof dir))
		return 2;
	snprintf(in, sizeof in, "%s/in.dot", dir);
	snprintf(out, sizeof out, "%s/out", dir);
	FILE *f = fopen(in, "w");
	for (size_t i = 0; f && i < n; i++)
		fputs(dots[i], f);
	if (!f || fclose(f) != 0) {
		tmp_clean(dir);
		return vis_fail("cannot write %s", in);
	}
	int rc = dot_judged("svg", in, out, dir, diag);
	char *all = rc < 2 ? slurp(out, NULL) : NULL;
	tmp_clean(dir);
	if (rc == 2)
		return vis_fail("dot failed%s", diag && *diag ? " (its messages are in the diagnostics)" : "");
	int bad = !all ? vis_fail("dot wrote nothing") : split_svgs(all, svgs, n);
	free(all);
	return bad ? 2 : rc;
}
