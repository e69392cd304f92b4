/*
 * Reading traces (see trace.h for the format).
 *
 * The reader follows every block id through the file, so real damage (an
 * unknown op, a missing or bad field, a free of an id that is not live)
 * is rejected at load time with "file:line: message", before any
 * allocator runs.  So is a trace that looks cut short: fewer ops than its
 * header announces, or (without a header) a last line with no newline, or
 * a last line that does not parse and has no newline (a number cut in
 * two).  A lenient load (hl_trace_load_lenient) reads such a trace as far
 * as it goes, with a warning.  Known quirks of the published traces are
 * tolerated: a header that counts fewer ops than the file has (a warning;
 * five published traces count one op short), CRLF line ends, a last line
 * without a newline when the header's count says nothing is missing.
 */
#include "config.h"
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include "error.h"
#include "trace.h"
#include "trace_binary.h"

enum { THREAD_IDS = 256 };

static __thread hl_trace_progress_fn load_progress;

void hl_trace_load_progress(hl_trace_progress_fn fn) { load_progress = fn; }

typedef struct reader {
	hl_trace_t *t;
	size_t size;         /**< the file's bytes, for the progress line */
	unsigned line;
	bool lenient;        /**< a trace cut short is read as far as it goes */
	char *live;          /**< per id: 1 while the block is live */
	size_t *made;        /**< per id: the op that made its live block */
	size_t live_cap;
	unsigned char thread[THREAD_IDS]; /**< per tid: NOT_STARTED, RUNNING, EXITED */
	int header_lines;    /**< header numbers read so far */
	bool ops_started;    /**< an op was read: no more header */
	unsigned tid;        /**< the thread of the ops read now */
} reader_t;

/* Each thread id's state while reading: 0 runs from the start, the others
 * from their first "t N" line; "#@exit N" ends N, and a later op or "t N"
 * starts a new thread that got the same number. */
enum { NOT_STARTED = 0, RUNNING = 1, EXITED = 2 };

static void warn(hl_trace_t *t, unsigned line, const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	size_t need = strlen(t->path) + strlen(msg) + 40;
	char *w = realloc(t->warnings, t->warnings_len + need);
	if (!w)
		return;
	t->warnings = w;
	t->warnings_len += (size_t)snprintf(w + t->warnings_len, need,
					    t->binary ? "%s: record %u: warning: %s\n" : "%s:%u: warning: %s\n", t->path, line, msg);
}

static int fail(reader_t *r, const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	hl_set_error(r->t->binary ? "%s: record %u: %s" : "%s:%u: %s", r->t->path, r->line, msg);
	return -1;
}

/* Reads one unsigned/signed integer field; advances *s. */
static int field(reader_t *r, char **s, long long *out, const char *what)
{
	while (**s == ' ' || **s == '\t')
		(*s)++;
	if (!**s)
		return fail(r, "missing %s", what);
	char *end;
	errno = 0;
	long long v = strtoll(*s, &end, 10);
	if (end == *s || errno || (*end && !isspace((unsigned char)*end))) {
		char shown[64];
		return fail(r, "bad %s '%s'", what, hl_printable(*s, strcspn(*s, " \t"), shown, sizeof shown));
	}
	*s = end;
	*out = v;
	return 0;
}

/* Writes the ops of the window (from t->win_lo, @p n of them) to the
 * spill file, opened on the first call; -1 with the reason. */
static int spill(reader_t *r, size_t n)
{
	hl_trace_t *t = r->t;
	if (t->spill_fd < 0) {
		const char *dir = getenv("TMPDIR");
		char path[4096];
		snprintf(path, sizeof path, "%s/heaplab-trace-XXXXXX", dir && *dir ? dir : "/tmp");
		t->spill_fd = mkstemp(path);
		if (t->spill_fd < 0)
			return fail(r, "a long trace is kept in a temporary file, and %s cannot be made: %s", path,
				    strerror(errno));
		unlink(path);
	}
	const char *b = (const char *)t->ops;
	size_t left = n * sizeof *t->ops;
	off_t at = (off_t)(t->win_lo * sizeof *t->ops);
	while (left) {
		ssize_t w = pwrite(t->spill_fd, b, left, at);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return fail(r, "a long trace is kept in a temporary file, which cannot be written: %s",
				    w < 0 ? strerror(errno) : "the disk is full");
		b += w;
		left -= (size_t)w;
		at += w;
	}
	return 0;
}

static int push(reader_t *r, hl_trace_op_t op)
{
	hl_trace_t *t = r->t;
	size_t at = t->nops - t->win_lo;
	if (at == t->window) {          /* the window is full: to the file */
		if (spill(r, at) < 0)
			return -1;
		t->win_lo = t->nops;
		at = 0;
	}
	if (at == t->cap) {
		size_t ncap = t->cap ? t->cap * 2 : 1024;
		if (ncap > t->window)
			ncap = t->window;
		hl_trace_op_t *n = realloc(t->ops, ncap * sizeof *n);
		if (!n)
			return fail(r, "out of memory");
		t->ops = n;
		t->cap = ncap;
	}
	op.line = r->line;
	t->ops[at] = op;
	t->nops++;
	t->counted += !strchr("tsx", op.kind);
	return 0;
}

