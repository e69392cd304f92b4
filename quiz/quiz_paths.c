/*
 * heaplab quiz --paths: "which path will the next call take?", generated
 * from a trace and checked against the policy's own decision events
 * (visualize/paths.c), in the predict-then-reveal manner of OSTEP's
 * malloc.py -c.
 *
 *   heaplab quiz --paths TRACE [--policy=P] [--conf=S] [--count K]
 *       asks, op after op, which path each call takes; the choices are the
 *       paths that ops of the same trace took; the answer is revealed with
 *       every step the policy reported.
 *   heaplab quiz --path-of N TRACE [--policy=P] [--conf=S]
 *       prints the path of op N: what a bank question's `run:` checks.
 *   heaplab quiz --paths TRACE --emit-bank --ops N,M,... [--chapter C]
 *       [--trace-as TEXT]
 *       prints those ops' questions in the bank's format (book/questions.txt).
 */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "quiz.h"
#include "../visualize/vis.h"

enum { MAX_CHOICES = 4 };

/* Ops that are calls into the allocator (not labels or trims). */
static bool asked(const vis_path_op_t *p)
{
	return strchr("afrcm", p->kind) != NULL;
}

/* Distinct paths of the trace's calls, sorted (the choices draw on them). */
static size_t distinct_paths(const vis_paths_t *ps, const char **out)
{
	size_t n = 0;
	for (size_t i = 0; i < ps->n; i++) {
		if (!asked(&ps->op[i]))
			continue;
		bool seen = false;
		for (size_t k = 0; k < n && !seen; k++)
			seen = !strcmp(out[k], ps->op[i].path);
		if (!seen)
			out[n++] = ps->op[i].path;
	}
	for (size_t i = 1; i < n; i++)
		for (size_t k = i; k > 0 && strcmp(out[k - 1], out[k]) > 0; k--) {
			const char *t = out[k];
			out[k] = out[k - 1];
			out[k - 1] = t;
		}
	return n;
}

/* The choices for op @p op: its path and up to three others of the same
 * trace, picked and placed by the op's number so that they do not change
 * from run to run.  Returns how many; *right is the right one's index. */
static int choices_for(const vis_paths_t *ps, size_t op, const char **all, size_t nall, const char **ch,
		       int *right)
{
	size_t me = 0, pick[MAX_CHOICES];
	while (me < nall && strcmp(all[me], ps->op[op].path))
		me++;
	int n = 0;
	pick[n++] = me;
	/* the others, from a place that depends on the op, never me twice */
	for (size_t step = 0; nall > 1 && n < MAX_CHOICES && step + 1 < nall; step++)
		pick[n++] = (me + 1 + (op + step) % (nall - 1)) % nall;
	for (int i = 2; i < n; i++)     /* the others sorted */
		for (int k = i; k > 1 && pick[k - 1] > pick[k]; k--) {
			size_t t = pick[k];
			pick[k] = pick[k - 1];
			pick[k - 1] = t;
		}
	/* the right one goes to a place that depends on the op */
	*right = (int)(op % (size_t)n);
	for (int i = 0, o = 1; i < n; i++)
		ch[i] = i == *right ? all[me] : all[pick[o++]];
	return n;
}

static int load(const qz_paths_args_t *a, hl_trace_t **t, vis_paths_t *ps)
{
	if (!(*t = hl_trace_load(a->trace))) {
		fprintf(stderr, "%s\n", hl_last_error());
		return 2;
	}
	fputs(hl_trace_warnings(*t), stderr);
	int rc = vis_paths_trace(a->policy, a->conf, *t, ps);
	if (rc == 2)
		return qz_error("%s", hl_last_error());
	if (rc == 1)
		fprintf(stderr, "heaplab: quiz: the replay stopped: %s\n", hl_last_error());
	return 0;
}

static int path_of(const qz_paths_args_t *a, const vis_paths_t *ps)
{
	if (a->op < 1 || (size_t)a->op > ps->n)
		return qz_error("quiz: op %lld is not in the trace (it has %zu ops that replayed)", a->op, ps->n);
	printf("%s\n", ps->op[a->op - 1].path);
	return 0;
}

/* The reveal's lines on one line, for a bank `why:`. */
static void one_line(const char *text, FILE *out)
{
	for (const char *c = text; *c; c++)
		if (*c != '\n')
			fputc(*c, out);
		else if (c[1])
			fputs("; ", out);
}

