/*
 * The report of `heaplab diagnose` (diagnose.h): sites resolved with
 * addr2line, the text summary, and a self-contained HTML page (the causes
 * as stacked areas, one line per candidate, the sites that hold free
 * memory, the recommendation).  The page carries its figures as data-*
 * attributes, which the browser test compares with the text.
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "diagnose.h"

/* ---- sites ------------------------------------------------------------------- */

static char *site_fallback(const hl_trace_t *t, unsigned s)
{
	const char *module;
	uintptr_t off, a = hl_trace_site(t, s, &module, &off);
	char buf[512];
	if (module) {
		const char *base = strrchr(module, '/');
		snprintf(buf, sizeof buf, "%s+0x%lx", base ? base + 1 : module, (unsigned long)off);
	} else {
		snprintf(buf, sizeof buf, "0x%lx", (unsigned long)a);
	}
	return strdup(buf);
}

/* Appends @p s to @p cmd (of @p len) in single quotes. */
static void put_quoted(char *cmd, size_t len, const char *s)
{
	size_t n = strlen(cmd);
	if (n + 1 < len)
		cmd[n++] = '\'';
	for (; *s && n + 5 < len; s++) {
		if (*s == '\'') {
			memcpy(cmd + n, "'\\''", 4);
			n += 4;
		} else {
			cmd[n++] = *s;
		}
	}
	if (n + 1 < len)
		cmd[n++] = '\'';
	cmd[n] = 0;
}

/* One addr2line per site: "function (file:line)", or NULL. */
static char *addr2line(const char *module, uintptr_t off)
{
	char cmd[8192] = "addr2line -f -C -e ";
	put_quoted(cmd, sizeof cmd, module);
	size_t n = strlen(cmd);
	/* a return address is the instruction after the call: look one byte back */
	snprintf(cmd + n, sizeof cmd - n, " 0x%lx 2>/dev/null", (unsigned long)(off ? off - 1 : 0));
	FILE *p = popen(cmd, "r");
	if (!p)
		return NULL;
	char fn[1024] = "", where[1024] = "";
	bool got = fgets(fn, sizeof fn, p) && fgets(where, sizeof where, p);
	pclose(p);
	fn[strcspn(fn, "\n")] = 0;
	where[strcspn(where, " \n")] = 0;
	if (!got || !strcmp(fn, "??"))
		return NULL;
	const char *file = strrchr(where, '/');
	file = file ? file + 1 : where;
	char out[2200];
	if (!strncmp(file, "??", 2))
		snprintf(out, sizeof out, "%s", fn);
	else
		snprintf(out, sizeof out, "%s (%s)", fn, file);
	return strdup(out);
}

char **dx_sites_resolve(const hl_trace_t *t, const unsigned *want, size_t nwant)
{
	unsigned nsites = hl_trace_sites(t);
	char **what = calloc(nsites + 1, sizeof *what);
	if (!what)
		return NULL;
	for (size_t k = 0; k < nwant; k++) {
		unsigned s = want[k];
		if (s < 1 || s > nsites || what[s])
			continue;
		const char *module;
		uintptr_t off;
		hl_trace_site(t, s, &module, &off);
		what[s] = module ? addr2line(module, off) : NULL;
		if (!what[s])
			what[s] = site_fallback(t, s);
	}
	return what;
}

void dx_sites_free(char **what, const hl_trace_t *t)
{
	if (!what)
		return;
	for (unsigned s = 0; s <= hl_trace_sites(t); s++)
		free(what[s]);
	free(what);
}

static const char *site_name(const dx_report_t *r, unsigned s)
{
	return s && r->sites && r->sites[s] ? r->sites[s] : "an unknown site (the trace has no sites)";
}

/* ---- what the figures say ----------------------------------------------------- */

static const dx_run_t *best_run(const dx_report_t *r, const dx_candidate_t **cand)
{
	for (size_t k = 0; k < r->nruns; k++) {
		size_t i = r->order[k];
		if (r->runs[i].ok && r->cands[i].real) {
			*cand = &r->cands[i];
			return &r->runs[i];
		}
	}
	*cand = NULL;
	return NULL;
}

static double percent(double part, double whole) { return whole > 0 ? 100.0 * part / whole : 0; }

