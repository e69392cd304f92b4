/* --verify: every question of the bank that has a `run:` command is run
 * (with this heaplab first on PATH and $BOOK the bank's folder) and what
 * it prints is compared with the stated answer; for `make check`
 * (tests/book/book_questions.sh). */
#include "config.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "quiz.h"

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

int qz_verify(const qz_bank_t *b)
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