const hl_trace_op_t *hl_trace_op_load(const hl_trace_t *ct, size_t i)
{
	/* the window is a cache of the file: moving it leaves the trace as it was */
	hl_trace_t *t = (hl_trace_t *)ct;
	if (i >= t->nops || t->spill_fd < 0) {
		fprintf(stderr, "heaplab: %s: op %zu asked for, of %zu\n", t->path, i, t->nops);
		exit(2);
	}
	size_t lo = i - i % t->window, n = t->nops - lo < t->window ? t->nops - lo : t->window;
	char *b = (char *)t->ops;
	size_t left = n * sizeof *t->ops;
	off_t at = (off_t)(lo * sizeof *t->ops);
	while (left) {
		ssize_t got = pread(t->spill_fd, b, left, at);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			fprintf(stderr, "heaplab: %s: the temporary file of its ops cannot be read: %s\n", t->path,
				got < 0 ? strerror(errno) : "it ends early");
			exit(2);
		}
		b += got;
		left -= (size_t)got;
		at += got;
	}
	t->win_lo = lo;
	t->win_n = n;
	return &t->ops[i - lo];
}

/* Each id's state while reading: never seen or reallocated to 0 bytes,
 * live, or freed by an f op (a second f replays a double free). */
enum { UNUSED = 0, LIVE = 1, FREED = 2 };

static int set_live(reader_t *r, long id, char v)
{
	if ((size_t)id >= r->live_cap) {
		size_t ncap = r->live_cap ? r->live_cap : 1024;
		while (ncap <= (size_t)id)
			ncap *= 2;
		char *n = realloc(r->live, ncap);
		if (n)
			r->live = n;
		size_t *m = n ? realloc(r->made, ncap * sizeof *m) : NULL;
		if (!m)
			return fail(r, "out of memory");
		r->made = m;
		memset(n + r->live_cap, 0, ncap - r->live_cap);
		r->live_cap = ncap;
	}
	r->live[id] = v;
	if (v == LIVE)
		r->made[id] = r->t->nops;   /* the op being read, pushed next */
	if (id + 1 > r->t->max_id)
		r->t->max_id = id + 1;
	return 0;
}


static bool is_live(const reader_t *r, long id)
{
	return id >= 0 && (size_t)id < r->live_cap && r->live[id] == LIVE;
}

static int add_label(reader_t *r, const char *text, size_t *offset)
{
	hl_trace_t *t = r->t;
	size_t n = strlen(text) + 1;
	if (t->labels_len + n > t->labels_cap) {
		size_t ncap = (t->labels_cap + n) * 2;
		char *l = realloc(t->labels, ncap);
		if (!l)
			return fail(r, "out of memory");
		t->labels = l;
		t->labels_cap = ncap;
	}
	memcpy(t->labels + t->labels_len, text, n);
	*offset = t->labels_len;
	t->labels_len += n;
	return 0;
}

/* Block ids index arrays (the reader's and the replay's), so a bound keeps
 * a few bytes of trace from asking for gigabytes: 4M ids, where the
 * largest shipped trace uses 150,675. */
static const long long ID_MAX = 1LL << 22;

static int check_id(reader_t *r, char kind, long long id)
{
	if (id < (kind == 'f' ? -1 : 0) || id >= ID_MAX)
		return fail(r, "block id %lld out of range %d..%lld", id, kind == 'f' ? -1 : 0, ID_MAX - 1);
	return 0;
}

static int check_site(reader_t *r, long long site)
{
	if (site < 1 || site > r->t->nsites)
		return fail(r, "site %lld is not declared by a '#@site' line before it", site);
	return 0;
}

/* Parses an op that names a block id. */
static int block_op(reader_t *r, char kind, char *s, hl_trace_op_t *op)
{
	long long id, a = 0, b = 0;
	if (field(r, &s, &id, "block id") < 0)
		return -1;
	if (check_id(r, kind, id) < 0)
		return -1;
	op->id = (long)id;
	if (kind == 'a' || kind == 'r') {
		if (field(r, &s, &a, "size") < 0)
			return -1;
		op->size = (size_t)a;
	} else if (kind == 'c' || kind == 'm') {
		if (field(r, &s, &a, kind == 'c' ? "element count" : "alignment") < 0 ||
		    field(r, &s, &b, "size") < 0)
			return -1;
		op->aux = (size_t)a;
		op->size = (size_t)b;
	}
	if (a < 0 || b < 0)
		return fail(r, "negative size");
	while (*s == ' ' || *s == '\t')
		s++;
	if (*s == '@' && kind != 'f') {
		long long site;
		s++;
		if (field(r, &s, &site, "site") < 0)
			return -1;
		if (check_site(r, site) < 0)
			return -1;
		op->site = (unsigned)site;
		while (*s == ' ' || *s == '\t')
			s++;
	}
	if (*s) {
		char shown[64];
		return fail(r, "unexpected '%s' after the op", hl_printable(s, strlen(s), shown, sizeof shown));
	}
	return 0;
}

