/*
 * Lab 9: the decay trade-off.
 *
 * Four slab heaps (jemalloc's model) side by side, dirty_decay_ms 0, 1000,
 * 10000 and -1.  Each gets the same burst: 16 MiB of 2 KiB blocks, touched,
 * then all freed.  Then the heaps run quietly — 1000 malloc/free pairs of
 * 64 KiB each quarter second (jemalloc looks at the clock for decay only
 * after about 1000 operations that reach an arena, unless a background
 * thread does it; thread-cache hits do not count) — and a second burst
 * comes at the end.  Printed:
 * resident MiB over time, the purge calls each heap made, and how much of
 * the second burst had to be faulted in again — the cost side.
 */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "../lab.h"

enum { NDECAY = 4, BLOCK = 2048, BURST = 16 << 20, MAXSAMPLES = 64 };
static const char *const decay[NDECAY] = { "0", "1000", "10000", "-1" };

static char **burst(hl_heap_t *h)
{
	size_t n = BURST / BLOCK;
	char **p = malloc(n * sizeof *p);
	for (size_t i = 0; i < n; i++) {
		p[i] = hl_malloc(h, BLOCK);
		p[i][0] = 1;
	}
	return p;
}

static void release(hl_heap_t *h, char **p)
{
	for (size_t i = 0; i < BURST / BLOCK; i++)
		hl_free(h, p[i]);
	free(p);
}

static double purge_calls(hl_heap_t *h)
{
	return lab_stat(h, "os.madvise_dontneed_calls") + lab_stat(h, "os.madvise_free_calls") +
	       lab_stat(h, "os.munmap_calls");
}

/* A program that is still busy: jemalloc 5.3 checks the clock for decay
 * after about 1000 operations that reach an arena (a tcache fill or flush,
 * a large block), so an idle heap never does, and neither does one whose
 * mallocs all hit the thread cache.  64 KiB is above tcache_max: every
 * malloc and free here goes to the arena. */
static void tick(hl_heap_t *h)
{
	for (int i = 0; i < 1000; i++)
		hl_free(h, hl_malloc(h, 64 << 10));
}

static void nap(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	lab_begin(argc, argv, "Lab 9: the decay trade-off");
	if (!lab_has("slab"))
		return lab_end();
	hl_heap_t *h[NDECAY];
	double peak[NDECAY], rss[NDECAY][MAXSAMPLES], calls[NDECAY], refault[NDECAY];
	int samples = lab_full() ? 48 : 6; /* quarter seconds: 12 s, or 1.5 s */
	for (int d = 0; d < NDECAY; d++) {
		char conf[64];
		snprintf(conf, sizeof conf, "dirty_decay_ms:%s", decay[d]);
		h[d] = lab_heap("slab", conf);
		char **p = burst(h[d]);
		peak[d] = lab_resident_mib(h[d]);
		release(h[d], p);
	}
	for (int s = 0; s < samples; s++) {
		for (int d = 0; d < NDECAY; d++) {
			tick(h[d]);
			rss[d][s] = lab_resident_mib(h[d]);
		}
		nap(250);
	}
	printf("resident MiB after a 16 MiB burst was freed, every 0.25 s:\n");
	for (int d = 0; d < NDECAY; d++) {
		printf("\ndirty_decay_ms:%s (peak %.1f MiB)\n", decay[d], peak[d]);
		for (int s = 0; s < samples; s += lab_full() ? 4 : 1) {
			char label[32];
			snprintf(label, sizeof label, "t = %.2f s", s * 0.25);
			lab_bar(label, rss[d][s], peak[d], "MiB");
		}
		lab_snapshot(h[d], decay[d][0] == '-' ? "decay-never" : decay[d], "after the idle time");
		calls[d] = purge_calls(h[d]);
		double before = lab_resident_mib(h[d]);
		char **p = burst(h[d]);
		refault[d] = lab_resident_mib(h[d]) - before;
		release(h[d], p);
	}
	printf("\n%-16s %12s %18s\n", "dirty_decay_ms", "purge calls", "faulted again MiB");
	for (int d = 0; d < NDECAY; d++)
		printf("%-16s %12.0f %18.1f\n", decay[d], calls[d], refault[d]);
	int last = samples - 1, at = 5; /* the sample at t = 1.25 s */
	lab_expect(rss[0][0] < 0.1 * peak[0], "decay 0: freed pages go back at once");
	lab_expect(rss[3][last] > 0.9 * peak[3] && calls[3] == 0, "decay -1: nothing is ever purged");
	lab_expect(rss[1][at] < 0.5 * peak[1], "decay 1000: by t = 1.25 s most of the burst is gone");
	lab_expect(rss[2][at] > 0.5 * peak[2], "decay 10000: at t = 1.25 s most of it is still resident");
	lab_expect(refault[0] > 4 * (refault[3] + 0.5), "the cost side: decay 0 faults the next burst in again, -1 does not");
	for (int d = 0; d < NDECAY; d++)
		hl_heap_destroy(h[d]);
	return lab_end();
}