const dx_run_t *dx_recommended(const dx_report_t *r, const dx_candidate_t **cand)
{
	const dx_run_t *best = best_run(r, cand), *base = r->base;
	if (!best || !base->ok || best == base)
		return NULL;
	double now = (double)dx_resident_score(base), then = (double)dx_resident_score(best);
	return then < now * 0.95 ? best : NULL;
}

/* The measured peak and final RSS the model is held against: the program
 * run as it is when the recording ran under another setting, else the
 * recording's own samples. */
bool dx_measured(const dx_report_t *r, size_t *peak, size_t *final)
{
	*peak = *final = 0;
	if (r->asis_peak) {
		*peak = r->asis_peak;
		*final = r->asis_final;
		return true;
	}
	size_t n = hl_trace_samples(r->trace);
	for (size_t k = 0; k < n; k++) {
		size_t bytes;
		hl_trace_sample(r->trace, k, NULL, NULL, &bytes);
		*final = bytes;
		*peak = bytes > *peak ? bytes : *peak;
	}
	return *peak > 0;
}

const dx_run_t *dx_covering(const dx_report_t *r)
{
	return !r->asis_peak && r->recorded ? r->recorded : r->base;
}

bool dx_coverage(const dx_report_t *r, double *peak, double *final)
{
	size_t mp, mf;
	const dx_run_t *m = dx_covering(r);
	*peak = *final = 0;
	if (!m->ok || !dx_measured(r, &mp, &mf))
		return false;
	*peak = percent((double)m->peak_resident, (double)mp);
	*final = percent((double)m->final_resident, (double)mf);
	return true;
}

/* Under this share of the measured peak the summary's first line says
 * that the model sees only part of the process. */
#define DX_COVERED 90.0

/* The first line: what part of the measured RSS the model accounts for. */
static void coverage_line(FILE *out, const dx_report_t *r)
{
	double cp, cf;
	size_t mp, mf;
	char b1[32], b2[32], b3[32], b4[32];
	const dx_run_t *m = dx_covering(r);
	if (!dx_coverage(r, &cp, &cf) || !dx_measured(r, &mp, &mf)) {
		fprintf(out, "coverage: not known (%s)\n",
			m->ok ? "the recording has no RSS samples" : "the replay failed");
		return;
	}
	fprintf(out, "%scoverage: the model (%s%s%s) accounts for %.1f %% of the measured peak RSS (%s of %s; %zu of %zu B) "
		     "and %.1f %% of the final (%s of %s)%s\n",
		cp < DX_COVERED ? "WARNING: " : "", m->policy, *m->conf ? " " : "", m->conf, cp,
		vis_bytes((double)m->peak_resident, b1, sizeof b1), vis_bytes((double)mp, b2, sizeof b2),
		m->peak_resident, mp, cf, vis_bytes((double)m->final_resident, b3, sizeof b3),
		vis_bytes((double)mf, b4, sizeof b4),
		cp < DX_COVERED ? "; under 90 %: the what-if figures and the recommendation below concern that part only"
				: "");
}

/* The process's memory by layer, from smaps: what the model does not hold. */
static void layers_text(FILE *out, const dx_report_t *r)
{
	const dx_layers_t *p = &r->layers_peak, *f = &r->layers_final;
	char b1[32], b2[32];
	if (!p->ok && !f->ok) {
		fprintf(out, "layers: none recorded (a recording made before heaplab read /proc/PID/smaps, or a run that "
			     "did not reach its end)\n");
		return;
	}
	fprintf(out, "layers of the recorded process (/proc/PID/smaps at its largest RSS sample, %.1f s, and at the end):\n"
		     "  %-9s %10s %10s\n",
		p->ms / 1000.0, "layer", "peak", "final");
	for (int k = 0; k < DX_NLAYERS; k++) {
		if (!p->bytes[k] && !f->bytes[k])
			continue;
		fprintf(out, "  %-9s %10s %10s  %s\n", dx_layer_key((dx_layer_t)k), vis_bytes((double)p->bytes[k], b1, sizeof b1),
			vis_bytes((double)f->bytes[k], b2, sizeof b2), dx_layer_words((dx_layer_t)k));
	}
	fprintf(out, "  %-9s %10s %10s\n", "total", vis_bytes((double)dx_layers_total(p), b1, sizeof b1),
		vis_bytes((double)dx_layers_total(f), b2, sizeof b2));
}

