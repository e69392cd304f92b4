/*
 * Lab 10: cross-thread frees.
 *
 * A producer thread allocates N blocks of 64 bytes per round and hands
 * them to a consumer thread through a queue; the consumer frees them (the
 * producer frees every tenth block itself).  After each round the program
 * reads where the freed memory sits, and in the next round how many of the
 * producer's new blocks are ones it got back.  Under bins a freed block
 * goes to the freeing thread's tcache, then to the arena it came from;
 * under slab to the freeing thread's cache, flushed in batches to the
 * owning arena's slabs; under sharded onto the page's thread_free list
 * with an atomic push, which the owner collects on its next malloc — the
 * third of a page's three lists (free, local_free, thread_free).
 */
#include "config.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../lab.h"

enum { N = 20000, SIZE = 64, ROUNDS = 4 };

typedef struct shared {
	hl_heap_t *h;
	void *queue[N];
	int head, tail;             /* under lock */
	pthread_mutex_t lock;
	pthread_cond_t more;
	pthread_barrier_t done, go; /* producer, consumer and main */
	void *round_addr[ROUNDS][N];/* what the producer got, by round */
} shared_t;

static void push(shared_t *s, void *p)
{
	pthread_mutex_lock(&s->lock);
	s->queue[s->tail++ % N] = p;
	pthread_cond_signal(&s->more);
	pthread_mutex_unlock(&s->lock);
}

static void *pop(shared_t *s)
{
	pthread_mutex_lock(&s->lock);
	while (s->head == s->tail)
		pthread_cond_wait(&s->more, &s->lock);
	void *p = s->queue[s->head++ % N];
	pthread_mutex_unlock(&s->lock);
	return p;
}

static void *producer(void *arg)
{
	shared_t *s = arg;
	for (int r = 0; r < ROUNDS; r++) {
		for (int i = 0; i < N; i++) {
			char *p = hl_malloc(s->h, SIZE);
			memset(p, r, SIZE);
			s->round_addr[r][i] = p;
			if (i % 10 == 9)
				hl_free(s->h, p); /* a local free */
			else
				push(s, p);
		}
		pthread_barrier_wait(&s->done);
		pthread_barrier_wait(&s->go);
	}
	return NULL;
}

static void *consumer(void *arg)
{
	shared_t *s = arg;
	for (int r = 0; r < ROUNDS; r++) {
		for (int i = 0; i < N - N / 10; i++)
			hl_free(s->h, pop(s));
		pthread_barrier_wait(&s->done);
		pthread_barrier_wait(&s->go);
	}
	return NULL;
}

static int cmp(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
	return x < y ? -1 : x > y;
}

/* Share of round r's blocks that were handed out in round r - 1 too. */
static double reuse(void *prev[N], void *cur[N])
{
	static void *sorted[N];
	memcpy(sorted, prev, sizeof sorted);
	qsort(sorted, N, sizeof *sorted, cmp);
	int hits = 0;
	for (int i = 0; i < N; i++)
		hits += bsearch(&cur[i], sorted, N, sizeof *sorted, cmp) != NULL;
	return (double)hits / N;
}

static void show(hl_heap_t *h, const char *path)
{
	double v;
	if (hl_stat(h, path, &v) == 0)
		printf("   %s=%.0f", path + strlen("policy_stats."), v);
}

typedef struct figures {
	double reuse[ROUNDS], mib[ROUNDS], remote, thread_free;
} figures_t;

static bool experiment(const char *policy, figures_t *f)
{
	static shared_t s;
	memset(&s, 0, sizeof s);
	if (!(s.h = lab_heap(policy, NULL)))
		return false;
	pthread_mutex_init(&s.lock, NULL);
	pthread_cond_init(&s.more, NULL);
	pthread_barrier_init(&s.done, NULL, 3);
	pthread_barrier_init(&s.go, NULL, 3);
	pthread_t pt, ct;
	pthread_create(&pt, NULL, producer, &s);
	pthread_create(&ct, NULL, consumer, &s);
	printf("\n%s\n", policy);
	for (int r = 0; r < ROUNDS; r++) {
		pthread_barrier_wait(&s.done);
		f->mib[r] = lab_resident_mib(s.h);
		f->reuse[r] = r ? reuse(s.round_addr[r - 1], s.round_addr[r]) : 0;
		printf("  round %d: %.1f MiB resident, %3.0f%% of the blocks reused;", r + 1, f->mib[r], 100 * f->reuse[r]);
		show(s.h, "policy_stats.tcache_hits");
		show(s.h, "policy_stats.blocks.free");
		show(s.h, "policy_stats.blocks.local_free");
		show(s.h, "policy_stats.blocks.thread_free");
		show(s.h, "policy_stats.remote_frees");
		printf("\n");
		if (r == 0) {
			hl_stat(s.h, "policy_stats.remote_frees", &f->remote);
			hl_stat(s.h, "policy_stats.blocks.thread_free", &f->thread_free);
			lab_snapshot(s.h, policy, "after the consumer's frees");
		}
		pthread_barrier_wait(&s.go);
	}
	pthread_join(pt, NULL);
	pthread_join(ct, NULL);
	hl_heap_destroy(s.h);
	return true;
}

int main(int argc, char **argv)
{
	lab_begin(argc, argv, "Lab 10: cross-thread frees");
	printf("%d rounds: the producer allocates %d blocks of %d bytes, the consumer frees 90%% of them\n", ROUNDS, N,
	       SIZE);
	static const char *const policies[] = { "bins", "slab", "sharded" };
	for (int i = 0; i < 3; i++) {
		figures_t f = { 0 };
		if (!experiment(policies[i], &f))
			continue;
		double later = 0;
		for (int r = 1; r < ROUNDS; r++)
			later += f.reuse[r] / (ROUNDS - 1);
		lab_expect(later > 0.3, "%s: the consumer's frees come back to the producer (%.0f%% reused on average)",
			   policies[i], 100 * later);
		/* Resident bytes after a round swing with trimming (bins gives a
		 * wholly free top back or not, as the threads interleave), so the
		 * claim is a bound: memory freed by the consumer is reused, and
		 * four rounds never hold more than two rounds' worth of blocks
		 * (a heap that kept each round's blocks would reach four). */
		double most = 0, round_mib = (double)N * SIZE / (1024.0 * 1024.0);
		for (int r = 0; r < ROUNDS; r++)
			most = f.mib[r] > most ? f.mib[r] : most;
		lab_expect(most < 2 * round_mib + 0.5,
			   "%s: the heap does not grow round after round (%.1f MiB at most; a round's blocks are %.1f MiB)",
			   policies[i], most, round_mib);
		if (!strcmp(policies[i], "sharded"))
			lab_expect(f.remote >= N - N / 10 && f.thread_free > 0,
				   "sharded: every consumer free is a remote free, left on thread_free for the owner (%.0f there)",
				   f.thread_free);
	}
	return lab_end();
}