/* Tracks liveness so that damage is found at load time. */
static int follow_block(reader_t *r, hl_trace_op_t *op)
{
	switch (op->kind) {
	case 'f':
		if (op->id == -1)
			return 0;
		if (op->id < (long)r->live_cap && r->live[op->id] == FREED) {
			/* a program's mistake, kept: replayed as a double free */
			warn(r->t, r->line, "block %ld is freed again: replayed as a double free", op->id);
			op->aux = 1;
			return 0;
		}
		if (!is_live(r, op->id))
			return fail(r, "free of block %ld, which is not live", op->id);
		return set_live(r, op->id, FREED);
	case 'r':
		return set_live(r, op->id, op->size != 0 ? LIVE : UNUSED);
	default:
		if (is_live(r, op->id))
			return fail(r, "block %ld is allocated again while still live", op->id);
		return set_live(r, op->id, LIVE);
	}
}

/* "t N": the ops that follow run on thread N. */
static int thread_switch(reader_t *r, long long v, unsigned *tid, hl_trace_op_t *op)
{
	if (v < 0 || v > 255)
		return fail(r, "thread id %lld out of range 0..255", v);
	*tid = (unsigned)v;
	op->id = (long)v;
	op->tid = *tid;
	r->thread[*tid] = RUNNING;
	if (*tid + 1 > r->t->nthreads)
		r->t->nthreads = *tid + 1;
	return 0;
}

static int parse_op(reader_t *r, char *s, unsigned *tid)
{
	hl_trace_op_t op = { .kind = s[0], .tid = *tid, .id = -1 };
	r->thread[*tid] = RUNNING;
	if (s[1] && !isspace((unsigned char)s[1])) {
		char shown[64];
		return fail(r, "unknown op '%s' (expected a, f, r, c, m, t or s)",
			    hl_printable(s, strcspn(s, " \t"), shown, sizeof shown));
	}
	switch (op.kind) {
	case 'a': case 'f': case 'r': case 'c': case 'm':
		if (block_op(r, op.kind, s + 1, &op) < 0 || follow_block(r, &op) < 0)
			return -1;
		break;
	case 't': {
		long long v;
		char *p = s + 1;
		if (field(r, &p, &v, "thread id") < 0 || thread_switch(r, v, tid, &op) < 0)
			return -1;
		break;
	}
	case 's': {
		char *label = s + 1;
		while (*label == ' ' || *label == '\t')
			label++;
		if (!*label)
			return fail(r, "snapshot op without a label");
		if (add_label(r, label, &op.aux) < 0)
			return -1;
		break;
	}
	default: {
		char shown[8];
		return fail(r, "unknown op '%s' (expected a, f, r, c, m, t or s)",
			    hl_printable(&op.kind, 1, shown, sizeof shown));
	}
	}
	return push(r, op);
}

/* ---- "#@" lines: sites, resident-set samples, modules ---------------------- */

/* Makes room for one more element of @p size in *arr. */
static int room(reader_t *r, void **arr, size_t n, size_t *cap, size_t size)
{
	if (n < *cap)
		return 0;
	size_t ncap = *cap ? *cap * 2 : 64;
	void *a = realloc(*arr, ncap * size);
	if (!a)
		return fail(r, "out of memory");
	*arr = a;
	*cap = ncap;
	return 0;
}

/* Reads one hexadecimal field "0x..."; advances *s. */
static int hex_field(reader_t *r, char **s, uintptr_t *out, const char *what)
{
	while (**s == ' ' || **s == '\t')
		(*s)++;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(*s, &end, 16);
	if (end == *s || errno || **s == '-' || (*end && !isspace((unsigned char)*end)))
		return fail(r, "bad %s", what);
	*s = end;
	*out = (uintptr_t)v;
	return 0;
}

static int site_line(reader_t *r, char *s)
{
	hl_trace_t *t = r->t;
	long long n;
	uintptr_t addr;
	if (field(r, &s, &n, "site number") < 0 || hex_field(r, &s, &addr, "site address") < 0)
		return -1;
	if (n != (long long)t->nsites + 1)
		return fail(r, "site %lld declared out of order (expected %u)", n, t->nsites + 1);
	size_t cap = t->sites_cap;
	if (room(r, (void **)&t->sites, t->nsites, &cap, sizeof *t->sites) < 0)
		return -1;
	t->sites_cap = (unsigned)cap;
	t->sites[t->nsites++] = addr;
	return 0;
}

static int rss_line(reader_t *r, char *s)
{
	hl_trace_t *t = r->t;
	long long ms, bytes;
	if (field(r, &s, &ms, "sample time") < 0 || field(r, &s, &bytes, "resident bytes") < 0)
		return -1;
	if (ms < 0 || bytes < 0)
		return fail(r, "negative sample");
	if (t->nrss && (unsigned long)ms < t->rss[t->nrss - 1].ms)
		return fail(r, "sample time %lld goes back in time", ms);
	if (room(r, (void **)&t->rss, t->nrss, &t->rss_cap, sizeof *t->rss) < 0)
		return -1;
	t->rss[t->nrss++] = (hl_trace_rss_t){ t->nops, (unsigned long)ms, (size_t)bytes };
	return 0;
}

