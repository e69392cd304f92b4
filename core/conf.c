/* Configuration strings (see conf.h).  Never allocates. */
#include "config.h"
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "conf.h"
#include "error.h"

const hl_option_t hl_core_options[] = {
	{ "debug", HL_OPT_BOOL, HL_DEBUG_BUILD ? "on" : "off", 0, 1, NULL,
	  "catch misuse (double and invalid frees, overflows, writes after free) with one line; "
	  "check the heap around every operation; junk-fill fresh (0xAA) and freed (0xDD) memory" },
	{ "ledger", HL_OPT_BOOL, "on", 0, 1, NULL,
	  "remember each block's requested size (live_requested_bytes, utilization)" },
	{ "os_fail_at", HL_OPT_INT, "0", 0, INT64_MAX, NULL,
	  "testing: the N-th page-source call the kernel could refuse (mmap, mprotect to read/write, mremap, "
	  "munmap) fails with ENOMEM, once; 0 = never" },
	{ "os_fail_every", HL_OPT_INT, "0", 0, INT64_MAX, NULL,
	  "testing: every N-th such call fails with ENOMEM; 0 = never" },
	{ "clock", HL_OPT_ENUM, "real", 0, 0, "real|replay",
	  "the time decay, purge delays, release rates and background threads follow: "
	  "the real clock, or the one a replay sets (hl_heap_set_time; background work runs when it passes its time)" },
	{ NULL, 0, NULL, 0, 0, NULL, NULL },
};

static const char *const bool_words[][2] = {
	{ "off", "on" }, { "false", "true" }, { "no", "yes" }, { "0", "1" },
};

static int parse_bool(const char *v, size_t n, int64_t *out)
{
	for (size_t i = 0; i < sizeof bool_words / sizeof bool_words[0]; i++)
		for (int b = 0; b < 2; b++)
			if (strlen(bool_words[i][b]) == n && !strncmp(v, bool_words[i][b], n)) {
				*out = b;
				return 0;
			}
	return -1;
}

static int parse_number(const char *v, size_t n, bool sized, int64_t *out)
{
	char buf[64];
	if (n == 0 || n >= sizeof buf)
		return -1;
	memcpy(buf, v, n);
	buf[n] = 0;
	char *end;
	errno = 0;
	long long x = strtoll(buf, &end, 10);
	if (errno || end == buf)
		return -1;
	if (sized && *end) {
		int shift = 0;
		switch (toupper((unsigned char)*end)) {
		case 'K': shift = 10; break;
		case 'M': shift = 20; break;
		case 'G': shift = 30; break;
		default: return -1;
		}
		end++;
		if (toupper((unsigned char)*end) == 'B' || toupper((unsigned char)*end) == 'I')
			end++;
		if (x < 0 || x > (INT64_MAX >> shift))
			return -1;
		x <<= shift;
	}
	if (*end)
		return -1;
	*out = x;
	return 0;
}

static int parse_enum(const char *choices, const char *v, size_t n, int64_t *out)
{
	int idx = 0;
	for (const char *c = choices; *c; idx++) {
		const char *bar = strchr(c, '|');
		size_t len = bar ? (size_t)(bar - c) : strlen(c);
		if (len == n && !strncmp(c, v, n)) {
			*out = idx;
			return 0;
		}
		if (!bar)
			break;
		c = bar + 1;
	}
	return -1;
}

/* Stores text value @p v (';' read as ',') in @p c; its offset in *out. */
static int parse_text(hl_conf_t *c, const hl_option_t *o, const char *v, size_t n, int64_t *out)
{
	if ((int64_t)n > o->max)
		return -2;
	if (c->text_used + n + 1 > sizeof c->text)
		return -1;
	char *t = c->text + c->text_used;
	for (size_t i = 0; i < n; i++)
		t[i] = v[i] == ';' ? ',' : v[i];
	t[n] = 0;
	*out = (int64_t)c->text_used;
	c->text_used += n + 1;
	return 0;
}

static int parse_value(hl_conf_t *c, const hl_option_t *o, const char *v, size_t n, int64_t *out)
{
	switch (o->type) {
	case HL_OPT_TEXT: return parse_text(c, o, v, n, out);
	case HL_OPT_BOOL: return parse_bool(v, n, out);
	case HL_OPT_ENUM: return parse_enum(o->choices, v, n, out);
	case HL_OPT_INT:
	case HL_OPT_SIZE:
		if (parse_number(v, n, o->type == HL_OPT_SIZE, out) < 0)
			return -1;
		return (*out < o->min || *out > o->max) ? -2 : 0;
	}
	return -1;
}

/* Appends "a, b, c" (every key of both tables) to err. */
static void list_keys(const hl_conf_t *c, char *err, size_t errlen)
{
	size_t len = strlen(err);
	for (int i = 0; i < c->count && len + 2 < errlen; i++) {
		int w = snprintf(err + len, errlen - len, "%s%s", i ? ", " : "", c->entry[i].opt->key);
		if (w < 0)
			break;
		len += (size_t)w;
	}
}

