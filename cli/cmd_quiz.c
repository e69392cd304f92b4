/*
 * heaplab quiz: drills the question bank (book/questions.txt) in a terminal,
 * and `heaplab quiz --verify` runs the bank's verifying commands for
 * `make check`.
 *
 * The bank's format is described at the top of book/questions.txt: blocks of
 * "key: value" lines (id, chapter, q, choice, a, why, needs, run) separated
 * by blank lines.  An answer is right when, after normalising (case, white
 * space, a trailing full stop, thousands separators, a leading article,
 * "bytes" after a number), it equals one of the alternatives of `a:`
 * (separated by " | "), or the letter or the text of the right choice.
 *
 * Where the bank is found, first match wins:
 *   --bank FILE;  $HEAPLAB_BOOK_DIR/questions.txt;
 *   HL_BOOK_DIR/questions.txt (the source tree's book/, compiled in);
 *   HL_PKGDATADIR/questions.txt (where `make install` puts it).
 *
 * The order is shuffled with --seed S (the same seed gives the same order);
 * --seed 0 keeps the bank's order; without --seed the seed comes from the
 * clock and is printed.  Answers are read one per line from standard input,
 * so a script can pipe them in; colour is used only when stdout is a tty.
 */
#include "config.h"
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cli.h"
#include "quiz_paths.h"

#ifndef HL_BOOK_DIR
#define HL_BOOK_DIR "book"
#endif
#ifndef HL_PKGDATADIR
#define HL_PKGDATADIR "/usr/local/share/heaplab"
#endif

enum { QZ_MAX_CHOICES = 8, QZ_LINE = 4096 };

/** One question of the bank. */
typedef struct qz_question {
	char *id;                       /**< unique short name */
	int chapter;                    /**< book chapter number */
	char *q;                        /**< question text */
	char *choice[QZ_MAX_CHOICES];   /**< options of a multiple-choice question */
	int nchoices;                   /**< 0 for a free-answer question */
	char *a;                        /**< answer; alternatives split by " | " */
	char *why;                      /**< explanation shown after answering */
	char *needs;                    /**< policies the command needs, or NULL */
	char *run;                      /**< verifying shell command, or NULL */
	unsigned line;                  /**< line of the block's first key */
} qz_question_t;

/** The whole bank. */
typedef struct qz_bank {
	qz_question_t *v;   /**< questions in file order */
	size_t n, cap;      /**< used and allocated entries */
	char path[PATH_MAX];/**< file it came from */
	bool answerless;    /**< no question has a: or why: (the student's
				 edition): asked without a score */
} qz_bank_t;

/* ---- small string helpers ------------------------------------------ */

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

static char *qz_trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = 0;
	return s;
}

/** Drops a leading article ("the", "a", "an") and a trailing "bytes" after a
 *  number, so "the top chunk" matches "top chunk" and "24 bytes" matches 24. */
static void qz_trim_words(char *s)
{
	static const char *const lead[] = { "the ", "a ", "an " };
	for (size_t i = 0; i < sizeof lead / sizeof lead[0]; i++) {
		size_t n = strlen(lead[i]);
		if (!strncmp(s, lead[i], n) && s[n]) {
			memmove(s, s + n, strlen(s + n) + 1);
			break;
		}
	}
	size_t n = strlen(s);
	if (n > 6 && !strcmp(s + n - 6, " bytes") && isdigit((unsigned char)s[n - 7]))
		s[n - 6] = 0;
}

/** The form answers are compared in: lower case, no white space, no
 *  trailing '.', no ',' between digits, no leading article, no "bytes"
 *  after a number. */
static void qz_normalise(const char *in, char *out, size_t len)
{
	size_t o = 0;
	bool space = false;
	for (const char *p = in; *p && o + 2 < len; p++) {
		unsigned char c = (unsigned char)*p;
		if (c == ',' && p > in && isdigit((unsigned char)p[-1]) &&
		    isdigit((unsigned char)p[1]))
			continue;
		if (isspace(c)) {
			space = o > 0;
			continue;
		}
		if (space)
			out[o++] = ' ';
		space = false;
		out[o++] = (char)tolower(c);
	}
	while (o && out[o - 1] == '.')
		o--;
	out[o] = 0;
	qz_trim_words(out);
	o = 0;
	for (char *p = out; *p; p++)
		if (*p != ' ')
			out[o++] = *p;
	out[o] = 0;
}

