/*
 * Fuzz harness: the trace reader (trace/trace.c), then a replay of what it
 * accepts.
 *
 * The bytes are a .rep file.  The reader must either refuse them with one
 * line "fuzz.rep:LINE: message" or return a trace every accessor can
 * describe.  A trace that is small and replayable (no double free, the
 * program's own mistake, which the replay repeats on purpose; sane sizes
 * and alignments; few threads) is then replayed on a fresh heap of every
 * compiled-in policy with contents verified and the checker after every
 * op: any failure there is a bug of the policy or of the replay.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "heaplab.h"
#include "../../trace/trace.h"
#include "fuzz.h"

static const char H[] = "fuzz_trace";
static const char NAME[] = "fuzz.rep";

enum {
	REPLAY_MAX_OPS = 400,
	REPLAY_MAX_THREADS = 4,
	REPLAY_MAX_IDS = 1 << 16,
	REPLAY_MAX_BYTES = 1 << 20,
	REPLAY_MAX_ALIGN = 1 << 16,
};

/* One clean line: no newline, no control byte echoed from the input. */
static bool printable(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s == 0x7f)
			return false;
	return true;
}

static void check_refusal(void)
{
	const char *e = hl_last_error();
	size_t n = strlen(NAME);
	if (strncmp(e, NAME, n) != 0 || e[n] != ':' || !printable(e))
		fuzz_bug(H, "a refused trace's message is not one 'fuzz.rep:LINE: ...' line: '%s'", e);
}

/* Every accessor on every op, as `heaplab replay` and the stepper use them. */
static void describe_all(const hl_trace_t *t)
{
	char buf[128];
	long header[4];
	hl_trace_header(t, header);
	(void)strlen(hl_trace_warnings(t));
	for (size_t i = 0; i <= hl_trace_ops(t); i++) {
		hl_trace_op_text(t, i, buf, sizeof buf);
		(void)hl_trace_op_line(t, i);
		(void)hl_trace_op_size(t, i);
		(void)hl_trace_op_id(t, i);
		char k = hl_trace_op_kind(t, i);
		const char *label = hl_trace_op_label(t, i);
		if (i < hl_trace_ops(t) && !strchr("afrcmtsx", k))
			fuzz_bug(H, "op %zu has kind '%c'", i, k);
		if ((k == 's') != (label != NULL))
			fuzz_bug(H, "op %zu of kind '%c' %s a label", i, k, label ? "has" : "lacks");
	}
}

static bool is_pow2(size_t x) { return x && !(x & (x - 1)); }

static bool replayable(const hl_trace_t *t)
{
	if (t->nops > REPLAY_MAX_OPS || t->nthreads > REPLAY_MAX_THREADS || t->max_id > REPLAY_MAX_IDS)
		return false;
	for (size_t i = 0; i < t->nops; i++) {
		const hl_trace_op_t *op = hl_trace_op_at(t, i);
		size_t n;
		switch (op->kind) {
		case 'f':
			if (op->aux)
				return false; /* a double free, replayed as one */
			break;
		case 'c':
			if (__builtin_mul_overflow(op->aux, op->size, &n) || n > REPLAY_MAX_BYTES)
				return false;
			break;
		case 'm':
			if (!is_pow2(op->aux) || op->aux > REPLAY_MAX_ALIGN || op->size > REPLAY_MAX_BYTES)
				return false;
			break;
		case 'a': case 'r':
			if (op->size > REPLAY_MAX_BYTES)
				return false;
			break;
		}
	}
	return true;
}

/* The parity of the input's length decides whether the heaps run in debug mode. */
static void replay_everywhere(const hl_trace_t *t, bool debug)
{
	hl_replay_opts_t o = { .verify = true, .check_heap = true, .check_every = 1 };
	for (size_t k = 0; k < hl_policy_count(); k++) {
		const char *pol = hl_policy_name(k);
		hl_heap_t *h = hl_heap_new(pol, debug ? "debug:on" : NULL);
		if (!h)
			fuzz_bug(H, "%s: no heap: %s", pol, hl_last_error());
		fuzz_ran(H, "%s%s", pol, debug ? " (debug:on)" : "");
		hl_replay_result_t r;
		if (hl_replay(h, t, &o, &r) != 0)
			fuzz_bug(H, "%s%s: replay failed: %s", pol, debug ? " (debug:on)" : "", r.message);
		hl_heap_destroy(h);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	hl_trace_t *t = hl_trace_parse(NAME, (const char *)data, size);
	if (!t) {
		check_refusal();
		return 0;
	}
	describe_all(t);
	if (replayable(t))
		replay_everywhere(t, size & 1);
	hl_trace_free(t);
	return 0;
}
