/*
 * Lab 1: half a gigabyte, freed.
 *
 * N nodes of 1 KiB, one byte written into each (so every page is really
 * resident), then nine in ten freed, then the rest, then hl_trim — and the
 * heap's resident bytes after each step, under every compiled-in policy.
 * The quick run (make check) uses 50,000 nodes; --full uses 500,000.
 */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../lab.h"

enum { NODE = 1024, STEPS = 6 };

static const char *const step_names[STEPS] = {
	"start", "allocated", "90% freed", "hl_trim", "all freed", "hl_trim",
};

/* Resident MiB after each step for one policy. */
static void experiment(hl_heap_t *h, size_t n, double mib[STEPS])
{
	char **p = calloc(n, sizeof *p);
	mib[0] = lab_resident_mib(h);
	for (size_t i = 0; i < n; i++) {
		p[i] = hl_malloc(h, NODE);
		p[i][0] = 1;
	}
	mib[1] = lab_resident_mib(h);
	for (size_t i = 0; i < n; i++)
		if (i % 10) {
			hl_free(h, p[i]);
			p[i] = NULL;
		}
	mib[2] = lab_resident_mib(h);
	hl_trim(h, 0);
	mib[3] = lab_resident_mib(h);
	for (size_t i = 0; i < n; i++)
		hl_free(h, p[i]);
	mib[4] = lab_resident_mib(h);
	hl_trim(h, 0);
	mib[5] = lab_resident_mib(h);
	free(p);
}

/* The picture: the same pattern on 2,000 nodes, small enough to draw. */
static void picture(const char *policy)
{
	enum { SMALL = 2000 };
	static char *p[SMALL];
	hl_heap_t *h = lab_heap(policy, NULL);
	for (size_t i = 0; i < SMALL; i++)
		p[i] = hl_malloc(h, NODE);
	for (size_t i = 0; i < SMALL; i++)
		if (i % 10)
			hl_free(h, p[i]);
	lab_snapshot(h, policy, "2,000 nodes, 90% freed: one survivor in ten");
	hl_heap_destroy(h);
}

static void print_row(const char *policy, const double mib[STEPS])
{
	printf("%-9s", policy);
	for (int s = 0; s < STEPS; s++)
		printf(" %12.1f", mib[s]);
	printf("\n");
}

/* The claims of the lab, on one policy's figures. */
static void check(const char *policy, const double m[STEPS])
{
	double peak = m[1];
	lab_expect(m[2] >= 0.7 * peak, "%s: one survivor in ten pins the pages (%.0f of %.0f MiB stay)", policy, m[2],
		   peak);
	if (!strcmp(policy, "bump"))
		lab_expect(m[5] >= 0.99 * peak, "bump: free and trim give nothing back, even with every node freed");
	if (!strcmp(policy, "firstfit")) {
		lab_expect(m[4] >= 0.9 * peak, "firstfit: every node freed, the pages are kept (retention, not a leak)");
		lab_expect(m[5] <= 0.1 * peak, "firstfit: hl_trim gives them back");
	}
	if (!strcmp(policy, "bins")) {
		lab_expect(m[3] <= 0.8 * m[2], "bins: hl_trim (malloc_trim) purges the whole free pages between survivors");
		lab_expect(m[4] <= 0.1 * peak, "bins: the last free merges everything into top, and free trims it");
	}
	if (!strcmp(policy, "slab"))
		lab_expect(m[4] >= 0.7 * m[3] && m[5] <= 0.1 * peak,
			   "slab: freed pages wait for their decay (10 s), hl_trim purges them now");
}

int main(int argc, char **argv)
{
	lab_begin(argc, argv, "Lab 1: half a gigabyte, freed");
	size_t n = lab_full() ? 500000 : 50000;
	printf("%zu nodes of %d bytes; resident MiB of the heap after each step\n\n", n, NODE);
	printf("%-9s", "policy");
	for (int s = 0; s < STEPS; s++)
		printf(" %12.12s", step_names[s]);
	printf("\n");
	for (int i = 0; lab_policies[i]; i++) {
		hl_heap_t *h = lab_heap(lab_policies[i], NULL);
		if (!h)
			continue;
		double mib[STEPS];
		experiment(h, n, mib);
		print_row(lab_policies[i], mib);
		check(lab_policies[i], mib);
		hl_heap_destroy(h);
		picture(lab_policies[i]);
	}
	return lab_end();
}
