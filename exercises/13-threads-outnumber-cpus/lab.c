/*
 * Lab 13: threads outnumber CPUs.
 *
 * Eight threads (sixteen with --full) pinned to two CPUs run the same
 * rounds (workload.h: 200 objects each of 64, 256 and 1024 bytes,
 * allocated then freed, twenty times), first two threads, then eight.
 * While every thread is alive and idle the program reads how many bytes
 * the front caches hold and how often they missed; then the threads end
 * and it reads the caches again.
 *
 *   percpu                 per-CPU caches (TCMalloc): a slab per CPU,
 *                          shared by every thread that runs there
 *   percpu, front:thread   per-thread caches (gperftools 2.10)
 *   bins, slab             per-thread tcaches (glibc, jemalloc)
 *
 * A per-thread cache holds each thread's freed objects, so the cached
 * bytes grow with the threads, even idle ones, and go back when a thread
 * ends; a per-CPU cache is bounded by the CPUs and stays when threads
 * end.  The real gperftools (libtcmalloc_minimal.so.4 through LD_PRELOAD,
 * real.c) is measured the same way when it is installed.
 */
#include "config.h"
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "../lab.h"
#include "workload.h"

typedef struct config {
	const char *policy, *conf, *label;
	bool per_cpu;                 /* the front is per CPU */
} config_t;

static const config_t configs[] = {
	{ "percpu", NULL, "percpu (per-CPU, TCMalloc)", true },
	{ "percpu", "front:thread", "percpu front:thread (gperftools)", false },
	{ "bins", "version:2.43", "bins (tcache, glibc)", false }, /* the README's figures: 2.43's 16 a bin */
	{ "slab", NULL, "slab (tcache, jemalloc)", false },
};
enum { NCONFIGS = sizeof configs / sizeof configs[0] };

typedef struct figures {
	double cached, misses, after_exit;
	double restarts;              /* rseq critical sections restarted */
} figures_t;

typedef struct run {
	hl_heap_t *h;
	cpu_set_t cpus;
	pthread_barrier_t idle, go;
} run_t;

static void *heap_alloc(void *arg, size_t n) { return hl_malloc(arg, n); }
static void heap_free(void *arg, void *p) { hl_free(arg, p); }

static void *worker(void *arg)
{
	run_t *r = arg;
	pthread_setaffinity_np(pthread_self(), sizeof r->cpus, &r->cpus);
	lab13_rounds(heap_alloc, heap_free, r->h);
	pthread_barrier_wait(&r->idle);
	pthread_barrier_wait(&r->go);
	return NULL;
}

static int add_cached(const hl_block_t *b, void *arg)
{
	if (b->state == HL_BLOCK_CACHED)
		*(double *)arg += (double)b->size;
	return 0;
}

/* Bytes the front caches hold: percpu says it in its statistics (its
 * walker counts the transfer cache as cached too); for bins and slab,
 * the blocks their walkers call cached (in a tcache). */
static double front_bytes(hl_heap_t *h, const config_t *c)
{
	if (!strcmp(c->policy, "percpu"))
		return lab_stat(h, c->per_cpu ? "policy_stats.per_cpu_cache_bytes" : "policy_stats.thread_cache_bytes");
	double bytes = 0;
	hl_walk(h, add_cached, &bytes);
	return bytes;
}

/* Mallocs that found the front cache empty. */
static double front_misses(hl_heap_t *h, const config_t *c)
{
	if (!strcmp(c->policy, "percpu") && c->per_cpu) {
		double sum = 0, v;
		char path[64];
		for (int i = 0; snprintf(path, sizeof path, "policy_stats.cpus.%d.underflows", i),
			     hl_stat(h, path, &v) == 0; i++)
			sum += v;
		return sum;
	}
	if (!strcmp(c->policy, "slab"))
		return lab_stat(h, "policy_stats.tcache_fills");
	return lab_stat(h, !strcmp(c->policy, "percpu") ? "policy_stats.thread_cache_misses"
							 : "policy_stats.tcache_misses");
}

static bool experiment(const config_t *c, int nthreads, figures_t *f)
{
	static run_t r;
	memset(&r, 0, sizeof r);
	if (!(r.h = lab_heap(c->policy, c->conf)))
		return false;
	lab13_two_cpus(&r.cpus);
	pthread_barrier_init(&r.idle, NULL, (unsigned)nthreads + 1);
	pthread_barrier_init(&r.go, NULL, (unsigned)nthreads + 1);
	pthread_t t[MAX_THREADS];
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&t[i], NULL, worker, &r) != 0) {
			fprintf(stderr, "lab 13: cannot start a thread: %s\n", strerror(errno));
			exit(2);
		}
	pthread_barrier_wait(&r.idle);
	f->cached = front_bytes(r.h, c);
	f->misses = front_misses(r.h, c);
	if (c->per_cpu)
		f->restarts = lab_stat(r.h, "policy_stats.rseq_restarts");
	if (nthreads > 2 && !strcmp(c->policy, "percpu"))
		lab_snapshot(r.h, c->per_cpu ? "percpu" : "percpu-thread", c->label);
	pthread_barrier_wait(&r.go);
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	f->after_exit = front_bytes(r.h, c);
	pthread_barrier_destroy(&r.idle);
	pthread_barrier_destroy(&r.go);
	hl_heap_destroy(r.h);
	return true;
}

/* The real tcmalloc's thread-cache bytes with @nthreads threads, read
 * by real.c under LD_PRELOAD; false when it cannot be measured here. */
