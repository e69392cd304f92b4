/*
 * The diagnosis of a recording (diagnose.h, "The diagnosis"): the
 * attribution, every candidate of the grid and the recorded run's own
 * allocator replayed side by side (parallel.c), the real allocators' own
 * memory added (allocator_own.c), the ranking (whatif.c) and the sites
 * that hold the most resolved (report.c): the report, ready to write.
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "diagnose.h"

/* How many sites of the attribution's holds the report names. */
enum { SITES_NAMED = 8 };

/* Replays the attribution, the candidates and (with @p recorded) the
 * recorded run's allocator into @p d; 0, or 2 with hl_last_error(). */
static int replay_all(const hl_trace_t *t, const dx_diagnose_opts_t *o, bool cpython, bool recorded, dx_diagnosis_t *d)
{
	/* the attribution (the allocator the program runs on as it is), every
	 * candidate and the recorded run's allocator, side by side */
	const char *glibc = hl_policy_of_family("glibc");
	dx_candidate_t *all = calloc(d->n + 1, sizeof *all);
	dx_run_t *done = calloc(d->n + 1, sizeof *done);
	if (!all || !done) {
		free(all);
		free(done);
		return vis_fail("diagnose: out of memory");
	}
	memcpy(all, d->cands, d->n * sizeof *all);
	all[d->n] = (dx_candidate_t){ glibc, o->model, NULL };
	dx_candidate_t as_is = { cpython ? d->cands[0].policy : glibc, cpython ? d->cands[0].conf : o->model, NULL };
	int rc = 0;
	if (dx_replay_many(t, &as_is, &d->base, all, d->n + recorded, done, o->jobs, o->progress) != 0) {
		for (size_t k = 0; k < d->n + 1; k++)
			dx_run_free(&done[k]);
		rc = vis_fail("diagnose: %s", hl_last_error());
	} else {
		memcpy(d->runs, done, d->n * sizeof *done);
		if (recorded)
			d->recorded = done[d->n];
	}
	free(all);
	free(done);
	if (o->progress)
		o->progress("replaying", d->n, d->n);   /* the progress line cleared */
	return rc;
}

int dx_diagnose(const dx_recorded_t *rec, const char *command, const dx_diagnose_opts_t *o, dx_diagnosis_t *d)
{
	memset(d, 0, sizeof *d);
	const hl_trace_t *t = rec->trace;
	d->cands = rec->cpython ? dx_grid_cpython(o->policies, o->knobs, o->model, &d->n)
				: dx_grid(o->policies, o->knobs, o->model, &d->n);
	if (!d->cands)
		return 2;
	d->runs = calloc(d->n, sizeof *d->runs);
	d->order = calloc(d->n, sizeof *d->order);
	if (!d->runs || !d->order)
		return vis_fail("diagnose: out of memory");
	/* CPython recorded with PYTHONMALLOC=malloc ran on the C library's
	 * malloc, not on pymalloc: what lay outside the heap is the measured
	 * RSS less that allocator's model (pools would leave glibc's headers
	 * and rounding of every small object in it, about 12 % of the peak of
	 * a program of small objects) */
	bool recorded = rec->cpython && hl_trace_samples(t);
	if (replay_all(t, o, rec->cpython, recorded, d) != 0)
		return 2;
	dx_allocators_own(d->cands, d->runs, d->n, o->model);
	dx_rank(d->runs, d->n, d->order);
	unsigned want[SITES_NAMED];
	size_t nwant = 0;
	for (size_t k = 0; k < d->base.nholds && nwant < SITES_NAMED; k++)
		want[nwant++] = d->base.holds[k].site;
	d->report = (dx_report_t){
		.trace = t, .command = command, .base = &d->base, .runs = d->runs, .cands = d->cands,
		.order = d->order, .nruns = d->n, .sites = dx_sites_resolve(t, want, nwant),
		.recorded_with = rec->recorded_with, .asis_peak = rec->asis_peak, .asis_final = rec->asis_final,
		.ended = rec->ended, .others = rec->others, .recorded = recorded && d->recorded.ok ? &d->recorded : NULL,
		.pace = rec->pace, .pace_call_ns = rec->pace_call_ns, .ndraws = rec->ndraws, .draw_picked = rec->draw_picked,
		.draw_live_peaks = rec->draw_live_peaks,
	};
	dx_layers_read(t, &d->report.layers_peak, &d->report.layers_final);
	return 0;
}

void dx_diagnosis_free(dx_diagnosis_t *d)
{
	dx_sites_free(d->report.sites, d->report.trace);
	dx_run_free(&d->base);
	dx_run_free(&d->recorded);
	for (size_t k = 0; d->runs && k < d->n; k++)
		dx_run_free(&d->runs[k]);
	free(d->runs);
	free(d->order);
	if (d->cands)
		dx_grid_free(d->cands, d->n);
	memset(d, 0, sizeof *d);
}
