/* mimalloc_xthread: producer/consumer.  The main thread (the owner)
 * allocates 100,000 blocks of 256 bytes and touches them; a second thread
 * frees them all and ends; then the owner allocates as many again.
 *   idle_returned_pct=P  % of the first round's resident growth gone
 *                     after the remote frees and one idle second of the
 *                     owner (remote frees wait for their owner)
 *   reused_pct=P      % of the new blocks at an address of a freed one:
 *                     the owner got the remote frees back
 *   regrowth_pct=P    resident growth of the second round, in % of the
 *                     first round's
 *   returned_pct=P    % of the first round's growth gone once the second
 *                     round is freed by its owner and a page freed after
 *                     a wait of 1000 ms has run the due purges */
#include <pthread.h>
#include <stdint.h>
#include "probe.h"
#include "probe_util.h"

enum { N = 100000, SIZE = 256 };

static char *blocks[N];

static void *consumer(void *arg)
{
	(void)arg;
	for (int i = 0; i < N; i++)
		free(blocks[i]);
	return NULL;
}

static int by_address(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
	return (x > y) - (x < y);
}

static void produce(void)
{
	for (int i = 0; i < N; i++) {
		if (!(blocks[i] = malloc(SIZE)))
			probe_die("malloc failed");
		memset(blocks[i], 1, SIZE);
	}
}

int main(void)
{
	probe_static_stdout();
	static uintptr_t old[N];
	char *keep = malloc(SIZE);
	probe_trigger_t trigger;
	probe_trigger_arm(&trigger);
	long base = probe_rss_bytes();
	produce();
	long first = probe_rss_bytes() - base;
	for (int i = 0; i < N; i++)
		old[i] = (uintptr_t)blocks[i];
	qsort(old, N, sizeof old[0], by_address);
	pthread_t t;
	if (pthread_create(&t, NULL, consumer, NULL) || pthread_join(t, NULL))
		probe_die("thread failed");
	probe_sleep_ms(1000);
	long before = probe_rss_bytes();
	produce();
	long reused = 0;
	for (int i = 0; i < N; i++) {
		uintptr_t p = (uintptr_t)blocks[i];
		reused += bsearch(&p, old, N, sizeof old[0], by_address) != NULL;
	}
	long second = probe_rss_bytes() - before;
	for (int i = 0; i < N; i++)
		free(blocks[i]);
	probe_sleep_ms(1000);
	probe_trigger_fire(&trigger);
	long after = probe_rss_bytes();
	printf("idle_returned_pct=%ld\n", probe_pct(base + first - before, first));
	printf("reused_pct=%ld\nregrowth_pct=%ld\nreturned_pct=%ld\n", probe_pct(reused, N), probe_pct(second, first),
	       probe_pct(base + first - after, first));
	free(keep);
	return 0;
}
