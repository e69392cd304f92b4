/* heaplab: the command-line front end.  Dispatches to one sub-command. */
#include "config.h"
#include <stdio.h>
#include <string.h>
#include "cli.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *help;
};

static const struct command commands[] = {
	{ "policies", cmd_policies, "list compiled-in policies (--verbose: their options)" },
	{ "options", cmd_options, "every option of every policy, from the option tables" },
	{ "replay", cmd_replay, "replay traces with full checking: utilization and speed (--explain: every step)" },
	{ "compare", cmd_compare, "one table: every policy x every trace" },
	{ "bound", cmd_bound, "the least memory any allocator needs for a trace, and each policy beside it" },
	{ "adversary", cmd_adversary, "search for a short trace that makes a policy hold the most memory" },
	{ "sizes", cmd_sizes, "the ladder of request -> usable size of a policy" },
	{ "run", cmd_run, "run a real program on heaplab through LD_PRELOAD" },
	{ "render", cmd_render, "render a DOT snapshot to SVG or PNG with Graphviz" },
	{ "step", cmd_step, "step through a trace: HTML page, or --tty in a terminal; several policies in lockstep" },
	{ "diff", cmd_diff, "what changed in the heap between two moments of a trace" },
	{ "plot", cmd_plot, "plot live, committed and resident bytes over time (SVG)" },
	{ "quiz", cmd_quiz, "drill the question bank in a terminal" },
	{ "grade", cmd_grade, "malloc-lab scoring of a policy over traces" },
	{ "diagnose", cmd_diagnose, "record a real program and explain what holds its memory; what other allocators would do" },
	{ "fidelity", cmd_fidelity, "each model against the real allocator it models, claim by claim" },
};

static void usage(FILE *out)
{
	fprintf(out, "usage: heaplab COMMAND [OPTIONS] ...\n\ncommands:\n");
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		fprintf(out, "  %-9s %s\n", commands[i].name, commands[i].help);
	fprintf(out, "\n'heaplab COMMAND --help' describes one command.\n");
}

/* Runs command @p argv[0] with its arguments; 2 when there is none. */
static int run(int argc, char **argv, const char *unknown)
{
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (!strcmp(argv[0], commands[i].name))
			return commands[i].run(argc, argv);
	fprintf(stderr, "heaplab: %s '%s' (try 'heaplab --help')\n", unknown, argv[0]);
	return 2;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "help") && argc > 2) {
		/* heaplab help options: the topic itself; help COMMAND: its --help */
		char *args[] = { argv[2], "--help", NULL };
		int topic = !strcmp(args[0], "options");
		if (topic)
			args[1] = NULL;
		return run(topic ? 1 : 2, args, "no help on");
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("heaplab %s\n", PACKAGE_VERSION);
		return 0;
	}
	return run(argc - 1, argv + 1, "unknown command");
}
