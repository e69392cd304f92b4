/*
 * What if: the candidates a recording is replayed under, and their ranking
 * (diagnose.h).  Each candidate names the setting that makes the *real*
 * allocator do what the model was configured to do, so the report can
 * say what to type.  The built-in grid is every compiled-in policy's own
 * list (hl_policy_whatif: the `whatif` of its table), in the registry's
 * order.
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "diagnose.h"

static bool compiled_in(const char *name)
{
	hl_heap_t *h = hl_heap_new(name, NULL);
	if (!h)
		return false;
	hl_heap_destroy(h);
	return true;
}

static bool listed(const char *list, const char *name)
{
	if (!list)
		return true;
	size_t n = strlen(name);
	for (const char *p = list; *p;) {
		size_t k = strcspn(p, ",");
		if (k == n && !strncmp(p, name, n))
			return true;
		p += k + (p[k] == ',');
	}
	return false;
}

/* Every name of @p list must be a compiled-in policy. */
static int check_names(const char *list)
{
	char name[64];
	for (const char *p = list; p && *p;) {
		size_t k = strcspn(p, ",");
		snprintf(name, sizeof name, "%.*s", (int)(k < sizeof name ? k : sizeof name - 1), p);
		if (!compiled_in(name))
			return -1;      /* hl_heap_new said why */
		p += k + (p[k] == ',');
	}
	return 0;
}

static int add(dx_candidate_t **v, size_t *n, const char *policy, const char *conf, const char *real)
{
	dx_candidate_t *m = realloc(*v, (*n + 1) * sizeof *m);
	if (!m)
		return -1;
	*v = m;
	m[*n] = (dx_candidate_t){ strdup(policy), strdup(conf), real ? strdup(real) : NULL };
	if (!m[*n].policy || !m[*n].conf)
		return -1;
	++*n;
	return 0;
}

/* "POLICY/CONF;POLICY/CONF": each checked by making its heap. */
static int add_knobs(dx_candidate_t **v, size_t *n, const char *knobs)
{
	char *copy = strdup(knobs), *save = NULL;
	if (!copy)
		return -1;
	int rc = 0;
	for (char *item = strtok_r(copy, ";", &save); item && !rc; item = strtok_r(NULL, ";", &save)) {
		char *slash = strchr(item, '/');
		if (!slash) {
			vis_fail("diagnose: bad --knobs item '%s' (expected POLICY/KEY:VALUE,...)", item);
			rc = -1;
			break;
		}
		*slash = 0;
		hl_heap_t *h = hl_heap_new(item, slash + 1);
		if (!h) {
			rc = -1;
			break;
		}
		hl_heap_destroy(h);
		rc = add(v, n, item, slash + 1, NULL);
	}
	free(copy);
	return rc;
}

static dx_candidate_t *grid_failed(dx_candidate_t *v, size_t *n)
{
	dx_grid_free(v, *n);
	*n = 0;
	return NULL;
}

/* Adds the --knobs candidates; NULL when there is none in all. */
static dx_candidate_t *grid_done(dx_candidate_t *v, size_t *n, const char *knobs)
{
	if (knobs && *knobs && add_knobs(&v, n, knobs) < 0)
		return grid_failed(v, n);
	if (!*n) {
		vis_fail("diagnose: no candidate to replay (--policies names none of the grid's)");
		return grid_failed(v, n);
	}
	return v;
}

dx_candidate_t *dx_grid(const char *policies, const char *knobs, const char *bins_base, size_t *n)
{
	*n = 0;
	if (check_names(policies) < 0)
		return NULL;
	dx_candidate_t *v = NULL;
	const char *name, *knob, *real;
	for (size_t p = 0; (name = hl_policy_name(p)); p++)
		for (size_t k = 0; listed(policies, name) && (knob = hl_policy_whatif(name, k, &real)); k++) {
			char conf[256];
			const char *glibc = hl_policy_of_family("glibc");
			bool based = bins_base && *bins_base && glibc && !strcmp(name, glibc);
			snprintf(conf, sizeof conf, "%s%s%s", based ? bins_base : "", based && *knob ? "," : "", knob);
			if (add(&v, n, name, conf, real) < 0)
				return grid_failed(v, n);
		}
	return grid_done(v, n, knobs);
}

