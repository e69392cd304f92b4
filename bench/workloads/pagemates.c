/* pagemates CHUNK [OPS]: what it costs two threads to keep their blocks in
 * the same pages, each writing only its own cache lines.  Thread 0 and
 * thread 1, pinned to the first two CPUs the process may use, each own
 * 1,000 blocks of 32 bytes; the blocks lie in one region in alternate runs
 * of CHUNK bytes (thread 0's run, thread 1's run, ...).  Each thread then
 * writes its blocks round robin OPS times (default 30 million), as the
 * ring does.  With CHUNK a multiple of 64 no cache line holds blocks of
 * both threads, so this is not false sharing in the textbook sense; what
 * a small CHUNK still costs comes from the cores' prefetchers pulling the
 * other thread's lines.  Prints ns per write for each thread.  The region
 * is allocated once, page-aligned, before the threads start: run it with
 * no LD_PRELOAD, it measures the machine, not an allocator. */
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <string.h>
#include "bench_util.h"

enum { BLOCKS = 1000, BLOCK = 32 };

static char *region;
static long chunk, ops;
static int cpus[2];
static double took[2];

static void *writer(void *arg)
{
	long me = (long)(intptr_t)arg;
	bench_pin(cpus[me], "pagemates");
	static char *mine[2][BLOCKS];
	for (long k = 0; k < BLOCKS; k++) {
		long offset = k * BLOCK, run = offset / chunk;
		mine[me][k] = region + (2 * run + me) * chunk + offset % chunk;
	}
	double t0 = bench_now();
	for (long i = 0; i < ops; i++) {
		char *b = mine[me][i % BLOCKS];
		b[0] = (char)i;
		b[8] += b[16];
	}
	took[me] = bench_now() - t0;
	return NULL;
}

int main(int argc, char **argv)
{
	chunk = bench_arg(argc, argv, 1, 1024);
	ops = bench_arg(argc, argv, 2, 30000000);
	if (chunk < BLOCK || chunk % BLOCK != 0 || chunk > (1L << 20)) {
		fprintf(stderr, "pagemates: CHUNK must be a multiple of %d bytes up to 1 MiB, not %ld\n", BLOCK, chunk);
		return 2;
	}
	if (bench_allowed_cpus(cpus, 2) < 2) {
		fprintf(stderr, "pagemates: needs two CPUs to run on\n");
		return 2;
	}
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t bytes = (2 * (size_t)(BLOCKS * BLOCK + chunk) + page - 1) / page * page;
	region = aligned_alloc(page, bytes);   /* page-aligned: runs fall on pages as laid out */
	if (!region) {
		perror("pagemates: aligned_alloc");
		return 2;
	}
	memset(region, 0, bytes);
	pthread_t th[2];
	for (long i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, writer, (void *)(intptr_t)i);
	for (long i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	printf("chunk %ld cpu %d ns_per_write %.2f cpu %d ns_per_write %.2f\n", chunk, cpus[0],
	       took[0] * 1e9 / (double)ops, cpus[1], took[1] * 1e9 / (double)ops);
	return 0;
}
