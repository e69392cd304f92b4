/* Error reporting: fatal corruption messages through write(2) only, the
 * per-thread "last error" text, and checker reports. */
#include "config.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <stdint.h>
#include "error.h"
#include "heaplab.h"
#include "report.h"
#include "policy.h"

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

const char *hl_printable(const char *s, size_t n, char *buf, size_t len)
{
	size_t o = 0;
	for (size_t i = 0; i < n && s[i] && o + 5 < len; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch >= 0x20 && ch < 0x7f)
			buf[o++] = (char)ch;
		else
			o += (size_t)snprintf(buf + o, len - o, "\\x%02x", ch);
	}
	if (len)
		buf[o] = 0;
	return buf;
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

/* What this thread is doing, named at the end of a fatal line: heaplab
 * replay sets the operation it runs. */
static __thread void (*fatal_describe)(void *arg, char *buf, size_t len);
static __thread void *fatal_arg;

void hl_fatal_context(void (*describe)(void *arg, char *buf, size_t len), void *arg)
{
	fatal_describe = describe;
	fatal_arg = arg;
}

void hl_fatal(const hl_policy_t *policy, const char *what, const void *p)
{
	char buf[512];
	size_t len = put(buf, 0, sizeof buf, "heaplab: ");
	len = put(buf, len, sizeof buf, policy ? policy->name : "core");
	len = put(buf, len, sizeof buf, ": ");
	len = put(buf, len, sizeof buf, what);
	if (p) {
		len = put(buf, len, sizeof buf, " (");
		len = put_hex(buf, len, sizeof buf, (uintptr_t)p);
		len = put(buf, len, sizeof buf, ")");
	}
	if (fatal_describe) {
		char context[192] = "";
		fatal_describe(fatal_arg, context, sizeof context);
		len = put(buf, len, sizeof buf, " during ");
		len = put(buf, len, sizeof buf, context);
	}
	len = put(buf, len, sizeof buf, "\n");
	(void)!write(2, buf, len);
	abort();
}

static void report_v(hl_report_t *r, const void *at, const char *fmt, va_list ap)
{
	if (r->problems++ == 0) {
		r->first_at = at;
		if (r->first) {
			va_list copy;
			va_copy(copy, ap);
			vsnprintf(r->first, r->first_len, fmt, copy);
			va_end(copy);
		}
	}
	if (!r->out)
		return;
	fprintf(r->out, "heaplab: %s: check: ", r->policy ? r->policy : "core");
	vfprintf(r->out, fmt, ap);
	fputc('\n', r->out);
}

void hl_report(hl_report_t *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	report_v(r, NULL, fmt, ap);
	va_end(ap);
}

void hl_report_at(hl_report_t *r, const void *at, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	report_v(r, at, fmt, ap);
	va_end(ap);
}
