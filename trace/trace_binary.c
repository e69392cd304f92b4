/*
 * The binary form of a trace (see trace_binary.h): its records coded and
 * decoded, and the conversion between the two forms, line by line and
 * record by record, so that neither side is held in memory.
 *
 * The encoders write into a caller's buffer and never allocate: the
 * recorder calls them inside the program's malloc.
 */
#include "config.h"
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "error.h"
#include "trace_binary.h"

/* ---- coding ---------------------------------------------------------------- */

static size_t put_varint(uint8_t *out, uint64_t v)
{
	size_t n = 0;
	while (v >= 0x80) {
		out[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	out[n++] = (uint8_t)v;
	return n;
}

static uint64_t zigzag(long v) { return v < 0 ? ((uint64_t)~v << 1) | 1 : (uint64_t)v << 1; }
static long unzigzag(uint64_t z) { return z & 1 ? (long)~(z >> 1) : (long)(z >> 1); }

/* A tag with a small value in its high nibble, or 15 there and a varint. */
static size_t put_tagged(uint8_t *out, hl_bin_kind_t kind, uint64_t v)
{
	if (v < 15) {
		out[0] = (uint8_t)(kind | v << 4);
		return 1;
	}
	out[0] = (uint8_t)(kind | 15 << 4);
	return 1 + put_varint(out + 1, v);
}

size_t hl_bin_put_op(hl_bin_state_t *st, uint8_t *out, hl_bin_kind_t kind, long id, size_t a, size_t b, unsigned site)
{
	size_t n;
	switch (kind) {
	case HL_BIN_T: case HL_BIN_X:
		return put_tagged(out, kind, (uint64_t)id);
	case HL_BIN_F:
		if (id < 0) {
			out[0] = HL_BIN_FNULL;
			return 1;
		}
		n = put_tagged(out, kind, zigzag((long)((unsigned long)id - (unsigned long)st->id)));
		st->id = id;
		return n;
	default:
		n = put_tagged(out, kind, zigzag((long)((unsigned long)id - (unsigned long)st->id)));
		st->id = id;
		n += put_varint(out + n, a);
		if (kind == HL_BIN_C || kind == HL_BIN_M)
			n += put_varint(out + n, b);
		return n + put_varint(out + n, site);
	}
}

size_t hl_bin_put_time(hl_bin_state_t *st, uint8_t *out, uint64_t us)
{
	out[0] = HL_BIN_TIME;
	size_t n = 1 + put_varint(out + 1, us - st->us);
	st->us = us;
	return n;
}

size_t hl_bin_put_text_head(uint8_t *out, size_t len)
{
	out[0] = HL_BIN_TEXT;
	return 1 + put_varint(out + 1, len);
}

/* ---- decoding -------------------------------------------------------------- */

/* A varint: 0, or -1 with *why (the file ends inside it, or it does not
 * fit 64 bits). */
static int get_varint(hl_bin_reader_t *r, uint64_t *out, const char **why)
{
	uint64_t v = 0;
	for (int shift = 0; shift < 64; shift += 7) {
		int c = getc_unlocked(r->f);
		if (c == EOF) {
			*why = ferror(r->f) ? "read error" : HL_BIN_CUT;
			return -1;
		}
		if (shift == 63 && (c & 0x7e)) {
			*why = "a number of more than 64 bits";
			return -1;
		}
		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80)) {
			*out = v;
			return 0;
		}
	}
	*why = "a number of more than 64 bits";
	return -1;
}

static int get_tagged(hl_bin_reader_t *r, int nibble, uint64_t *out, const char **why)
{
	if (nibble < 15) {
		*out = (uint64_t)nibble;
		return 0;
	}
	return get_varint(r, out, why);
}

/* The block id of an op record: the previous one plus the coded difference. */
static int get_id(hl_bin_reader_t *r, int nibble, long *id, const char **why)
{
	uint64_t z;
	if (get_tagged(r, nibble, &z, why) < 0)
		return -1;
	*id = (long)((unsigned long)r->st.id + (unsigned long)unzigzag(z));
	r->st.id = *id;
	return 0;
}

static int get_size(hl_bin_reader_t *r, size_t *out, const char **why)
{
	uint64_t v;
	if (get_varint(r, &v, why) < 0)
		return -1;
	if (v > (uint64_t)LLONG_MAX) {
		*why = "a size above 2^63";
		return -1;
	}
	*out = (size_t)v;
	return 0;
}