/* "#@t US": the ops after it ran at US microseconds since the recording
 * started (until the next such line). */
static int add_time(reader_t *r, long long us);

static int time_line(reader_t *r, char *s)
{
	long long us;
	if (field(r, &s, &us, "time") < 0)
		return -1;
	return add_time(r, us);
}

static int add_time(reader_t *r, long long us)
{
	hl_trace_t *t = r->t;
	if (us < 0)
		return fail(r, "negative time");
	if (t->ntimes && (uint64_t)us < t->times[t->ntimes - 1].us)
		return fail(r, "time %lld goes back in time", us);
	if (t->ntimes && t->times[t->ntimes - 1].ops_before == t->nops) {
		t->times[t->ntimes - 1].us = (uint64_t)us;   /* no op between: the later one holds */
		return 0;
	}
	if (room(r, (void **)&t->times, t->ntimes, &t->times_cap, sizeof *t->times) < 0)
		return -1;
	t->times[t->ntimes++] = (hl_trace_time_t){ t->nops, (uint64_t)us };
	return 0;
}

static int module_line(reader_t *r, char *s)
{
	hl_trace_t *t = r->t;
	hl_trace_module_t m;
	if (hex_field(r, &s, &m.lo, "module start") < 0 || hex_field(r, &s, &m.hi, "module end") < 0 ||
	    hex_field(r, &s, &m.base, "module base") < 0)
		return -1;
	while (*s == ' ' || *s == '\t')
		s++;
	if (!*s || m.hi <= m.lo)
		return fail(r, "module line without a path or with an empty range");
	if (add_label(r, s, &m.path) < 0 ||
	    room(r, (void **)&t->modules, t->nmodules, &t->modules_cap, sizeof *t->modules) < 0)
		return -1;
	t->modules[t->nmodules++] = m;
	return 0;
}

static int exit_op(reader_t *r, long long v);

/* "#@exit N": thread N exits here (an 'x' op run on thread N). */
static int exit_line(reader_t *r, char *s)
{
	long long v;
	if (field(r, &s, &v, "thread id") < 0)
		return -1;
	while (*s == ' ' || *s == '\t')
		s++;
	if (*s) {
		char shown[64];
		return fail(r, "unexpected '%s' after the thread id", hl_printable(s, strlen(s), shown, sizeof shown));
	}
	return exit_op(r, v);
}

/* Thread @p v exits: an 'x' op. */
static int exit_op(reader_t *r, long long v)
{
	if (v < 0 || v >= THREAD_IDS)
		return fail(r, "thread id %lld out of range 0..%d", v, THREAD_IDS - 1);
	if (r->thread[v] != RUNNING)
		return fail(r, "thread %lld exits %s", v,
			    r->thread[v] == EXITED ? "twice (no op or 't' line since its exit)" : "before it ran");
	r->thread[v] = EXITED;
	return push(r, (hl_trace_op_t){ .kind = 'x', .tid = (unsigned)v, .id = (long)v });
}

/* "#@touched ID PAGES": live block ID had PAGES pages resident when it was
 * freed or when the recording ended; kept for the op that made the block. */
static int touched_line(reader_t *r, char *s)
{
	hl_trace_t *t = r->t;
	long long id, pages;
	if (field(r, &s, &id, "block id") < 0 || field(r, &s, &pages, "page count") < 0)
		return -1;
	if (pages < 0)
		return fail(r, "negative page count");
	if (id < 0 || (size_t)id >= r->live_cap || r->live[id] != LIVE)
		return fail(r, "pages of block %lld, which is not live", id);
	if (room(r, (void **)&t->touched, t->ntouched, &t->touched_cap, sizeof *t->touched) < 0)
		return -1;
	t->touched[t->ntouched++] = (hl_trace_touched_t){ r->made[id], (size_t)pages };
	return 0;
}

/* "#@sample 1/K": from here on the recording keeps one new block of the
 * program's in K (recorder.h: hl_rec_sample_blocks); "#@sampled N": the
 * program made N ops, kept or not. */
static int sample_line(reader_t *r, char *s)
{
	hl_trace_t *t = r->t;
	while (*s == ' ' || *s == '\t')
		s++;
	if (strncmp(s, "1/", 2))
		return fail(r, "a sampling rate is written 1/K");
	s += 2;
	long long k;
	if (field(r, &s, &k, "sampling rate") < 0)
		return -1;
	if (k < 1)
		return fail(r, "sampling rate 1/%lld: K is 1 or more", k);
	if (room(r, (void **)&t->rates, t->nrates, &t->rates_cap, sizeof *t->rates) < 0)
		return -1;
	t->rates[t->nrates++] = (hl_trace_rate_t){ t->nops, (unsigned long)k };
	return 0;
}