/* The recommendation, in one paragraph of plain words. */
static void recommendation(FILE *out, const dx_report_t *r)
{
	const dx_candidate_t *c;
	const dx_run_t *best = best_run(r, &c), *base = r->base;
	char b1[32], b2[32], b3[32], b4[32];
	double cp, cf;
	if (dx_coverage(r, &cp, &cf) && cp < DX_COVERED)
		fprintf(out, "(on a model that accounts for only %.0f %% of the measured peak RSS) ", cp);
	if (!best || !base->ok) {
		fprintf(out, "No candidate with a setting for a real allocator replayed; nothing to recommend.\n");
		return;
	}
	double now = (double)dx_resident_score(base), then = (double)dx_resident_score(best);
	if (!dx_recommended(r, &c)) {
		fprintf(out, "Keep the allocator as it is: no candidate of the grid lowers peak plus final resident heap "
			     "by 5 %% or more (best: %s%s%s, peak %s, final %s resident).\n",
			best->policy, *best->conf ? " " : "", best->conf, vis_bytes((double)best->peak_resident, b1, sizeof b1),
			vis_bytes((double)best->final_resident, b2, sizeof b2));
		return;
	}
	fprintf(out, "Run the program with  %s\n(the model %s%s%s): resident heap at its peak %s instead of %s, "
		     "at the end %s instead of %s (%.0f %% less peak plus final), for %llu kernel calls instead of %llu.\n",
		c->real, best->policy, *best->conf ? " " : "", best->conf,
		vis_bytes((double)best->peak_resident, b1, sizeof b1),
		vis_bytes((double)base->peak_resident, b2, sizeof b2),
		vis_bytes((double)best->final_resident, b3, sizeof b3),
		vis_bytes((double)base->final_resident, b4, sizeof b4), 100 - percent(then, now), best->os_calls,
		base->os_calls);
}

/* The sample whose causes the report details: the last one. */
static const dx_sample_t *last_sample(const dx_run_t *run)
{
	return run->nsamples ? &run->samples[run->nsamples - 1] : NULL;
}

static void measured(FILE *out, const dx_report_t *r)
{
	size_t n = hl_trace_samples(r->trace), peak = 0, first = 0, last = 0;
	unsigned long ms = 0;
	for (size_t k = 0; k < n; k++) {
		size_t bytes;
		hl_trace_sample(r->trace, k, NULL, &ms, &bytes);
		if (!k)
			first = bytes;
		last = bytes;
		if (bytes > peak)
			peak = bytes;
	}
	char b1[32], b2[32], b3[32], b4[32];
	if (!n) {
		fprintf(out, "measured RSS: none recorded (the trace has no #@rss lines)\n");
		return;
	}
	fprintf(out, "measured RSS%s (%zu samples over %.1f s): first %s, peak %s, last %s\n",
		r->recorded_with ? " of the recorded run" : "", n, ms / 1000.0,
		vis_bytes((double)first, b1, sizeof b1), vis_bytes((double)peak, b2, sizeof b2),
		vis_bytes((double)last, b3, sizeof b3));
	const dx_run_t *ran = dx_recorded_model(r);
	const dx_sample_t *s = last_sample(ran);
	if (s && s->measured_rss && (ran != r->base || !r->recorded_with)) {   /* else no model of the recorded run */
		long long diff = (long long)s->measured_rss - (long long)s->resident;
		fprintf(out, "model (%s%s) at the last sample: %s committed, %s resident; the measured RSS is %s %s: %s\n",
			ran->policy, ran != r->base ? ", the allocator the recorded run ran on" : "", vis_bytes((double)s->committed, b4, sizeof b4),
			vis_bytes((double)s->resident, b1, sizeof b1),
			vis_bytes((double)(diff < 0 ? -diff : diff), b2, sizeof b2), diff < 0 ? "less" : "more",
			diff < 0 ? "the model holds more resident heap than the real allocator did"
				 : "the program's code, stacks and other mappings, which the model does not hold");
		long long outside = dx_outside_heap(r), cap = dx_outside_cap(r);
		fprintf(out, "outside the heap (measured RSS minus the model's resident bytes, the median of the samples): "
			     "%s%s",
			outside < 0 ? "-" : "", vis_bytes((double)(outside < 0 ? -outside : outside), b2, sizeof b2));
		if (cap >= 0 && outside == cap)
			fprintf(out, ", no more than smaps puts outside the C allocator (files, libraries, stacks, the "
				     "program's own mappings): the model of the recorded run's allocator held less than "
				     "the allocator did, and that is not passed on");
		fputc('\n', out);
	}
}