static int get_text(hl_bin_reader_t *r, hl_bin_record_t *rec, const char **why)
{
	uint64_t len;
	if (get_varint(r, &len, why) < 0)
		return -1;
	if (len > HL_BIN_TEXT_MAX) {
		*why = "a text record longer than 64 KiB";
		return -1;
	}
	if (len + 1 > r->text_cap) {
		char *t = realloc(r->text, len + 1);
		if (!t) {
			*why = "out of memory";
			return -1;
		}
		r->text = t;
		r->text_cap = len + 1;
	}
	if (fread(r->text, 1, len, r->f) != len) {
		*why = ferror(r->f) ? "read error" : HL_BIN_CUT;
		return -1;
	}
	r->text[len] = 0;
	if (memchr(r->text, 0, len) || memchr(r->text, '\n', len)) {
		*why = "a text record holding a NUL byte or a newline";
		return -1;
	}
	rec->text = r->text;
	rec->len = (size_t)len;
	return 0;
}

int hl_bin_next(hl_bin_reader_t *r, hl_bin_record_t *rec, const char **why)
{
	int tag = getc_unlocked(r->f);
	if (tag == EOF) {
		*why = "read error";
		return ferror(r->f) ? -1 : 0;
	}
	r->records++;
	memset(rec, 0, sizeof *rec);
	rec->kind = (hl_bin_kind_t)(tag & 15);
	int nibble = tag >> 4;
	uint64_t v, site = 0;
	int rc = 0;
	switch (rec->kind) {
	case HL_BIN_A: case HL_BIN_R: case HL_BIN_C: case HL_BIN_M:
		rc = get_id(r, nibble, &rec->id, why) < 0 || get_size(r, &rec->a, why) < 0 ||
		     ((rec->kind == HL_BIN_C || rec->kind == HL_BIN_M) && get_size(r, &rec->b, why) < 0) ||
		     get_varint(r, &site, why) < 0 ? -1 : 0;
		if (rc == 0 && site > UINT_MAX) {
			*why = "a site number out of range";
			rc = -1;
		}
		rec->site = (unsigned)site;
		break;
	case HL_BIN_F:
		rc = get_id(r, nibble, &rec->id, why);
		break;
	case HL_BIN_FNULL:
		rec->kind = HL_BIN_F;
		rec->id = -1;
		break;
	case HL_BIN_T: case HL_BIN_X:
		rc = get_tagged(r, nibble, &v, why);
		rec->id = v > LONG_MAX ? LONG_MAX : (long)v;
		break;
	case HL_BIN_TIME:
		rc = get_varint(r, &v, why);
		if (rc == 0 && v > UINT64_MAX - r->st.us) {
			*why = "a time past 2^64 us";
			rc = -1;
		}
		rec->us = r->st.us += v;
		break;
	case HL_BIN_TEXT:
		rc = get_text(r, rec, why);
		break;
	case HL_BIN_END:
		break;
	default:
		*why = "an unknown kind of record (a damaged file?)";
		rc = -1;
	}
	/* FNULL, TIME, TEXT and END hold nothing in the nibble */
	int k = tag & 15;
	if (rc == 0 && nibble && (k == HL_BIN_FNULL || k == HL_BIN_TIME || k == HL_BIN_TEXT || k == HL_BIN_END)) {
		*why = "an unknown kind of record (a damaged file?)";
		rc = -1;
	}
	return rc < 0 ? -1 : 1;
}

void hl_bin_reader_free(hl_bin_reader_t *r)
{
	free(r->text);
	r->text = NULL;
	r->text_cap = 0;
}

bool hl_bin_magic(FILE *f)
{
	char head[HL_BIN_MAGIC_LEN];
	int c = getc(f);
	if (c == EOF)
		return false;
	ungetc(c, f);
	if (c != (unsigned char)HL_BIN_MAGIC[0])
		return false;
	off_t at = ftello(f);
	if (fread(head, 1, sizeof head, f) == sizeof head && !memcmp(head, HL_BIN_MAGIC, sizeof head))
		return true;
	fseeko(f, at, SEEK_SET);
	return false;
}