static int sampled_line(reader_t *r, char *s)
{
	long long n;
	if (field(r, &s, &n, "op count") < 0)
		return -1;
	if (n < 0)
		return fail(r, "negative op count");
	r->t->program_ops = (unsigned long long)n;
	return 0;
}

/* "#@front NAME": one word, the last one kept. */
static int front_line(reader_t *r, char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	size_t n = strcspn(s, " \t");
	if (!n || s[n])
		return fail(r, "front line without its one word");
	size_t at;
	if (add_label(r, s, &at) < 0)
		return -1;
	r->t->front = at + 1;
	return 0;
}

/* "#@layers peak|final ...": kept whole, the last of each (diagnose reads them). */
static int layers_line(reader_t *r, char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	int k = !strncmp(s, "peak ", 5) ? 0 : !strncmp(s, "final ", 6) ? 1 : -1;
	size_t at;
	if (k < 0)
		return 0;
	if (add_label(r, s, &at) < 0)   /* "peak MS RSS ..." */
		return -1;
	r->t->layers[k] = at + 1;
	return 0;
}

static int by_op(const void *a, const void *b)
{
	size_t x = ((const hl_trace_touched_t *)a)->op, y = ((const hl_trace_touched_t *)b)->op;
	return (x > y) - (x < y);
}

/* A comment line: "#@site", "#@rss", "#@t", "#@module", "#@exit",
 * "#@touched", "#@layers", "#@sample", "#@sampled" and "#@front" are
 * read, anything else is a comment. */
static int comment_line(reader_t *r, char *s)
{
	static const struct {
		const char *word;
		int (*read)(reader_t *, char *);
	} words[] = { { "#@site", site_line }, { "#@rss", rss_line }, { "#@t", time_line }, { "#@module", module_line },
		      { "#@exit", exit_line }, { "#@touched", touched_line }, { "#@layers", layers_line },
		      { "#@sample", sample_line }, { "#@sampled", sampled_line }, { "#@front", front_line } };
	for (size_t k = 0; k < sizeof words / sizeof words[0]; k++) {
		size_t n = strlen(words[k].word);
		if (!strncmp(s, words[k].word, n) && (s[n] == ' ' || s[n] == '\t'))
			return words[k].read(r, s + n);
	}
	return 0;
}

static bool is_number_line(const char *s)
{
	if (*s == '-')
		s++;
	if (!isdigit((unsigned char)*s))
		return false;
	while (isdigit((unsigned char)*s))
		s++;
	while (isspace((unsigned char)*s))
		s++;
	return *s == 0;
}

/* Trims CR/LF and surrounding blanks in place; returns the start. */
static char *trim(char *s)
{
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = 0;
	while (isspace((unsigned char)*s))
		s++;
	return s;
}

/* The longest line read (the published traces' lines are short; the bound
 * keeps one line of garbage from growing without end). */
enum { LINE_MAX_CHARS = 4094 };

/* The last line has no newline and does not parse: in a strict load the
 * true cause is that the file was cut; a lenient load drops the line. */
static int cut_line(reader_t *r, const char *text)
{
	char shown[64];
	hl_printable(text, strlen(text), shown, sizeof shown);
	if (!r->lenient) {
		hl_set_error("%s:%u: the file ends in the middle of a line ('%s' has no newline): "
			     "the trace was cut short (--lenient replays what comes before it)",
			     r->t->path, r->line, shown);
		return -1;
	}
	warn(r->t, r->line, "the file ends in the middle of a line ('%s'): that line is dropped", shown);
	return 0;
}

/* The ops begin: the header must be whole (none or four numbers). */
static int start_ops(reader_t *r)
{
	if (r->header_lines != 0 && r->header_lines != 4)
		return fail(r, "incomplete header: %d number(s), expected 4", r->header_lines);
	r->ops_started = true;
	return 0;
}

/* One line, trimmed: a comment, a header number or an op; @p unterminated
 * when it is the file's last and has no newline. */
static int take_line(reader_t *r, char *s, bool unterminated)
{
	if (*s == '#')
		return comment_line(r, s);
	if (!*s)
		return 0;
	if (!r->ops_started && r->header_lines < 4 && is_number_line(s)) {
		r->t->header[r->header_lines++] = strtol(s, NULL, 10);
		return 0;
	}
	if (start_ops(r) < 0)
		return -1;
	if (!unterminated)
		return parse_op(r, s, &r->tid);
	/* the last line: parse a copy, so that a failure can name the cut */
	char *copy = strdup(s);
	if (!copy)
		return fail(r, "out of memory");
	r->t->last_unterminated = true;
	int rc = parse_op(r, s, &r->tid) < 0 ? cut_line(r, copy) : 0;
	free(copy);
	return rc;
}

