/* twofill [SIZE]: where an allocator puts the first blocks of two threads
 * that start allocating at the same moment.  Thread A and thread B, pinned
 * to the first two CPUs the process may use and released together by a
 * barrier, each malloc 1,000 blocks of SIZE bytes (default 32), as the
 * ring's first lap does.  The 2,000 blocks are then sorted by address and
 * read as runs: a run is a stretch of one thread's blocks with none of
 * the other's in between.  Two runs mean each thread's blocks lie apart;
 * dozens mean the threads took turns in the same pages, the layout that
 * makes the 2-thread ring slow (bench/pagemates; bench/HISTORY.md,
 * 2026-12-02 15:55).  bench/RESULTS.md has the current medians.
 * Prints one line: the number of runs, the 4 KiB pages holding blocks of
 * both threads, the 64-byte cache lines holding the first bytes of blocks
 * of both (the bytes the ring writes: each such line moves between the
 * CPUs twice a lap), and each run as its thread and length in blocks
 * ("|" after a run marks a gap of more than a page before the next).  Run
 * it many times: where the threads meet depends on when each one
 * starts. */
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include "bench_util.h"

enum { BLOCKS = 1000, GAP = 4096, LINE = 64 };

static long size;
static int cpus[2];
static pthread_barrier_t start;
static char *blocks[2][BLOCKS];

static void *filler(void *arg)
{
	long me = (long)(intptr_t)arg;
	bench_pin(cpus[me], "twofill");
	pthread_barrier_wait(&start);
	for (long k = 0; k < BLOCKS; k++) {
		blocks[me][k] = malloc((size_t)size);
		if (!blocks[me][k]) {
			fprintf(stderr, "twofill: malloc(%ld) failed\n", size);
			exit(2);
		}
		blocks[me][k][0] = 1;
	}
	return NULL;
}

/* A block's address with its thread in the low bit (blocks are at least
 * 2-byte aligned), so one sort orders both threads' blocks. */
static int by_address(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
	return x < y ? -1 : x > y;
}

/* How many @unit-byte stretches of memory hold the first byte of a block
 * of each thread, in the @n sorted tagged addresses @all. */
static long shared_units(const uintptr_t *all, int n, uintptr_t unit)
{
	long shared = 0;
	uintptr_t at = 0;
	unsigned seen = 0; /* threads with a block starting in `at` */
	for (int i = 0; i < n; i++) {
		uintptr_t u = (all[i] & ~(uintptr_t)1) / unit;
		if (i == 0 || u != at) {
			shared += seen == 3;
			at = u, seen = 0;
		}
		seen |= 1u << (all[i] & 1);
	}
	return shared + (seen == 3);
}

int main(int argc, char **argv)
{
	size = bench_arg(argc, argv, 1, 32);
	if (size < 2 || size > (1L << 20)) {
		fprintf(stderr, "twofill: SIZE must be 2 bytes to 1 MiB, not %ld\n", size);
		return 2;
	}
	if (bench_allowed_cpus(cpus, 2) < 2) {
		fprintf(stderr, "twofill: needs two CPUs to run on\n");
		return 2;
	}
	pthread_barrier_init(&start, NULL, 2);
	pthread_t th[2];
	for (long i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, filler, (void *)(intptr_t)i);
	for (long i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	static uintptr_t all[2 * BLOCKS];
	for (int t = 0; t < 2; t++)
		for (int k = 0; k < BLOCKS; k++)
			all[t * BLOCKS + k] = (uintptr_t)blocks[t][k] | (uintptr_t)t;
	qsort(all, 2 * BLOCKS, sizeof *all, by_address);
	static char line[2 * BLOCKS * 8];
	size_t at = 0;
	long runs = 0, len = 1;
	for (int i = 0; i < 2 * BLOCKS; i++) {
		uintptr_t addr = all[i] & ~(uintptr_t)1;
		unsigned who = (unsigned)(all[i] & 1);
		bool last = i + 1 == 2 * BLOCKS;
		if (!last && (all[i + 1] & 1) == who) {
			len++;
			continue;
		}
		bool gap = !last && (all[i + 1] & ~(uintptr_t)1) - addr > GAP;
		at += (size_t)snprintf(line + at, sizeof line - at, " %c%ld%s", who ? 'B' : 'A', len, gap ? "|" : "");
		runs++, len = 1;
	}
	printf("runs %ld shared_pages %ld shared_lines %ld:%s\n", runs, shared_units(all, 2 * BLOCKS, GAP),
	       shared_units(all, 2 * BLOCKS, LINE), line);
	for (int t = 0; t < 2; t++)
		for (int k = 0; k < BLOCKS; k++)
			free(blocks[t][k]);
	return 0;
}