static int by_value(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return (x > y) - (x < y);
}

const dx_run_t *dx_recorded_model(const dx_report_t *r)
{
	return r->recorded ? r->recorded : r->base;
}

long long dx_outside_cap(const dx_report_t *r)
{
	static const dx_layer_t outside[] = { DX_L_MMAP, DX_L_STACK, DX_L_EXE, DX_L_ALLOC, DX_L_LIBS, DX_L_FILES,
					      DX_L_OTHER };
	const dx_layers_t *at[2] = { &r->layers_peak, &r->layers_final };
	long long cap = -1;
	for (int i = 0; i < 2; i++) {
		if (!at[i]->ok)
			continue;
		long long sum = 0;
		for (size_t k = 0; k < sizeof outside / sizeof outside[0]; k++)
			sum += (long long)at[i]->bytes[outside[k]];
		if (sum > cap)
			cap = sum;
	}
	return cap;
}

/* @p out no larger than @p cap, where there is one (dx_outside_cap). */
static long long capped(long long out, long long cap)
{
	return cap >= 0 && out > cap ? cap : out;
}

long long dx_outside_heap(const dx_report_t *r)
{
	const dx_run_t *run = dx_recorded_model(r);
	long long *d = run->nsamples ? malloc(run->nsamples * sizeof *d) : NULL;
	long long cap = dx_outside_cap(r);
	size_t n = 0;
	for (size_t k = 0; d && k < run->nsamples; k++)
		if (run->samples[k].measured_rss)
			d[n++] = capped((long long)run->samples[k].measured_rss - (long long)run->samples[k].resident, cap);
	long long median = 0;
	if (n) {
		qsort(d, n, sizeof *d, by_value);
		median = d[n / 2];
	}
	free(d);
	return median;
}

void dx_predict(const dx_report_t *r, const dx_run_t *run, size_t *peak, size_t *final)
{
	const dx_run_t *base = dx_recorded_model(r);
	long long median = dx_outside_heap(r);
	size_t add = median > 0 ? (size_t)median : 0;
	*peak = run->peak_resident + add + run->own_bytes;
	*final = run->final_resident + add + run->own_bytes;
	if (!base)
		return;
	if (base->nsamples != run->nsamples)
		return;
	/* The final: what lay outside the heap at the recording's last sample,
	 * taken at the program's exit after its last frees, when it is more
	 * than the median over the run: memory outside malloc that grew
	 * (cc1's collected pages, git's pack) is there as the program ends,
	 * while code and files mapped during the run do not leave at its
	 * end, so less than the median there is the recorded allocator's
	 * model holding more at the exit than the allocator did (CPython's
	 * teardown on glibc: about 4 MiB), an error not passed on. */
	long long cap = dx_outside_cap(r);
	const dx_sample_t *end = last_sample(base);
	if (end && end->measured_rss) {
		long long out = capped((long long)end->measured_rss - (long long)end->resident, cap);
		if (out > median)
			*final = run->final_resident + (size_t)out + run->own_bytes;
	}
	size_t best = 0;
	for (size_t k = 0; k < run->nsamples; k++) {
		const dx_sample_t *b = &base->samples[k];
		long long out = b->measured_rss ? capped((long long)b->measured_rss - (long long)b->resident, cap) : median;
		size_t sum = run->samples[k].resident + (out > 0 ? (size_t)out : 0);
		if (sum > best)
			best = sum;
	}
	*peak = best + run->own_bytes;
}

