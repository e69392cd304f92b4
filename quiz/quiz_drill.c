/* The drill: the bank's questions of a chapter in a shuffled order, asked
 * one by one on standard input, each answer judged and explained, and the
 * score.  On the student's edition's bank (no answers) the answers are
 * noted without a score. */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "quiz.h"

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

int qz_drill(const qz_bank_t *b, int chapter, uint64_t seed, size_t count)
{
	size_t *ix = malloc((b->n ? b->n : 1) * sizeof *ix), n = 0;
	if (!ix)
		return qz_error("out of memory");
	for (size_t i = 0; i < b->n; i++)
		if (!chapter || b->v[i].chapter == chapter)
			ix[n++] = i;
	if (!n) {
		free(ix);
		return qz_error("no questions for chapter %d in %s", chapter, b->path);
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
