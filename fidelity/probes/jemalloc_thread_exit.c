/* jemalloc_thread_exit MB: what a thread's freed heap leaves resident
 * once the thread has ended.  The main thread warms the allocator with a
 * malloc(64)/free pair, then starts one worker and waits for it; the
 * worker allocates MB megabytes of 1 KiB blocks (each touched), frees
 * them all and returns.  Nothing allocates after the join.  Prints, above
 * the RSS before the worker started:
 *   peak_mb=N      the worker's heap at its largest (read by the worker)
 *   freed_pct=N    what was left when the worker had freed it all, in
 *                  percent of the peak (read by the worker before it ends)
 *   kept_pct=N     what is left after the join, in percent of the peak
 * Whether the thread's end gives the pages back is the allocator's call:
 * jemalloc 5.3 purges an arena whole when its last thread ends and no
 * background thread runs (tcache_destroy), so a worker that had an arena
 * of its own leaves nothing behind, and one that shared its arena with
 * the main thread (narenas:1) leaves it all. */
#include <pthread.h>
#include "probe.h"
#include "probe_util.h"

static long mb, base, peak, freed;

static void *worker(void *arg)
{
	(void)arg;
	size_t n = (size_t)mb * 1024;
	char **v = malloc(n * sizeof *v);
	if (!v)
		probe_die("out of memory for the block table");
	for (size_t i = 0; i < n; i++) {
		if (!(v[i] = malloc(1024)))
			probe_die("malloc failed");
		memset(v[i], 1, 1024);
	}
	peak = probe_rss_bytes() - base;
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
	freed = probe_rss_bytes() - base;
	return NULL;
}

int main(int argc, char **argv)
{
	probe_static_stdout();
	mb = probe_arg(argc, argv, 1, 0);
	if (argc != 2 || mb < 1 || mb > 4096)
		probe_die("usage: jemalloc_thread_exit MB (1..4096)");
	void *volatile warm = malloc(64); /* volatile: the pair must stay */
	free(warm);
	base = probe_rss_bytes();
	pthread_t th;
	if (pthread_create(&th, NULL, worker, NULL) || pthread_join(th, NULL))
		probe_die("the worker thread failed");
	long kept = probe_rss_bytes() - base;
	printf("peak_mb=%ld\nfreed_pct=%ld\nkept_pct=%ld\n", peak >> 20, probe_pct(freed, peak),
	       probe_pct(kept, peak));
	return 0;
}
