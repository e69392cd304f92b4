/* Statistics writers (see stats.h): JSON, indented text, and lookup of one
 * dotted path.  The same emitter calls feed all three. */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "stats.h"

void hl_statw_init(hl_statw_t *w, enum hl_statw_mode mode, FILE *out, const char *want)
{
	memset(w, 0, sizeof *w);
	w->mode = mode;
	w->out = out;
	w->want = want;
	w->first[0] = true;
	if (mode == HL_STATW_JSON)
		fputc('{', out);
}

void hl_statw_finish(hl_statw_t *w)
{
	if (w->mode == HL_STATW_JSON)
		fputs("}\n", w->out);
}

/* Pushes key onto the lookup path; returns the old length. */
static size_t path_push(hl_statw_t *w, const char *key)
{
	size_t old = strlen(w->path);
	char idx[24];
	if (!key) {
		snprintf(idx, sizeof idx, "%d", w->index[w->depth]);
		key = idx;
	}
	snprintf(w->path + old, sizeof w->path - old, "%s%s", old ? "." : "", key);
	return old;
}

/* Starts a member: separator, key and indentation. */
static void member(hl_statw_t *w, const char *key)
{
	if (w->mode == HL_STATW_JSON) {
		if (!w->first[w->depth])
			fputc(',', w->out);
		if (key && !w->is_list[w->depth])
			fprintf(w->out, "\"%s\":", key);
	} else if (w->mode == HL_STATW_TEXT) {
		fprintf(w->out, "%*s", 2 * w->depth, "");
		if (key)
			fprintf(w->out, "%s: ", key);
		else
			fprintf(w->out, "[%d] ", w->index[w->depth]);
	}
	w->first[w->depth] = false;
}

static void after_member(hl_statw_t *w)
{
	if (w->is_list[w->depth])
		w->index[w->depth]++;
}

static void open_scope(hl_statw_t *w, const char *key, bool list)
{
	member(w, key);
	if (w->mode == HL_STATW_JSON)
		fputc(list ? '[' : '{', w->out);
	else if (w->mode == HL_STATW_TEXT)
		fputc('\n', w->out);
	size_t old = path_push(w, w->is_list[w->depth] ? NULL : key);
	after_member(w);
	if (w->depth + 1 >= HL_STATW_DEPTH)
		abort();
	w->depth++;
	w->pathlen[w->depth] = old;
	w->first[w->depth] = true;
	w->is_list[w->depth] = list;
	w->index[w->depth] = 0;
}

void hl_statw_object(hl_statw_t *w, const char *key) { open_scope(w, key, false); }
void hl_statw_list(hl_statw_t *w, const char *key) { open_scope(w, key, true); }

void hl_statw_end(hl_statw_t *w)
{
	if (w->mode == HL_STATW_JSON)
		fputc(w->is_list[w->depth] ? ']' : '}', w->out);
	w->path[w->pathlen[w->depth]] = 0;
	w->depth--;
}

/* Handles a scalar for lookup; true when it is the wanted one. */
static void lookup(hl_statw_t *w, const char *key, double v)
{
	size_t old = path_push(w, w->is_list[w->depth] ? NULL : key);
	if (w->mode == HL_STATW_VISIT) {
		if (!isnan(v) && !strncmp(w->path, w->want, strlen(w->want)))
			w->visit(w->path, v, w->visit_arg);
	} else if (!w->found && !strcmp(w->path, w->want)) {
		w->found = true;
		w->value = v;
	}
	w->path[old] = 0;
	after_member(w);
}

static void scalar(hl_statw_t *w, const char *key, double v, const char *text)
{
	if (w->mode == HL_STATW_LOOKUP || w->mode == HL_STATW_VISIT) {
		lookup(w, key, v);
		return;
	}
	member(w, key);
	fputs(text, w->out);
	if (w->mode == HL_STATW_TEXT)
		fputc('\n', w->out);
	after_member(w);
}

void hl_statw_u64(hl_statw_t *w, const char *key, uint64_t v)
{
	char b[32];
	snprintf(b, sizeof b, "%llu", (unsigned long long)v);
	scalar(w, key, (double)v, b);
}

void hl_statw_i64(hl_statw_t *w, const char *key, int64_t v)
{
	char b[32];
	snprintf(b, sizeof b, "%lld", (long long)v);
	scalar(w, key, (double)v, b);
}

void hl_statw_f64(hl_statw_t *w, const char *key, double v)
{
	char b[40];
	if (isfinite(v))
		snprintf(b, sizeof b, "%.6g", v);
	else
		snprintf(b, sizeof b, "null");
	scalar(w, key, v, b);
}

void hl_statw_bool(hl_statw_t *w, const char *key, bool v)
{
	scalar(w, key, v ? 1 : 0, v ? "true" : "false");
}

void hl_statw_str(hl_statw_t *w, const char *key, const char *v)
{
	if (w->mode == HL_STATW_LOOKUP || w->mode == HL_STATW_VISIT) {
		lookup(w, key, NAN);
		if (w->found && isnan(w->value))
			w->found = false;
		return;
	}
	member(w, key);
	if (w->mode == HL_STATW_JSON) {
		fputc('"', w->out);
		for (const char *s = v ? v : ""; *s; s++) {
			if (*s == '"' || *s == '\\')
				fprintf(w->out, "\\%c", *s);
			else if ((unsigned char)*s < 0x20)
				fprintf(w->out, "\\u%04x", *s);
			else
				fputc(*s, w->out);
		}
		fputc('"', w->out);
	} else {
		fprintf(w->out, "%s\n", v ? v : "");
	}
	after_member(w);
}
