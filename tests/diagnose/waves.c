/*
 * Waves of threads on the C library's malloc (tests/diagnose/thread_exit.sh):
 * WAVES waves (argument 1, default 2) of 8 threads.  Each thread of a wave
 * allocates, waits at a barrier until all 8 have (so each has bound an
 * arena while the 7 others hold theirs), then frees everything and exits;
 * the next wave starts once the last one is joined.  At the end the
 * program prints how many arenas glibc has ("arenas N", from malloc_info).
 *
 * glibc's rule: the main thread has the main arena; the first wave's 8
 * threads make 8 more; each exit puts its arena on the free list, and each
 * later wave's threads take those before making any: 9 arenas in all.
 */
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { THREADS = 8, BLOCKS = 500 };

static pthread_barrier_t all_bound;

static void *wave_thread(void *arg)
{
	void *blocks[BLOCKS];
	for (int i = 0; i < BLOCKS; i++)
		blocks[i] = malloc(64 + (size_t)(i % 50) * 16);
	pthread_barrier_wait(&all_bound);
	for (int i = 0; i < BLOCKS; i++)
		free(blocks[i]);
	return arg;
}

static int count_arenas(void)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f || malloc_info(0, f) != 0)
		return -1;
	fclose(f);
	int n = 0;
	for (const char *p = text; (p = strstr(p, "<heap nr=")); p++)
		n++;
	free(text);
	return n;
}

int main(int argc, char **argv)
{
	int waves = argc > 1 ? atoi(argv[1]) : 2;
	free(malloc(1));                       /* the main thread: the main arena */
	for (int w = 0; w < waves; w++) {
		pthread_t th[THREADS];
		pthread_barrier_init(&all_bound, NULL, THREADS);
		for (int i = 0; i < THREADS; i++)
			if (pthread_create(&th[i], NULL, wave_thread, NULL) != 0)
				return 1;
		for (int i = 0; i < THREADS; i++)
			pthread_join(th[i], NULL);
		pthread_barrier_destroy(&all_bound);
	}
	printf("arenas %d\n", count_arenas());
	return 0;
}