static void verify_text(FILE *out, const dx_report_t *r)
{
	const dx_verify_t *v = r->verify;
	char b1[32], b2[32], b3[32], b4[32];
	if (!v)
		return;
	fprintf(out, "\nverify: the program run again without the recorder, %s%s:\n",
		*v->setting ? "under " : "with the allocator as it is", v->setting);
	if (!v->ok) {
		fprintf(out, "  it could not be run or sampled\n");
		return;
	}
	size_t ppeak, pfinal;
	dx_predict(r, v->run, &ppeak, &pfinal);
	double pp = (double)ppeak, pf = (double)pfinal;
	fprintf(out, "  measured RSS:  peak %s, final %s (%zu reads of /proc/PID/statm; exit status %d)\n",
		vis_bytes((double)v->peak, b1, sizeof b1), vis_bytes((double)v->final, b2, sizeof b2), v->samples,
		v->status);
	fprintf(out, "  predicted RSS: peak %s, final %s (model %s%s%s resident + what lay outside the heap, as "
		     "recorded: at each sample for the peak, at the last one or the median for the final, the larger)\n",
		vis_bytes(pp, b3, sizeof b3), vis_bytes(pf, b4, sizeof b4), v->run->policy, *v->run->conf ? " " : "",
		v->run->conf);
	fprintf(out, "  prediction off by %+.0f %% at the peak, %+.0f %% at the end\n",
		v->peak ? 100.0 * (pp - (double)v->peak) / (double)v->peak : 0,
		v->final ? 100.0 * (pf - (double)v->final) / (double)v->final : 0);
	if (v->asis_peak)
		fprintf(out, "  as it is (no setting): measured peak %s, final %s\n",
			vis_bytes((double)v->asis_peak, b1, sizeof b1), vis_bytes((double)v->asis_final, b2, sizeof b2));
}

/* The allocators' own memory at start the predictions add, once each. */
static void own_text(FILE *out, const dx_report_t *r)
{
	char b[32], seen[512] = " ";
	const char *sep = "predicted RSS adds each real allocator's own memory at start, which its model does not hold "
			  "(its library and first metadata: `cat /proc/self/statm` under it, less under glibc, less the "
			  "model's own after one malloc):";
	for (size_t k = 0; k < r->nruns; k++) {
		char path[4096];
		dx_preloaded(r->cands[k].real, path, sizeof path);
		const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
		if (!r->runs[k].own_bytes || !*name || strlen(seen) + strlen(name) + 2 >= sizeof seen)
			continue;
		char key[sizeof seen];
		snprintf(key, sizeof key, " %s ", name);
		if (strstr(seen, key))
			continue;
		strcat(strcat(seen, name), " ");
		fprintf(out, "%s %s %s", sep, name, vis_bytes((double)r->runs[k].own_bytes, b, sizeof b));
		sep = ",";
	}
	if (*sep == ',')
		fputc('\n', out);
}

/* ---- text ----------------------------------------------------------------------- */

