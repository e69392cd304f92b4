/*
 * Lab 8: arenas multiplied, and the tcache's depth.
 *
 * Part 1: T threads, all alive at once, take turns: each allocates 4 MiB
 * of 1 KiB blocks and frees all but the last one.  Under bins (glibc), each
 * new thread gets an arena of its own while there are fewer than
 * arena_max (default 8 per core); an arena keeps its free memory, so the
 * heap holds T times what one thread needed.  With arena_max:1 the threads
 * share one arena and reuse each other's free space.
 *
 * Part 2: free 40 blocks of one size in order, malloc 40 of that size, and
 * look at the order they come back in.  The first ones come back last-in,
 * first-out from the thread cache: the first block handed back tells how
 * deep the cache is.
 */
#include "config.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include "../lab.h"

enum { WORK = 4 << 20, BLOCK = 1024, MAXT = 8, K = 40 };

typedef struct team {
	hl_heap_t *h;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int turn;           /* whose turn it is to work */
	int nthreads;
} team_t;

static void wait_turn(team_t *tm, int me)
{
	pthread_mutex_lock(&tm->lock);
	while (tm->turn != me)
		pthread_cond_wait(&tm->cond, &tm->lock);
	pthread_mutex_unlock(&tm->lock);
}

static void pass_turn(team_t *tm)
{
	pthread_mutex_lock(&tm->lock);
	tm->turn++;
	pthread_cond_broadcast(&tm->cond);
	pthread_mutex_unlock(&tm->lock);
}

typedef struct worker {
	team_t *tm;
	int me;
} worker_t;

static void *work(void *arg)
{
	worker_t *w = arg;
	team_t *tm = w->tm;
	size_t n = WORK / BLOCK;
	char **p = malloc(n * sizeof *p);
	wait_turn(tm, w->me);
	for (size_t i = 0; i < n; i++) {
		p[i] = hl_malloc(tm->h, BLOCK);
		p[i][0] = 1;
	}
	for (size_t i = 0; i + 1 < n; i++)
		hl_free(tm->h, p[i]);
	pass_turn(tm);
	wait_turn(tm, tm->nthreads + 1); /* stay alive until the figures are read */
	hl_free(tm->h, p[n - 1]);
	free(p);
	return NULL;
}

/* Resident MiB after T threads took their turn; *arenas gets the count. */
static double arenas_run(const char *conf, int t, double *arenas)
{
	team_t tm = { .h = lab_heap("bins", conf), .turn = 0, .nthreads = t };
	pthread_mutex_init(&tm.lock, NULL);
	pthread_cond_init(&tm.cond, NULL);
	pthread_t th[MAXT];
	worker_t w[MAXT];
	for (int i = 0; i < t; i++) {
		w[i] = (worker_t){ &tm, i };
		pthread_create(&th[i], NULL, work, &w[i]);
	}
	wait_turn(&tm, t);
	double mib = lab_resident_mib(tm.h);
	*arenas = lab_stat(tm.h, "policy_stats.arenas");
	if (t == 4)
		lab_snapshot(tm.h, conf ? "arena-max-1" : "arenas-default", "four threads' leftovers");
	pass_turn(&tm);
	for (int i = 0; i < t; i++)
		pthread_join(th[i], NULL);
	hl_heap_destroy(tm.h);
	return mib;
}

/* Frees K blocks in order, mallocs K, returns the inferred depth (or -1). */
static int tcache_depth(const char *conf)
{
	hl_heap_t *h = lab_heap("bins", conf);
	char *b[K], *back[K];
	for (int i = 0; i < K; i++) {
		b[i] = hl_malloc(h, 200);
		hl_malloc(h, 200); /* a guard keeps freed neighbours apart */
	}
	for (int i = 0; i < K; i++)
		hl_free(h, b[i]);
	for (int i = 0; i < K; i++)
		back[i] = hl_malloc(h, 200);
	int first = -1;
	for (int i = 0; i < K; i++)
		if (back[0] == b[i])
			first = i;
	printf("  %-16s came back: b%d", conf, first);
	for (int i = 1; i < 20; i++)
		for (int j = 0; j < K; j++)
			if (back[i] == b[j])
				printf(" b%d", j);
	printf(" ...\n");
	for (int r = 0; first >= 0 && r <= first; r++)
		if (back[r] != b[first - r])
			first = -1; /* not a clean LIFO run: no inference */
	hl_heap_destroy(h);
	return first + 1;
}

int main(int argc, char **argv)
{
	lab_begin(argc, argv, "Lab 8: arenas multiplied, and the tcache's depth");
	if (!lab_has("bins"))
		return lab_end();
	printf("threads in turn: 4 MiB of 1 KiB blocks each, all freed but the last\n");
	printf("%8s %22s %22s\n", "threads", "arenas / MiB (default)", "arenas / MiB (max 1)");
	double mib[2][MAXT + 1], arenas[2][MAXT + 1];
	int last = lab_full() ? 8 : 4;
	for (int t = 1; t <= last; t *= 2) {
		mib[0][t] = arenas_run(NULL, t, &arenas[0][t]);
		mib[1][t] = arenas_run("arena_max:1", t, &arenas[1][t]);
		printf("%8d %10.0f / %9.1f %10.0f / %9.1f\n", t, arenas[0][t], mib[0][t], arenas[1][t], mib[1][t]);
	}
	lab_expect(arenas[0][4] == 4 && arenas[1][4] == 1, "four threads get four arenas, or one with arena_max:1");
	lab_expect(mib[0][4] > 2.5 * mib[1][4], "four arenas hold over 2.5 times the memory of one (%.1f vs %.1f MiB)",
		   mib[0][4], mib[1][4]);
	printf("\nfree b0..b%d in order, then malloc %d of the same size:\n", K - 1, K);
	int d16 = tcache_depth("tcache_count:16"), d7 = tcache_depth("tcache_count:7");
	printf("  inferred depths: %d and %d\n", d16, d7);
	lab_expect(d16 == 16 && d7 == 7, "the LIFO run at the start is as long as the tcache is deep");
	return lab_end();
}
