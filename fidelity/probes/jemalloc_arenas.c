/* jemalloc_arenas THREADS: how many arenas there are and how many THREADS
 * threads (each holding one block, all alive at once) plus the main thread
 * are spread over.  Prints
 *   narenas=N       automatic arenas (jemalloc's opt.narenas: 4 per CPU)
 *   arenas_used=N   arenas that have at least one thread bound to them
 *   arenas_total=N  every arena index in use, the huge arena included
 *                   once a block of oversize_threshold or more was made
 *   rss_per_thread_kib=N  (the process's RSS with the threads holding their
 *                   block - its RSS before they started) / THREADS: a
 *                   thread's stack and the C library's share are the same
 *                   on both sides, the rest is the allocator's (an arena's
 *                   metadata and a slab page while THREADS stays below the
 *                   automatic arena count, the thread's cache); read before
 *                   anything else runs
 * The real side reads jemalloc's mallctl (found with dlsym), the model
 * side the slab policy's statistics. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include "probe.h"

enum { MAX_THREADS = 64 };

typedef int (*mallctl_fn)(const char *, void *, size_t *, void *, size_t);

static pthread_barrier_t hold, release;

static void *worker(void *arg)
{
	(void)arg;
	void *volatile p = malloc(64);
	pthread_barrier_wait(&hold);
	pthread_barrier_wait(&release);
	free(p);
	return NULL;
}

static unsigned ctl_unsigned(mallctl_fn ctl, const char *name)
{
	unsigned v = 0;
	size_t len = sizeof v;
	if (ctl(name, &v, &len, NULL, 0))
		probe_die("a mallctl read failed");
	return v;
}

static void print_real(void)
{
	mallctl_fn ctl = (mallctl_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "mallctl");
	if (!ctl) {
		fprintf(stderr, "probe: no mallctl: not running on jemalloc\n");
		exit(77);
	}
	uint64_t epoch = 1;
	size_t len = sizeof epoch;
	ctl("epoch", &epoch, &len, &epoch, len);
	unsigned total = ctl_unsigned(ctl, "arenas.narenas"), used = 0;
	for (unsigned i = 0; i < total; i++) {
		char name[64];
		snprintf(name, sizeof name, "stats.arenas.%u.nthreads", i);
		unsigned n = 0;
		len = sizeof n;
		if (ctl(name, &n, &len, NULL, 0) == 0 && n > 0)
			used++;
	}
	printf("narenas=%u\narenas_used=%u\narenas_total=%u\n", ctl_unsigned(ctl, "opt.narenas"), used, total);
}

static void print_model(void)
{
	double narenas = 0, used = 0, huge = 0;
	if (probe_model_stat("policy_stats.narenas", &narenas) ||
	    probe_model_stat("policy_stats.arenas_in_use", &used) ||
	    probe_model_stat("policy_stats.oversize_threshold", &huge))
		probe_die("the model has no arena statistics (not slab?)");
	/* jemalloc reserves the huge arena's index at start whenever the
	 * threshold is on, so it counts in arenas.narenas from the start */
	printf("narenas=%.0f\narenas_used=%.0f\narenas_total=%.0f\n", narenas, used, narenas + (huge > 0));
}

int main(int argc, char **argv)
{
	probe_static_stdout();
	long n = probe_arg(argc, argv, 1, 4);
	if (n > MAX_THREADS)
		probe_die("THREADS must be at most 64");
	void *volatile mine = malloc(64);
	pthread_t th[MAX_THREADS];
	pthread_barrier_init(&hold, NULL, (unsigned)n + 1);
	pthread_barrier_init(&release, NULL, (unsigned)n + 1);
	long rss_before = probe_rss_bytes();
	for (long i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, worker, NULL))
			probe_die("pthread_create failed");
	pthread_barrier_wait(&hold);
	long rss_held = probe_rss_bytes();
	if (probe_is_model())
		print_model();
	else
		print_real();
	if (n > 0)
		printf("rss_per_thread_kib=%ld\n", (rss_held - rss_before) / n / 1024);
	pthread_barrier_wait(&release);
	for (long i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	free(mine);
	return 0;
}
