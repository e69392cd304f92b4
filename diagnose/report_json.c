/*
 * `heaplab diagnose --json`: every figure of the summary as one JSON object
 * (diagnose.h; the fields are listed in heaplab(1) and checked against
 * the text summary by tests/diagnose/diagnose.sh).  Bytes are whole numbers of
 * bytes, shares are percentages.
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "diagnose.h"

static void key(FILE *out, const char *k) { vis_json_string(out, k); fputc(':', out); }

static void text_or_null(FILE *out, const char *s)
{
	if (s)
		vis_json_string(out, s);
	else
		fputs("null", out);
}

static void layers_json(FILE *out, const dx_layers_t *l)
{
	if (!l->ok) {
		fputs("null", out);
		return;
	}
	fprintf(out, "{\"ms\":%.0f,\"rss\":%zu", l->ms, l->rss);
	for (int k = 0; k < DX_NLAYERS; k++)
		fprintf(out, ",\"%s\":%zu", dx_layer_key((dx_layer_t)k), l->bytes[k]);
	fputc('}', out);
}

static void causes_json(FILE *out, const dx_run_t *base)
{
	bool first = true;
	fputc('[', out);
	for (size_t i = 0; i < base->nsamples; i++) {
		const dx_sample_t *s = &base->samples[i];
		if (!s->attributed)
			continue;
		fprintf(out, "%s{\"op\":%zu,\"ms\":%.0f,\"measured_rss\":%zu,\"committed\":%zu,\"resident\":%zu", first ? "" : ",",
			s->op, s->ms, s->measured_rss, s->committed, s->resident);
		for (int k = 0; k < DX_NCAUSES; k++)
			fprintf(out, ",\"%s\":%zu", dx_cause_key((dx_cause_t)k), s->bytes[k]);
		fputc('}', out);
		first = false;
	}
	fputc(']', out);
}

static void sites_json(FILE *out, const dx_report_t *r)
{
	const dx_run_t *base = r->base;
	fputc('[', out);
	for (size_t k = 0; k < base->nholds; k++) {
		const dx_hold_t *h = &base->holds[k];
		fprintf(out, "%s{\"site\":%u,\"where\":", k ? "," : "", h->site);
		text_or_null(out, h->site && r->sites ? r->sites[h->site] : NULL);
		fprintf(out, ",\"held\":%zu,\"blocks\":%zu,\"block_bytes\":%zu}", h->held, h->blocks, h->block_bytes);
	}
	fputc(']', out);
}

static void candidates_json(FILE *out, const dx_report_t *r)
{
	fputc('[', out);
	for (size_t k = 0; k < r->nruns; k++) {
		size_t i = r->order[k];
		const dx_run_t *w = &r->runs[i];
		fprintf(out, "%s{\"rank\":%zu,\"policy\":", k ? "," : "", k + 1);
		vis_json_string(out, w->policy);
		fputs(",\"conf\":", out);
		vis_json_string(out, w->conf);
		fputs(",\"real_setting\":", out);
		text_or_null(out, r->cands[i].real);
		fprintf(out, ",\"ok\":%s", w->ok ? "true" : "false");
		size_t pp, pf;
		dx_predict(r, w, &pp, &pf);
		if (w->ok)
			fprintf(out, ",\"peak_resident\":%zu,\"final_resident\":%zu,\"peak_committed\":%zu,"
				     "\"final_committed\":%zu,\"os_calls\":%llu,\"predicted_peak_rss\":%zu,"
				     "\"predicted_final_rss\":%zu,\"allocator_own_bytes\":%zu",
				w->peak_resident, w->final_resident, w->peak_committed, w->final_committed, w->os_calls,
				pp, pf, w->own_bytes);
		else
			fprintf(out, ",\"message\":"), vis_json_string(out, w->message);
		fputc('}', out);
	}
	fputc(']', out);
}

/* Opens an object with a run's policy (under @p name) and configuration. */
static void model_json(FILE *out, const char *name, const dx_run_t *run)
{
	fputc('{', out);
	key(out, name);
	vis_json_string(out, run->policy);
	fputs(",\"conf\":", out);
	vis_json_string(out, run->conf);
}

int dx_report_json(FILE *out, const dx_report_t *r)
{
	const dx_run_t *base = r->base;
	double cp, cf;
	size_t mp = 0, mf = 0;
	bool covered = dx_coverage(r, &cp, &cf);
	dx_measured(r, &mp, &mf);
	fputc('{', out);
	key(out, "command");
	text_or_null(out, r->command);
	fprintf(out, ",\"recording\":{\"ops\":%zu,\"block_ids\":%ld,\"sites\":%u,\"rss_samples\":%zu,\"recorded_with\":",
		hl_trace_ops(r->trace), hl_trace_max_id(r->trace), hl_trace_sites(r->trace), hl_trace_samples(r->trace));
	text_or_null(out, r->recorded_with);
	fputs(",\"pace\":", out);
	text_or_null(out, r->pace);
	if (r->pace)
		fprintf(out, ",\"pace_call_ns\":%d", r->pace_call_ns);
	else
		fputs(",\"pace_call_ns\":null", out);
	fputs(",\"draw_live_peaks\":[", out);
	for (unsigned i = 0; i < r->ndraws; i++)
		fprintf(out, "%s%zu", i ? "," : "", r->draw_live_peaks[i]);
	fprintf(out, "],\"draw_picked\":%u,\"ended\":%d,\"others\":", r->draw_picked, r->ended);
	text_or_null(out, r->others && *r->others ? r->others : NULL);
	fputs(",\"sampled\":", out);
	dx_sampling_json(out, r->trace);
	fprintf(out, "},\"measured\":{\"peak_rss\":%zu,\"final_rss\":%zu,\"from\":\"%s\"}", mp, mf,
		r->asis_peak ? "the program run as it is" : "the recording's samples");
	fputs(",\"coverage\":", out);
	if (covered) {
		const dx_run_t *m = dx_covering(r);
		model_json(out, "model", m);
		fprintf(out, ",\"model_peak_resident\":%zu,\"model_final_resident\":%zu,\"peak_percent\":%.1f,"
			     "\"final_percent\":%.1f,\"below_90\":%s}",
			m->peak_resident, m->final_resident, cp, cf, cp < 90.0 ? "true" : "false");
	} else {
		fputs("null", out);
	}
	fputs(",\"layers\":{\"peak\":", out);
	layers_json(out, &r->layers_peak);
	fputs(",\"final\":", out);
	layers_json(out, &r->layers_final);
	fprintf(out, "},\"outside_heap\":%lld,\"outside_cap\":%lld,\"causes\":", dx_outside_heap(r), dx_outside_cap(r));
	causes_json(out, base);
	fputs(",\"sites\":", out);
	sites_json(out, r);
	fputs(",\"candidates\":", out);
	candidates_json(out, r);
	const dx_candidate_t *c;
	const dx_run_t *best = dx_recommended(r, &c);
	fputs(",\"recommendation\":", out);
	if (best) {
		model_json(out, "policy", best);
		fputs(",\"real_setting\":", out);
		text_or_null(out, c->real);
		fputc('}', out);
	} else {
		fputs("null", out);
	}
	fputs("}\n", out);
	return ferror(out) ? -1 : 0;
}
