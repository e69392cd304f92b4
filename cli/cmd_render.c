/* heaplab render: a snapshot (DOT) to a picture with Graphviz. */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "../visualize/vis.h"

static int usage(FILE *out)
{
	fprintf(out,
		"usage: heaplab render SNAPSHOT.dot [-o OUT.svg|OUT.png] [--strict]\n"
		"Draws a snapshot written by 'heaplab replay --snapshot' (or hl_snapshot_dot)\n"
		"with Graphviz's dot.  The format follows OUT's extension (svg, png, pdf);\n"
		"without -o the picture goes next to the snapshot as .svg.  Graphviz's\n"
		"warnings are printed; --strict makes them an error (exit 1).\n");
	return out == stdout ? 0 : 2;
}

/* "x.dot" -> "x.svg"; anything else -> "x.svg" appended. */
static char *default_output(const char *in)
{
	size_t n = strlen(in);
	char *out = malloc(n + 5);
	if (!out)
		return NULL;
	memcpy(out, in, n + 1);
	if (n > 4 && !strcmp(in + n - 4, ".dot"))
		out[n - 4] = 0;
	strcat(out, ".svg");
	return out;
}

static const char *format_of(const char *path)
{
	const char *dot = strrchr(path, '.');
	if (!dot || strchr(dot, '/'))
		return NULL;
	static const char *const known[] = { "svg", "png", "pdf" };
	for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
		if (!strcmp(dot + 1, known[i]))
			return known[i];
	return NULL;
}

int cmd_render(int argc, char **argv)
{
	const char *in = NULL, *out = NULL;
	bool strict = false;
	for (int i = 1; i < argc; i++) {
		int r;
		if ((r = cli_opt(argc, argv, &i, "-o", &out)) || (r = cli_opt(argc, argv, &i, "--output", &out))) {
			if (r < 0)
				return 2;
		} else if (!strcmp(argv[i], "--strict"))
			strict = true;
		else if (!strcmp(argv[i], "--help"))
			return usage(stdout);
		else if (argv[i][0] == '-' && argv[i][1])
			return cli_error("render: unknown option '%s' (try --help)", argv[i]);
		else if (in)
			return cli_error("render: one snapshot at a time ('%s' and '%s')", in, argv[i]);
		else
			in = argv[i];
	}
	if (!in)
		return usage(stderr);
	char *made = out ? NULL : default_output(in);
	const char *target = out ? out : made;
	const char *format = format_of(target);
	if (!format) {
		free(made);
		return cli_error("render: cannot tell the format of '%s' (use .svg, .png or .pdf)", target);
	}
	FILE *probe = fopen(in, "r");
	if (!probe) {
		free(made);
		return cli_error("render: cannot read %s", in);
	}
	fclose(probe);
	char *diag = NULL;
	int rc = vis_dot_file(in, format, target, &diag);
	if (diag)
		fputs(diag, stderr);
	if (rc == 2)
		cli_last_error();
	if (rc == 2 && vis_have_dot())
		cli_error("render: dot could not draw %s", in);
	else if (rc == 1 && strict)
		cli_error("render: Graphviz warned about %s (--strict)", in);
	free(diag);
	free(made);
	return rc == 2 ? 2 : rc == 1 && strict ? 1 : 0;
}
