/* idle_gap MB KEEP_PCT GAP_MS WAKE: what a heap keeps after an idle gap.
 * Allocates MB megabytes of 1 KiB blocks (each written), frees the first
 * 100 - KEEP_PCT percent of them in the order they were allocated (so the
 * pages and slabs they filled are wholly free), sleeps GAP_MS, then makes
 * WAKE malloc(64 KiB)/free pairs (calls that reach the allocator's page
 * level: jemalloc and mimalloc act on their clocks only when called, and
 * these calls are how the probe lets them), and prints, in MiB above the
 * resident size before the first block: peak_mb after allocating, freed_mb
 * right after the frees, kept_mb at the end.  The kept blocks are never
 * freed: the end is what a replay of a recording of this probe measures.
 *
 * The pointer table is static and written before the first measurement, so
 * nothing of the probe's own is in the figures; stdout has a static buffer
 * (probe_static_stdout), so printing allocates nothing. */
#include <time.h>
#include "probe.h"

enum { MAX_MB = 1024, BLOCK = 1024 };
static char *blocks[MAX_MB * (1024 * 1024 / BLOCK)];

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0)
		;
}

static double mib(long bytes) { return (double)bytes / (1024.0 * 1024.0); }

int main(int argc, char **argv)
{
	probe_static_stdout();
	if (argc != 5)
		probe_die("usage: idle_gap MB KEEP_PCT GAP_MS WAKE");
	long mb = probe_arg(argc, argv, 1, 0), keep = probe_arg(argc, argv, 2, 0);
	long gap = probe_arg(argc, argv, 3, 0), wake = probe_arg(argc, argv, 4, 0);
	if (mb < 1 || mb > MAX_MB || keep > 100 || gap > 60000 || wake > 1000000)
		probe_die("MB must be 1..1024, KEEP_PCT 0..100, GAP_MS 0..60000, WAKE 0..1000000");
	size_t n = (size_t)mb * (1024 * 1024 / BLOCK);
	memset(blocks, 0, n * sizeof *blocks);
	void *volatile warm = malloc(64);   /* volatile: the pair must stay */
	free(warm);
	long base = probe_rss_bytes();
	for (size_t i = 0; i < n; i++) {
		if (!(blocks[i] = malloc(BLOCK)))
			probe_die("malloc failed");
		memset(blocks[i], 1, BLOCK);
	}
	long peak = probe_rss_bytes() - base;
	size_t nfree = n - n * (size_t)keep / 100;
	for (size_t i = 0; i < nfree; i++)
		free(blocks[i]);
	long freed = probe_rss_bytes() - base;
	nap_ms(gap);
	for (long i = 0; i < wake; i++) {
		void *volatile p = malloc(64 << 10);
		free(p);
	}
	long kept = probe_rss_bytes() - base;
	printf("peak_mb=%.1f\nfreed_mb=%.1f\nkept_mb=%.1f\n", mib(peak), mib(freed), mib(kept));
	return 0;
}