int hl_bin_form(FILE *f, const char *name)
{
	int first = getc(f);
	if (first != EOF)
		ungetc(first, f);
	if (hl_bin_magic(f))
		return 1;
	if (first != (unsigned char)HL_BIN_MAGIC[0])
		return 0;
	hl_set_error("%s: its first bytes are not those of a heaplab trace, binary (\"\\x89HLTRC1\") or text: "
		     "a damaged file, or not a trace", name);
	return -1;
}

char hl_bin_letter(hl_bin_kind_t kind)
{
	static const char letters[HL_BIN_KINDS] = { [HL_BIN_A] = 'a', [HL_BIN_R] = 'r', [HL_BIN_C] = 'c',
						    [HL_BIN_M] = 'm', [HL_BIN_F] = 'f', [HL_BIN_T] = 't' };
	return kind < HL_BIN_KINDS ? letters[kind] : 0;
}

size_t hl_bin_text_line(const hl_bin_record_t *rec, char *out, size_t len)
{
	char letter = hl_bin_letter(rec->kind);
	int n = 0;
	switch (rec->kind) {
	case HL_BIN_A: case HL_BIN_R:
		n = snprintf(out, len, "%c %ld %zu", letter, rec->id, rec->a);
		break;
	case HL_BIN_C: case HL_BIN_M:
		n = snprintf(out, len, "%c %ld %zu %zu", letter, rec->id, rec->a, rec->b);
		break;
	case HL_BIN_F: case HL_BIN_T:
		n = snprintf(out, len, "%c %ld\n", letter, rec->id);
		break;
	case HL_BIN_X:
		n = snprintf(out, len, "#@exit %ld\n", rec->id);
		break;
	case HL_BIN_TIME:
		n = snprintf(out, len, "#@t %llu\n", (unsigned long long)rec->us);
		break;
	case HL_BIN_TEXT:
		n = snprintf(out, len, "%s\n", rec->text);
		break;
	default:
		*out = 0;
		return 0;
	}
	if (rec->kind <= HL_BIN_M)
		n += snprintf(out + n, len - (size_t)n, rec->site ? " @%u\n" : "\n", rec->site);
	return (size_t)n < len ? (size_t)n : len - 1;
}

/* ---- conversion ------------------------------------------------------------ */

/* Parses @p s as the op line the recorder would write (or "#@t US",
 * "#@exit N"); false when it is anything else, or written otherwise (the
 * line then travels as TEXT, as it was). */
static bool canonical(const char *s, hl_bin_record_t *rec, const hl_bin_state_t *st)
{
	static const char kinds[] = "arcmft";
	static const hl_bin_kind_t kind_of[] = { HL_BIN_A, HL_BIN_R, HL_BIN_C, HL_BIN_M, HL_BIN_F, HL_BIN_T };
	unsigned long long x[4] = { 0 };
	long id = 0;
	int used = 0;
	memset(rec, 0, sizeof *rec);
	if (!strncmp(s, "#@t ", 4)) {
		if (sscanf(s + 4, "%llu%n", &x[0], &used) != 1 || x[0] < st->us)
			return false;
		rec->kind = HL_BIN_TIME;
		rec->us = x[0];
	} else if (!strncmp(s, "#@exit ", 7)) {
		if (sscanf(s + 7, "%llu%n", &x[0], &used) != 1 || x[0] > 255)
			return false;
		rec->kind = HL_BIN_X;
		rec->id = (long)x[0];
	} else {
		const char *k = s[0] && s[1] == ' ' ? strchr(kinds, s[0]) : NULL;
		if (!k)
			return false;
		rec->kind = kind_of[k - kinds];
		int fields = rec->kind == HL_BIN_C || rec->kind == HL_BIN_M ? 3 : rec->kind <= HL_BIN_R ? 2 : 1;
		if (sscanf(s + 2, "%ld%n", &id, &used) != 1)
			return false;
		int at = 2 + used;
		for (int i = 1; i < fields; i++, at += used)
			if (sscanf(s + at, " %llu%n", &x[i], &used) != 1 || x[i] > (unsigned long long)LLONG_MAX)
				return false;
		if (rec->kind <= HL_BIN_M && s[at] == ' ' && sscanf(s + at, " @%llu%n", &x[0], &used) == 1 &&
		    x[0] && x[0] <= UINT_MAX) {
			rec->site = (unsigned)x[0];
			at += used;
		}
		rec->id = id;
		if (rec->kind == HL_BIN_F && id < -1)
			return false;
		if (rec->kind != HL_BIN_F && id < 0)
			return false;
		rec->a = (size_t)x[1];
		rec->b = (size_t)x[2];
	}
	/* the same line written back, or not canonical */
	char back[128];
	hl_bin_text_line(rec, back, sizeof back);
	size_t n = strlen(s);
	return n + 1 == strlen(back) && !memcmp(s, back, n);
}

