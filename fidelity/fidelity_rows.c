/* heaplab fidelity: reading a rows file (format: fidelity/README.md).
 * Stanzas of "field value" lines, separated by blank lines; '#' lines are
 * comments; a `family` stanza before the first row says what the family's
 * real side is.  Any damage is reported as "file:line: message". */
#include "config.h"
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fidelity.h"

const char *const fid_families[] = { "glibc", "jemalloc", "mimalloc", "tcmalloc", "pymalloc", NULL };

const char *fid_real_preload(const char *family, const char *declared)
{
	static const struct {
		const char *family, *lib;
	} libs[] = {
		{ "glibc", "" },
		{ "jemalloc", "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2" },
		{ "mimalloc", "/usr/lib/x86_64-linux-gnu/libmimalloc.so.2" },
		{ "tcmalloc", "/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4" },
		{ "pymalloc", "" },
	};
	const char *lib = NULL;
	if (declared)
		lib = strcmp(declared, "none") ? declared : "";
	for (size_t i = 0; !lib && i < sizeof libs / sizeof libs[0]; i++)
		if (!strcmp(family, libs[i].family))
			lib = libs[i].lib;
	if (!lib || !*lib)
		return lib;
	/* HEAPLAB_FIDELITY_JEMALLOC=/path/libjemalloc.so.2 and so on:
	 * the library lives elsewhere (or, for a test, is missing) */
	char var[64] = "HEAPLAB_FIDELITY_";
	for (size_t k = strlen(var), j = 0; family[j] && k < sizeof var - 1; j++, k++)
		var[k] = (char)toupper((unsigned char)family[j]);
	const char *env = getenv(var);
	return env ? env : lib;
}

/* The reader's state: where it is, for messages. */
typedef struct reader {
	const char *path;
	const char *family;
	unsigned line;
	size_t rows;        /* rows read from this file so far */
	char *real_preload; /* its family stanza's, for every row (NULL: none) */
} reader_t;

static int damaged(const reader_t *r, unsigned line, const char *fmt, const char *arg)
{
	fprintf(stderr, "%s:%u: ", r->path, line);
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	return 2;
}

/* The field of @p row named @p name, or NULL when there is none. */
static char **field_slot(fid_row_t *row, const char *name)
{
	struct {
		const char *name;
		char **slot;
	} fields[] = {
		{ "row", &row->id },	       { "claim", &row->claim },     { "probe", &row->probe },
		{ "key", &row->key },	       { "compare", &row->compare_text }, { "model", &row->model },
		{ "real_env", &row->real_env }, { "model_env", &row->model_env }, { "why", &row->why },
		{ "real_version", &row->real_version }, { "model_by", &row->model_by },
		{ "real_preload", &row->real_preload }, { "family", &row->family },
	};
	for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
		if (!strcmp(name, fields[i].name))
			return fields[i].slot;
	return NULL;
}

/* Parses `compare`: equal | within N% | within N | deviation. */
static int parse_compare(const reader_t *r, fid_row_t *row)
{
	const char *c = row->compare_text;
	if (!strcmp(c, "equal")) {
		row->compare = FID_EQUAL;
		return 0;
	}
	if (!strcmp(c, "deviation")) {
		row->compare = FID_DEVIATION;
		return 0;
	}
	if (!strncmp(c, "within ", 7)) {
		char *end;
		errno = 0;
		row->tolerance = strtod(c + 7, &end);
		row->compare = FID_WITHIN_ABS;
		if (*end == '%') {
			row->compare = FID_WITHIN_PCT;
			end++;
		}
		if (!errno && end != c + 7 && !*end && row->tolerance >= 0)
			return 0;
	}
	return damaged(r, row->line, "bad compare '%s' (equal, within N%%, within N, deviation)", c);
}

/* Every word of an env field must be NAME=value. */
static int check_env(const reader_t *r, const char *env)
{
	char *copy = strdup(env);
	int rc = 0;
	for (char *save = NULL, *w = strtok_r(copy, " \t", &save); w && !rc; w = strtok_r(NULL, " \t", &save))
		if (!strchr(w, '=') || *w == '=')
			rc = damaged(r, r->line, "environment word '%s' is not NAME=value", w);
	free(copy);
	return rc;
}

/* A finished stanza: required fields present, values well formed. */
static int finish_row(const reader_t *r, fid_row_t *row, const fid_row_t *rows, size_t n)
{
	static const char *const required[] = { "row", "claim", "probe", "key", "compare" };
	for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
		if (!*field_slot(row, required[i]))
			return damaged(r, row->line, "this row has no '%s' field", required[i]);
	size_t flen = strlen(r->family);
	if (strncmp(row->id, r->family, flen) || row->id[flen] != '.' || !row->id[flen + 1])
		return damaged(r, row->line, "row id '%s' must be <family>.<name>, the family being this file's", row->id);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(rows[i].id, row->id))
			return damaged(r, row->line, "row '%s' is defined twice", row->id);
	if (parse_compare(r, row))
		return 2;
	if (row->model_by && strcmp(row->model_by, "replay"))
		return damaged(r, row->line, "bad model_by '%s' (replay)", row->model_by);
	if (row->family)
		return damaged(r, row->line, "row '%s' has a 'family' field: that opens the family stanza, before the first row",
			       row->id);
	if (row->real_version && strcmp(r->family, "glibc"))
		return damaged(r, row->line, "real_version is known only for glibc rows (this is a %s row)", r->family);
	if (row->compare == FID_DEVIATION && !row->why)
		return damaged(r, row->line, "row '%s' is a deviation: it needs a 'why'", row->id);
	if (!row->real_preload && r->real_preload)
		row->real_preload = strdup(r->real_preload);
	row->family = strdup(r->family);
	row->file = strdup(r->path);
	return 0;
}

