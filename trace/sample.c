/*
 * A sampled recording's rates (trace.h: "#@sample 1/K", "#@sampled N";
 * recorder.h: hl_rec_sample_blocks): which rate a moment of the trace was
 * recorded at, for a replay that scales its heap back to the program's.
 *
 * A recording whose rate halved (HEAPLAB_RECORD_MAX) is made one rate,
 * its last, when it is read (hl_trace_thin), and any recording one rate
 * lower, HEAPLAB_TRACE_SAMPLE=K's (heaplab diagnose --sample=K --trace:
 * bench/sampling/error.py derives its samples from whole recordings so): each block made while the
 * rate was K is kept, with all its ops, with the chance K/LAST, by a hash
 * of its op's place, and the rest are dropped from the ops; the samples,
 * stamps and rate lines are renumbered to the ops kept.  A heap sampled at
 * two rates is no model's heap scaled down: the free memory the denser
 * past left in it would be scaled by the later rate.
 */
#include "config.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "bits.h"
#include "error.h"
#include "trace.h"

size_t hl_trace_rates(const hl_trace_t *t) { return t->nrates; }

bool hl_trace_rate(const hl_trace_t *t, size_t k, size_t *ops_before, unsigned long *rate)
{
	if (k >= t->nrates)
		return false;
	if (ops_before)
		*ops_before = t->rates[k].ops_before;
	if (rate)
		*rate = t->rates[k].k;
	return true;
}

/* The last line before op @p n: the frees that thin the heap when the
 * rate halves come after their line, so the heap after op n - 1 stands
 * for the program's at the rate of a line written before that op. */
unsigned long hl_trace_rate_at(const hl_trace_t *t, size_t n)
{
	if (t->thinned_to)
		return t->thinned_to;
	if (!t->nrates)
		return 1;
	size_t lo = 0, hi = t->nrates;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->rates[mid].ops_before < n)
			lo = mid + 1;
		else
			hi = mid;
	}
	return t->rates[lo ? lo - 1 : 0].k;
}

unsigned long long hl_trace_program_ops(const hl_trace_t *t) { return t->program_ops; }
unsigned long hl_trace_thinned(const hl_trace_t *t, size_t *ops_read)
{
	if (ops_read)
		*ops_read = t->ops_read;
	return t->thinned_to;
}

/* ---- one rate throughout ---------------------------------------------------- */

/* The ops of a spilled trace go back to its file through this many at a
 * time. */
enum { THIN_OUT = 4096 };

typedef struct thin {
	hl_trace_t *t;
	size_t w;                 /* ops kept so far: the next one's place */
	hl_trace_op_t out[THIN_OUT];
	size_t nout;
} thin_t;

static int thin_flush(thin_t *th)
{
	const char *b = (const char *)th->out;
	size_t left = th->nout * sizeof *th->out;
	off_t at = (off_t)((th->w - th->nout) * sizeof *th->out);
	while (left) {
		ssize_t n = pwrite(th->t->spill_fd, b, left, at);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			hl_set_error("%s: the temporary file of its ops cannot be written: %s", th->t->path,
				     n < 0 ? strerror(errno) : "the disk is full");
			return -1;
		}
		b += n;
		left -= (size_t)n;
		at += n;
	}
	th->nout = 0;
	return 0;
}

static int keep_op(thin_t *th, const hl_trace_op_t *op)
{
	hl_trace_t *t = th->t;
	if (t->spill_fd < 0) {
		t->ops[th->w++] = *op;   /* in place: the place is never after the op's */
		return 0;
	}
	th->out[th->nout++] = *op;
	th->w++;
	return th->nout == THIN_OUT ? thin_flush(th) : 0;
}

/* The entries of @p n of an array of @p size-byte entries whose first
 * field is an op index that name op @p i (they are in order, from *at on)
 * now name op @p to. */
static void renumber(void *arr, size_t n, size_t size, size_t *at, size_t i, size_t to)
{
	for (; *at < n; ++*at) {
		size_t *op = (size_t *)((char *)arr + *at * size);
		if (*op != i)
			break;
		*op = to;
	}
}

int hl_trace_thin(hl_trace_t *t, unsigned long target, uint64_t seed)
{
	unsigned long first = t->nrates ? t->rates[0].k : 1, last = t->nrates ? t->rates[t->nrates - 1].k : 1;
	if (target > last)
		last = target;
	if (last == first)
		return 0;
	unsigned char *dropped = calloc((size_t)t->max_id + 1, 1);
	thin_t *th = calloc(1, sizeof *th);
	if (!dropped || !th) {
		free(dropped);
		free(th);
		hl_set_error("%s: out of memory", t->path);
		return -1;
	}
	th->t = t;
	size_t rss = 0, times = 0, rates = 0, touched = 0, kept_touched = 0, rate_line = 0;
	int rc = 0;
	t->counted = 0;
	for (size_t i = 0; i < t->nops && rc == 0; i++) {
		renumber(t->rss, t->nrss, sizeof *t->rss, &rss, i, th->w);
		renumber(t->times, t->ntimes, sizeof *t->times, &times, i, th->w);
		while (t->nrates && rate_line + 1 < t->nrates && t->rates[rate_line + 1].ops_before <= i)
			rate_line++;
		renumber(t->rates, t->nrates, sizeof *t->rates, &rates, i, th->w);
		const hl_trace_op_t *op = hl_trace_op_at(t, i);
		bool keep = true;
		if (strchr("acm", op->kind)) {
			/* made while the rate was k: kept with the chance k/last */
			unsigned long k = t->nrates ? t->rates[rate_line].k : 1, odds = k < last ? last / k : 1;
			dropped[op->id] = hl_mix64(seed ^ hl_mix64(i)) % odds != 0;
			keep = !dropped[op->id];
		} else if ((op->kind == 'f' || op->kind == 'r') && op->id >= 0) {
			keep = !dropped[op->id];
		}
		for (; touched < t->ntouched && t->touched[touched].op == i; touched++)
			if (keep)
				t->touched[kept_touched++] = (hl_trace_touched_t){ th->w, t->touched[touched].pages };
		if (keep) {
			t->counted += !strchr("tsx", op->kind);
			rc = keep_op(th, op);
		}
	}
	renumber(t->rss, t->nrss, sizeof *t->rss, &rss, t->nops, th->w);
	renumber(t->times, t->ntimes, sizeof *t->times, &times, t->nops, th->w);
	renumber(t->rates, t->nrates, sizeof *t->rates, &rates, t->nops, th->w);
	if (rc == 0 && t->spill_fd >= 0 && th->nout)
		rc = thin_flush(th);
	if (rc == 0) {
		t->ntouched = kept_touched;
		t->nops = th->w;
		t->thinned_to = last;
		t->win_lo = 0;          /* the window: reloaded from the file at the next op asked for */
		t->win_n = t->spill_fd >= 0 ? 0 : t->nops;
	}
	free(dropped);
	free(th);
	return rc;
}