static int parse_file(reader_t *r, FILE *f)
{
	char *buf = NULL;
	size_t cap = 0;
	ssize_t n;
	int rc = 0;
	errno = 0;
	while (rc == 0 && (n = getline(&buf, &cap, f)) >= 0) {
		r->line++;
		if (load_progress && r->size && r->line % 65536 == 0)
			load_progress(r->t->path, (size_t)ftello(f), r->size);
		const char *nul = memchr(buf, 0, (size_t)n);
		if (nul) {
			rc = fail(r, "NUL byte at column %zu (a binary file, not a trace?)", (size_t)(nul - buf) + 1);
			break;
		}
		bool unterminated = n == 0 || buf[n - 1] != '\n';
		if ((size_t)n - !unterminated > LINE_MAX_CHARS) {
			rc = fail(r, "line longer than %d characters", LINE_MAX_CHARS);
			break;
		}
		rc = take_line(r, trim(buf), unterminated);
	}
	if (rc == 0 && ferror(f))
		rc = fail(r, "read error: %s", strerror(errno ? errno : EIO));
	free(buf);
	return rc;
}

/* One record of a binary trace (trace_binary.h): what its line would be. */
static int take_record(reader_t *r, hl_bin_record_t *rec)
{
	hl_trace_op_t op = { .kind = hl_bin_letter(rec->kind), .tid = r->tid, .id = rec->id };
	switch (rec->kind) {
	case HL_BIN_TIME:
		if (rec->us > (uint64_t)LLONG_MAX)
			return fail(r, "time %llu out of range", (unsigned long long)rec->us);
		return add_time(r, (long long)rec->us);
	case HL_BIN_TEXT:
		if (rec->len > LINE_MAX_CHARS)
			return fail(r, "line longer than %d characters", LINE_MAX_CHARS);
		return take_line(r, trim((char *)rec->text), false);
	case HL_BIN_X:
		return exit_op(r, rec->id);
	case HL_BIN_T:
		if (start_ops(r) < 0 || thread_switch(r, rec->id, &r->tid, &op) < 0)
			return -1;
		return push(r, op);
	default:
		if (start_ops(r) < 0 || check_id(r, op.kind, rec->id) < 0 || (rec->site && check_site(r, rec->site) < 0))
			return -1;
		r->thread[r->tid] = RUNNING;
		op.size = rec->kind == HL_BIN_C || rec->kind == HL_BIN_M ? rec->b : rec->a;
		op.aux = rec->kind == HL_BIN_C || rec->kind == HL_BIN_M ? rec->a : 0;
		op.site = rec->site;
		if (follow_block(r, &op) < 0)
			return -1;
		return push(r, op);
	}
}

/* A binary trace, after its magic: every record, up to the end record. */
static int parse_binary(reader_t *r, FILE *f)
{
	hl_bin_reader_t b = { .f = f };
	hl_bin_record_t rec;
	const char *why = NULL;
	int got = 0, rc = 0;
	bool ended = false;
	while (rc == 0 && (got = hl_bin_next(&b, &rec, &why)) > 0) {
		r->line = (unsigned)b.records;
		if (load_progress && r->size && r->line % 65536 == 0)
			load_progress(r->t->path, (size_t)ftello(f), r->size);
		if (ended)
			rc = fail(r, "a record after the end record (a damaged file?)");
		else if (rec.kind == HL_BIN_END)
			ended = true;
		else
			rc = take_record(r, &rec);
	}
	r->line = (unsigned)b.records;
	hl_bin_reader_free(&b);
	if (rc < 0)
		return -1;
	bool cut = got < 0 && !strcmp(why, HL_BIN_CUT);
	if (got < 0 && !cut)
		return fail(r, "%s", why);
	if (!cut && ended)
		return 0;
	if (!r->lenient)
		return fail(r, "%s: the recording was cut short (--lenient replays what comes before it)",
			    cut ? why : "the file ends without its end record");
	warn(r->t, r->line, "%s: the recording was cut short", cut ? why : "the file ends without its end record");
	return 0;
}

/* A text or a binary trace, told by its first bytes. */
static int parse_any(reader_t *r, FILE *f)
{
	int binary = hl_bin_form(f, r->t->path);
	if (binary < 0)
		return -1;
	r->t->binary = binary == 1;
	int rc = binary ? parse_binary(r, f) : parse_file(r, f);
	if (rc == 0 && r->header_lines != 0 && r->header_lines != 4)
		rc = r->lenient ? 0 : fail(r, "the file ends inside its header (%d of 4 numbers): the trace was cut short", r->header_lines);
	if (rc < 0)
		return -1;
	r->t->has_header = r->header_lines == 4;
	return 0;
}

/* Compares the header's op count with the file's; a file with fewer ops
 * than announced, or without a header and a last line without a newline,
 * was cut short. */
