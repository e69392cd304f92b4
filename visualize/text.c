/* The text helpers every output of visualize shares: failing with a
 * message (the library prints nothing itself), capturing what a printer
 * writes as a string, bytes for people, and the escapes of XML and of JSON
 * inside an HTML page. */
#include "config.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include "error.h"
#include "vis.h"

int vis_fail(const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	hl_set_error("%s", msg);
	return 2;
}

char *vis_text_of(void (*write)(FILE *f, void *arg), void *arg)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	write(f, arg);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

const char *vis_bytes(double b, char *buf, size_t len)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	int u = 0;
	while (b >= 1024 && u < 4) {
		b /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%.0f B", b);
	else
		snprintf(buf, len, "%.*f %s", b < 10 ? 2 : 1, b, units[u]);
	return buf;
}

void vis_put_xml(FILE *out, const char *s)
{
	static const char *const entity[256] = {
		['<'] = "&lt;", ['>'] = "&gt;", ['&'] = "&amp;", ['"'] = "&quot;",
	};
	for (; *s; s++) {
		const char *e = entity[(unsigned char)*s];
		if (e)
			fputs(e, out);
		else
			fputc(*s, out);
	}
}

void vis_json_string(FILE *out, const char *s)
{
	const char *start = s;
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", out);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else if (c == '/' && s > start && s[-1] == '<')
			fputs("\\/", out); /* no "</script>" can end the script */
		else
			fputc(c, out);
	}
	fputc('"', out);
}
