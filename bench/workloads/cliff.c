/* cliff OPS: the cost of malloc+free for sizes 464..560 in steps of 16,
 * with 100 blocks kept live per size.  Prints one "ns_at_<size>" line per
 * size, so the step at pymalloc's 512-byte threshold shows. */
#include "bench_util.h"

int main(int argc, char **argv)
{
	long ops = bench_arg(argc, argv, 1, 2000000);
	void *live[100];
	for (long i = 0; i < ops; i++) /* warm up: the first size measured must not pay for start-up */
		free(malloc(464));
	for (int size = 464; size <= 560; size += 16) {
		for (int k = 0; k < 100; k++)
			live[k] = malloc((size_t)size);
		double t0 = bench_now();
		for (long i = 0; i < ops; i++) {
			int k = (int)(i % 100);
			free(live[k]);
			live[k] = malloc((size_t)size);
		}
		double dt = bench_now() - t0;
		for (int k = 0; k < 100; k++)
			free(live[k]);
		printf("ns_at_%d %.2f\n", size, dt * 1e9 / (double)ops);
	}
	printf("peak_rss_mb %.1f\n", bench_peak_mb());
	return 0;
}
