/*
 * Lab 7: the self-tuning mmap threshold.
 *
 * bins, like glibc, serves a request at or above mmap_threshold (128 KiB at
 * first) with a mapping of its own, returned to the kernel by free.  But
 * freeing such a block raises the threshold to the block's size (up to
 * 32 MiB) and the trim threshold to twice that: from then on, blocks of
 * that size come from the heap and stay there after free.  Giving the
 * threshold explicitly (mallopt, MALLOC_MMAP_THRESHOLD_, here the option
 * mmap_threshold) freezes it.
 */
#include "config.h"
#include <stdio.h>
#include "../lab.h"

enum { BIG = 4 << 20, ROUNDS = 3 };

typedef struct round_fig {
	double mapped;    /* chunks with a mapping of their own while p was live */
	double threshold; /* mmap threshold after the round's free */
	double resident;  /* MiB resident after the free */
} round_fig_t;

static void rounds(const char *conf, round_fig_t r[ROUNDS])
{
	hl_heap_t *h = lab_heap("bins", conf);
	printf("\nbins %s\n  round  own mapping  threshold after free  resident after free\n", conf ? conf : "(defaults)");
	for (int i = 0; i < ROUNDS; i++) {
		char *p = hl_malloc(h, BIG);
		for (size_t off = 0; off < BIG; off += 4096)
			p[off] = 1;
		r[i].mapped = lab_stat(h, "policy_stats.mmapped_chunks");
		if (i == 0)
			lab_snapshot(h, conf ? "frozen-first" : "dynamic-first", "the first 4 MiB block");
		hl_free(h, p);
		r[i].threshold = lab_stat(h, "policy_stats.mmap_threshold");
		r[i].resident = lab_resident_mib(h);
		printf("  %5d  %11s  %17.0f KiB  %15.1f MiB\n", i + 1, r[i].mapped ? "yes" : "no", r[i].threshold / 1024, r[i].resident);
	}
	hl_heap_destroy(h);
}

int main(int argc, char **argv)
{
	lab_begin(argc, argv, "Lab 7: the self-tuning mmap threshold");
	if (!lab_has("bins"))
		return lab_end();
	round_fig_t dyn[ROUNDS], frozen[ROUNDS];
	printf("three rounds of: p = malloc(4 MiB), touch every page, free(p)\n");
	rounds(NULL, dyn);
	rounds("mmap_threshold:128K", frozen);
	lab_expect(dyn[0].mapped == 1 && dyn[0].resident < 1, "the first 4 MiB block gets its own mapping, gone on free");
	lab_expect(dyn[0].threshold >= BIG, "freeing it raised the threshold to its size (%.0f KiB)", dyn[0].threshold / 1024);
	lab_expect(dyn[1].mapped == 0 && dyn[2].mapped == 0 && dyn[2].resident >= 4,
		   "later 4 MiB blocks come from the heap and stay resident after free");
	lab_expect(frozen[1].mapped == 1 && frozen[2].mapped == 1 && frozen[2].threshold == 128 * 1024 && frozen[2].resident < 1,
		   "with mmap_threshold given, every round maps and unmaps again");
	return lab_end();
}
