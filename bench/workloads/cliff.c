/* cliff OPS [LIVE]: the cost of malloc+free for sizes 464..560 in steps
 * of 16, with LIVE blocks (default 100, at most 1000) kept live per size
 * and the oldest replaced each time.  Prints one "ns_at_<size>" line per
 * size, so the step at pymalloc's 512-byte threshold shows.  With 100 live
 * blocks of ~500 bytes the pools fill (32 blocks each), so every free goes
 * to a full pool and every malloc fills one: pymalloc's slow paths.  With
 * 16 live they all share one partly used pool: its fast paths. */
#include "bench_util.h"

int main(int argc, char **argv)
{
	long ops = bench_arg(argc, argv, 1, 2000000);
	long nlive = bench_arg(argc, argv, 2, 100);
	static void *live[1000];
	if (nlive < 1 || nlive > 1000) {
		fprintf(stderr, "cliff: LIVE must be 1..1000\n");
		return 2;
	}
	for (long i = 0; i < ops; i++) /* warm up: the first size measured must not pay for start-up */
		free(malloc(464));
	for (int size = 464; size <= 560; size += 16) {
		for (int k = 0; k < nlive; k++)
			live[k] = malloc((size_t)size);
		double t0 = bench_now();
		for (long i = 0; i < ops; i++) {
			int k = (int)(i % nlive);
			free(live[k]);
			live[k] = malloc((size_t)size);
		}
		double dt = bench_now() - t0;
		for (int k = 0; k < nlive; k++)
			free(live[k]);
		printf("ns_at_%d %.2f\n", size, dt * 1e9 / (double)ops);
	}
	printf("peak_rss_mb %.1f\n", bench_peak_mb());
	return 0;
}
