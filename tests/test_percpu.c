/*
 * Tests of the `percpu` policy (TCMalloc): the size classes, the tiers,
 * the rseq critical sections under forced restarts, the lock fallback,
 * front:thread, release.
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "testlib.h"

/* The front's mode as the statistics name it. */
static int front_mode_is(hl_heap_t *h, const char *mode)
{
	static char buf[1 << 16];
	char want[64];
	FILE *f = fmemopen(buf, sizeof buf, "w");
	hl_stats_json(h, f);
	fclose(f);
	snprintf(want, sizeof want, "\"front_mode\":\"%s\"", mode);
	return strstr(buf, want) != NULL;
}

/* Values from TCMalloc's size_classes.cc (8 KiB pages): request -> class. */
START_TEST(usable_sizes_follow_tcmalloc_classes)
{
	static const size_t rows[][2] = {
		{ 1, 8 }, { 8, 8 }, { 9, 16 }, { 17, 32 }, { 1000, 1024 }, { 1025, 1152 },
		{ 2817, 3200 }, { 7000, 7168 }, { 200000, 204800 }, { 262144, 262144 },
		{ 262145, 270336 }, /* large: 33 pages of 8 KiB */
	};
	hl_heap_t *h = tl_heap("percpu", NULL);
	for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
		void *p = hl_malloc(h, rows[i][0]);
		ck_assert_msg(hl_usable_size(h, p) == rows[i][1], "malloc(%zu): usable %zu, want %zu", rows[i][0],
			      hl_usable_size(h, p), rows[i][1]);
		hl_free(h, p);
	}
	ck_assert_double_eq(tl_stat(h, "policy_stats.classes"), 85);
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

/* The fullest span serves first: after freeing most of one span's
 * objects, new objects come from the span that is still full-ish. */