static int load_defaults(hl_conf_t *c, const hl_option_t *policy_options, char *err, size_t errlen)
{
	memset(c, 0, sizeof *c);
	c->table[0] = hl_core_options;
	c->table[1] = policy_options;
	for (int t = 0; t < 2; t++)
		for (const hl_option_t *o = c->table[t]; o && o->key; o++) {
			if (c->count == HL_CONF_MAX) {
				snprintf(err, errlen, "too many options in one table");
				return -1;
			}
			c->entry[c->count].opt = o;
			if (parse_value(c, o, o->def, strlen(o->def), &c->entry[c->count].value) != 0) {
				snprintf(err, errlen, "option %s: bad default '%s'", o->key, o->def);
				return -1;
			}
			c->count++;
		}
	return 0;
}

static int find_entry(const hl_conf_t *c, const char *key, size_t n)
{
	for (int i = 0; i < c->count; i++)
		if (strlen(c->entry[i].opt->key) == n && !strncmp(c->entry[i].opt->key, key, n))
			return i;
	return -1;
}

static void describe_expected(const hl_option_t *o, char *buf, size_t len)
{
	switch (o->type) {
	case HL_OPT_BOOL: snprintf(buf, len, "on or off"); break;
	case HL_OPT_ENUM: snprintf(buf, len, "one of %s", o->choices); break;
	case HL_OPT_INT: snprintf(buf, len, "an integer from %lld to %lld", (long long)o->min, (long long)o->max); break;
	case HL_OPT_SIZE: snprintf(buf, len, "a size from %lld to %lld (K, M, G allowed)", (long long)o->min, (long long)o->max); break;
	case HL_OPT_TEXT: snprintf(buf, len, "text of at most %lld bytes (';' for ',')", (long long)o->max); break;
	}
}

int hl_conf_parse(hl_conf_t *c, const hl_option_t *policy_options, const char *text, char *err,
		  size_t errlen)
{
	if (load_defaults(c, policy_options, err, errlen) < 0)
		return -1;
	char text_shown[128];
	for (const char *p = text ? text : ""; *p;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		const char *colon = memchr(p, ':', len);
		if (!colon)
			colon = memchr(p, '=', len);
		if (len == 0) {
			p += comma ? 1 : 0;
			if (!comma)
				break;
			continue;
		}
		if (!colon) {
			snprintf(err, errlen, "option '%s' has no value (write key:value)",
				 hl_printable(p, len, text_shown, sizeof text_shown));
			return -1;
		}
		size_t klen = (size_t)(colon - p), vlen = len - klen - 1;
		int i = find_entry(c, p, klen);
		if (i < 0) {
			snprintf(err, errlen, "unknown option '%s'; valid keys: ",
				 hl_printable(p, klen, text_shown, sizeof text_shown));
			list_keys(c, err, errlen);
			return -1;
		}
		int64_t v;
		if (parse_value(c, c->entry[i].opt, colon + 1, vlen, &v) != 0) {
			char want[160];
			describe_expected(c->entry[i].opt, want, sizeof want);
			snprintf(err, errlen, "bad value '%s' for option %s: expected %s",
				 hl_printable(colon + 1, vlen, text_shown, sizeof text_shown),
				 c->entry[i].opt->key, want);
			return -1;
		}
		c->entry[i].value = v;
		c->entry[i].given = true;
		p += len + (comma ? 1 : 0);
	}
	return 0;
}

static int entry_of(const hl_conf_t *c, const char *key)
{
	int i = find_entry(c, key, strlen(key));
	if (i < 0) {
		static const char msg[] = "heaplab: internal error: unknown option key asked for\n";
		(void)!write(2, msg, sizeof msg - 1);
		abort();
	}
	return i;
}

int64_t hl_conf_int(const hl_conf_t *c, const char *key) { return c->entry[entry_of(c, key)].value; }
size_t hl_conf_size(const hl_conf_t *c, const char *key) { return (size_t)c->entry[entry_of(c, key)].value; }
bool hl_conf_bool(const hl_conf_t *c, const char *key) { return c->entry[entry_of(c, key)].value != 0; }
int hl_conf_enum(const hl_conf_t *c, const char *key) { return (int)c->entry[entry_of(c, key)].value; }
const char *hl_conf_text(const hl_conf_t *c, const char *key)
{
	return c->text + c->entry[entry_of(c, key)].value;
}
bool hl_conf_given(const hl_conf_t *c, const char *key) { return c->entry[entry_of(c, key)].given; }

/* Writes @p text as one Markdown table cell's content ('|' escaped). */
static void md_cell(const char *text, FILE *out)
{
	for (const char *c = text; *c; c++) {
		if (*c == '|')
			fputc('\\', out);
		fputc(*c, out);
	}
}

void hl_conf_markdown(const hl_option_t *opts, FILE *out)
{
	for (const hl_option_t *o = opts; o && o->key; o++) {
		char want[160];
		describe_expected(o, want, sizeof want);
		fprintf(out, o->def[0] ? "| `%s` | `%s` | " : "| `%s` | (empty)%s | ", o->key, o->def);
		md_cell(want, out);
		fputs(" | ", out);
		md_cell(o->help, out);
		fputs(" |\n", out);
	}
}

void hl_conf_describe(const hl_option_t *opts, FILE *out)
{
	for (const hl_option_t *o = opts; o && o->key; o++) {
		char want[160];
		describe_expected(o, want, sizeof want);
		fprintf(out, "    %-16s default %-8s %s\n    %-16s %s\n", o->key, o->def, want, "", o->help);
	}
}