void dx_report_text(FILE *out, const dx_report_t *r)
{
	const dx_run_t *base = r->base;
	char b1[32], b2[32], b3[32];
	coverage_line(out, r);
	fprintf(out, "heaplab diagnose: %s\n", r->command ? r->command : hl_trace_ops(r->trace) ? "" : "");
	if (r->ended > 0)
		fprintf(out, "the recorded run %s %d: what follows is what it recorded until then\n",
			r->ended > 128 ? "was ended by signal" : "exited with status", r->ended > 128 ? r->ended - 128 : r->ended);
	fprintf(out, "recording: %zu ops, %ld block ids, %u sites\n", hl_trace_ops(r->trace), hl_trace_max_id(r->trace),
		hl_trace_sites(r->trace));
	dx_sampling_text(out, r->trace, true);
	if (r->others && *r->others)
		fprintf(out, "also recorded, not diagnosed (the largest recording is): %s\n", r->others);
	if (r->pace)
		fprintf(out, "recorded with its timed waits counted in its own time, %s left out%s (HEAPLAB_RECORD_PACE=%s:%d): "
			     "the recorder slows the program, not the clock, and threads that take turns by the clock then "
			     "take them after as much of their work as without the recorder\n",
			!strcmp(r->pace, "allocator") ? "the C allocator's calls and the recorder's work" : "the recorder's work",
			!strcmp(r->pace, "allocator") ? ", each call counted as pymalloc's time here" : "", r->pace,
			r->pace_call_ns);
	if (r->ndraws > 1) {
		/* each recording is one draw of the order the threads take
		 * turns in: how much of their work overlaps shows how far it
		 * moves */
		fprintf(out, "recorded %u times, the threads taking turns in another order each time: most bytes live "
			     "at once", r->ndraws);
		for (unsigned i = 0; i < r->ndraws; i++)
			fprintf(out, "%s%s", i ? (i + 1 == r->ndraws ? " and " : ", ") : " ",
				vis_bytes((double)r->draw_live_peaks[i], b1, sizeof b1));
		static const char *const nth[] = { "first", "second", "third", "fourth", "fifth", "sixth", "seventh",
						    "eighth", "ninth", "tenth", "eleventh", "twelfth", "thirteenth",
						    "fourteenth", "fifteenth" };
		_Static_assert(sizeof nth / sizeof *nth == DX_DRAWS_MAX, "a name for every draw");
		fprintf(out, "; the median one, the %s, is diagnosed\n", nth[r->draw_picked]);
	}
	if (r->recorded_with) {
		fprintf(out, "recorded with %s (so that every allocation goes through malloc, where the recorder sees it); "
			     "the model replays the program as it is; its RSS as it is",
			r->recorded_with);
		if (r->asis_peak)
			fprintf(out, ", measured in a run without the recorder: peak %s, final %s\n",
				vis_bytes((double)r->asis_peak, b1, sizeof b1), vis_bytes((double)r->asis_final, b2, sizeof b2));
		else
			fprintf(out, " was not measured (a recording diagnosed from its file)\n");
	}
	measured(out, r);
	layers_text(out, r);
	if (!base->ok) {
		fprintf(out, "the replay under %s failed: %s\n", base->policy, base->message);
		return;
	}
	const dx_sample_t *s = last_sample(base);
	fprintf(out, "\nwhat holds the heap at the end (model %s%s%s; peak %s, end %s committed):\n", base->policy,
		*base->conf ? " " : "", base->conf, vis_bytes((double)base->peak_committed, b1, sizeof b1),
		vis_bytes((double)s->committed, b2, sizeof b2));
	for (int k = 0; k < DX_NCAUSES; k++)
		if (s->bytes[k])
			fprintf(out, "  %-9s %12zu B %10s %5.1f %%  %s\n", dx_cause_key((dx_cause_t)k), s->bytes[k],
				vis_bytes((double)s->bytes[k], b3, sizeof b3), percent((double)s->bytes[k], (double)s->committed),
				dx_cause_words((dx_cause_t)k));
	fprintf(out, "  %-9s %12zu B %10s\n", "total", s->committed, vis_bytes((double)s->committed, b3, sizeof b3));
	if (base->nholds) {
		const dx_sample_t *h = &base->samples[base->hold_sample];
		fprintf(out, "\nfree memory held by live blocks (at op %zu, the most held):\n", h->op);
		for (size_t k = 0; k < base->nholds && k < 5; k++) {
			const dx_hold_t *d = &base->holds[k];
			fprintf(out, "  %s of free memory held below %zu live blocks (%s) allocated at %s\n",
				vis_bytes((double)d->held, b1, sizeof b1), d->blocks,
				vis_bytes((double)d->block_bytes, b2, sizeof b2), site_name(r, d->site));
		}
	}
	fprintf(out, "\nwhat if (best first by peak plus final resident heap; committed peak for comparison):\n"
		     "  %-4s %-8s %-34s %10s %10s %10s %9s  %s\n",
		"rank", "policy", "configuration", "peak", "final", "committed", "os calls", "real setting");
	for (size_t k = 0; k < r->nruns; k++) {
		size_t i = r->order[k];
		const dx_run_t *w = &r->runs[i];
		if (!w->ok) {
			fprintf(out, "  %-4s %-8s %-34s failed: %s\n", "-", w->policy, w->conf, w->message);
			continue;
		}
		fprintf(out, "  %-4zu %-8s %-34s %10s %10s %10s %9llu  %s\n", k + 1, w->policy,
			*w->conf ? w->conf : "(defaults)", vis_bytes((double)w->peak_resident, b1, sizeof b1),
			vis_bytes((double)w->final_resident, b2, sizeof b2),
			vis_bytes((double)w->peak_committed, b3, sizeof b3), w->os_calls,
			r->cands[i].real ? r->cands[i].real : "(model only)");
	}
	own_text(out, r);
	fprintf(out, "\nrecommendation: ");
	recommendation(out, r);
	verify_text(out, r);
	fprintf(out, "\nThe replay's clock follows the recording's (decay, purge delays, release rates, background "
		     "threads act at the recorded times); the recorder slows the program, so they see the recording's "
		     "time, not the time of a run without it.\n");
}

/* ---- HTML --------------------------------------------------------------------- */

static const char *const cause_colors[DX_NCAUSES] = {
	[DX_LIVE] = "#f4a261", [DX_ROUNDING] = "#e9c46a", [DX_OVERHEAD] = "#adb5bd", [DX_CACHED] = "#8ecae6",
	[DX_FASTBIN] = "#219ebc", [DX_HOLE] = "#d62828", [DX_TOP] = "#2a9d8f", [DX_ARENA] = "#9b5de5",
	[DX_DIRTY] = "#f15bb5", [DX_MUZZY] = "#c9ada7", [DX_RETURNED] = "#e5e5e5",
};

