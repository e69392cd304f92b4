/*
 * Lab 6: the heap that will not shrink.
 *
 * 8 MiB of 1 KiB blocks on the program break, then — or not — one small
 * block allocated after them, at the top of the heap.  Everything else is
 * freed.  Without the pin, the free space merges into the top and free
 * trims the break.  With it, the free space sits *below* a live block, and
 * a break can only move at its end: free gives nothing back.  hl_trim
 * (malloc_trim) is then the only way out, and only if the policy purges
 * free pages in the middle of the heap, as glibc's does.
 */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include "../lab.h"

enum { BLOCK = 1024, TOTAL = 8 << 20 };

typedef struct figures {
	double peak, freed, trimmed; /* MiB: all allocated, rest freed, after hl_trim */
} figures_t;

static void experiment(const char *policy, const char *conf, bool pin, figures_t *f)
{
	hl_heap_t *h = lab_heap(policy, conf);
	size_t n = TOTAL / BLOCK;
	char **p = calloc(n, sizeof *p);
	for (size_t i = 0; i < n; i++) {
		p[i] = hl_malloc(h, BLOCK);
		p[i][0] = 1;
	}
	char *top = pin ? hl_malloc(h, 16) : NULL;
	f->peak = lab_resident_mib(h);
	for (size_t i = 0; i < n; i++)
		hl_free(h, p[i]);
	f->freed = lab_resident_mib(h);
	char name[64];
	snprintf(name, sizeof name, "%s-%s", policy, pin ? "pinned" : "unpinned");
	lab_snapshot(h, name, pin ? "everything freed but the pin at the top" : "everything freed");
	hl_trim(h, 0);
	f->trimmed = lab_resident_mib(h);
	hl_free(h, top);
	hl_heap_destroy(h);
	free(p);
	printf("%-9s %-9s %10.1f %10.1f %10.1f\n", policy, pin ? "pinned" : "no pin", f->peak, f->freed, f->trimmed);
}

int main(int argc, char **argv)
{
	lab_begin(argc, argv, "Lab 6: the heap that will not shrink");
	printf("resident MiB: %d KiB blocks, %d MiB in all\n%-9s %-9s %10s %10s %10s\n", BLOCK / 1024, TOTAL >> 20,
	       "policy", "top", "allocated", "freed", "hl_trim");
	figures_t f, g;
	if (lab_has("bins")) {
		experiment("bins", NULL, false, &f);
		experiment("bins", NULL, true, &g);
		lab_expect(f.freed < 0.1 * f.peak, "bins: with nothing above it, the free space is trimmed on free");
		lab_expect(g.freed > 0.9 * g.peak, "bins: one live block at the top pins all %.0f MiB below it", g.peak);
		lab_expect(g.trimmed < 0.2 * g.peak, "bins: hl_trim purges the free pages below the pin (%.1f MiB left)",
			   g.trimmed);
	}
	if (lab_has("firstfit")) {
		experiment("firstfit", "trim_threshold:128K", false, &f);
		experiment("firstfit", "trim_threshold:128K", true, &g);
		lab_expect(f.freed < 0.1 * f.peak, "firstfit (trim_threshold:128K): the break comes down on free");
		lab_expect(g.freed > 0.9 * g.peak && g.trimmed > 0.9 * g.peak,
			   "firstfit: a break moves only at its end, so with the pin neither free nor hl_trim gives back");
	}
	return lab_end();
}