static int check_length(reader_t *r)
{
	hl_trace_t *t = r->t;
	size_t counted = t->counted;
	if (t->has_header && (size_t)t->header[2] > counted) {
		if (!r->lenient) {
			hl_set_error("%s:%u: the file ends after %zu of the %ld ops its header announces (line 3): "
				     "the trace was cut short (--lenient replays what is there)",
				     t->path, r->line, counted, t->header[2]);
			return -1;
		}
		warn(t, r->line, "the file ends after %zu of the %ld ops its header announces", counted, t->header[2]);
	} else if (t->has_header && (size_t)t->header[2] < counted) {
		warn(t, 3, "header says %ld ops, the file has %zu", t->header[2], counted);
	} else if (!t->has_header && t->last_unterminated) {
		if (!r->lenient) {
			hl_set_error("%s:%u: the last line has no newline and there is no header to count the ops: "
				     "the trace may be cut short (--lenient replays it as it is)",
				     t->path, r->line);
			return -1;
		}
		warn(t, r->line, "the last line has no newline: the trace may be cut short");
	}
	if (t->has_header && t->header[1] < t->max_id)
		warn(t, 2, "header says %ld block ids, the file uses %ld", t->header[1], t->max_id);
	return 0;
}

/* Reads a whole trace from @p f, naming it @p name in every message. */
static hl_trace_t *read_trace(FILE *f, const char *name, bool lenient, size_t size)
{
	hl_trace_t *t = calloc(1, sizeof *t);
	if (!t || !(t->path = strdup(name))) {
		free(t);
		hl_set_error("%s: out of memory", name);
		return NULL;
	}
	t->spill_fd = -1;
	const char *window = getenv("HEAPLAB_TRACE_WINDOW");   /* tests: a small one */
	t->window = window && atol(window) > 0 ? (size_t)atol(window) : HL_TRACE_WINDOW;
	reader_t r = { .t = t, .size = size, .lenient = lenient, .thread = { [0] = RUNNING } };
	int rc = parse_any(&r, f);
	free(r.live);
	free(r.made);
	t->win_n = t->nops - t->win_lo;
	if (rc == 0 && t->spill_fd >= 0)   /* the last window to the file too */
		rc = spill(&r, t->win_n);
	if (rc < 0 || check_length(&r) < 0) {
		hl_trace_free(t);
		return NULL;
	}
	if (t->nthreads == 0)
		t->nthreads = 1;
	if (t->ntouched)   /* qsort's array may not be NULL, even empty */
		qsort(t->touched, t->ntouched, sizeof *t->touched, by_op);
	t->ops_read = t->nops;
	const char *target = getenv("HEAPLAB_TRACE_SAMPLE"), *seed = getenv("HEAPLAB_TRACE_SEED");
	if (hl_trace_thin(t, target ? strtoul(target, NULL, 10) : 1, seed ? strtoull(seed, NULL, 10) : 1) < 0) {
		hl_trace_free(t);
		return NULL;
	}
	return t;
}

/* Reads @p f (NULL when it could not be opened: errno says why) and closes it. */
static hl_trace_t *read_and_close(FILE *f, const char *name, bool lenient)
{
	if (!f) {
		hl_set_error("%s: %s", name, strerror(errno));
		return NULL;
	}
	struct stat st = { 0 };
	if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
		fclose(f);
		hl_set_error("%s: is a directory, not a trace", name);
		return NULL;
	}
	hl_trace_t *t = read_trace(f, name, lenient, S_ISREG(st.st_mode) ? (size_t)st.st_size : 0);
	if (load_progress)
		load_progress(name, 1, 1);   /* done */
	fclose(f);
	return t;
}

hl_trace_t *hl_trace_load(const char *path)
{
	return read_and_close(fopen(path, "r"), path, false);
}

hl_trace_t *hl_trace_load_lenient(const char *path)
{
	return read_and_close(fopen(path, "r"), path, true);
}

hl_trace_t *hl_trace_parse(const char *name, const char *text, size_t len)
{
	return read_and_close(fmemopen((void *)text, len, "r"), name, false);
}

void hl_trace_free(hl_trace_t *t)
{
	if (!t)
		return;
	if (t->spill_fd >= 0)
		close(t->spill_fd);
	free(t->path);
	free(t->ops);
	free(t->labels);
	free(t->sites);
	free(t->rss);
	free(t->touched);
	free(t->rates);
	free(t->times);
	free(t->modules);
	free(t->warnings);
	free(t);
}

const char *hl_trace_warnings(const hl_trace_t *t) { return t->warnings ? t->warnings : ""; }
size_t hl_trace_ops(const hl_trace_t *t) { return t->nops; }
unsigned hl_trace_op_line(const hl_trace_t *t, size_t i) { return i < t->nops ? hl_trace_op_at(t, i)->line : 0; }
char hl_trace_op_kind(const hl_trace_t *t, size_t i) { return i < t->nops ? hl_trace_op_at(t, i)->kind : 0; }
long hl_trace_op_id(const hl_trace_t *t, size_t i)
{
	if (i >= t->nops)
		return -1;
	const hl_trace_op_t *op = hl_trace_op_at(t, i);
	return !strchr("tsx", op->kind) ? op->id : -1;
}

size_t hl_trace_op_size(const hl_trace_t *t, size_t i)
{
	if (i >= t->nops)
		return 0;
	const hl_trace_op_t *op = hl_trace_op_at(t, i);
	switch (op->kind) {
	case 'a': case 'r': case 'm': return op->size;
	case 'c': return op->size * op->aux;
	default: return 0;
	}
}