static const char *const line_colors[] = { "#277da1", "#d62828", "#2a9d8f", "#f4a261", "#9b5de5", "#e76f51",
					   "#264653", "#f15bb5", "#43aa8b", "#577590", "#90be6d", "#f9844a" };

static int causes_plot(FILE *out, const dx_run_t *base)
{
	size_t n = base->nsamples;
	double *x = malloc((n ? n : 1) * sizeof *x), *y = malloc((n ? n : 1) * DX_NCAUSES * sizeof *y);
	vis_series_t s[DX_NCAUSES];
	size_t ns = 0;
	int rc = -1;
	if (!x || !y)
		goto out;
	/* only the attributed samples have causes */
	const dx_sample_t **at = malloc((n ? n : 1) * sizeof *at);
	if (!at)
		goto out;
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (base->samples[i].attributed)
			at[m++] = &base->samples[i];
	for (size_t i = 0; i < m; i++)
		x[i] = (double)at[i]->op;
	for (int k = 0; k < DX_NCAUSES; k++) {
		double *v = y + ns * m, peak = 0;
		for (size_t i = 0; i < m; i++) {
			v[i] = (double)at[i]->bytes[k];
			peak = v[i] > peak ? v[i] : peak;
		}
		if (peak > 0)
			s[ns++] = (vis_series_t){ dx_cause_key((dx_cause_t)k), cause_colors[k], v, peak };
	}
	rc = vis_plot_series_svg(out, "causes", x, m, s, ns, true, "What holds the heap (model of the real allocator)",
				 "op of the recording");
	free(at);
out:
	free(x);
	free(y);
	return rc;
}

static int whatif_plot(FILE *out, const dx_report_t *r)
{
	/* every run samples at the same ops: the base's points are the x axis */
	size_t n = r->base->nsamples, ns = 0;
	double *x = malloc((n ? n : 1) * sizeof *x), *y = malloc((n ? n : 1) * (r->nruns + 1) * sizeof *y);
	vis_series_t *s = calloc(r->nruns + 1, sizeof *s);
	char (*names)[200] = calloc(r->nruns + 1, sizeof *names);
	int rc = -1;
	if (!x || !y || !s || !names)
		goto out;
	for (size_t i = 0; i < n; i++)
		x[i] = (double)r->base->samples[i].op;
	for (size_t k = 0; k < r->nruns; k++) {
		const dx_run_t *w = &r->runs[r->order[k]];
		if (!w->ok || w->nsamples != n)
			continue;
		double *v = y + ns * n;
		for (size_t i = 0; i < n; i++)
			v[i] = (double)w->samples[i].resident;
		snprintf(names[ns], sizeof names[ns], "%s %s", w->policy, *w->conf ? w->conf : "(defaults)");
		s[ns] = (vis_series_t){ names[ns], line_colors[ns % (sizeof line_colors / sizeof line_colors[0])], v,
					(double)w->peak_resident };
		ns++;
	}
	bool rss = n && r->base->samples[n - 1].measured_rss;
	if (rss) {
		double *v = y + ns * n, peak = 0;
		for (size_t i = 0; i < n; i++)
			peak = (v[i] = (double)r->base->samples[i].measured_rss) > peak ? v[i] : peak;
		s[ns++] = (vis_series_t){ "measured RSS (the real program)", "#000000", v, peak };
	}
	rc = vis_plot_series_svg(out, "whatif", x, n, s, ns, false, "Resident heap under each candidate",
				 "op of the recording");
out:
	free(x);
	free(y);
	free(s);
	free(names);
	return rc;
}

