/* halfgig [WAIT_MS] [pin]: 500,000 blocks of 1 KiB, each touched; free nine
 * in ten; free the rest; RSS after each step (and after waiting WAIT_MS,
 * for allocators that give memory back over time).
 *
 * Nothing else is allocated while the blocks live: stdout has a static
 * buffer and RSS is read without stdio, because on a heap that gives memory
 * back only from its top (glibc's, bins') a single block allocated after
 * the others would keep all of them resident.  That is the lesson "pin"
 * shows on purpose: one 16-byte block allocated after the half gigabyte
 * stays live to the end. */
#include <stdbool.h>
#include <string.h>
#include "bench_util.h"

enum { N = 500000, SIZE = 1024 };

int main(int argc, char **argv)
{
	bench_static_stdout();
	long wait_ms = bench_arg(argc, argv, 1, 0);
	bool pin = argc > 2 && !strcmp(argv[2], "pin");
	static char *p[N];
	double base = bench_rss_mb();
	double t0 = bench_now();
	for (int i = 0; i < N; i++) {
		p[i] = malloc(SIZE);
		p[i][0] = 1;
	}
	double t_alloc = bench_now() - t0;
	char *late = pin ? malloc(16) : NULL;
	double after_alloc = bench_rss_mb() - base;
	for (int i = 0; i < N; i++)
		if (i % 10) {
			free(p[i]);
			p[i] = NULL;
		}
	double after_free90 = bench_rss_mb() - base;
	for (int i = 0; i < N; i++)
		free(p[i]);
	printf("rss_after_alloc_mb %.1f\nrss_after_free90_mb %.1f\nrss_after_free_all_mb %.1f\n", after_alloc,
	       after_free90, bench_rss_mb() - base);
	if (wait_ms > 0) {
		double until = bench_now() + wait_ms / 1000.0;
		while (bench_now() < until) {
			free(malloc(64)); /* a little activity, as a live program has */
			usleep(10000);
		}
		printf("rss_after_wait_mb %.1f\n", bench_rss_mb() - base);
	}
	printf("ns_per_op %.2f\npeak_rss_mb %.1f\n", t_alloc * 1e9 / N, bench_peak_mb());
	free(late);
	return 0;
}