/* "a:b,c:d" as pools' fallback_conf wants it: "a=b;c=d". */
static void as_fallback_conf(char *out, size_t len, const char *conf)
{
	snprintf(out, len, "%s", conf);
	for (char *p = out; *p; p++)
		*p = *p == ':' ? '=' : *p == ',' ? ';' : *p;
}

dx_candidate_t *dx_grid_cpython(const char *policies, const char *knobs, const char *bins_base, size_t *n)
{
	size_t m;
	dx_candidate_t *plain = dx_grid(policies, NULL, bins_base, &m), *v = NULL;
	*n = 0;
	if (!plain)
		return NULL;
	const char *front = hl_policy_of_family("pymalloc");
	if (!front) {
		vis_fail("diagnose: a CPython program needs the model of pymalloc (pools), which is not compiled in");
		goto fail;
	}
	/* behind pymalloc first (the program as it is), then alone */
	for (int alone = 0; alone < 2; alone++)
		for (size_t k = 0; k < m; k++) {
			const dx_candidate_t *c = &plain[k];
			if (!c->real || !strcmp(c->policy, front))
				continue;      /* model-only rows stay out: twice the grid already */
			bool as_is = !strncmp(c->real, "the default", 11);
			char conf[400], fb[256], real[400];
			if (!alone) {
				as_fallback_conf(fb, sizeof fb, c->conf);
				snprintf(conf, sizeof conf, "fallback:%s%s%s", c->policy, *fb ? ",fallback_conf:" : "", fb);
				snprintf(real, sizeof real, "%s", as_is ? "the default (CPython as it is: pymalloc on glibc malloc)"
									: c->real);
				if (add(&v, n, front, conf, real) < 0)
					goto fail;
			} else {
				snprintf(real, sizeof real, "PYTHONMALLOC=malloc%s%s", as_is ? "" : " ", as_is ? "" : c->real);
				if (add(&v, n, c->policy, c->conf, real) < 0)
					goto fail;
			}
		}
	dx_grid_free(plain, m);
	return grid_done(v, n, knobs);
fail:
	dx_grid_free(plain, m);
	return grid_failed(v, n);
}

void dx_grid_free(dx_candidate_t *c, size_t n)
{
	for (size_t k = 0; c && k < n; k++) {
		free((char *)c[k].policy);
		free((char *)c[k].conf);
		free((char *)c[k].real);
	}
	free(c);
}

static const dx_run_t *rank_runs;

/* Best first: a run that held before one that failed; then the smaller
 * peak plus final resident bytes (what the RSS of the program would show:
 * pages purged with MADV_DONTNEED or MADV_FREE stay committed but leave
 * the resident set, so committed bytes would hide what decay and purging
 * give back); then the smaller peak plus final committed; then fewer
 * kernel calls. */
static int better(const void *a, const void *b)
{
	const dx_run_t *x = &rank_runs[*(const size_t *)a], *y = &rank_runs[*(const size_t *)b];
	if (x->ok != y->ok)
		return x->ok ? -1 : 1;
	size_t rx = dx_resident_score(x), ry = dx_resident_score(y);
	if (rx != ry)
		return rx < ry ? -1 : 1;
	size_t cx = x->peak_committed + x->final_committed, cy = y->peak_committed + y->final_committed;
	if (cx != cy)
		return cx < cy ? -1 : 1;
	if (x->os_calls != y->os_calls)
		return x->os_calls < y->os_calls ? -1 : 1;
	return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

size_t dx_resident_score(const dx_run_t *run)
{
	return run->peak_resident + run->final_resident;
}

void dx_rank(const dx_run_t *runs, size_t n, size_t *order)
{
	for (size_t k = 0; k < n; k++)
		order[k] = k;
	rank_runs = runs;
	qsort(order, n, sizeof *order, better);
	rank_runs = NULL;
}

void dx_preloaded(const char *setting, char *path, size_t len)
{
	const char *p = setting ? strstr(setting, "LD_PRELOAD=") : NULL;
	if (p && p != setting && p[-1] != ' ')
		p = NULL;
	if (!p) {
		*path = 0;
		return;
	}
	p += strlen("LD_PRELOAD=");
	snprintf(path, len, "%.*s", (int)strcspn(p, " "), p);
}
