/*
 * The corpus replay: a plain main for a fuzz harness, so that every corpus
 * entry is a regression test in any build (gcc, no libFuzzer).  Runs the
 * harness once on each file named on the command line, in order; a bug
 * the harness finds aborts, and a file that cannot be read is one line and
 * exit status 2.  With --say first, each heap an input runs on is named
 * ("HARNESS: ran POLICY ..."), so a script can see which policies ran.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz.h"

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "fuzz replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	size_t cap = 4096, len = 0;
	unsigned char *buf = malloc(cap);
	size_t got;
	while (buf && (got = fread(buf + len, 1, cap - len, f)) > 0) {
		len += got;
		if (len == cap) {
			unsigned char *more = realloc(buf, cap *= 2);
			if (!more)
				free(buf);
			buf = more;
		}
	}
	int failed = !buf || ferror(f);
	fclose(f);
	if (failed) {
		fprintf(stderr, "fuzz replay: %s: %s\n", path, buf ? "read error" : "out of memory");
		free(buf);
		return -1;
	}
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	int first = 1;
	if (argc > 1 && !strcmp(argv[1], "--say")) {
		fuzz_say = true;
		first = 2;
	}
	if (argc <= first) {
		fprintf(stderr, "usage: %s [--say] INPUT...\n", argv[0]);
		return 2;
	}
	for (int i = first; i < argc; i++)
		if (run_file(argv[i]) < 0)
			return 2;
	printf("%d input(s) replayed\n", argc - first);
	return 0;
}
