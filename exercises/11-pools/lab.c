/*
 * Lab 11: pools — pinning an arena with one object, and the 512-byte cliff.
 *
 * pools models CPython's pymalloc: requests up to 512 bytes come from
 * 16 KiB pools carved out of 1 MiB arenas; an arena goes back to the
 * kernel only when every pool in it is empty.  Part 1 fills eight arenas
 * with 64-byte objects and frees all of them but one per arena: nothing
 * goes back.  The same number of survivors packed into one arena lets the
 * other seven go.  Part 2 walks across 512 bytes: one byte more and the
 * request leaves pymalloc for the fallback allocator (libc's malloc in
 * CPython, `fallback` here).
 */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../lab.h"

enum { OBJ = 64, ARENAS = 8 };

typedef struct figures {
	double arenas_full, arenas_left, mib_full, mib_left;
} figures_t;

/* The region (arena) an object lives in, from its stable address name. */
static int region_of(hl_heap_t *h, const void *p)
{
	char name[64];
	hl_addr_name(h, p, name, sizeof name);
	return atoi(name + strlen("region#"));
}

/* Fills ARENAS arenas; keeps one object per arena (spread) or the first
 * ARENAS objects (packed); frees the rest. */
static void pin(bool spread, figures_t *f)
{
	hl_heap_t *h = lab_heap("pools", NULL);
	size_t cap = 1 << 20, n = 0;
	char **p = malloc(cap * sizeof *p);
	size_t first_of[ARENAS + 1];
	int arenas = 0, last = -1;
	while (n < cap) {
		p[n] = hl_malloc(h, OBJ);
		p[n][0] = 1;
		int r = region_of(h, p[n]);
		if (r != last) {
			last = r;
			if (arenas == ARENAS)
				break; /* the object that opened one arena too many */
			first_of[arenas++] = n;
		}
		n++;
	}
	hl_free(h, p[n]);
	f->arenas_full = lab_stat(h, "policy_stats.arenas_allocated_current");
	f->mib_full = lab_resident_mib(h);
	for (size_t i = 0, k = 0; i < n; i++) {
		bool keep = spread ? (k < ARENAS && i == first_of[k]) : i < ARENAS;
		if (keep)
			k++;
		else
			hl_free(h, p[i]);
	}
	f->arenas_left = lab_stat(h, "policy_stats.arenas_allocated_current");
	f->mib_left = lab_resident_mib(h);
	lab_snapshot(h, spread ? "one-per-arena" : "packed", spread ? "one survivor in each arena" : "eight survivors in one arena");
	printf("  %-23s %zu objects in %.0f arenas (%.1f MiB) -> %.0f arenas (%.1f MiB)\n",
	       spread ? "one survivor per arena:" : "survivors packed:", n, f->arenas_full, f->mib_full, f->arenas_left,
	       f->mib_left);
	hl_heap_destroy(h);
	free(p);
}

static void cliff(void)
{
	hl_heap_t *h = lab_heap("pools", NULL);
	printf("\nrequest  usable  served by\n");
	bool ok = true;
	for (size_t n = 480; n <= 544; n += 16) {
		for (size_t m = n; m <= n + 1 && m <= 544; m++) {
			double small = lab_stat(h, "policy_stats.small_mallocs");
			void *p = hl_malloc(h, m);
			bool pooled = lab_stat(h, "policy_stats.small_mallocs") > small;
			printf("%7zu %7zu  %s\n", m, hl_usable_size(h, p), pooled ? "a pool" : "the fallback allocator");
			ok &= pooled == (m <= 512);
			hl_free(h, p);
		}
	}
	lab_expect(ok, "requests up to 512 bytes come from pools, 513 and up from the fallback");
	hl_heap_destroy(h);
}

int main(int argc, char **argv)
{
	lab_begin(argc, argv, "Lab 11: pinning an arena, and the 512-byte cliff");
	if (!lab_has("pools"))
		return lab_end();
	figures_t spread, packed;
	printf("%d arenas of %d-byte objects, then everything freed but %d objects:\n", ARENAS, OBJ, ARENAS);
	pin(true, &spread);
	pin(false, &packed);
	lab_expect(spread.arenas_left >= ARENAS, "one object in each arena keeps all %d arenas", ARENAS);
	lab_expect(packed.arenas_left <= 2,
		   "packed in one arena, the survivors let the others go (one empty arena may stay for reuse)");
	lab_expect(packed.mib_left < 0.3 * spread.mib_left, "and the resident memory goes with them (%.1f vs %.1f MiB)",
		   packed.mib_left, spread.mib_left);
	cliff();
	return lab_end();
}