/* `real_preload`: none, or a library's absolute path. */
static int check_preload(const reader_t *r, unsigned line, const char *value)
{
	if (!strcmp(value, "none") || value[0] == '/')
		return 0;
	return damaged(r, line, "bad real_preload '%s' (none, or the library's absolute path)", value);
}

/* The family stanza (`family` and `real_preload`, before the first row):
 * what the real side of the file's rows is. */
static int take_family(reader_t *r, fid_row_t *st)
{
	static const char *const others[] = { "claim", "probe", "key", "compare", "model", "real_env",
					      "model_env", "why", "real_version", "model_by" };
	if (strcmp(st->family, r->family))
		return damaged(r, st->line, "the family stanza names '%s', not this file's family", st->family);
	if (r->rows)
		return damaged(r, st->line, "%s", "the family stanza comes before the first row");
	bool other = st->timeout > 0;
	for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
		other |= *field_slot(st, others[i]) != NULL;
	if (other)
		return damaged(r, st->line, "%s", "the family stanza holds only 'family' and 'real_preload'");
	if (!st->real_preload)
		return damaged(r, st->line, "%s", "the family stanza has no 'real_preload' field");
	free(r->real_preload);
	r->real_preload = st->real_preload;
	st->real_preload = NULL;
	return 0;
}

/* One "field value" line into the stanza being read. */
static int take_field(const reader_t *r, fid_row_t *row, char *text)
{
	char *sp = text;
	while (*sp && !isspace((unsigned char)*sp))
		sp++;
	char *value = sp;
	while (*value && isspace((unsigned char)*value))
		value++;
	*sp = 0;
	if (!*value)
		return damaged(r, r->line, "field '%s' has no value", text);
	if (!strcmp(text, "timeout")) {
		char *end;
		row->timeout = strtod(value, &end);
		if (*end || !(row->timeout > 0 && row->timeout <= 600))
			return damaged(r, r->line, "bad timeout '%s' (seconds, up to 600)", value);
		return 0;
	}
	char **slot = field_slot(row, text);
	if (!slot)
		return damaged(r, r->line, "unknown field '%s' (see fidelity/README.md)", text);
	if (*slot)
		return damaged(r, r->line, "field '%s' given twice in this row", text);
	if (!strcmp(text, "row"))
		row->line = r->line;
	if (!strcmp(text, "real_env") || !strcmp(text, "model_env"))
		if (check_env(r, value))
			return 2;
	if (!strcmp(text, "real_preload") && check_preload(r, r->line, value))
		return 2;
	if (!strcmp(text, "family"))
		row->line = r->line;
	*slot = strdup(value);
	return 0;
}

static void trim_end(char *s)
{
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = 0;
}

void fid_row_clear(fid_row_t *row)
{
	static const char *const fields[] = { "row", "claim", "probe", "key", "compare",
					      "model", "real_env", "model_env", "why", "real_version", "model_by",
					      "real_preload" };
	for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
		free(*field_slot(row, fields[i]));
	free(row->family);
	free(row->file);
	memset(row, 0, sizeof *row);
}

void fid_rows_free(fid_row_t *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fid_row_clear(&rows[i]);
	free(rows);
}

/* Appends the stanza to the list (after checking it); starts a new one. */
static int close_stanza(reader_t *r, fid_row_t *cur, unsigned start, fid_row_t **rows, size_t *n)
{
	if (!start)
		return 0;
	if (!cur->line)
		cur->line = start;
	if (cur->family && !cur->id) {
		int rc = take_family(r, cur);
		fid_row_clear(cur);
		return rc;
	}
	if (finish_row(r, cur, *rows, *n))
		return 2;
	fid_row_t *grown = realloc(*rows, (*n + 1) * sizeof **rows);
	if (!grown)
		return damaged(r, start, "%s", "out of memory");
	*rows = grown;
	(*rows)[(*n)++] = *cur;
	r->rows++;
	memset(cur, 0, sizeof *cur);
	return 0;
}

int fid_rows_read(const char *path, const char *family, fid_row_t **rows, size_t *n)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "heaplab: fidelity: cannot read %s: %s\n", path, strerror(errno));
		return 2;
	}
	reader_t r = { .path = path, .family = family };
	fid_row_t cur = { 0 };
	unsigned start = 0; /* line where the open stanza began; 0: none */
	char buf[4096];
	int rc = 0;
	while (!rc && fgets(buf, sizeof buf, f)) {
		r.line++;
		if (!strchr(buf, '\n') && !feof(f)) {
			rc = damaged(&r, r.line, "%s", "line too long");
			break;
		}
		trim_end(buf);
		char *text = buf;
		while (isspace((unsigned char)*text))
			text++;
		if (*text == '#')
			continue;
		if (!*text) {
			rc = close_stanza(&r, &cur, start, rows, n);
			start = 0;
			continue;
		}
		if (!start)
			start = r.line;
		rc = take_field(&r, &cur, text);
	}
	if (!rc)
		rc = close_stanza(&r, &cur, start, rows, n);
	fid_row_clear(&cur); /* a stanza left half read by an error */
	free(r.real_preload);
	fclose(f);
	return rc;
}
