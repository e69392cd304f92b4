/*
 * Lab 1: half a gigabyte, freed.
 *
 * N nodes of 1 KiB, one byte written into each (so every page is really
 * resident), then nine in ten freed, then the rest, then hl_trim — and the
 * heap's resident bytes after each step, under every compiled-in policy.
 * The quick run (make check) uses 50,000 nodes; --full uses 500,000.  It
 * also prints, by arithmetic, how much of the heap lies in pages no survivor
 * touches with 4 KiB and with 16 KiB pages, and checks bins' trim against it.
 */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../lab.h"

/* CHUNK: glibc's chunk for a 1 KiB request, 1024 + 8 rounded up to 16, the
 * distance between neighbouring nodes under bins (and pools' fallback). */
enum { NODE = 1024, CHUNK = 1040, KEEP_EVERY = 10, STEPS = 6 };

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

/*
 * The arithmetic behind the first hl_trim column: nodes CHUNK bytes apart
 * from a page boundary, one in KEEP_EVERY kept; the share of the heap that
 * lies in pages holding no byte of a survivor.  Those are the only pages a
 * trim can give back while the survivors live.
 */
static double whole_free_share(size_t n, size_t page)
{
	size_t end = n * CHUNK, free_pages = 0;
	for (size_t start = 0; start + page <= end; start += page) {
		size_t first = start / CHUNK, last = (start + page - 1) / CHUNK;
		bool pinned = false;
		for (size_t k = first; k <= last && !pinned; k++)
			pinned = k % KEEP_EVERY == 0;
		free_pages += !pinned;
	}
	return (double)(free_pages * page) / (double)end;
}

static void print_page_arithmetic(size_t n)
{
	printf("arithmetic: a survivor every %d x %d = %d bytes leaves %d free bytes between two;\n", KEEP_EVERY,
	       CHUNK, KEEP_EVERY * CHUNK, (KEEP_EVERY - 1) * CHUNK);
	printf("  with  4 KiB pages, %4.1f%% of the heap is in pages no survivor touches\n",
	       100 * whole_free_share(n, 4096));
	printf("  with 16 KiB pages, %4.1f%% (a page spans %.1f chunks: every one holds a survivor)\n\n",
	       100 * whole_free_share(n, 16384), 16384.0 / CHUNK);
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
static void check(const char *policy, const double m[STEPS], size_t n)
{
	double peak = m[1];
	lab_expect(m[2] >= 0.7 * peak, "%s: free returns nothing from the middle of the heap (%.0f of %.0f MiB stay)", policy, m[2],
		   peak);
	if (!strcmp(policy, "bump"))
		lab_expect(m[5] >= 0.99 * peak, "bump: free and trim give nothing back, even with every node freed");
	if (!strcmp(policy, "firstfit")) {
		lab_expect(m[4] >= 0.9 * peak, "firstfit: every node freed, the pages are kept (retention, not a leak)");
		lab_expect(m[5] <= 0.1 * peak, "firstfit: hl_trim gives them back");
	}
	if (!strcmp(policy, "bins")) {
		double given = 1 - m[3] / m[2], predicted = whole_free_share(n, (size_t)sysconf(_SC_PAGESIZE));
		lab_expect(given > predicted - 0.05 && given < predicted + 0.05,
			   "bins: hl_trim (malloc_trim) gives back the whole free pages between survivors, as the "
			   "arithmetic says for this machine's pages (%.0f%% given, %.0f%% predicted)",
			   100 * given, 100 * predicted);
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
	print_page_arithmetic(n);
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
		check(lab_policies[i], mib, n);
		hl_heap_destroy(h);
		picture(lab_policies[i]);
	}
	return lab_end();
}
