/*
 * --verify (diagnose.h, "The diagnosis"): the prediction checked against
 * the program itself, run twice more without the recorder, under the
 * recommended setting and as it is (measure.c).
 */
#include "config.h"
#include <string.h>
#include "diagnose.h"

/* Is @p setting a list of VAR=VALUE words (what a shell would take)? */
static bool is_setting(const char *setting)
{
	for (const char *p = setting; *p;) {
		p += strspn(p, " ");
		size_t k = strcspn(p, " "), name = strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_");
		if (k && (name == 0 || p[name] != '='))
			return false;
		p += k;
	}
	return true;
}

void dx_verify(char **argv, const dx_report_t *r, const dx_program_opts_t *o, dx_verify_t *v)
{
	const dx_candidate_t *cand;
	const dx_run_t *best = dx_recommended(r, &cand);
	memset(v, 0, sizeof *v);
	v->run = r->base;
	if (best && is_setting(cand->real)) {
		snprintf(v->setting, sizeof v->setting, "%s", cand->real);
		v->run = best;
	}
	if (o->notes)
		fprintf(o->notes, "heaplab diagnose: verifying: running %s %s...\n", argv[0],
			*v->setting ? v->setting : "as it is");
	dx_measured_t m, asis;
	v->ok = dx_run_measured(argv, v->setting, false, o, &m) == 0 && m.samples;
	v->status = m.status;
	v->samples = m.samples;
	v->peak = m.peak;
	v->final = m.final;
	if (v->ok && *v->setting) {
		if (o->notes)
			fprintf(o->notes, "heaplab diagnose: verifying: running %s as it is ...\n", argv[0]);
		if (dx_run_measured(argv, "", false, o, &asis) == 0) {
			v->asis_peak = asis.peak;
			v->asis_final = asis.final;
		}
	}
}