/* ---- reading the bank ------------------------------------------------ */

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
		cli_error("%s:%u: expected 'key: value'", b->path, ln);
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
		cli_error("%s:%u: more than %d choices", b->path, ln, QZ_MAX_CHOICES);
		return -1;
	}
	*cont = qz_field(q, key, val);
	if (!*cont && strcmp(key, "chapter")) {
		cli_error("%s:%u: unknown key '%s'", b->path, ln, key);
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
#define QZ_BAD(...) (++bad <= SHOWN ? cli_error(__VA_ARGS__) : 0)
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
		cli_error("%s: %d more problems like these", b->path, bad - SHOWN);
	return bad ? -1 : 0;
}

static int qz_load(qz_bank_t *b, const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		cli_error("cannot open the question bank %s: %s", path, strerror(errno));
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

static void qz_free(qz_bank_t *b)
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

/** Finds the bank as documented at the top of this file. */
static const char *qz_find_bank(const char *given, char *buf, size_t len)
{
	if (given)
		return given;
	const char *env = getenv("HEAPLAB_BOOK_DIR");
	const char *dirs[] = { env, HL_BOOK_DIR, HL_PKGDATADIR };
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

/* ---- answers ---------------------------------------------------------- */

/** True when @p given matches an alternative of q->a (or its choice text). */
static bool qz_is_right(const qz_question_t *q, const char *given)
{
	char g[QZ_LINE], alt[QZ_LINE];
	qz_normalise(given, g, sizeof g);
	if (!*g)
		return false;
	const char *p = q->a;
	while (p) {
		const char *bar = strstr(p, " | ");
		size_t n = bar ? (size_t)(bar - p) : strlen(p);
		char one[QZ_LINE];
		snprintf(one, sizeof one, "%.*s", (int)n, p);
		qz_normalise(one, alt, sizeof alt);
		if (!strcmp(g, alt))
			return true;
		if (q->nchoices && strlen(alt) == 1 && alt[0] >= 'a' &&
		    alt[0] < 'a' + q->nchoices) {
			char c[QZ_LINE];
			qz_normalise(q->choice[alt[0] - 'a'], c, sizeof c);
			if (!strcmp(g, c))
				return true;
		}
		p = bar ? bar + 3 : NULL;
	}
	return false;
}

/** The first alternative, with the choice's text for a lettered answer. */
static void qz_show_answer(const qz_question_t *q, char *out, size_t len)
{
	size_t n = strcspn(q->a, "|");
	while (n && q->a[n - 1] == ' ')
		n--;
	int k = tolower((unsigned char)q->a[0]) - 'a';
	if (q->nchoices && n == 1 && k >= 0 && k < q->nchoices) {
		snprintf(out, len, "%c) %s", 'a' + k, q->choice[k]);
		return;
	}
	snprintf(out, len, "%.*s", (int)n, q->a);
}

/* ---- the drill -------------------------------------------------------- */

/** The session's settings and running score. */
typedef struct qz_session {
	bool colour;        /**< stdout is a terminal */
	bool echo;          /**< stdin is not a terminal: echo what was read */
	size_t asked;       /**< questions put so far */
	size_t right;       /**< of which answered right */
	char book[PATH_MAX];/**< the bank's folder: what $BOOK means in a run: line */
} qz_session_t;

static uint64_t qz_next(uint64_t *s)
{
	/* splitmix64: small, good enough to shuffle a few hundred items */
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/** Fisher-Yates shuffle of @p n indexes; seed 0 keeps the order. */
static void qz_shuffle(size_t *ix, size_t n, uint64_t seed)
{
	if (!seed)
		return;
	for (size_t i = n; i > 1; i--) {
		size_t j = (size_t)(qz_next(&seed) % i);
		size_t t = ix[i - 1];
		ix[i - 1] = ix[j];
		ix[j] = t;
	}
}

/** The bank's folder into @p buf: what $BOOK means in a run: line. */
static const char *qz_book_dir(const qz_bank_t *b, char *buf, size_t len)
{
	snprintf(buf, len, "%s", b->path);
	char *slash = strrchr(buf, '/');
	if (slash)
		*slash = 0;
	else
		snprintf(buf, len, ".");
	return buf;
}

static const char *qz_col(const qz_session_t *s, const char *code)
{
	return s->colour ? code : "";
}

/** Asks one question; false when the input ended or the user quit. */
static bool qz_ask(qz_session_t *s, const qz_question_t *q, size_t k, size_t total)
{
	printf("\n%s[%zu/%zu] chapter %d (%s)%s\n%s\n", qz_col(s, "\033[1m"), k, total,
	       q->chapter, q->id, qz_col(s, "\033[0m"), q->q);
	for (int c = 0; c < q->nchoices; c++)
		printf("  %c) %s\n", 'a' + c, q->choice[c]);
	printf("> ");
	fflush(stdout);
	char line[QZ_LINE];
	if (!fgets(line, sizeof line, stdin)) {
		printf("\n");
		return false;
	}
	char *ans = qz_trim(line);
	if (s->echo)
		printf("%s\n", ans);
	if (!strcmp(ans, "q") || !strcmp(ans, "quit"))
		return false;
	s->asked++;
	if (!q->a) {
		/* the student's edition: the answer is the instructor's */
		printf("noted (this edition has no answers)\n");
	} else {
		char shown[QZ_LINE];
		qz_show_answer(q, shown, sizeof shown);
		if (qz_is_right(q, ans)) {
			s->right++;
			printf("%sright%s: %s\n", qz_col(s, "\033[32m"), qz_col(s, "\033[0m"), shown);
		} else {
			printf("%swrong%s: the answer is %s\n", qz_col(s, "\033[31m"), qz_col(s, "\033[0m"),
			       shown);
		}
		printf("why: %s\n", q->why);
	}
	if (q->run) {
		/* the command as the user can type it: $BOOK is the bank's folder */
		printf("see for yourself: ");
		for (const char *r = q->run; *r;)
			if (!strncmp(r, "$BOOK", 5)) {
				fputs(s->book, stdout);
				r += 5;
			} else
				putchar(*r++);
		putchar('\n');
	}
	return true;
}

static int qz_drill(const qz_bank_t *b, int chapter, uint64_t seed, size_t count)
{
	size_t *ix = malloc((b->n ? b->n : 1) * sizeof *ix), n = 0;
	if (!ix)
		return cli_error("out of memory");
	for (size_t i = 0; i < b->n; i++)
		if (!chapter || b->v[i].chapter == chapter)
			ix[n++] = i;
	if (!n) {
		free(ix);
		return cli_error("no questions for chapter %d in %s", chapter, b->path);
	}
	qz_shuffle(ix, n, seed);
	if (count && count < n)
		n = count;
	qz_session_t s = { .colour = isatty(STDOUT_FILENO) != 0,
			   .echo = isatty(STDIN_FILENO) == 0 };
	qz_book_dir(b, s.book, sizeof s.book);
	printf("heaplab quiz: %zu question%s", n, n == 1 ? "" : "s");
	if (chapter)
		printf(" from chapter %d", chapter);
	printf(", seed %llu.  Type the answer (where choices a), b) ... are listed, its letter); q quits.\n",
	       (unsigned long long)seed);
	if (b->answerless)
		printf("This bank has no answers (the student's edition): no score; where a question has a\n"
		       "command that checks it, it is shown after your answer.\n");
	for (size_t k = 0; k < n; k++)
		if (!qz_ask(&s, &b->v[ix[k]], k + 1, n))
			break;
	free(ix);
	if (b->answerless) {
		printf("\nanswered: %zu (no score: this edition has no answers)\n", s.asked);
		return 0;
	}
	printf("\nscore: %zu/%zu", s.right, s.asked);
	if (s.asked)
		printf(" (%.0f%%)", 100.0 * (double)s.right / (double)s.asked);
	printf("\n");
	return 0;
}

/* ---- --verify: run the commands that prove the answers ------------------ */

/** Puts this binary's directory first on PATH, and the bank's dir in $BOOK,
 *  so a bank command's `heaplab` is the binary under test. */
static void qz_verify_env(const qz_bank_t *b)
{
	char exe[PATH_MAX], path[2 * PATH_MAX + 64], dir[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = 0;
		char *slash = strrchr(exe, '/');
		if (slash)
			*slash = 0;
		const char *old = getenv("PATH");
		snprintf(path, sizeof path, "%s:%s", exe, old ? old : "/usr/bin:/bin");
		setenv("PATH", path, 1);
	}
	setenv("BOOK", qz_book_dir(b, dir, sizeof dir), 1);
}

/** The first need of q->needs this build lacks, or NULL: a policy not
 *  compiled in, or `preload` (heaplab run) in a sanitizer build. */
static const char *qz_missing_need(const qz_question_t *q, char *buf, size_t len)
{
	if (!q->needs)
		return NULL;
	snprintf(buf, len, "%s", q->needs);
	for (char *save = NULL, *p = strtok_r(buf, ", ", &save); p; p = strtok_r(NULL, ", ", &save))
		if (!strcmp(p, "preload") ? *HL_SANITIZERS_BUILD != 0 : !hl_policy_summary(p))
			return p;
	return NULL;
}

/** Runs q->run: 1 pass, 0 fail, -1 skip (the command exited with 77, the
 *  automake code for "cannot test here", e.g. a tool it needs is missing). */
static int qz_verify_one(const qz_question_t *q)
{
	fflush(stdout);
	FILE *p = popen(q->run, "r");
	if (!p) {
		printf("FAIL %s: cannot run '%s'\n", q->id, q->run);
		return 0;
	}
	char out[QZ_LINE];
	size_t n = fread(out, 1, sizeof out - 1, p);
	out[n] = 0;
	while (fgetc(p) != EOF)
		; /* drain, so the command is not killed by SIGPIPE */
	int st = pclose(p);
	char *got = qz_trim(out);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 77) {
		printf("SKIP %s: the command cannot run here (exit 77)\n", q->id);
		return -1;
	}
	if (st != 0) {
		printf("FAIL %s: '%s' exited with status %d\n", q->id, q->run, st);
		return 0;
	}
	char want[QZ_LINE], norm[QZ_LINE];
	if (q->nchoices) {    /* the text of the right choice, never a letter */
		qz_normalise(q->choice[tolower((unsigned char)q->a[0]) - 'a'], want, sizeof want);
		qz_normalise(got, norm, sizeof norm);
	}
	if (q->nchoices ? strcmp(norm, want) != 0 : !qz_is_right(q, got)) {
		printf("FAIL %s (line %u): '%s' printed '%s', the bank says '%s'\n",
		       q->id, q->line, q->run, got, q->a);
		return 0;
	}
	printf("PASS %s\n", q->id);
	return 1;
}

static int qz_verify(const qz_bank_t *b)
{
	qz_verify_env(b);
	size_t pass = 0, fail = 0, skip = 0, plain = 0;
	char buf[256];
	for (size_t i = 0; i < b->n; i++) {
		const qz_question_t *q = &b->v[i];
		const char *missing;
		if (!q->run) {
			plain++;
		} else if ((missing = qz_missing_need(q, buf, sizeof buf))) {
			if (!strcmp(missing, "preload"))
				printf("SKIP %s: heaplab run cannot preload a -fsanitize=%s build\n", q->id,
				       HL_SANITIZERS_BUILD);
			else
				printf("SKIP %s: policy %s is not compiled in\n", q->id, missing);
			skip++;
		} else {
			int r = qz_verify_one(q);
			pass += r > 0;
			fail += r == 0;
			skip += r < 0;
		}
	}
	printf("%zu questions: %zu verified by a command (%zu passed, %zu failed, "
	       "%zu skipped), %zu without a command\n",
	       b->n, pass + fail + skip, pass, fail, skip, plain);
	return fail ? 1 : 0;
}

/* ---- the command -------------------------------------------------------- */

static void qz_usage(FILE *out)
{
	fprintf(out,
		"usage: heaplab quiz [--chapter N] [--seed S] [--count K] [--bank FILE]\n"
		"       heaplab quiz --verify [--bank FILE]\n"
		"       heaplab quiz --paths TRACE [--policy=P] [--conf=S] [--count K]\n"
		"       heaplab quiz --path-of N TRACE [--policy=P] [--conf=S]\n"
		"       heaplab quiz --paths TRACE --emit-bank --ops N,M.. [--chapter C] [--trace-as T]\n\n"
		"Asks the question bank's questions in a shuffled order, one answer per\n"
		"line on standard input, explains each answer and prints the score.\n"
		"  --chapter N  only questions of book chapter N\n"
		"  --seed S     the shuffle's seed (same seed, same order; 0 = bank order)\n"
		"  --count K    stop after K questions\n"
		"  --bank FILE  the bank (default: $HEAPLAB_BOOK_DIR/questions.txt, else\n"
		"               %s/questions.txt, else %s/questions.txt)\n"
		"  --verify     run every question's command and compare its output with\n"
		"               the stated answer (used by make check)\n"
		"  --paths TRACE  'which path will the next call take?' for each call of\n"
		"               TRACE under --policy (default: the default policy), choices\n"
		"               from the paths the trace's calls took; the answer comes from\n"
		"               the policy's decision events and is shown with every step\n"
		"  --path-of N  print the path op N of TRACE took (a bank question's check)\n"
		"  --emit-bank  with --paths: the questions of --ops in the bank's format\n",
		HL_BOOK_DIR, HL_PKGDATADIR);
}

static int qz_number(const char *opt, const char *v, unsigned long long *out)
{
	char *end;
	errno = 0;
	*out = strtoull(v, &end, 10);
	if (errno || end == v || *end || v[0] == '-')
		return cli_error("%s needs a non-negative number, not '%s'", opt, v);
	return 0;
}

int cmd_quiz(int argc, char **argv)
{
	const char *bank = NULL, *v;
	unsigned long long chapter = 0, count = 0;
	unsigned long long seed = (unsigned long long)time(NULL) ^ ((unsigned long long)getpid() << 16);
	bool verify = false;
	quiz_paths_args_t pa = { 0 };
	const char *paths = NULL, *path_of = NULL;
	for (int i = 1; i < argc; i++) {
		int r;
		if ((r = cli_opt(argc, argv, &i, "--paths", &paths)) || (r = cli_opt(argc, argv, &i, "--path-of", &path_of)) ||
		    (r = cli_opt(argc, argv, &i, "--policy", &pa.policy)) || (r = cli_opt(argc, argv, &i, "--conf", &pa.conf)) ||
		    (r = cli_opt(argc, argv, &i, "--ops", &pa.ops)) || (r = cli_opt(argc, argv, &i, "--trace-as", &pa.trace_as))) {
			if (r < 0)
				return 2;
			continue;
		}
		if (!strcmp(argv[i], "--emit-bank")) {
			pa.emit = true;
			continue;
		}
		if (path_of && !paths && argv[i][0] != '-') {
			paths = argv[i];     /* --path-of N TRACE */
			continue;
		}
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			qz_usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--verify")) {
			verify = true;
		} else if ((r = cli_opt(argc, argv, &i, "--bank", &bank))) {
			if (r < 0)
				return 2;
		} else if ((r = cli_opt(argc, argv, &i, "--chapter", &v))) {
			if (r < 0 || qz_number("--chapter", v, &chapter))
				return 2;
		} else if ((r = cli_opt(argc, argv, &i, "--seed", &v))) {
			if (r < 0 || qz_number("--seed", v, &seed))
				return 2;
		} else if ((r = cli_opt(argc, argv, &i, "--count", &v))) {
			if (r < 0 || qz_number("--count", v, &count))
				return 2;
		} else {
			qz_usage(stderr);
			return cli_error("quiz: unknown argument '%s'", argv[i]);
		}
	}
	if (paths || path_of) {
		unsigned long long n = 0;
		if (!paths)
			return cli_error("quiz: --path-of N needs a TRACE");
		if (path_of && (qz_number("--path-of", path_of, &n) || n == 0))
			return path_of && n == 0 ? cli_error("quiz: --path-of counts ops from 1") : 2;
		if (pa.emit && !pa.ops)
			return cli_error("quiz: --emit-bank needs --ops N,M,...");
		const char *names[1];
		if (!cli_policy_list(pa.policy ? pa.policy : hl_default_policy(), names, 1))
			return 2;
		pa.policy = names[0];
		pa.trace = paths;
		pa.op = (long long)n;
		pa.chapter = (int)chapter;
		pa.count = (long long)count;
		return quiz_paths(&pa);
	}
	char buf[PATH_MAX];
	qz_bank_t b = { 0 };
	int rc = qz_load(&b, qz_find_bank(bank, buf, sizeof buf)) ? 2
		 : verify && b.answerless ? cli_error("quiz: --verify: %s has no answers to verify (the student's edition)", b.path)
		 : verify ? qz_verify(&b)
		 : qz_drill(&b, (int)chapter, seed, (size_t)count);
	qz_free(&b);
	return rc;
}
