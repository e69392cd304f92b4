/* claims_musl [HI]: two things a C library's malloc shows a program, for
 * comparing musl's mallocng with glibc.  tests/fidelity/claims_real.sh builds this
 * file twice at test time, with gcc (glibc) and with musl-gcc (musl).
 *
 * 1. The request -> usable size ladder, 1..HI bytes (default 1024):
 *    exact= counts the requests whose malloc_usable_size is the request
 *    itself, steps= the number of distinct usable sizes, and one
 *    "step=N U" line where the usable size changes (first 8 only).
 * 2. What RSS does after a burst of small blocks is freed except every
 *    64th: burst_kb= resident growth while all 16,384 x 1 KiB are live,
 *    kept_kb= what is still resident after the frees (a survivor in every
 *    64 KiB: the heap's pages are free, but can the allocator return
 *    them?).
 *
 * Plain C with no heaplab header, so musl-gcc can build it alone. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { BURST = 16384, BLOCK = 1024, SURVIVOR_EVERY = 64 };

static long rss_kb(void)
{
	long pages = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	if (!f || fscanf(f, "%ld %ld", &pages, &resident) != 2)
		exit(2);
	fclose(f);
	return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static void ladder(size_t hi)
{
	size_t exact = 0, steps = 0, last = 0;
	for (size_t n = 1; n <= hi; n++) {
		void *p = malloc(n);
		if (!p)
			exit(2);
		size_t u = malloc_usable_size(p);
		free(p);
		exact += u == n;
		if (u != last && steps++ < 8)
			printf("step=%zu %zu\n", n, u);
		last = u;
	}
	printf("exact=%zu\nsteps=%zu\n", exact, steps);
}

static void burst(void)
{
	static char *blocks[BURST];
	long before = rss_kb();
	for (int i = 0; i < BURST; i++) {
		if (!(blocks[i] = malloc(BLOCK)))
			exit(2);
		for (int j = 0; j < BLOCK; j += 64)
			blocks[i][j] = 1; /* touch every cache line: resident */
	}
	long live = rss_kb();
	for (int i = 0; i < BURST; i++)
		if (i % SURVIVOR_EVERY)
			free(blocks[i]);
	long after = rss_kb();
	printf("burst_kb=%ld\nkept_kb=%ld\n", live - before, after - before);
}

int main(int argc, char **argv)
{
	size_t hi = argc > 1 ? strtoul(argv[1], NULL, 10) : 1024;
	rss_kb(); /* the first fopen's buffer before anything is measured */
	ladder(hi);
	burst();
	return 0;
}
