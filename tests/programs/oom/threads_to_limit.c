/*
 * Threads that run the heap out of memory together, then free and exit.
 * Run it under a small address-space limit (prlimit --as=...): each of
 * NTHREADS threads allocates until malloc fails, with aligned_alloc(512,
 * ...) or by growing blocks to 4 KiB with realloc, frees everything and
 * exits; the main thread does it ROUNDS times.  A NULL is expected (with
 * errno ENOMEM); a crash or an abort of the allocator is the failure.
 * Exit 0 with a line of counts; 1 when a NULL came with another errno or
 * no allocation ever failed (the limit was not reached).
 *
 * usage: threads_to_limit aligned|realloc [ROUNDS] [NTHREADS]
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_BLOCKS = 1 << 20 };

static int aligned;
static atomic_long failures, bad_errno, blocks;

static void *worker(void *arg)
{
	(void)arg;
	void **kept = malloc(MAX_BLOCKS * sizeof *kept);
	if (!kept) {
		atomic_fetch_add(&failures, 1);
		return NULL;
	}
	size_t n = 0;
	while (n < MAX_BLOCKS) {
		void *p;
		if (aligned) {
			p = aligned_alloc(512, 512 + (n % 7) * 512);
		} else {
			p = malloc(24);
			if (p) {
				void *q = realloc(p, 4096);
				if (!q)
					free(p);
				p = q;
			}
		}
		if (!p) {
			if (errno != ENOMEM)
				atomic_fetch_add(&bad_errno, 1);
			atomic_fetch_add(&failures, 1);
			break;
		}
		memset(p, 0x5a, 64);
		kept[n++] = p;
	}
	atomic_fetch_add(&blocks, (long)n);
	while (n > 0)
		free(kept[--n]);
	free(kept);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 2 || (strcmp(argv[1], "aligned") && strcmp(argv[1], "realloc"))) {
		fprintf(stderr, "usage: threads_to_limit aligned|realloc [ROUNDS] [NTHREADS]\n");
		return 2;
	}
	aligned = !strcmp(argv[1], "aligned");
	int rounds = argc > 2 ? atoi(argv[2]) : 3;
	int nthreads = argc > 3 ? atoi(argv[3]) : 9;
	pthread_t tid[64];
	if (nthreads < 1 || nthreads > 64)
		nthreads = 9;
	for (int r = 0; r < rounds; r++) {
		int made = 0;
		for (int i = 0; i < nthreads; i++)
			if (pthread_create(&tid[made], NULL, worker, NULL) == 0)
				made++;
		for (int i = 0; i < made; i++)
			pthread_join(tid[i], NULL);
	}
	printf("blocks %ld failures %ld\n", atomic_load(&blocks), atomic_load(&failures));
	if (atomic_load(&bad_errno)) {
		fprintf(stderr, "threads_to_limit: %ld NULLs without ENOMEM\n", atomic_load(&bad_errno));
		return 1;
	}
	if (atomic_load(&failures) == 0) {
		fprintf(stderr, "threads_to_limit: no allocation failed: the limit was not reached\n");
		return 1;
	}
	return 0;
}