START_TEST(objects_come_from_spans_in_a_heap_of_page_spans)
{
	hl_heap_t *h = tl_heap("percpu", "cpu_cache_bytes:0");
	enum { N = 2000 };
	static void *p[N];
	for (int i = 0; i < N; i++)
		p[i] = hl_malloc(h, 64);
	ck_assert_double_ge(tl_stat(h, "policy_stats.spans_small"), N * 64 / 8192);
	for (int i = 0; i < N; i++)
		hl_free(h, p[i]);
	hl_trim(h, 0);
	/* every object back in its span: every span went back to the page heap */
	ck_assert_double_eq(tl_stat(h, "policy_stats.spans_small"), 0);
	ck_assert_double_eq(tl_stat(h, "policy_stats.per_cpu_cache_bytes"), 0);
	ck_assert_double_eq(tl_stat(h, "policy_stats.transfer_cache_bytes"), 0);
	ck_assert_double_gt(tl_stat(h, "policy_stats.released_bytes"), 0);
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

START_TEST(rseq_off_forces_the_lock_fallback)
{
	hl_heap_t *h = tl_heap("percpu", "rseq:off");
	void *p = hl_malloc(h, 100);
	hl_free(h, p);
	ck_assert(front_mode_is(h, "lock"));
	ck_assert_double_eq(tl_stat(h, "policy_stats.rseq_restarts"), 0);
	tl_check_clean(h);
	hl_heap_destroy(h);
	h = tl_heap("percpu", "front:thread");
	ck_assert(front_mode_is(h, "thread"));
	hl_heap_destroy(h);
	h = tl_heap("percpu", NULL);
	ck_assert(front_mode_is(h, tl_stat(h, "policy_stats.rseq_available") ? "rseq" : "lock"));
	hl_heap_destroy(h);
}
END_TEST

/* A process whose glibc did not register rseq falls back to the lock at
 * start-up: heaplab replay under GLIBC_TUNABLES=glibc.pthread.rseq=0. */
START_TEST(no_rseq_registration_means_lock_mode)
{
	const char *build = getenv("abs_top_builddir"), *src = getenv("abs_top_srcdir");
	ck_assert_msg(build && src, "run me through make check (abs_top_builddir)");
	char cmd[4096], line[256];
	snprintf(cmd, sizeof cmd,
		 "GLIBC_TUNABLES=glibc.pthread.rseq=0 '%s/heaplab' replay --policy=percpu --repeat 0 --stats "
		 "'%s/book/traces/many-small.rep'", build, src);
	FILE *f = popen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	int lock = 0, rseq_off = 0;
	while (fgets(line, sizeof line, f)) {
		lock += strstr(line, "front_mode: lock") != NULL;
		rseq_off += strstr(line, "rseq_available: false") != NULL;
	}
	ck_assert_int_eq(pclose(f), 0);
	ck_assert_int_eq(lock, 1);
	ck_assert_int_eq(rseq_off, 1);
}
END_TEST

/* Consecutive mallocs in a fresh heap go up through a span, in both fronts.
 * The thread stays on the CPU it runs on: moved to another between two
 * mallocs, it would take the next object from that CPU's slab, filled from
 * later in the span (a move seen once under ThreadSanitizer on a loaded
 * machine: 0x...000, 0x...600, 0x...630). */
START_TEST(fresh_objects_come_in_address_order)
{
	const char *confs[] = { "rseq:on", "rseq:off", "front:thread" };
	tl_stay_on_this_cpu();
	for (int c = 0; c < 3; c++) {
		hl_heap_t *h = tl_heap("percpu", confs[c]);
		char *a = hl_malloc(h, 40), *b = hl_malloc(h, 40), *d = hl_malloc(h, 40);
		ck_assert_msg(b == a + 48 && d == b + 48, "%s: %p %p %p", confs[c], (void *)a, (void *)b, (void *)d);
		hl_free(h, a), hl_free(h, b), hl_free(h, d);
		hl_heap_destroy(h);
	}
}
END_TEST

/* ---- forced restarts ------------------------------------------------------ */

enum { WORKERS = 8, RING = 48, ROUNDS = 40000 };

typedef struct worker {
	hl_heap_t *h;
	int id;
	pthread_t th;
	atomic_int *stop, *done;
	long errors;
} worker_t;

static void on_signal(int sig) { (void)sig; }

/* Many threads, each migrated between two CPUs every few hundred
 * operations; every block carries its owner's stamp, checked on free, so
 * an object handed to two threads at once shows. */
static void *restart_worker(void *arg)
{
	worker_t *w = arg;
	uint64_t *ring[RING] = { 0 };
	uint64_t seed = 0x9e3779b97f4a7c15ull * (uint64_t)(w->id + 1);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	for (long op = 0; op < ROUNDS; op++) {
		if (op % 256 == 0 && ncpu > 1) {
			cpu_set_t set;
			CPU_ZERO(&set);
			CPU_SET((int)((op / 256 + w->id) % (ncpu < 2 ? 1 : 2)), &set);
			sched_setaffinity(0, sizeof set, &set);
		}
		seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
		int i = (int)(seed % RING);
		if (ring[i]) {
			if (ring[i][0] != (uint64_t)w->id || ring[i][1] != (uint64_t)(uintptr_t)ring[i])
				w->errors++;
			hl_free(w->h, ring[i]);
			ring[i] = NULL;
		} else {
			size_t n = 16 + (seed >> 20) % 300;
			ring[i] = hl_malloc(w->h, n);
			ring[i][0] = (uint64_t)w->id;
			ring[i][1] = (uint64_t)(uintptr_t)ring[i];
		}
	}
	for (int i = 0; i < RING; i++)
		hl_free(w->h, ring[i]);
	atomic_fetch_add(w->done, 1);
	while (!atomic_load(w->stop)) /* alive until the signals stop */
		sched_yield();
	return NULL;
}

/* Signals every worker in a loop: a signal delivered inside a critical
 * section sends the thread to its abort handler. */
static void *signaller(void *arg)
{
	worker_t *w = arg;
	while (atomic_load(w[0].done) < WORKERS)
		for (int k = 0; k < WORKERS; k++)
			pthread_kill(w[k].th, SIGUSR1);
	atomic_store(w[0].stop, 1);
	return NULL;
}

START_TEST(restarts_lose_and_duplicate_nothing)
{
	hl_heap_t *h = tl_heap("percpu", "debug:off");
	int rseq = tl_stat(h, "policy_stats.rseq_available") != 0;
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESTART };
	sigaction(SIGUSR1, &sa, NULL);
	double restarts = 0;
	/* a restart needs a preemption or a signal inside ~10 instructions:
	 * rounds repeat until one has been seen (a handful at most) */
	for (int round = 0; round < 20 && (restarts == 0 || round < 2); round++) {
		atomic_int stop = 0, done = 0;
		worker_t w[WORKERS];
		pthread_t sig;
		for (int k = 0; k < WORKERS; k++) {
			w[k] = (worker_t){ .h = h, .id = k, .stop = &stop, .done = &done };
			ck_assert_int_eq(pthread_create(&w[k].th, NULL, restart_worker, &w[k]), 0);
		}
		pthread_create(&sig, NULL, signaller, w);
		long errors = 0;
		pthread_join(sig, NULL);
		for (int k = 0; k < WORKERS; k++) {
			pthread_join(w[k].th, NULL);
			errors += w[k].errors;
		}
		ck_assert_msg(errors == 0, "%ld blocks were held by two threads", errors);
		restarts = tl_stat(h, "policy_stats.rseq_restarts");
		tl_check_clean(h);  /* no object cached twice, every count right */
	}
	signal(SIGUSR1, SIG_DFL);
	printf("restarts: %.0f rseq critical sections aborted, %.0f slab fences (mode %s)\n", restarts,
	       tl_stat(h, "policy_stats.slab_fences"), rseq ? "rseq" : "lock");
	if (rseq)
		ck_assert_msg(restarts > 0, "no critical section was ever restarted");
	ck_assert_double_eq(tl_stat(h, "live_requested_bytes"), 0);
	hl_trim(h, 0);
	ck_assert_double_eq(tl_stat(h, "policy_stats.spans_small"), 0); /* no object lost */
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

START_TEST(release_rate_releases_free_pages_over_time)
{
	hl_heap_t *h = tl_heap("percpu", "release_rate:1G");
	for (int round = 0; round < 200; round++) {
		void *p = hl_malloc(h, 1 << 20);
		memset(p, 1, 1 << 20);
		hl_free(h, p);
		usleep(1000);
	}
	ck_assert_double_gt(tl_stat(h, "policy_stats.released_bytes"), 0);
	tl_check_clean(h);
	hl_heap_destroy(h);
	h = tl_heap("percpu", NULL); /* rate 0: only hl_trim releases */
	for (int round = 0; round < 200; round++)
		hl_free(h, hl_malloc(h, 1 << 20));
	ck_assert_double_eq(tl_stat(h, "policy_stats.released_bytes"), 0);
	hl_heap_destroy(h);
}
END_TEST

/* front:thread: gperftools' classes, and thread caches drained at exit. */
START_TEST(front_thread_uses_gperftools_classes)
{
	hl_heap_t *h = tl_heap("percpu", "front:thread");
	void *p = hl_malloc(h, 1);
	ck_assert_uint_eq(hl_usable_size(h, p), 8);
	hl_free(h, p);
	ck_assert_double_gt(tl_stat(h, "policy_stats.classes"), 80);
	pthread_t th;
	pthread_create(&th, NULL, tl_thread_touch, h);
	pthread_join(th, NULL);
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

static Suite *percpu_suite(void)
{
	Suite *s = suite_create("percpu");
	TCase *tc = tcase_create("model");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, usable_sizes_follow_tcmalloc_classes);
	tcase_add_test(tc, objects_come_from_spans_in_a_heap_of_page_spans);
	tcase_add_test(tc, rseq_off_forces_the_lock_fallback);
	tcase_add_test(tc, no_rseq_registration_means_lock_mode);
	tcase_add_test(tc, fresh_objects_come_in_address_order);
	tcase_add_test(tc, restarts_lose_and_duplicate_nothing);
	tcase_add_test(tc, release_rate_releases_free_pages_over_time);
	tcase_add_test(tc, front_thread_uses_gperftools_classes);
	suite_add_tcase(s, tc);
	return s;
}

TL_MAIN(percpu_suite)
