/* Error reporting: fatal corruption messages through write(2) only, the
 * per-thread "last error" text, and checker reports. */
#include "config.h"
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <stdint.h>
#include "error.h"
#include "heaplab.h"
#include "report.h"

static __thread char last_error[512];

const char *hl_last_error(void)
{
	return last_error[0] ? last_error : "no error";
}

void hl_set_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(last_error, sizeof last_error, fmt, ap);
	va_end(ap);
}

/* Appends s to buf (bounded); returns the new length. */
static size_t put(char *buf, size_t len, size_t cap, const char *s)
{
	while (*s && len + 1 < cap)
		buf[len++] = *s++;
	return len;
}

static size_t put_hex(char *buf, size_t len, size_t cap, uintptr_t v)
{
	char tmp[2 + 2 * sizeof v + 1];
	int n = 0;
	do {
		tmp[n++] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	len = put(buf, len, cap, "0x");
	while (n > 0 && len + 1 < cap)
		buf[len++] = tmp[--n];
	return len;
}

void hl_fatal(const char *policy, const char *what, const void *p)
{
	char buf[256];
	size_t len = put(buf, 0, sizeof buf, "heaplab: ");
	len = put(buf, len, sizeof buf, policy ? policy : "core");
	len = put(buf, len, sizeof buf, ": ");
	len = put(buf, len, sizeof buf, what);
	if (p) {
		len = put(buf, len, sizeof buf, " (");
		len = put_hex(buf, len, sizeof buf, (uintptr_t)p);
		len = put(buf, len, sizeof buf, ")");
	}
	len = put(buf, len, sizeof buf, "\n");
	(void)!write(2, buf, len);
	abort();
}

void hl_report(hl_report_t *r, const char *fmt, ...)
{
	r->problems++;
	if (!r->out)
		return;
	va_list ap;
	va_start(ap, fmt);
	fprintf(r->out, "heaplab: %s: check: ", r->policy ? r->policy : "core");
	vfprintf(r->out, fmt, ap);
	fputc('\n', r->out);
	va_end(ap);
}
