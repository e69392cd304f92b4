/* glibc_arenas THREADS: arenas made by threads that allocate at once.
 * Each thread makes its first allocation and then waits until all have, so
 * none has exited (and given its arena back) before the count:
 *   arenas=        arenas the allocator has (glibc: the <heap nr=...>
 *                  entries of malloc_info; the model: its own count)
 *   arenas_used=   distinct arenas the threads' and main's blocks are in
 *                  (read from their chunk headers, the same on both sides) */
#include <malloc.h>
#include <pthread.h>
#include "glibc_chunk.h"
#include "probe.h"

enum { MAX_THREADS = 64 };
static pthread_barrier_t all_allocated;
static const void *arena_of[MAX_THREADS + 1];

static void *first_allocation(void *arg)
{
	void *p = malloc(64);
	if (!p)
		probe_die("malloc failed");
	arena_of[(long)arg] = chunk_arena(p);
	pthread_barrier_wait(&all_allocated);
	pthread_barrier_wait(&all_allocated); /* main has counted */
	free(p);
	return NULL;
}

static long real_arenas(void)
{
	static char text[1 << 20];
	FILE *f = fmemopen(text, sizeof text - 1, "w");
	if (!f || malloc_info(0, f) != 0)
		probe_die("malloc_info failed");
	fclose(f);
	long n = 0;
	for (const char *s = text; (s = strstr(s, "<heap nr=")); s++)
		n++;
	return n;
}

static long distinct(const void *const *v, long n)
{
	long count = 0;
	for (long i = 0; i < n; i++) {
		long j = 0;
		while (j < i && v[j] != v[i])
			j++;
		count += j == i;
	}
	return count;
}

int main(int argc, char **argv)
{
	probe_static_stdout();
	long threads = probe_arg(argc, argv, 1, 4);
	if (threads < 1 || threads > MAX_THREADS)
		probe_die("THREADS must be 1..64");
	void *mine = malloc(64);
	arena_of[threads] = chunk_arena(mine);
	pthread_t tid[MAX_THREADS];
	pthread_barrier_init(&all_allocated, NULL, (unsigned)threads + 1);
	for (long i = 0; i < threads; i++)
		if (pthread_create(&tid[i], NULL, first_allocation, (void *)i))
			probe_die("pthread_create failed");
	pthread_barrier_wait(&all_allocated);
	double model;
	long arenas = probe_is_model() ? (probe_model_stat("policy_stats.arenas", &model) ? -1 : (long)model)
				       : real_arenas();
	long used = distinct(arena_of, threads + 1);
	pthread_barrier_wait(&all_allocated);
	for (long i = 0; i < threads; i++)
		pthread_join(tid[i], NULL);
	printf("arenas=%ld\narenas_used=%ld\n", arenas, used);
	free(mine);
	return 0;
}
