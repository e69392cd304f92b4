/* jemalloc_oversize KIB...: are large blocks given back the moment they
 * are freed?  Allocates one block of each size given (in KiB), writes
 * every byte, frees them in the same order, and prints kept_pct: the part
 * of their pages still resident right after the frees (no waiting, no
 * other activity).  Two neighbours of 6 MiB show whether freed extents
 * that merge into a big one are purged at once. */
#include "probe.h"

enum { MAX_BLOCKS = 8 };

static volatile int fill_byte = 1;

/* Makes the writes to @p p observable, so the compiler cannot drop them as
 * dead stores before free(). */
static void touched(void *p)
{
	__asm__ __volatile__("" : : "r"(p) : "memory");
}

int main(int argc, char **argv)
{
	probe_static_stdout();
	char *p[MAX_BLOCKS];
	int n = argc - 1;
	if (n < 1 || n > MAX_BLOCKS)
		probe_die("usage: jemalloc_oversize KIB... (1 to 8 sizes)");
	void *volatile warm = malloc(64);   /* the allocator's own start-up is not */
	free(warm);                         /* part of what the blocks leave behind */
	long base = probe_rss_bytes();
	for (int i = 0; i < n; i++) {
		long kib = probe_arg(argc, argv, i + 1, 0);
		if (kib < 16 || kib > (1L << 20))
			probe_die("each KIB must be from 16 to 1048576");
		size_t size = (size_t)kib << 10;
		if (!(p[i] = malloc(size)))
			probe_die("malloc failed");
		memset(p[i], fill_byte, size);
		touched(p[i]);
	}
	long peak = probe_rss_bytes() - base;
	for (int i = 0; i < n; i++)
		free(p[i]);
	long kept = probe_rss_bytes() - base;
	printf("kept_pct=%.0f\n", peak > 0 ? 100.0 * (double)kept / (double)peak : 0.0);
	return 0;
}
