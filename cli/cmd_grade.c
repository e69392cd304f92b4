/* heaplab grade: the malloc-lab score of a policy.  This file reads the
 * arguments; the grader is libhlgrade (grade/grade.h). */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "../grade/grade.h"

static int grade_usage(FILE *out)
{
	fprintf(out,
		"usage: heaplab grade [--policy=NAME] [--reference=NAME] [--conf=S] [--ref-conf=S]\n"
		"                     [--weight=W] [--repeat=N] [--timeout=SECONDS] [--hidden=DIR]\n"
		"                     [--no-throughput] [--json] [TRACE|DIR ...]\n"
		"Scores a policy like the malloc lab's driver and prints the score sheet:\n"
		"correctness (each trace replayed with full checking in a child process: any\n"
		"error, crash or timeout loses the trace), performance (the index\n"
		"100 * (W * mean utilization + (1 - W) * min(1, throughput / reference's)),\n"
		"throughput being operations per instruction inside the allocator, counted by\n"
		"valgrind's callgrind, so the same on every run), the heap checker (the policy's\n"
		"check must pass a sound heap and report a smashed header, a write past a\n"
		"block's end and a block freed twice) and a blank line for the write-up.\n"
		"Defaults: policy student (when compiled in), reference firstfit, W 0.6, 1\n"
		"unchecked pass after the checked one, 60 s of CPU time per replay of the\n"
		"graded policy (and ten times that by the clock).\n"
		"A DIR means every *.rep in it; a name that is not a file is looked up in\n"
		"$HEAPLAB_TRACES or the shipped traces.  Without traces: the classic set\n"
		"(amptjp-bal.rep ...) and the hidden set of the instructor's kit (traces/hidden),\n"
		"when the tree has it; --hidden=DIR adds DIR's traces as hidden ones.\n"
		"--no-throughput counts no instructions (no valgrind needed; throughput scores 0).\n"
		"Exit 0 when every trace is correct, 1 otherwise, 2 on bad usage.\n");
	return out == stdout ? 0 : 2;
}

static int parse_numbers(gr_opts_t *o, const char *weight, const char *repeat, const char *timeout)
{
	char *end;
	if (weight) {
		o->weight = strtod(weight, &end);
		if (*end || end == weight || o->weight < 0 || o->weight > 1)
			return cli_error("bad --weight '%s' (0..1)", weight);
	}
	long long r = repeat ? cli_parse_size(repeat) : 1;
	if (r < 0 || r > 100)
		return cli_error("bad --repeat '%s' (0..100)", repeat);
	o->repeat = (int)r;
	long long s = timeout ? cli_parse_size(timeout) : 60;
	if (s < 0 || s > 86400)
		return cli_error("bad --timeout '%s' (0..86400 seconds)", timeout);
	o->timeout = (unsigned)s;
	return 0;
}

/* The policy is compiled in and accepts its options (checked once here,
 * so a typo is bad usage rather than a zero on every trace). */
static int check_policy(const char *name, const char *conf, const char *role)
{
	if (hl_policy_summary(name)) {
		hl_heap_t *h = hl_heap_new(name, conf);
		if (!h)
			return cli_error("%s policy: %s", role, hl_last_error());
		hl_heap_destroy(h);
		return 0;
	}
	fprintf(stderr, "heaplab: %s policy '%s' is not compiled in (configure --with-policy=...); compiled in:", role,
		name);
	for (size_t i = 0; i < hl_policy_count(); i++)
		fprintf(stderr, " %s", hl_policy_name(i));
	fputc('\n', stderr);
	return 2;
}

static int parse_args(int argc, char **argv, gr_opts_t *o)
{
	const char *weight = NULL, *repeat = NULL, *timeout = NULL, *hidden = NULL;
	memset(o, 0, sizeof *o);
	o->policy = hl_policy_summary(HL_SKELETON_POLICY) ? HL_SKELETON_POLICY : hl_default_policy();
	o->reference = HL_REFERENCE_POLICY;
	o->weight = 0.6;
	o->count = true;
	o->progress = cli_progress_cb;
	for (int i = 1; i < argc; i++) {
		int r;
		if ((r = cli_opt(argc, argv, &i, "--policy", &o->policy)) ||
		    (r = cli_opt(argc, argv, &i, "--reference", &o->reference)) ||
		    (r = cli_opt(argc, argv, &i, "--conf", &o->conf)) ||
		    (r = cli_opt(argc, argv, &i, "--ref-conf", &o->ref_conf)) ||
		    (r = cli_opt(argc, argv, &i, "--weight", &weight)) ||
		    (r = cli_opt(argc, argv, &i, "--repeat", &repeat)) ||
		    (r = cli_opt(argc, argv, &i, "--timeout", &timeout)) ||
		    (r = cli_opt(argc, argv, &i, "--hidden", &hidden))) {
			if (r < 0)
				return 2;
		} else if (!strcmp(argv[i], "--json"))
			o->json = true;
		else if (!strcmp(argv[i], "--no-throughput"))
			o->count = false;
		else if (!strcmp(argv[i], "--help"))
			return grade_usage(stdout) == 0 ? -1 : 2;
		else if (argv[i][0] == '-' && argv[i][1])
			return cli_error("unknown option '%s' (try --help)", argv[i]);
		else if (gr_add_arg(o, argv[i], false))
			return 2;
	}
	if (parse_numbers(o, weight, repeat, timeout) || check_policy(o->policy, o->conf, "graded") ||
	    check_policy(o->reference, o->ref_conf, "reference"))
		return 2;
	if (hidden) {
		snprintf(o->hidden_dir, sizeof o->hidden_dir, "%s", hidden);
		o->hidden_found = true;
		if (gr_add_arg(o, hidden, true))
			return 2;
	}
	return o->ntraces ? 0 : gr_add_defaults(o);
}

int cmd_grade(int argc, char **argv)
{
	static gr_opts_t o;
	static char self[4096];
	int rc = parse_args(argc, argv, &o);
	ssize_t n = rc ? 0 : readlink("/proc/self/exe", self, sizeof self - 1);
	if (!rc && n <= 0)
		rc = cli_error("cannot find the heaplab program (/proc/self/exe)");
	o.program = self;
	gr_row_t *rows = rc ? NULL : calloc((size_t)o.ntraces, sizeof *rows);
	if (!rc && !rows)
		rc = cli_error("out of memory");
	if (!rc)
		rc = gr_grade_traces(&o, rows);
	if (!rc) {
		gr_checker_t c;
		gr_judge_checker(&o, &c);
		rc = gr_print_sheet(&o, rows, &c, stdout);
	}
	free(rows);
	gr_free_traces(&o);
	return rc < 0 ? 0 : rc;
}
