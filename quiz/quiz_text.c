/* The text helpers of the quiz: the error line every layer of it prints,
 * and trimming. */
#include "config.h"
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "quiz.h"

int qz_error(const char *fmt, ...)
{
	char msg[PATH_MAX + 512];   /* a path and a sentence */
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	fprintf(stderr, "heaplab: %s\n", msg);
	return 2;
}

char *qz_trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = 0;
	return s;
}
