/* The question bank read (blocks of "key: value" lines, continuation
 * lines indented), checked (quiz.h says what a question needs), freed, and
 * found. */
#include "config.h"
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "quiz.h"

#ifndef HL_BOOK_DIR
#define HL_BOOK_DIR "book"
#endif
#ifndef HL_PKGDATADIR
#define HL_PKGDATADIR "/usr/local/share/heaplab"
#endif

const char qz_source_book_dir[] = HL_BOOK_DIR, qz_installed_book_dir[] = HL_PKGDATADIR;

static char *qz_strdup(const char *s)
{
	char *d = strdup(s);
	if (!d) {
		perror("heaplab quiz");
		exit(2);
	}
	return d;
}

/** Appends "\n" + @p more to the heap string *@p s (continuation lines). */
static void qz_append(char **s, const char *more)
{
	size_t a = strlen(*s), b = strlen(more);
	char *d = realloc(*s, a + b + 2);
	if (!d) {
		perror("heaplab quiz");
		exit(2);
	}
	d[a] = '\n';
	memcpy(d + a + 1, more, b + 1);
	*s = d;
}

static qz_question_t *qz_new(qz_bank_t *b, unsigned line)
{
	if (b->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 128;
		qz_question_t *v = realloc(b->v, cap * sizeof *v);
		if (!v) {
			perror("heaplab quiz");
			exit(2);
		}
		b->v = v;
		b->cap = cap;
	}
	qz_question_t *q = &b->v[b->n++];
	memset(q, 0, sizeof *q);
	q->line = line;
	return q;
}

/** Stores @p val under @p key; returns the field for continuation lines. */
static char **qz_field(qz_question_t *q, const char *key, char *val)
{
	char **f = NULL;
	if (!strcmp(key, "chapter")) {
		q->chapter = atoi(val);
		return NULL;
	}
	if (!strcmp(key, "choice")) {
		if (q->nchoices == QZ_MAX_CHOICES)
			return NULL;
		f = &q->choice[q->nchoices++];
	} else if (!strcmp(key, "id")) f = &q->id;
	else if (!strcmp(key, "q")) f = &q->q;
	else if (!strcmp(key, "a")) f = &q->a;
	else if (!strcmp(key, "why")) f = &q->why;
	else if (!strcmp(key, "needs")) f = &q->needs;
	else if (!strcmp(key, "run")) f = &q->run;
	else
		return NULL;
	if (*f)
		qz_append(f, val);
	else
		*f = qz_strdup(val);
	return f;
}

/** Parses one non-blank, non-comment line into the current question. */
static int qz_parse_line(qz_bank_t *b, char *line, unsigned ln, bool *open, char ***cont)
{
	if (isspace((unsigned char)line[0]) && *cont && **cont) {
		qz_append(*cont, qz_trim(line));
		return 0;
	}
	char *colon = strchr(line, ':');
	if (!colon || colon == line) {
		qz_error("%s:%u: expected 'key: value'", b->path, ln);
		return -1;
	}
	*colon = 0;
	char *key = qz_trim(line), *val = qz_trim(colon + 1);
	if (!*open) {
		qz_new(b, ln);
		*open = true;
	}
	qz_question_t *q = &b->v[b->n - 1];
	if (!strcmp(key, "choice") && q->nchoices == QZ_MAX_CHOICES) {
		qz_error("%s:%u: more than %d choices", b->path, ln, QZ_MAX_CHOICES);
		return -1;
	}
	*cont = qz_field(q, key, val);
	if (!*cont && strcmp(key, "chapter")) {
		qz_error("%s:%u: unknown key '%s'", b->path, ln, key);
		return -1;
	}
	return 0;
}

/** Every question needs id, chapter, q, a and why; ids are unique; a
 *  multiple-choice answer is the letter of one of its choices (its `run:`,
 *  if any, must print that choice's text: qz_verify_one). */
static int qz_validate(qz_bank_t *b)
{
	enum { SHOWN = 5 };     /* a broken bank: its first problems, then a count */
	int bad = 0;
	b->answerless = b->n > 0;
	for (size_t i = 0; i < b->n; i++)
		if (b->v[i].a || b->v[i].why)
			b->answerless = false;
#define QZ_BAD(...) (++bad <= SHOWN ? qz_error(__VA_ARGS__) : 0)
	for (size_t i = 0; i < b->n; i++) {
		const qz_question_t *q = &b->v[i];
		if (!q->id || !q->q || q->chapter <= 0 || (!b->answerless && (!q->a || !q->why))) {
			QZ_BAD("%s:%u: a question needs id, chapter, q, a and why", b->path, q->line);
			continue;
		}
		for (size_t j = 0; j < i; j++)
			if (b->v[j].id && !strcmp(b->v[j].id, q->id))
				QZ_BAD("%s:%u: duplicate id '%s'", b->path, q->line, q->id);
		if (q->a && q->nchoices && !(strlen(q->a) == 1 && q->a[0] >= 'a' && q->a[0] < 'a' + q->nchoices))
			QZ_BAD("%s:%u: the answer of a multiple-choice question is one of the letters a..%c", b->path,
			       q->line, 'a' + q->nchoices - 1);
	}
#undef QZ_BAD
	if (bad > SHOWN)
		qz_error("%s: %d more problems like these", b->path, bad - SHOWN);
	return bad ? -1 : 0;
}

int qz_load(qz_bank_t *b, const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		qz_error("cannot open the question bank %s: %s", path, strerror(errno));
		return -1;
	}
	snprintf(b->path, sizeof b->path, "%s", path);
	char line[QZ_LINE];
	unsigned ln = 0;
	bool open = false;
	char **cont = NULL;
	int rc = 0;
	while (rc == 0 && fgets(line, sizeof line, f)) {
		ln++;
		line[strcspn(line, "\n")] = 0;
		if (line[0] == '#')
			continue;
		if (!*qz_trim(line)) {
			open = false;
			cont = NULL;
			continue;
		}
		rc = qz_parse_line(b, line, ln, &open, &cont);
	}
	fclose(f);
	return rc ? rc : qz_validate(b);
}

void qz_free(qz_bank_t *b)
{
	for (size_t i = 0; i < b->n; i++) {
		qz_question_t *q = &b->v[i];
		free(q->id);
		free(q->q);
		free(q->a);
		free(q->why);
		free(q->needs);
		free(q->run);
		for (int c = 0; c < q->nchoices; c++)
			free(q->choice[c]);
	}
	free(b->v);
}

/** Finds the bank as quiz.h says. */
const char *qz_find_bank(const char *given, char *buf, size_t len)
{
	if (given)
		return given;
	const char *env = getenv("HEAPLAB_BOOK_DIR");
	const char *dirs[] = { env, qz_source_book_dir, qz_installed_book_dir };
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
		if (!dirs[i] || !*dirs[i])
			continue;
		snprintf(buf, len, "%s/questions.txt", dirs[i]);
		/* an explicit $HEAPLAB_BOOK_DIR wins even when the file is
		 * missing, so the error names the place the user chose */
		if (dirs[i] == env || access(buf, R_OK) == 0)
			return buf;
	}
	return buf;
}

const char *qz_book_dir(const qz_bank_t *b, char *buf, size_t len)
{
	snprintf(buf, len, "%s", b->path);
	char *slash = strrchr(buf, '/');
	if (slash)
		*slash = 0;
	else
		snprintf(buf, len, ".");
	return buf;
}
