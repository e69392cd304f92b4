/*
 * A sampled recording diagnosed (recorder.h: hl_rec_sample_blocks; the
 * rates: trace/sample.c).  The recording keeps one new block of the
 * program's in K with all its ops, so the model's heap after a replayed op
 * holds about 1/K of what the program's did, plus what the model holds of
 * itself from the start (its first arena, its metadata), which sampling
 * does not shrink.  A sample of the replay is scaled back by
 *
 *     program's bytes = started + (model's bytes - started) * K
 *
 * with K the rate the heap then stands for.  The error this makes is
 * measured against the replay of the whole recording on the corpus of
 * bench/accuracy (bench/sampling/error.py, bench/SAMPLING.md); the
 * report states the bound measured at the rate, or says the rate is past
 * the rates measured.
 */
#include "config.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "diagnose.h"
#include "error.h"

size_t dx_scaled(unsigned long k, size_t started, size_t bytes)
{
	if (k <= 1 || bytes <= started)
		return bytes;
	return started + (bytes - started) * k;
}

/* The largest error of the predicted peak and final RSS against the
 * replay of the whole recording, over the corpus and the four models, at
 * each rate measured (bench/SAMPLING.md: these are its "worst" row's
 * figures; remade by bench/sampling/error.py). */
static const dx_sample_error_t measured_errors[] = {
	{ 8, 0.640, 0.737 },
	{ 64, 2.033, 2.016 },
};

/* The corpus's programs the bound is over made this many ops or more
 * (error.py's MANY_OPS): one of a few hundred keeps a few dozen blocks. */
enum { BOUND_OPS = 100000 };

const dx_sample_error_t *dx_sample_error(unsigned long k)
{
	for (size_t i = 0; i < sizeof measured_errors / sizeof measured_errors[0]; i++)
		if (k <= measured_errors[i].rate)
			return &measured_errors[i];
	return NULL;
}

bool dx_sampling(const hl_trace_t *t, dx_sampling_t *s)
{
	memset(s, 0, sizeof *s);
	size_t n = hl_trace_rates(t);
	s->first = 1;
	hl_trace_rate(t, 0, NULL, &s->first);
	s->last = s->first;
	hl_trace_rate(t, n ? n - 1 : 0, NULL, &s->last);
	s->rates = n;
	s->program_ops = hl_trace_program_ops(t);
	s->replayed = hl_trace_thinned(t, &s->ops_read);
	if (!s->replayed) {
		s->replayed = s->last;
		s->ops_read = hl_trace_ops(t);
	}
	unsigned long long program = s->program_ops ? s->program_ops : (unsigned long long)hl_trace_ops(t) * s->replayed;
	s->too_short = program < BOUND_OPS;
	s->error = s->too_short ? NULL : dx_sample_error(s->replayed);
	return s->replayed > 1;
}

void dx_sampling_text(FILE *out, const hl_trace_t *t, bool scaled)
{
	dx_sampling_t s;
	if (!dx_sampling(t, &s))
		return;
	if (s.last > 1) {
		fprintf(out, "sampled: recorded 1 block in %lu", s.first);
		if (s.last != s.first)
			fprintf(out, " at the start, 1 in %lu at the end (the rate halved %zu times to stay in the budget)",
				s.last, s.rates - 1);
		fprintf(out, ", every op of a kept block kept");
		if (s.program_ops)
			fprintf(out, ": %zu of the program's %llu ops", s.ops_read, s.program_ops);
		fputc('\n', out);
	}
	if (s.replayed != s.first || s.last == 1)
		fprintf(out, "sampled: replayed 1 block in %lu of the program's: %zu of the recording's %zu ops\n", s.replayed,
			hl_trace_ops(t), s.ops_read);
	if (scaled)
		fprintf(out, "each model's heap is scaled back by %lu (what the model holds from the start aside)\n",
			s.replayed);
	else
		fprintf(out, "the figures above are the sample's own, not scaled back by %lu (heaplab diagnose scales them)\n",
			s.replayed);
	if (s.error)
		fprintf(out, "sampling error measured at 1 in %lu against the whole recording's replay on "
			     "bench/accuracy's corpus (bench/SAMPLING.md): peak within %.0f %%, final within %.0f %%; a "
			     "model's thresholds in bytes are not scaled, so a heap that stays near one (glibc's trim "
			     "threshold) can be off by more\n",
			s.error->rate, s.error->peak * 100.0, s.error->final * 100.0);
	else if (s.too_short)
		fprintf(out, "sampling error: not bounded for a program of fewer than %d ops (bench/SAMPLING.md: a few "
			     "dozen blocks kept can be off by several times)\n", BOUND_OPS);
	else
		fprintf(out, "sampling error: not measured past 1 in %lu (bench/SAMPLING.md); expect more than there\n",
			measured_errors[sizeof measured_errors / sizeof measured_errors[0] - 1].rate);
}

void dx_sampling_json(FILE *out, const hl_trace_t *t)
{
	dx_sampling_t s;
	if (!dx_sampling(t, &s)) {
		fputs("null", out);
		return;
	}
	fprintf(out, "{\"rate_first\":%lu,\"rate_last\":%lu,\"halvings\":%zu,\"rate_replayed\":%lu,\"ops_recorded\":%zu,"
		     "\"ops_replayed\":%zu,\"program_ops\":%llu,\"error\":",
		s.first, s.last, s.rates ? s.rates - 1 : 0, s.replayed, s.ops_read, hl_trace_ops(t), s.program_ops);
	if (s.error)
		fprintf(out, "{\"measured_at\":%lu,\"peak\":%.3f,\"final\":%.3f}}", s.error->rate, s.error->peak,
			s.error->final);
	else
		fputs("null}", out);
}

int dx_sample_options(const char *rate, const char *max, bool recorded)
{
	struct {
		const char *text, *var, *what;
	} opt[] = { { rate, recorded ? "HEAPLAB_TRACE_SAMPLE" : "HEAPLAB_RECORD_SAMPLE", "--sample" },
		    { max, "HEAPLAB_RECORD_MAX", "--record-max" } };
	if (max && recorded) {
		hl_set_error("--record-max is for recording: give the command, not --trace");
		return -1;
	}
	for (size_t i = 0; i < 2; i++) {
		if (!opt[i].text)
			continue;
		char *end;
		errno = 0;
		unsigned long long v = strtoull(opt[i].text, &end, 10);
		if (*opt[i].text < '0' || *opt[i].text > '9' || *end || errno || !v || (i == 0 && v > 1ul << 30)) {
			hl_set_error("bad %s '%s' (%s)", opt[i].what, opt[i].text,
				     i == 0 ? "one block in K: 1 to 1073741824" : "bytes, 1 or more");
			return -1;
		}
		setenv(opt[i].var, opt[i].text, 1);
	}
	return 0;
}