int hl_trace_live_peak(const hl_trace_t *t, size_t *peak, size_t *at)
{
	size_t n = t->max_id > 0 ? (size_t)t->max_id : 1, live = 0;
	size_t *held = calloc(n, sizeof *held);
	*peak = 0;
	if (at)
		*at = 0;
	if (!held) {
		hl_set_error("out of memory for the trace's %zu blocks", n);
		return -1;
	}
	for (size_t i = 0; i < t->nops; i++) {
		const hl_trace_op_t *op = hl_trace_op_at(t, i);
		if (!strchr("acmrf", op->kind) || op->id < 0 || (size_t)op->id >= n)
			continue;
		live -= held[op->id];
		held[op->id] = op->kind == 'f' ? 0 : hl_trace_op_size(t, i);
		live += held[op->id];
		if (live > *peak) {
			*peak = live;
			if (at)
				*at = i;
		}
	}
	free(held);
	return 0;
}

const char *hl_trace_op_label(const hl_trace_t *t, size_t i)
{
	const hl_trace_op_t *op = i < t->nops ? hl_trace_op_at(t, i) : NULL;
	return op && op->kind == 's' ? t->labels + op->aux : NULL;
}

const char *hl_trace_op_text(const hl_trace_t *t, size_t i, char *buf, size_t len)
{
	if (i >= t->nops) {
		snprintf(buf, len, "(end)");
		return buf;
	}
	const hl_trace_op_t *op = hl_trace_op_at(t, i);
	switch (op->kind) {
	case 'a': case 'r': snprintf(buf, len, "%c %ld %zu", op->kind, op->id, op->size); break;
	case 'c': case 'm': snprintf(buf, len, "%c %ld %zu %zu", op->kind, op->id, op->aux, op->size); break;
	case 'f': snprintf(buf, len, "f %ld", op->id); break;
	case 't': snprintf(buf, len, "t %ld", op->id); break;
	case 'x': snprintf(buf, len, "#@exit %ld", op->id); break;
	case 's': snprintf(buf, len, "s %s", t->labels + op->aux); break;
	default: snprintf(buf, len, "?");
	}
	return buf;
}

bool hl_trace_header(const hl_trace_t *t, long header[4])
{
	for (int k = 0; k < 4; k++)
		header[k] = t->has_header ? t->header[k] : -1;
	return t->has_header;
}

long hl_trace_max_id(const hl_trace_t *t) { return t->max_id; }
unsigned hl_trace_op_site(const hl_trace_t *t, size_t i) { return i < t->nops ? hl_trace_op_at(t, i)->site : 0; }
unsigned hl_trace_sites(const hl_trace_t *t) { return t->nsites; }

unsigned hl_trace_threads(const hl_trace_t *t) { return t->nthreads; }

const char *hl_trace_front(const hl_trace_t *t) { return t->front ? t->labels + t->front - 1 : NULL; }

uintptr_t hl_trace_site(const hl_trace_t *t, unsigned s, const char **module, uintptr_t *offset)
{
	if (module)
		*module = NULL;
	if (offset)
		*offset = 0;
	if (s < 1 || s > t->nsites)
		return 0;
	uintptr_t a = t->sites[s - 1];
	for (size_t k = 0; k < t->nmodules; k++) {
		const hl_trace_module_t *m = &t->modules[k];
		if (a >= m->lo && a < m->hi) {
			if (module)
				*module = t->labels + m->path;
			if (offset)
				*offset = a - m->base;
			break;
		}
	}
	return a;
}

size_t hl_trace_samples(const hl_trace_t *t) { return t->nrss; }

bool hl_trace_sample(const hl_trace_t *t, size_t k, size_t *ops_before, unsigned long *ms, size_t *bytes)
{
	if (k >= t->nrss)
		return false;
	if (ops_before)
		*ops_before = t->rss[k].ops_before;
	if (ms)
		*ms = t->rss[k].ms;
	if (bytes)
		*bytes = t->rss[k].bytes;
	return true;
}

size_t hl_trace_op_touched(const hl_trace_t *t, size_t i, size_t size)
{
	size_t lo = 0, hi = t->ntouched;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->touched[mid].op < i)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == t->ntouched || t->touched[lo].op != i)
		return size;
	size_t pages = t->touched[lo].pages;
	return pages < size / HL_TRACE_PAGE ? pages * HL_TRACE_PAGE : size;
}

bool hl_trace_timed(const hl_trace_t *t) { return t->ntimes > 0; }

uint64_t hl_trace_op_ns(const hl_trace_t *t, size_t i, uint64_t op_ns)
{
	if (!t->ntimes)
		return (uint64_t)i * op_ns;
	/* the last stamp written before op i */
	size_t lo = 0, hi = t->ntimes;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->times[mid].ops_before <= i)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? t->times[lo - 1].us * 1000u : 0;
}

uint64_t hl_trace_end_ns(const hl_trace_t *t, uint64_t op_ns)
{
	return t->ntimes ? t->times[t->ntimes - 1].us * 1000u : (uint64_t)t->nops * op_ns;
}
