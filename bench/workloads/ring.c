/* ring THREADS OPS RING MAXSIZE [fixed]: each thread keeps a ring of RING
 * live blocks and replaces the oldest with a new one of a random size in
 * [1, MAXSIZE] OPS times; with `fixed`, every block is MAXSIZE bytes and no
 * random number is drawn, so a pair is the allocator's fast path and the
 * loop around it (make bench-instructions counts it with callgrind).
 * Prints ns per (malloc + free) pair. */
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include "bench_util.h"

static long ops, ring, maxsize;
static bool fixed_size;

static void *worker(void *arg)
{
	uint64_t s = 0x9e3779b97f4a7c15ull + (uintptr_t)arg;
	char **slots = calloc((size_t)ring, sizeof *slots);
	for (long i = 0; i < ops; i++) {
		long k = i % ring;
		free(slots[k]);
		size_t n = fixed_size ? (size_t)maxsize : 1 + bench_rand(&s) % (uint64_t)maxsize;
		slots[k] = malloc(n);
		slots[k][0] = (char)i;
	}
	for (long k = 0; k < ring; k++)
		free(slots[k]);
	free(slots);
	return NULL;
}

int main(int argc, char **argv)
{
	long threads = bench_arg(argc, argv, 1, 1);
	ops = bench_arg(argc, argv, 2, 5000000);
	ring = bench_arg(argc, argv, 3, 1000);
	maxsize = bench_arg(argc, argv, 4, 256);
	fixed_size = argc > 5 && strcmp(argv[5], "fixed") == 0;
	if (argc > 5 && !fixed_size) {
		fprintf(stderr, "ring: the fifth argument can only be 'fixed', not '%s'\n", argv[5]);
		return 2;
	}
	pthread_t th[64];
	double t0 = bench_now();
	for (long i = 0; i < threads && i < 64; i++)
		pthread_create(&th[i], NULL, worker, (void *)i);
	for (long i = 0; i < threads && i < 64; i++)
		pthread_join(th[i], NULL);
	double dt = bench_now() - t0;
	printf("ns_per_op %.2f\npeak_rss_mb %.1f\n", dt * 1e9 / (double)ops, bench_peak_mb());
	return 0;
}
