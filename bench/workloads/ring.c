/* ring THREADS OPS RING MAXSIZE [fixed]: each thread keeps a ring of RING
 * live blocks and replaces the oldest with a new one of a random size in
 * [1, MAXSIZE] OPS times; with `fixed`, every block is MAXSIZE bytes and no
 * random number is drawn, so a pair is the allocator's fast path and the
 * loop around it (make bench-instructions counts it with callgrind).
 * Prints ns per (malloc + free) pair.
 *
 * RING_PIN=1 pins thread i to CPU i (mod the CPUs the process may use) and
 * prints each thread's own ns per pair and the CPU it ended on as well;
 * RING_PIN=0 prints those without pinning.  Scaling is then
 * read per CPU: a thread's time beside others against one thread's time
 * alone on the same CPU.  The two vCPUs of this machine do not run equally
 * fast (bench/HISTORY.md, 2026-12-02 15:55), so a wall time of two threads against one
 * thread placed anywhere measures the CPUs as much as the allocator. */
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <string.h>
#include "bench_util.h"

static long ops, ring, maxsize;
static bool fixed_size, pin, report;
static int cpus[64], ncpus;
static double took[64];
static int ran_on[64];

static void *worker(void *arg)
{
	long me = (long)(intptr_t)arg;
	if (pin)
		bench_pin(cpus[me % ncpus], "ring");
	double t0 = bench_now();
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
	took[me] = bench_now() - t0;
	ran_on[me] = sched_getcpu();
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
	const char *pin_env = getenv("RING_PIN");
	pin = pin_env && strcmp(pin_env, "1") == 0;
	report = pin_env != NULL;
	if (pin) {
		ncpus = bench_allowed_cpus(cpus, 64);
		if (ncpus == 0) {
			fprintf(stderr, "ring: RING_PIN=1 but no CPU to pin to\n");
			return 2;
		}
	}
	pthread_t th[64];
	double t0 = bench_now();
	for (long i = 0; i < threads && i < 64; i++)
		pthread_create(&th[i], NULL, worker, (void *)i);
	for (long i = 0; i < threads && i < 64; i++)
		pthread_join(th[i], NULL);
	double dt = bench_now() - t0;
	printf("ns_per_op %.2f\npeak_rss_mb %.1f\n", dt * 1e9 / (double)ops, bench_peak_mb());
	for (long i = 0; report && i < threads && i < 64; i++)
		printf("thread %ld cpu %d ns_per_op %.2f\n", i, ran_on[i], took[i] * 1e9 / (double)ops);
	return 0;
}
