/* pymalloc WHAT ARGS...: the pymalloc probes in one program, as they all
 * embed libpython (the real side) and share how each side allocates and
 * counts (pymalloc_side.h).  WHAT is route, keep, arenas or classes; see
 * each one's file for its arguments and output. */
#include <Python.h>
#include "pymalloc_side.h"

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
} probes[] = {
	{ "route", pymalloc_route },
	{ "keep", pymalloc_keep },
	{ "arenas", pymalloc_arenas },
	{ "classes", pymalloc_classes },
};

int main(int argc, char **argv)
{
	probe_static_stdout();
	for (size_t i = 0; argc > 1 && i < sizeof probes / sizeof probes[0]; i++)
		if (strcmp(argv[1], probes[i].name) == 0) {
			py_start();
			return probes[i].run(argc - 1, argv + 1);
		}
	probe_die("usage: pymalloc route|keep|arenas|classes ARGS...");
	return 2;
}
