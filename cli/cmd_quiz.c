/* heaplab quiz: drills the question bank (book/questions.txt) in a terminal,
 * `heaplab quiz --verify` runs the bank's verifying commands for `make
 * check`, and --paths asks which path each call of a trace takes.  This file
 * reads the arguments; the quiz is libhlquiz (quiz/quiz.h).  Without --seed
 * the seed comes from the clock and is printed. */
#include "config.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "../quiz/quiz.h"

static void quiz_usage(FILE *out)
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
		qz_source_book_dir, qz_installed_book_dir);
}

static int quiz_number(const char *opt, const char *v, unsigned long long *out)
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
	qz_paths_args_t pa = { 0 };
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
			quiz_usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--verify")) {
			verify = true;
		} else if ((r = cli_opt(argc, argv, &i, "--bank", &bank))) {
			if (r < 0)
				return 2;
		} else if ((r = cli_opt(argc, argv, &i, "--chapter", &v))) {
			if (r < 0 || quiz_number("--chapter", v, &chapter))
				return 2;
		} else if ((r = cli_opt(argc, argv, &i, "--seed", &v))) {
			if (r < 0 || quiz_number("--seed", v, &seed))
				return 2;
		} else if ((r = cli_opt(argc, argv, &i, "--count", &v))) {
			if (r < 0 || quiz_number("--count", v, &count))
				return 2;
		} else {
			quiz_usage(stderr);
			return cli_error("quiz: unknown argument '%s'", argv[i]);
		}
	}
	if (paths || path_of) {
		unsigned long long n = 0;
		if (!paths)
			return cli_error("quiz: --path-of N needs a TRACE");
		if (path_of && quiz_number("--path-of", path_of, &n))
			return 2;
		if (path_of && n == 0)
			return cli_error("quiz: --path-of counts ops from 1");
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
		return qz_paths(&pa);
	}
	qz_opts_t o = { .bank = bank, .verify = verify, .chapter = (int)chapter, .seed = seed, .count = (size_t)count };
	return qz_run(&o);
}