int dx_report_html(FILE *out, const dx_report_t *r)
{
	const dx_run_t *base = r->base;
	fprintf(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>heaplab diagnose</title>\n"
		     "<style>body{font-family:Helvetica,Arial,sans-serif;max-width:1000px;margin:2em auto;color:#212529}"
		     "pre{background:#f8f9fa;padding:1em;overflow-x:auto;font-size:12px}"
		     "table{border-collapse:collapse}td,th{padding:2px 8px;border-bottom:1px solid #dee2e6;text-align:right}"
		     "td:nth-child(2),td:nth-child(3),td:last-child{text-align:left}</style>\n</head><body>\n"
		     "<h1>heaplab diagnose</h1>\n<p>");
	vis_put_xml(out, r->command ? r->command : "");
	fprintf(out, "</p>\n<h2>Recommendation</h2>\n<p id=\"recommendation\">");
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	if (mem) {
		recommendation(mem, r);
		fclose(mem);
		vis_put_xml(out, text);
	}
	free(text);
	const dx_sample_t *s = last_sample(base);
	fprintf(out, "</p>\n<h2>What holds the heap</h2>\n<div id=\"base\" data-policy=\"%s\" data-peak=\"%zu\" "
		     "data-final=\"%zu\">\n",
		base->policy, base->peak_committed, s ? s->committed : 0);
	if (base->nsamples && causes_plot(out, base) < 0)
		return -1;
	fprintf(out, "</div>\n<h2>What if</h2>\n<table id=\"ranking\"><tr><th>rank</th><th>policy</th><th>configuration</th>"
		     "<th>peak resident</th><th>final resident</th><th>peak committed</th><th>os calls</th>"
		     "<th>real setting</th></tr>\n");
	for (size_t k = 0; k < r->nruns; k++) {
		const dx_run_t *w = &r->runs[r->order[k]];
		const char *real = r->cands[r->order[k]].real;
		fprintf(out, "<tr class=\"run\" data-ok=\"%d\" data-peak=\"%zu\" data-final=\"%zu\" "
			     "data-peak-committed=\"%zu\"><td>%zu</td><td>%s</td><td>",
			w->ok, w->peak_resident, w->final_resident, w->peak_committed, k + 1, w->policy);
		vis_put_xml(out, *w->conf ? w->conf : "(defaults)");
		char bp[32], bf[32], bc[32];   /* the cells in human units; the data-* attributes in bytes */
		fprintf(out, "</td><td>%s</td><td>%s</td><td>%s</td><td>%llu</td><td>",
			vis_bytes((double)w->peak_resident, bp, sizeof bp), vis_bytes((double)w->final_resident, bf, sizeof bf),
			vis_bytes((double)w->peak_committed, bc, sizeof bc), w->os_calls);
		vis_put_xml(out, real ? real : "(model only)");
		fprintf(out, "</td></tr>\n");
	}
	fprintf(out, "</table>\n");
	if (base->nsamples && whatif_plot(out, r) < 0)
		return -1;
	const dx_verify_t *v = r->verify;
	if (v && v->ok) {
		size_t pp, pf;
		dx_predict(r, v->run, &pp, &pf);
		fprintf(out, "<h2>Verified on the real allocator</h2>\n<table id=\"verify\" data-peak=\"%zu\" "
			     "data-final=\"%zu\" data-predicted-peak=\"%zu\" data-predicted-final=\"%zu\">"
			     "<tr><th></th><th>peak RSS</th><th>final RSS</th></tr>\n<tr><td>measured, ",
			v->peak, v->final, pp, pf);
		vis_put_xml(out, *v->setting ? v->setting : "the allocator as it is");
		char b1[32], b2[32];
		fprintf(out, "</td><td>%s</td>", vis_bytes((double)v->peak, b1, sizeof b1));
		fprintf(out, "<td>%s</td></tr>\n<tr><td>predicted (model %s%s%s)</td>", vis_bytes((double)v->final, b2, sizeof b2),
			v->run->policy, *v->run->conf ? " " : "", v->run->conf);
		fprintf(out, "<td>%s</td><td>%s</td></tr>\n", vis_bytes((double)pp, b1, sizeof b1),
			vis_bytes((double)pf, b2, sizeof b2));
		if (v->asis_peak)
			fprintf(out, "<tr><td>measured, as it is</td><td>%s</td><td>%s</td></tr>\n",
				vis_bytes((double)v->asis_peak, b1, sizeof b1), vis_bytes((double)v->asis_final, b2, sizeof b2));
		fprintf(out, "</table>\n");
	}
	fprintf(out, "<h2>Summary</h2>\n<pre>");
	text = NULL;
	mem = open_memstream(&text, &len);
	if (mem) {
		dx_report_text(mem, r);
		fclose(mem);
		vis_put_xml(out, text);
	}
	free(text);
	fprintf(out, "</pre>\n</body></html>\n");
	return ferror(out) ? -1 : 0;
}
