/* glibc_arena_keep THREADS ROUNDS: does a thread keep its arena when it
 * must wait for it?  THREADS threads (more than the arenas allowed, so
 * some share one) each allocate and free ROUNDS blocks of 2000 bytes (past
 * the thread cache, so every call takes the arena's lock) all at the same
 * time, and check each block's arena against the one of their first.
 *   switched=   blocks, over all threads, from an arena other than the
 *               thread's first (glibc binds a thread on its first call) */
#include <pthread.h>
#include "glibc_chunk.h"
#include "probe.h"

enum { MAX_THREADS = 64, BLOCK = 2000 };
static pthread_barrier_t start;
static long rounds;
static long switched[MAX_THREADS];

static void *hammer(void *arg)
{
	long me = (long)arg;
	void *first = malloc(BLOCK);
	if (!first)
		probe_die("malloc failed");
	const void *home = chunk_arena(first);
	pthread_barrier_wait(&start);
	for (long r = 0; r < rounds; r++) {
		void *p = malloc(BLOCK);
		if (!p)
			probe_die("malloc failed");
		switched[me] += chunk_arena(p) != home;
		free(p);
	}
	free(first);
	return NULL;
}

int main(int argc, char **argv)
{
	probe_static_stdout();
	long threads = probe_arg(argc, argv, 1, 6);
	rounds = probe_arg(argc, argv, 2, 20000);
	if (threads < 1 || threads > MAX_THREADS)
		probe_die("THREADS must be 1..64");
	void *volatile first = malloc(1); /* the tcache and main arena exist */
	free(first);
	pthread_t tid[MAX_THREADS];
	pthread_barrier_init(&start, NULL, (unsigned)threads);
	for (long i = 0; i < threads; i++)
		if (pthread_create(&tid[i], NULL, hammer, (void *)i))
			probe_die("pthread_create failed");
	long total = 0;
	for (long i = 0; i < threads; i++) {
		pthread_join(tid[i], NULL);
		total += switched[i];
	}
	printf("switched=%ld\n", total);
	return 0;
}