static int emit_bank(const qz_paths_args_t *a, const vis_paths_t *ps, const char **all, size_t nall)
{
	const char *trace = a->trace_as ? a->trace_as : a->trace;   /* for run: */
	for (const char *s = a->ops; s && *s;) {
		char *end;
		long long op = strtoll(s, &end, 10);
		if (end == s || op < 1 || (size_t)op > ps->n || !asked(&ps->op[op - 1]))
			return qz_error("quiz: --ops: '%s' is not a malloc/free op of the trace", s);
		const vis_path_op_t *p = &ps->op[op - 1];
		const char *ch[MAX_CHOICES];
		int right = 0, n = choices_for(ps, (size_t)op - 1, all, nall, ch, &right);
		if (n < 3)
			return qz_error("quiz: only %d different paths to choose from in %s", n, a->trace);
		printf("id: path-%s%s-%lld\nchapter: %d\n", a->policy, a->conf ? "-conf" : "", op, a->chapter);
		printf("q: Under %s%s%s, after the ops before it, which path does op %lld of\n  %s, `%s`, take?\n",
		       a->policy, a->conf ? " with " : "", a->conf ? a->conf : "", op, a->trace, p->text);
		for (int c = 0; c < n; c++)
			printf("choice: %s\n", ch[c]);
		printf("a: %c\nwhy: The policy's steps: ", 'a' + right);
		one_line(p->reveal, stdout);
		printf("\nrun: heaplab quiz --path-of %lld --policy=%s%s%s \"%s\"\nneeds: %s\n\n", op, a->policy,
		       a->conf ? " --conf=" : "", a->conf ? a->conf : "", trace, a->policy);
		s = *end == ',' ? end + 1 : end;
	}
	return 0;
}

static int drill(const qz_paths_args_t *a, const vis_paths_t *ps, const char **all, size_t nall)
{
	bool colour = isatty(1), echo = !isatty(0);
	size_t asked_n = 0, right_n = 0;
	printf("Which path will each call take under %s?  (%zu different paths in this trace; q quits)\n",
	       a->policy, nall);
	for (size_t i = 0; i < ps->n && (!a->count || asked_n < (size_t)a->count); i++) {
		const vis_path_op_t *p = &ps->op[i];
		if (!asked(p))
			continue;
		const char *ch[MAX_CHOICES];
		int right = 0, n = choices_for(ps, i, all, nall, ch, &right);
		printf("\n%sop %zu: %s%s\n", colour ? "\033[1m" : "", i + 1, p->text, colour ? "\033[0m" : "");
		for (int c = 0; c < n; c++)
			printf("  %c) %s\n", 'a' + c, ch[c]);
		printf("> ");
		fflush(stdout);
		char line[256];
		if (!fgets(line, sizeof line, stdin))
			break;
		line[strcspn(line, "\r\n")] = '\0';
		if (echo)
			printf("%s\n", line);
		if (!strcmp(line, "q") || !strcmp(line, "quit"))
			break;
		asked_n++;
		bool ok = (line[0] == 'a' + right || line[0] == 'A' + right) && !line[1];
		right_n += ok;
		printf("%s%s%s: %c) %s\n%s", colour ? (ok ? "\033[32m" : "\033[31m") : "", ok ? "right" : "wrong",
		       colour ? "\033[0m" : "", 'a' + right, p->path, p->reveal);
	}
	printf("\nscore: %zu of %zu\n", right_n, asked_n);
	return 0;
}

int qz_paths(const qz_paths_args_t *a)
{
	hl_trace_t *t = NULL;
	vis_paths_t ps = { 0 };
	int rc = load(a, &t, &ps);
	const char **all = rc ? NULL : calloc(ps.n ? ps.n : 1, sizeof *all);
	if (!rc && !all)
		rc = qz_error("out of memory");
	if (!rc) {
		size_t nall = distinct_paths(&ps, all);
		if (a->op)
			rc = path_of(a, &ps);
		else if (nall < 2)
			rc = qz_error("quiz: every call of %s takes the same path under %s: nothing to ask", a->trace,
				       a->policy);
		else if (a->emit)
			rc = emit_bank(a, &ps, all, nall);
		else
			rc = drill(a, &ps, all, nall);
	}
	free(all);
	vis_paths_free(&ps);
	if (t)
		hl_trace_free(t);
	return rc;
}