static int write_all(FILE *out, const void *b, size_t n, const char *in)
{
	if (fwrite(b, 1, n, out) == n)
		return 0;
	hl_set_error("%s: cannot write the converted trace: %s", in, strerror(errno ? errno : EIO));
	return -1;
}

static int text_to_binary(FILE *f, FILE *out, const char *in)
{
	hl_bin_state_t st = { 0 };
	uint8_t rec_buf[HL_BIN_OP_MAX + 16];
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int rc = write_all(out, HL_BIN_MAGIC, HL_BIN_MAGIC_LEN, in);
	while (rc == 0 && (n = getline(&line, &cap, f)) >= 0) {
		if (n && line[n - 1] == '\n')
			line[--n] = 0;
		if (memchr(line, 0, (size_t)n)) {
			hl_set_error("%s: a NUL byte in a line: not a text trace", in);
			rc = -1;
			break;
		}
		hl_bin_record_t rec;
		size_t len;
		if (!canonical(line, &rec, &st)) {
			len = hl_bin_put_text_head(rec_buf, (size_t)n);
			rc = write_all(out, rec_buf, len, in) || write_all(out, line, (size_t)n, in) ? -1 : 0;
			continue;
		}
		if (rec.kind == HL_BIN_TIME)
			len = hl_bin_put_time(&st, rec_buf, rec.us);
		else
			len = hl_bin_put_op(&st, rec_buf, rec.kind, rec.id, rec.a, rec.b, rec.site);
		rc = write_all(out, rec_buf, len, in);
	}
	free(line);
	if (rc == 0 && ferror(f)) {
		hl_set_error("%s: read error", in);
		rc = -1;
	}
	uint8_t end = HL_BIN_END;
	return rc == 0 ? write_all(out, &end, 1, in) : -1;
}

static int binary_to_text(FILE *f, FILE *out, const char *in)
{
	hl_bin_reader_t r = { .f = f };
	hl_bin_record_t rec;
	const char *why = NULL;
	char line[256];
	int got, rc = 0;
	bool ended = false;
	while (rc == 0 && (got = hl_bin_next(&r, &rec, &why)) > 0) {
		if (ended) {
			hl_set_error("%s: record %lu: a record after the end record (a damaged file?)", in, r.records);
			rc = -1;
		} else if (rec.kind == HL_BIN_END) {
			ended = true;
		} else if (rec.kind == HL_BIN_TEXT) {
			rc = write_all(out, rec.text, rec.len, in) || write_all(out, "\n", 1, in) ? -1 : 0;
		} else {
			rc = write_all(out, line, hl_bin_text_line(&rec, line, sizeof line), in);
		}
	}
	if (rc == 0 && got < 0) {
		hl_set_error("%s: record %lu: %s", in, r.records, why);
		rc = -1;
	} else if (rc == 0 && !ended) {
		hl_set_error("%s: the file ends without its end record: the recording was cut short", in);
		rc = -1;
	}
	hl_bin_reader_free(&r);
	return rc;
}

static int copy(FILE *f, FILE *out, const char *in)
{
	char b[1 << 16];
	size_t n;
	while ((n = fread(b, 1, sizeof b, f)) > 0)
		if (write_all(out, b, n, in) < 0)
			return -1;
	return 0;
}

int hl_trace_convert(const char *in, FILE *out, bool to_text)
{
	FILE *f = fopen(in, "rb");
	if (!f) {
		hl_set_error("%s: %s", in, strerror(errno));
		return -1;
	}
	int binary = hl_bin_form(f, in);
	int rc = binary < 0 ? -1 : binary == !to_text ? copy(f, out, in) : to_text ? binary_to_text(f, out, in) : text_to_binary(f, out, in);
	fclose(f);
	if (rc == 0 && fflush(out) != 0) {
		hl_set_error("%s: cannot write the converted trace: %s", in, strerror(errno));
		rc = -1;
	}
	return rc;
}