static bool real_tcmalloc(int nthreads, double *bytes, double *after_exit)
{
	const char *lib = getenv("HEAPLAB_FIDELITY_TCMALLOC");
	if (!lib)
		lib = "/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4";
	const char *san = getenv("HL_SANITIZERS");
	if ((san && *san) || access(lib, R_OK) != 0)
		return false;
	char self[PATH_MAX], cmd[2 * PATH_MAX + 64];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0)
		return false;
	self[n] = 0;
	char *slash = strrchr(self, '/');
	if (!slash)
		return false;
	strcpy(slash + 1, "real");
	snprintf(cmd, sizeof cmd, "LD_PRELOAD='%s' '%s' %d", lib, self, nthreads);
	FILE *p = popen(cmd, "r");
	if (!p)
		return false;
	char line[128];
	bool got = false, got_after = false;
	while (fgets(line, sizeof line, p)) {
		got |= sscanf(line, "thread_cache_free=%lf", bytes) == 1;
		got_after |= sscanf(line, "after_exit_thread_cache_free=%lf", after_exit) == 1;
	}
	int st = pclose(p);
	return got && got_after && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static void row(const char *label, int nthreads, const figures_t *f)
{
	printf("  %-34s %2d threads: %7.0f KiB cached, %6.0f misses of %d mallocs, %7.0f KiB after they end\n", label,
	       nthreads, f->cached / 1024, f->misses, nthreads * ROUNDS * PER_SIZE * NSIZES, f->after_exit / 1024);
}

int main(int argc, char **argv)
{
	lab_begin(argc, argv, "Lab 13: threads outnumber CPUs");
	int many = lab_full() ? 16 : 8;
	cpu_set_t two;
	int ncpus = lab13_two_cpus(&two);
	double ws = (double)lab13_working_set();
	printf("%d and %d threads pinned to %d CPU%s; each frees %.0f KiB per round (%d rounds)\n\n", 2, many, ncpus,
	       ncpus == 1 ? "" : "s", ws / 1024, ROUNDS);
	figures_t fig[NCONFIGS][2];
	bool have[NCONFIGS] = { false };
	for (int i = 0; i < NCONFIGS; i++) {
		const config_t *c = &configs[i];
		if (!experiment(c, 2, &fig[i][0]) || !experiment(c, many, &fig[i][1]))
			continue;
		have[i] = true;
		row(c->label, 2, &fig[i][0]);
		row(c->label, many, &fig[i][1]);
		if (c->per_cpu)
			printf("  %-34s rseq critical sections restarted: %.0f with 2 threads, %.0f with %d\n", "",
			       fig[i][0].restarts, fig[i][1].restarts, many);
	}
	double real2 = 0, realn = 0, real_after = 0, ignored;
	bool real = real_tcmalloc(2, &real2, &ignored) && real_tcmalloc(many, &realn, &real_after);
	if (real) {
		printf("  %-34s %2d threads: %7.0f KiB cached\n", "libtcmalloc_minimal.so.4 (real)", 2, real2 / 1024);
		printf("  %-34s %2d threads: %7.0f KiB cached, %28s %7.0f KiB after they end\n",
		       "libtcmalloc_minimal.so.4 (real)", many, realn / 1024, "", real_after / 1024);
	}
	printf("\n");

	double grow = (double)many / 2;
	for (int i = 0; i < NCONFIGS; i++) {
		if (!have[i])
			continue;
		const config_t *c = &configs[i];
		const figures_t *a = &fig[i][0], *b = &fig[i][1];
		if (c->per_cpu) {
			/* a CPU's stack of a class holds at most 64 KiB here
			 * (max_cap), less than one thread's working set of
			 * these three classes: the bound is per CPU */
			lab_expect(b->cached <= ncpus * ws,
				   "%s: %d threads cache no more than one thread's working set per CPU (%.0f KiB; "
				   "%.0f with 2 threads)", c->label, many, b->cached / 1024, a->cached / 1024);
			lab_expect(b->cached < 0.5 * many * ws,
				   "%s: far less than every thread's freed objects (%.0f KiB of %.0f)", c->label,
				   b->cached / 1024, many * ws / 1024);
			lab_expect(b->after_exit > 0 && b->after_exit >= 0.9 * b->cached,
				   "%s: the CPUs keep their objects when the threads end (%.0f KiB still cached)", c->label,
				   b->after_exit / 1024);
		} else {
			lab_expect(b->cached >= 0.75 * grow * a->cached,
				   "%s: the cached bytes grow with the threads (%.0f KiB with %d, %.0f with 2)", c->label,
				   b->cached / 1024, many, a->cached / 1024);
			lab_expect(b->after_exit <= 0.1 * b->cached,
				   "%s: a thread's cache goes back when it ends (%.0f KiB left)", c->label,
				   b->after_exit / 1024);
		}
	}
	if (have[0] && have[1])
		lab_expect(fig[1][1].cached > 2 * fig[0][1].cached,
			   "with %d threads on %d CPUs, per-thread caches hold more than twice what per-CPU caches hold "
			   "(%.0f KiB against %.0f)", many, ncpus, fig[1][1].cached / 1024, fig[0][1].cached / 1024);
	if (real) {
		lab_expect(realn >= 0.75 * grow * real2 && real_after <= 0.1 * realn,
			   "the real gperftools: its thread caches grow with the threads and go back when they end "
			   "(%.0f KiB with %d, %.0f with 2, %.0f after)", realn / 1024, many, real2 / 1024,
			   real_after / 1024);
		if (have[1])
			lab_expect(fig[1][1].cached >= 0.5 * realn && fig[1][1].cached <= 2 * realn,
				   "front:thread caches within a factor of two of the real gperftools (%.0f KiB against %.0f)",
				   fig[1][1].cached / 1024, realn / 1024);
	} else {
		lab_skip("the real tcmalloc (libtcmalloc_minimal.so.4) cannot be preloaded here");
	}
	return lab_end();
}
