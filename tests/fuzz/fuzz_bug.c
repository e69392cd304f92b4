/* The bug report every harness ends with, and the names of the heaps it
 * ran (see fuzz.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include "fuzz.h"

void fuzz_bug(const char *harness, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "fuzz: %s: ", harness);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	abort();
}

bool fuzz_say;

void fuzz_ran(const char *harness, const char *fmt, ...)
{
	if (!fuzz_say)
		return;
	va_list ap;
	va_start(ap, fmt);
	printf("%s: ran ", harness);
	vprintf(fmt, ap);
	putchar('\n');
	va_end(ap);
}
