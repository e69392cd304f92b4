/* The traces a grading run replays: files, folders, shipped names, the
 * classic scored set of the lab and the hidden set of the instructor's
 * kit (traces/hidden/, which the student's handout does not have). */
#include "config.h"
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "grade.h"

#ifndef HL_BOOK_DIR
#define HL_BOOK_DIR "book"
#endif
/* The shipped traces sit next to the book in the source tree. */
#define GR_TRACE_DIR HL_BOOK_DIR "/../traces"

/* The classic scored set of the lab (balanced versions) and the two short
 * debugging traces. */
static const char *const classic[] = {
	"amptjp-bal.rep", "cccp-bal.rep", "cp-decl-bal.rep", "expr-bal.rep",
	"coalescing-bal.rep", "random-bal.rep", "random2-bal.rep", "binary-bal.rep",
	"binary2-bal.rep", "realloc-bal.rep", "realloc2-bal.rep", "short1-bal.rep",
	"short2-bal.rep", NULL,
};

static int add_trace(gr_opts_t *o, const char *path, bool hidden)
{
	if (o->ntraces >= GR_MAX_TRACES) {
		fprintf(stderr, "heaplab: too many traces (at most %d)\n", GR_MAX_TRACES);
		return 2;
	}
	o->hidden[o->ntraces] = hidden;
	o->traces[o->ntraces++] = strdup(path);
	return 0;
}

static int by_name(const void *x, const void *y) { return strcmp(*(char *const *)x, *(char *const *)y); }

/* Adds every *.rep of a folder, in name order. */
static int add_dir(gr_opts_t *o, const char *dir, bool hidden)
{
	DIR *d = opendir(dir);
	if (!d) {
		fprintf(stderr, "heaplab: cannot read %s: %s\n", dir, strerror(errno));
		return 2;
	}
	int first = o->ntraces, rc = 0;
	for (struct dirent *e; !rc && (e = readdir(d));) {
		size_t n = strlen(e->d_name);
		if (n > 4 && !strcmp(e->d_name + n - 4, ".rep")) {
			char path[4096];
			snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
			rc = add_trace(o, path, hidden);
		}
	}
	closedir(d);
	qsort(o->traces + first, (size_t)(o->ntraces - first), sizeof *o->traces, by_name);
	return rc;
}

static const char *trace_dir(void)
{
	return getenv("HEAPLAB_TRACES") ? getenv("HEAPLAB_TRACES") : GR_TRACE_DIR;
}

int gr_add_arg(gr_opts_t *o, const char *arg, bool hidden)
{
	struct stat sb;
	if (stat(arg, &sb) == 0)
		return S_ISDIR(sb.st_mode) ? add_dir(o, arg, hidden) : add_trace(o, arg, hidden);
	char path[4096];
	bool has_ext = strlen(arg) > 4 && !strcmp(arg + strlen(arg) - 4, ".rep");
	snprintf(path, sizeof path, "%s/%s%s", trace_dir(), arg, has_ext ? "" : ".rep");
	if (stat(path, &sb) != 0) {
		fprintf(stderr, "heaplab: no trace '%s' (nor %s)\n", arg, path);
		return 2;
	}
	return add_trace(o, path, hidden);
}

int gr_add_defaults(gr_opts_t *o)
{
	for (int i = 0; classic[i]; i++)
		if (gr_add_arg(o, classic[i], false))
			return 2;
	struct stat sb;
	if (!o->hidden_dir[0])
		snprintf(o->hidden_dir, sizeof o->hidden_dir, "%s/hidden", trace_dir());
	o->hidden_found = stat(o->hidden_dir, &sb) == 0 && S_ISDIR(sb.st_mode);
	return o->hidden_found ? add_dir(o, o->hidden_dir, true) : 0;
}

int gr_trace_scoring(const hl_trace_t *t)
{
	long header[4];
	if (!hl_trace_header(t, header))
		return GR_ALL;
	/* 64-bit lab: weight code first, peak bytes last.  Classic: heap size
	 * first, weight (unused) last. */
	bool later_style = header[0] >= 0 && header[0] <= 3 && header[3] > 3;
	if (!later_style)
		return GR_ALL;
	static const int codes[4] = { 0, GR_ALL, GR_UTIL, GR_TPUT };
	return codes[header[0]];
}

void gr_free_traces(gr_opts_t *o)
{
	for (int i = 0; i < o->ntraces; i++)
		free(o->traces[i]);
	o->ntraces = 0;
}
