/*
 * Tests of the `percpu` policy (TCMalloc): the size classes, the tiers,
 * the rseq critical sections under forced restarts, the lock fallback,
 * front:thread, release, hugepage:on.
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
#include <sys/wait.h>
#include "testlib_events.h"
#include "side_state.h"
#include "percpu_fast.h"

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

/* free's hit finds an object's index with one multiply and a rotation
 * (pc_exact_index): for every class of both tables, every byte offset of
 * a span and a stride past it must give off / stride exactly when stride
 * divides off, and an index no span has (past nobjs) otherwise; so must
 * offsets of a pointer below the span, which wrap to huge numbers. */
static void exact_index_matches_division(const pc_classes_t *c)
{
	for (unsigned k = 1; k < c->n; k++) {
		uint64_t stride = c->stride[k], span = (uint64_t)c->pages[k] << PC_PAGE_SHIFT;
		for (uint64_t off = 0; off < span + stride; off++) {
			uint64_t i = pc_exact_index(c, k, off);
			/* (ck_assert only on a failure: each call is a message to the runner) */
			if (off % stride == 0 ? i != off / stride : i <= UINT64_MAX / stride)
				ck_abort_msg("class %u (stride %llu): offset %llu gave %llu", k, (unsigned long long)stride,
					     (unsigned long long)off, (unsigned long long)i);
		}
		for (uint64_t back = 1; back <= 4 * stride; back++)
			if (pc_exact_index(c, k, -back) < PC_MAX_OBJS)
				ck_abort_msg("class %u: %llu below the span", k, (unsigned long long)back);
	}
}

START_TEST(exact_index_is_the_division_for_every_class)
{
	static pc_classes_t c;
	pc_classes_tcmalloc(&c);
	exact_index_matches_division(&c);
	pc_classes_gperftools(&c);
	exact_index_matches_division(&c);
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
	 * rounds repeat until one has been seen.  One round in several sees
	 * none (a run of 20 rounds saw none in about one run of three, on a
	 * quiet machine), so up to 200 */
	for (int round = 0; round < 200 && (restarts == 0 || round < 2); round++) {
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

/* A slow path on the CPU the thread runs on stops the slab from that CPU,
 * in a critical section, and needs no fence (TCMalloc changes the current
 * CPU's header without one); draining another CPU's slab does. */
START_TEST(slow_paths_on_their_own_cpu_need_no_fence)
{
	hl_heap_t *h = tl_heap("percpu", "debug:off");
	int rseq = tl_stat(h, "policy_stats.rseq_available") != 0;
	unsigned ncpus = (unsigned)tl_stat(h, "policy_stats.ncpus");
	tl_stay_on_this_cpu();
	enum { N = 2000 };
	static void *p[N];
	for (int i = 0; i < N; i++)
		p[i] = hl_malloc(h, 32);
	for (int i = 0; i < N; i++)
		hl_free(h, p[i]);
	double underflows = 0;
	char path[64];
	double u;
	for (unsigned k = 0; snprintf(path, sizeof path, "policy_stats.cpus.%u.underflows", k),
			     hl_stat(h, path, &u) == 0; k++)
		underflows += u;                         /* the CPUs that cached something */
	ck_assert_double_ge(underflows, N / 64);         /* a batch is at most 32 */
	ck_assert_double_eq(tl_stat(h, "policy_stats.slab_fences"), 0);
	hl_trim(h, 0);                                   /* drains every CPU's slab */
	if (rseq)
		ck_assert_double_ge(tl_stat(h, "policy_stats.slab_fences"), ncpus - 1);
	else
		ck_assert_double_eq(tl_stat(h, "policy_stats.slab_fences"), 0);
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

/* ---- hugepage:on ---------------------------------------------------------
 * Large blocks of 33 to 128 pages of 8 KiB are spans of their own, placed
 * by the page heap's rule, so a test can lay out hugepages (256 pages)
 * page by page.  A fresh heap commits its first region 1 MiB (128 pages)
 * at a time from a 2 MiB aligned base: hugepage H0 is pages [0, 256) and
 * H1 pages [256, 512). */
enum { HP_PAGE = 8192, HP_PAGES = 256 };

static void *pages(hl_heap_t *h, size_t n)
{
	void *p = hl_malloc(h, n * HP_PAGE);
	ck_assert_ptr_nonnull(p);
	return p;
}

/* Fills H0 with 128 + 80 + 48 pages and H1 with 48 + 80 + 128 (same
 * places in both modes: each block takes the free tail), frees the 80 in
 * H0 and the 48 and 128 in H1 (H0: 176 pages used, one hole of 80; H1:
 * 80 used, holes of 48 and 128), asks for 40 pages twice, then frees H1's
 * 80.
 *   hugepage:off (the legacy lists by length, smallest fitting length
 *   first): the first 40 go to the 48-page hole (H1), the second to the
 *   80-page hole (H0).  Then H0 has 216 pages used and H1 40: both partly
 *   used.
 *   hugepage:on (the most used hugepage with room): both go to H0's hole
 *   (176, then 216 used, against H1's 80), which they fill exactly.  Then
 *   H0 is full and H1 has no page used. */
static hl_heap_t *two_hugepages_after_churn(const char *conf)
{
	hl_heap_t *h = tl_heap("percpu", conf);
	pages(h, 128);
	void *a2 = pages(h, 80);
	pages(h, 48);
	void *b1 = pages(h, 48), *b2 = pages(h, 80), *b3 = pages(h, 128);
	ck_assert_double_eq(tl_stat(h, "policy_stats.hugepages_full"), 2);
	hl_free(h, a2);
	hl_free(h, b1);
	hl_free(h, b3);
	pages(h, 40);
	pages(h, 40);
	hl_free(h, b2);
	return h;
}

/* What a statistic should be in each mode. */
typedef struct hp_expect {
	const char *key;               /**< under policy_stats */
	double on, off;                /**< with hugepage:on, with hugepage:off */
} hp_expect_t;

static void expect_both(hl_heap_t *on, hl_heap_t *off, const hp_expect_t *rows, size_t n)
{
	char path[96];
	for (size_t i = 0; i < n; i++) {
		snprintf(path, sizeof path, "policy_stats.%s", rows[i].key);
		ck_assert_msg(tl_stat(on, path) == rows[i].on, "hugepage:on: %s is %g, want %g", rows[i].key,
			      tl_stat(on, path), rows[i].on);
		ck_assert_msg(tl_stat(off, path) == rows[i].off, "hugepage:off: %s is %g, want %g", rows[i].key,
			      tl_stat(off, path), rows[i].off);
	}
	tl_check_clean(on);
	tl_check_clean(off);
}

START_TEST(hugepage_on_keeps_more_hugepages_intact)
{
	static const hp_expect_t before[] = {
		{ "hugepages", 2, 2 }, { "hugepages_full", 1, 0 },
		{ "hugepages_empty", 1, 0 }, { "hugepages_partial", 0, 2 },
	};
	/* Trim releases every free page: 256 pages in both modes (on: all of
	 * H1; off: 40 of H0 and 216 of H1), but on H1 goes back whole and H0
	 * stays intact (all the pages in use on intact hugepages), while off
	 * breaks both. */
	static const hp_expect_t after[] = {
		{ "released_bytes", HP_PAGES * HP_PAGE, HP_PAGES * HP_PAGE }, { "hugepages_intact", 1, 0 },
		{ "hugepages_released", 1, 0 }, { "hugepages_broken", 0, 2 }, { "hugepage_coverage", 1, 0 },
	};
	hl_heap_t *on = two_hugepages_after_churn("hugepage:on");
	hl_heap_t *off = two_hugepages_after_churn("hugepage:off");
	expect_both(on, off, before, sizeof before / sizeof *before);
	hl_trim(on, 0);
	hl_trim(off, 0);
	expect_both(on, off, after, sizeof after / sizeof *after);
	hl_heap_destroy(on);
	hl_heap_destroy(off);
}
END_TEST

/* H0 holds 128 + 72 + 56 pages, H1 128 + 128; freeing the 56 and both of
 * H1's leaves one free span of 312 pages across them (56 in H0, all of
 * H1).  A trim keeping 56 pages owes 256:
 *   hugepage:on releases the emptiest hugepage's run, all of H1 (256
 *   pages), and H0 stays intact;
 *   hugepage:off releases whole spans, longest first: all 312 pages,
 *   and H0 is broken. */
static hl_heap_t *free_run_across_two_hugepages(const char *conf)
{
	hl_heap_t *h = tl_heap("percpu", conf);
	pages(h, 128);
	pages(h, 72);
	void *a3 = pages(h, 56), *b1 = pages(h, 128), *b2 = pages(h, 128);
	hl_free(h, a3);
	hl_free(h, b1);
	hl_free(h, b2);
	ck_assert_double_eq(tl_stat(h, "policy_stats.spans_free"), 1);
	return h;
}

START_TEST(trim_releases_whole_empty_hugepages_first)
{
	static const hp_expect_t after[] = {
		{ "pageheap_free_bytes", 56 * HP_PAGE, 0 }, { "hugepages_released", 1, 1 },
		{ "hugepages_intact", 1, 0 }, { "hugepages_broken", 0, 1 },
	};
	hl_heap_t *on = free_run_across_two_hugepages("hugepage:on");
	hl_heap_t *off = free_run_across_two_hugepages("hugepage:off");
	ck_assert_uint_eq(hl_trim(on, 56 * HP_PAGE), (size_t)HP_PAGES * HP_PAGE);
	ck_assert_uint_eq(hl_trim(off, 56 * HP_PAGE), (size_t)312 * HP_PAGE);
	expect_both(on, off, after, sizeof after / sizeof *after);
	hl_heap_destroy(on);
	hl_heap_destroy(off);
}
END_TEST

/* The checker recounts each hugepage's pages from the spans: a count off
 * by one, used or released, is reported with its hugepage.  (A second
 * percpu state is made inside a heap through the policy's table, so the
 * test can reach its counts.) */
START_TEST(checker_catches_a_wrong_hugepage_count)
{
	hl_heap_t *h = tl_heap("percpu", NULL);
	const hl_policy_t *pol = hl_policy_find("percpu");
	hl_conf_t conf;
	char err[256], first[256];
	ck_assert_int_eq(hl_conf_parse(&conf, pol->options, "hugepage:on", err, sizeof err), 0);
	pc_state_t *s = pol->init(h, &conf);
	ck_assert_ptr_nonnull(s);
	void *p = pol->malloc(s, hl_thread_get(h), 64 * HP_PAGE);
	hl_report_t r = { .first = first, .first_len = sizeof first };
	ck_assert_int_eq(pol->check(s, &r), 0);
	ck_assert_uint_eq(s->ph.regions[0].hp_used[0], 64);
	s->ph.regions[0].hp_used[0]++;
	ck_assert_int_eq(pol->check(s, &r), 1);
	ck_assert_msg(strstr(first, "hugepage 0") != NULL, "%s", first);
	s->ph.regions[0].hp_used[0]--;
	s->ph.regions[0].hp_released[0] = 1;
	r.problems = 0;
	ck_assert_int_eq(pol->check(s, &r), 1);
	s->ph.regions[0].hp_released[0] = 0;
	pol->free(s, hl_thread_get(h), p);
	r.problems = 0;
	ck_assert_int_eq(pol->check(s, &r), 0);
	hl_heap_destroy(h);
}
END_TEST

/* Under churn of small objects and large blocks, the counts stay true
 * (the checker recounts them) in both modes, and hugepage:on never lets
 * a span of up to 128 pages straddle two hugepages. */
START_TEST(hugepage_counts_stay_true_under_churn)
{
	static const char *confs[] = { "hugepage:on", "hugepage:off" };
	for (int c = 0; c < 2; c++) {
		hl_heap_t *h = tl_heap("percpu", confs[c]);
		enum { N = 256 };
		static void *p[N];
		unsigned x = 12345;
		for (int round = 0; round < 4000; round++) {
			x = x * 1103515245u + 12345u;
			int i = (int)((x >> 8) % N);
			if (p[i]) {
				hl_free(h, p[i]);
				p[i] = NULL;
			} else {
				size_t n = (x >> 20) % 4 == 0 ? (33 + (x >> 22) % 96) * HP_PAGE : 16 + (x >> 18) % 4000;
				p[i] = hl_malloc(h, n);
				if (c == 0 && n > PC_MAX_SMALL) {
					uintptr_t a = (uintptr_t)p[i], last = a + n - 1;
					ck_assert_msg(a >> 21 == last >> 21, "block of %zu bytes at %p straddles", n, p[i]);
				}
			}
			if (round % 500 == 0) {
				tl_check_clean(h);
				hl_trim(h, (x >> 4) % (4u << 20));
			}
		}
		tl_check_clean(h);
		for (int i = 0; i < N; i++) {
			hl_free(h, p[i]);
			p[i] = NULL;
		}
		hl_trim(h, 0);
		ck_assert_double_eq(tl_stat(h, "policy_stats.hugepages_full"), 0);
		ck_assert_double_eq(tl_stat(h, "policy_stats.hugepages_partial"), 0);
		tl_check_clean(h);
		hl_heap_destroy(h);
	}
}
END_TEST

/* ---- lost objects ----------------------------------------------------------
 * An object handed out of its span that is in no cache and not live is
 * lost: the checker marks the cached objects and the ledger's live ones
 * and names an object of a small span that is neither free nor marked.
 * The tests damage a second percpu state (side_state.h), whose objects
 * are not in the heap's ledger, so they keep none of them live:
 * everything they allocate is freed into a cache before the damage. */
typedef tl_side_t side_t;

static pc_state_t *pcs(const side_t *x)
{
	return x->state;
}

static void side_open(side_t *x, const char *conf)
{
	tl_side_open(x, "percpu", conf);
}

/* The checker names @p lost, of class @p cls, as lost, in its first line. */
static void side_finds_lost(side_t *x, const void *lost, unsigned cls)
{
	char text[2048], want[128];
	int n = tl_side_check(x, text, sizeof text);
	snprintf(want, sizeof want, "heaplab: percpu: check: object %p (class %u) lost", lost, cls);
	ck_assert_msg(n >= 1 && strncmp(text, want, strlen(want)) == 0, "%d problem(s), report \"%s\", wanted \"%s\"", n,
		      text, want);
}

/* A second state with @conf in which one object of 64 bytes (class
 * *@cls) was allocated and freed into the front: that object, the heap
 * checked clean. */
static void *side_with_one_cached(side_t *x, const char *conf, unsigned *cls)
{
	side_open(x, conf);
	*cls = pc_class_of(&pcs(x)->cl, 64);
	void *p = x->pol->malloc(x->state, &x->t, 64);
	x->pol->free(x->state, &x->t, p);
	tl_side_clean(x);
	return p;
}

/* The stack of @p size's class on the CPU this thread is pinned to. */
static pc_stack_t *side_stack(side_t *x, size_t size, unsigned *cpu)
{
	*cpu = (unsigned)sched_getcpu();
	ck_assert_uint_lt(*cpu, pcs(x)->ncpus);
	return &pc_slab(x->state, *cpu)->stacks[pc_class_of(&pcs(x)->cl, size)];
}

/* mallocs @p size into @p out[*n...] until one malloc underflows. */
static void side_malloc_to_underflow(side_t *x, unsigned cpu, size_t size, void **out, unsigned *n, unsigned most)
{
	uint64_t before = pcs(x)->cpus[cpu].underflows;
	while (pcs(x)->cpus[cpu].underflows == before) {
		ck_assert_uint_lt(*n, most);
		out[(*n)++] = x->pol->malloc(x->state, &x->t, size);
	}
}

/* frees @p out[*n - 1] down until one free overflows. */
static void side_free_to_overflow(side_t *x, unsigned cpu, void **out, unsigned *n)
{
	uint64_t before = pcs(x)->cpus[cpu].overflows;
	while (pcs(x)->cpus[cpu].overflows == before) {
		ck_assert_uint_gt(*n, 0);
		x->pol->free(x->state, &x->t, out[--*n]);
	}
}

/* Expected values from TCMalloc's rules (google/tcmalloc fce3f55,
 * cpu_cache.h: UpdateCapacity, TargetOverflowRefillCount), worked out
 * here from the class's batch b, not read from the model: a miss moves
 * half the capacity plus one, at most 2^k batches for the k-th miss of
 * one kind in a row (a fresh class's first underflow counts as the
 * 1st); below 2b a miss grows the capacity by one, an underflow below b
 * to b; past 2b only an underflow after an overflow grows it, by b. */
START_TEST(per_cpu_misses_size_and_move_as_tcmalloc_does)
{
	side_t x;
	enum { SIZE = 64, MOST = 20000 };
	static void *out[MOST];
	unsigned n = 0, cpu;
	tl_stay_on_this_cpu();
	side_open(&x, "rseq:off");
	pc_stack_t *st = side_stack(&x, SIZE, &cpu);
	unsigned b = pcs(&x)->cl.batch[pc_class_of(&pcs(&x)->cl, SIZE)];
	ck_assert_uint_ge(b, 8);
	/* 1st underflow: capacity 0 -> b, moves (b+1)/2+1, one returned */
	side_malloc_to_underflow(&x, cpu, SIZE, out, &n, MOST);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(st->capacity, b);
	ck_assert_uint_eq(st->current, (b + 1) / 2);
	/* 2nd in a row: capacity b+1, moves (b+2)/2+1 */
	side_malloc_to_underflow(&x, cpu, SIZE, out, &n, MOST);
	ck_assert_uint_eq(n, 1 + (b + 1) / 2 + 1);
	ck_assert_uint_eq(st->capacity, b + 1);
	ck_assert_uint_eq(st->current, (b + 2) / 2);
	/* an overflow: capacity b+2, gives the freed one and (b+3)/2 more */
	side_free_to_overflow(&x, cpu, out, &n);
	ck_assert_uint_eq(st->capacity, b + 2);
	ck_assert_uint_eq(st->current, b + 1 - (b + 3) / 2);
	/* an underflow after an overflow grows by a batch and moves b */
	side_malloc_to_underflow(&x, cpu, SIZE, out, &n, MOST);
	ck_assert_uint_eq(st->capacity, 2 * b + 2);
	ck_assert_uint_eq(st->current, b - 1);
	/* objects to free in the cycles below (the capacity is past 2b:
	 * a run of underflows does not grow it) */
	for (unsigned i = 0; i < 20 * b; i++)
		out[n++] = x.pol->malloc(x.state, &x.t, SIZE);
	ck_assert_uint_eq(st->capacity, 2 * b + 2);
	/* each overflow-then-underflow adds b; grow it past 16 batches */
	while (st->capacity < 16 * b) {
		unsigned cap = st->capacity;
		side_free_to_overflow(&x, cpu, out, &n);
		side_malloc_to_underflow(&x, cpu, SIZE, out, &n, MOST);
		ck_assert_uint_eq(st->capacity, cap + b);
	}
	unsigned cap = st->capacity;
	/* a run of underflows moves 2b, 4b, 8b: the k-th moves 2^k batches */
	for (unsigned k = 1; k <= 3; k++) {
		side_malloc_to_underflow(&x, cpu, SIZE, out, &n, MOST);
		ck_assert_uint_eq(st->capacity, cap);
		ck_assert_uint_eq(st->current, (1u << k) * b - 1);
	}
	/* a run of overflows gives back b, 2b, 4b: the first after an
	 * underflow is the 0th of its kind */
	for (unsigned i = 0; i < 16 * b; i++)
		out[n++] = x.pol->malloc(x.state, &x.t, SIZE);
	for (unsigned k = 0; k <= 2; k++) {
		side_free_to_overflow(&x, cpu, out, &n);
		ck_assert_uint_eq(st->capacity, cap);
		ck_assert_uint_eq(st->current, cap - ((1u << k) * b - 1));
	}
	while (n)
		x.pol->free(x.state, &x.t, out[--n]);
	tl_side_clean(&x);
	tl_side_close(&x);
}
END_TEST

START_TEST(checker_finds_an_object_dropped_from_a_cpu_stack)
{
	side_t x;
	unsigned cls;
	tl_stay_on_this_cpu();
	void *p = side_with_one_cached(&x, "rseq:off", &cls); /* on top of this CPU's stack */
	pc_stack_t *st = NULL;
	for (unsigned cpu = 0; cpu < pcs(&x)->ncpus && !st; cpu++) {
		pc_slab_t *sl = pc_slab(x.state, cpu);
		if (sl->stacks[cls].current && pc_slots(x.state, sl, cls)[sl->stacks[cls].current - 1] == p)
			st = &sl->stacks[cls];
	}
	ck_assert_ptr_nonnull(st);
	st->current--; /* popped and dropped */
	side_finds_lost(&x, p, cls);
	st->current++;
	tl_side_close(&x);
}
END_TEST

START_TEST(checker_finds_an_object_dropped_from_a_transfer_cache_batch)
{
	side_t x;
	side_open(&x, "rseq:off,cpu_cache_bytes:0"); /* frees overflow the stacks */
	enum { N = 200 };
	void *p[N];
	unsigned cls = pc_class_of(&pcs(&x)->cl, 64);
	for (int i = 0; i < N; i++)
		p[i] = x.pol->malloc(x.state, &x.t, 64);
	for (int i = 0; i < N; i++)
		x.pol->free(x.state, &x.t, p[i]);
	pc_transfer_t *t = &pcs(&x)->transfer[cls];
	ck_assert_uint_gt(t->count, 0);
	tl_side_clean(&x);
	void *dropped = t->slots[--t->count]; /* the top of the last batch */
	side_finds_lost(&x, dropped, cls);
	t->count++;
	tl_side_close(&x);
}
END_TEST

START_TEST(checker_finds_an_object_dropped_from_a_thread_cache)
{
	side_t x;
	unsigned cls;
	void *p = side_with_one_cached(&x, "front:thread", &cls);
	pc_tcache_t *tc = x.t.policy_tls;
	ck_assert_ptr_nonnull(tc);
	ck_assert_ptr_eq(tc->head[cls], p);
	tc->head[cls] = tc->head[cls]->next; /* popped and dropped: the counts agree */
	tc->length[cls]--;
	tc->size -= pcs(&x)->cl.size[cls];
	side_finds_lost(&x, p, cls);
	tc->head[cls] = p; /* its link still names the rest */
	tc->length[cls]++;
	tc->size += pcs(&x)->cl.size[cls];
	tl_side_close(&x);
}
END_TEST

/* An object leaves its span's free list uncounted (bit cleared, nothing
 * else), then counted as handed out (allocated, the central list's count)
 * as a batch taken from the span and dropped would be. */
START_TEST(checker_finds_an_object_leaked_from_a_span)
{
	side_t x;
	unsigned cls;
	void *p = side_with_one_cached(&x, "rseq:off", &cls);
	pc_span_t *sp = pc_ph_span_of(&pcs(&x)->ph, p);
	ck_assert_ptr_nonnull(sp);
	size_t i = 0;
	while (i < sp->nobjs && !hl_bit_get(sp->free_bits, i))
		i++;
	ck_assert_uint_lt(i, sp->nobjs);
	void *q = (void *)(sp->start + i * pcs(&x)->cl.stride[cls]);
	hl_bit_clear(sp->free_bits, i);
	side_finds_lost(&x, q, cls);
	sp->allocated++;
	pcs(&x)->central[cls].free_objects--;
	side_finds_lost(&x, q, cls);
	sp->allocated--;
	pcs(&x)->central[cls].free_objects++;
	hl_bit_set(sp->free_bits, i);
	tl_side_close(&x);
}
END_TEST

/* A large span that claims objects is damage the checker names (free's
 * hit once refused a span that is not small by its nobjs alone; it now
 * reads the class in the pagemap, the next two tests). */
START_TEST(checker_finds_objects_counted_in_a_large_span)
{
	side_t x;
	side_open(&x, "front:thread");
	void *p = x.pol->malloc(x.state, &x.t, 300 << 10);
	ck_assert_ptr_nonnull(p);
	pc_span_t *sp = pc_ph_span_of(&pcs(&x)->ph, p);
	ck_assert_ptr_nonnull(sp);
	ck_assert_int_eq(sp->state, PC_SPAN_LARGE);
	ck_assert_uint_eq(sp->nobjs, 0);
	tl_side_clean(&x);
	sp->nobjs = 4;
	char text[2048], want[128];
	int n = tl_side_check(&x, text, sizeof text);
	snprintf(want, sizeof want, "heaplab: percpu: check: span %p: state %u but 4 objects", p, PC_SPAN_LARGE);
	ck_assert_msg(n >= 1 && strstr(text, want), "%d problem(s), report \"%s\", wanted \"%s\"", n, text, want);
	sp->nobjs = 0;
	x.pol->free(x.state, &x.t, p);
	tl_side_close(&x);
}
END_TEST

/* free's hit takes the class from the pagemap entry and trusts a nonzero
 * one to name the live small span the page is in: a span that goes back
 * to the page heap must leave no class on its pages, or a later free of
 * a stale pointer there could pass the hit's checks once the span's
 * record is used again. */
START_TEST(a_span_given_back_leaves_no_class_in_the_pagemap)
{
	side_t x;
	side_open(&x, "rseq:off"); /* the side state's trim drains every CPU */
	pc_state_t *s = pcs(&x);
	void *p = x.pol->malloc(x.state, &x.t, 40 << 10); /* a class of its own span */
	ck_assert_ptr_nonnull(p);
	unsigned cls = pc_class_of(&s->cl, 40 << 10), got;
	uintptr_t e = pc_pagemap_entry(&s->ph.map, (uintptr_t)p);
	ck_assert_uint_eq(pc_entry_class(e), cls);
	pc_span_t *sp = pc_entry_span(e);
	ck_assert_int_eq(sp->state, PC_SPAN_SMALL);
	ck_assert(pc_free_check(s, p, &got) && got == cls);
	x.pol->free(x.state, &x.t, p);
	x.pol->trim(x.state, 0); /* the CPU's stack, the transfer cache, the span */
	ck_assert_int_ne(sp->state, PC_SPAN_SMALL);
	for (size_t k = 0; k < s->cl.pages[cls]; k++)
		ck_assert_uint_eq(pc_entry_class(pc_pagemap_entry(&s->ph.map, (uintptr_t)p + k * PC_PAGE)), 0);
	ck_assert(!pc_free_check(s, p, &got));
	tl_side_clean(&x);
	tl_side_close(&x);
}
END_TEST

/* The checker names a page whose entry carries a class its span does not
 * have: on a large span's page, and a wrong class on a small span's. */
START_TEST(checker_finds_a_page_with_a_wrong_class)
{
	side_t x;
	unsigned cls;
	void *small = side_with_one_cached(&x, "rseq:off", &cls), *big = x.pol->malloc(x.state, &x.t, 300 << 10);
	pc_state_t *s = pcs(&x);
	ck_assert_ptr_nonnull(big);
	pc_span_t *large = pc_ph_span_of(&s->ph, big), *sp = pc_ph_span_of(&s->ph, small);
	tl_side_clean(&x);
	pc_pagemap_set(&s->ph.map, (uintptr_t)big, 1, large, cls);
	tl_side_finds(&x, "the pagemap says class");
	pc_pagemap_set(&s->ph.map, (uintptr_t)big, 1, large, 0);
	tl_side_clean(&x);
	pc_pagemap_set(&s->ph.map, (uintptr_t)small, 1, sp, cls + 1);
	tl_side_finds(&x, "the pagemap says class");
	pc_pagemap_set(&s->ph.map, (uintptr_t)small, 1, sp, cls);
	x.pol->free(x.state, &x.t, big);
	tl_side_close(&x);
}
END_TEST

/* A slow path that forgot to reopen its CPU's slab would leave every
 * later push and pop there on the slow path: the checker (of a quiet
 * heap) names the entry. */
START_TEST(checker_finds_a_slab_left_stopped)
{
	side_t x;
	side_open(&x, "rseq:off");
	pc_state_t *s = pcs(&x);
	tl_side_clean(&x);
	atomic_store(&s->open_slab[0], NULL);
	tl_side_finds(&x, "cpu 0: open_slab is (nil)");
	atomic_store(&s->open_slab[0], pc_slab(s, 0));
	tl_side_close(&x);
}
END_TEST

/* front:thread cuts a span as gperftools' Populate does: every object is
 * written with the address of the next (so the cutting thread pages the
 * whole span in).  The per-CPU front, after Google's TCMalloc, does not
 * (its spans are paged in by the threads that use their objects). */
START_TEST(front_thread_cuts_a_span_through_every_object)
{
	for (int thread = 1; thread >= 0; thread--) {
		side_t x;
		side_open(&x, thread ? "front:thread" : "rseq:off");
		pc_state_t *s = pcs(&x);
		void *p = x.pol->malloc(x.state, &x.t, 32);
		ck_assert_ptr_nonnull(p);
		pc_span_t *sp = pc_ph_span_of(&s->ph, p);
		size_t stride = s->cl.stride[sp->cls], linked = 0;
		for (uint32_t i = 0; i + 1 < sp->nobjs; i++) {
			void **obj = (void **)(sp->start + i * stride);
			if (hl_bit_get(sp->free_bits, i) && *obj == (char *)obj + stride)
				linked++;
		}
		size_t free_ones = sp->nobjs - sp->allocated;
		if (thread)
			ck_assert_uint_ge(linked + 1, free_ones); /* all but perhaps the last */
		else
			ck_assert_uint_eq(linked, 0);
		x.pol->free(x.state, &x.t, p);
		tl_side_close(&x);
	}
}
END_TEST

/* ---- no false losses ------------------------------------------------------ */

enum { CHURN_THREADS = 4, CHURN_SLOTS = 64 };

typedef struct churn {
	hl_heap_t *h;
	unsigned seed, ops;
	void *kept[CHURN_SLOTS];       /* left live for the main thread */
} churn_t;

/* Random mallocs (small, some large), frees and reallocs; a block freed
 * by another thread now and then (the shared slot). */
static void *churn(void *arg)
{
	static void *_Atomic shared;
	churn_t *c = arg;
	void **slot = c->kept;
	unsigned x = c->seed;
	for (unsigned op = 0; op < c->ops; op++) {
		x = x * 1103515245u + 12345u;
		void **at = &slot[(x >> 8) % CHURN_SLOTS];
		if ((x >> 4) % 16 == 0) {
			hl_free(c->h, atomic_exchange(&shared, *at)); /* frees a block of another thread */
			*at = NULL;
		} else if (*at && (x >> 20) % 4 == 0) {
			*at = hl_realloc(c->h, *at, 16 + (x >> 14) % 2000);
		} else if (*at) {
			hl_free(c->h, *at);
			*at = NULL;
		} else {
			*at = hl_malloc(c->h, (x >> 24) % 32 == 0 ? PC_MAX_SMALL + 1 : 1 + (x >> 16) % 3000);
		}
	}
	hl_free(c->h, atomic_exchange(&shared, NULL));
	return NULL;
}

typedef struct watch {
	hl_heap_t *h;
	atomic_int stop;
} watch_t;

/* Checks while the workers run: in debug mode hl_check waits for the
 * guard, so it only ever sees the heap between two calls. */
static void *checker(void *arg)
{
	watch_t *w = arg;
	while (!atomic_load(&w->stop))
		if (hl_check(w->h, stderr) != 0)
			return (void *)1;
	return NULL;
}

/* Many random operations on four threads, each front, debug mode on (the
 * checker after every call, and a fifth thread checking all the while)
 * and off (checked after the threads end, while their blocks are still
 * live): no object is lost that is not. */
START_TEST(checker_finds_no_loss_under_threads)
{
	static const char *confs[] = { "rseq:on", "rseq:off", "front:thread" };
	for (int c = 0; c < 3; c++)
		for (int debug = 0; debug < 2; debug++) {
			char conf[64];
			snprintf(conf, sizeof conf, "%s,debug:%s", confs[c], debug ? "on" : "off");
			hl_heap_t *h = tl_heap("percpu", conf);
			churn_t w[CHURN_THREADS];
			watch_t watch = { .h = h };
			pthread_t th[CHURN_THREADS], wt;
			for (int k = 0; k < CHURN_THREADS; k++) {
				w[k] = (churn_t){ .h = h, .seed = 7u + 131u * (unsigned)k, .ops = debug ? 1500 : 20000 };
				ck_assert_int_eq(pthread_create(&th[k], NULL, churn, &w[k]), 0);
			}
			if (debug)
				ck_assert_int_eq(pthread_create(&wt, NULL, checker, &watch), 0);
			for (int k = 0; k < CHURN_THREADS; k++)
				pthread_join(th[k], NULL);
			if (debug) {
				atomic_store(&watch.stop, 1);
				void *rc;
				pthread_join(wt, &rc);
				ck_assert_msg(rc == NULL, "%s: hl_check found a problem while the threads ran", conf);
			}
			tl_check_clean(h); /* the workers' blocks still live */
			for (int k = 0; k < CHURN_THREADS; k++)
				for (int i = 0; i < CHURN_SLOTS; i++)
					hl_free(h, w[k].kept[i]);
			tl_check_clean(h);
			hl_heap_destroy(h);
		}
}
END_TEST

typedef struct holder {
	hl_heap_t *h;
	atomic_int cached, release;
} holder_t;

/* Leaves objects in this thread's cache and stays alive until told. */
static void *hold_cached(void *arg)
{
	holder_t *o = arg;
	void *p[10];
	for (int i = 0; i < 10; i++)
		p[i] = hl_malloc(o->h, 64);
	for (int i = 0; i < 10; i++)
		hl_free(o->h, p[i]);
	atomic_store(&o->cached, 1);
	while (!atomic_load(&o->release))
		sched_yield();
	return NULL;
}

/* In a fork child the other thread's cache is gone with its objects,
 * out of their spans for good: the checker counts them as the fork's,
 * not as lost, and still finds the child's own heap clean. */
START_TEST(checker_counts_what_a_fork_left_behind)
{
	holder_t o = { .h = tl_heap("percpu", "front:thread,ledger:on") };
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, hold_cached, &o), 0);
	while (!atomic_load(&o.cached))
		sched_yield();
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int bad = hl_check(o.h, stderr);
		void *p = hl_malloc(o.h, 64);
		bad += hl_check(o.h, stderr);
		hl_free(o.h, p);
		bad += hl_check(o.h, stderr);
		_exit(bad ? 1 : 0);
	}
	int status = 0;
	waitpid(pid, &status, 0);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child's checker found problems (status %d)",
		      status);
	atomic_store(&o.release, 1);
	pthread_join(th, NULL);
	tl_check_clean(o.h);
	hl_heap_destroy(o.h);
}
END_TEST

/* --- decision events: each path reports its event exactly when the
 * statistic that counts the path moves (tests/unit/testlib_events.h) ----------- */

/* Many objects of one class freed and asked again, so that stacks run dry
 * (underflows refilled from the transfer cache, which empties and misses
 * on the way) and fill up (batches spilled back to it). */
static void percpu_churn(hl_heap_t *h)
{
	enum { N = 3000 };
	static void *p[N];
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < N; i++)
			p[i] = hl_malloc(h, 48);
		for (int i = 0; i < N; i++)
			hl_free(h, p[i]);
	}
}

START_TEST(percpu_events_follow_the_counters)
{
	TL_SKIP_UNLESS("percpu");
	/* per CPU, under the CPU's lock: one thread kept on one CPU, so the
	 * fresh heap's list of CPUs it ran on has that one entry, whose
	 * underflows (none before the churn) are the misses */
	tl_stay_on_this_cpu();
	static const char *const cpu_keys[] = { "policy_stats.transfer_cache_hits", NULL };
	tl_events_run_t r;
	percpu_churn(tl_run_begin(&r, "percpu", "rseq:off", cpu_keys));
	tl_run_measure(&r);
	ck_assert_double_eq(tl_n_of(&r.t, HL_EV_CACHE_MISS, "per-CPU slab, class"),
			    tl_stat(r.h, "policy_stats.cpus.0.underflows"));
	ck_assert_double_eq(tl_stat(r.h, "policy_stats.cpus.0.cpu"), sched_getcpu());
	tl_expect_count(&r, HL_EV_LIST_POP, "transfer cache: a batch", "policy_stats.transfer_cache_hits");
	static const int cpu_paths[] = { HL_EV_CACHE_HIT, HL_EV_CACHE_FILL, HL_EV_CACHE_FLUSH, HL_EV_NEW, -1 };
	static const char *const cpu_whats[] = { "per-CPU slab, class (under the CPU's lock)",
						 "per-CPU slab from the transfer cache", "per-CPU slab to the transfer cache",
						 "span from the page heap, class" };
	tl_expect_paths(&r, cpu_paths, cpu_whats);
	tl_run_end(&r);
	/* per thread (gperftools' front) */
	static const char *const thread_keys[] = { "policy_stats.thread_cache_hits", "policy_stats.thread_cache_misses",
						   "policy_stats.transfer_cache_hits", NULL };
	percpu_churn(tl_run_begin(&r, "percpu", "front:thread", thread_keys));
	tl_run_measure(&r);
	tl_expect_count(&r, HL_EV_CACHE_HIT, "thread cache, class", "policy_stats.thread_cache_hits");
	tl_expect_count(&r, HL_EV_CACHE_MISS, "thread cache, class", "policy_stats.thread_cache_misses");
	tl_expect_count(&r, HL_EV_LIST_POP, "transfer cache: a batch", "policy_stats.transfer_cache_hits");
	ck_assert_msg(tl_n_of(&r.t, HL_EV_CACHE_MISS, "thread cache, class") > 0, "percpu front:thread: no miss");
	tl_run_end(&r);
}
END_TEST


/* percpu's per-CPU front has quiet copies of its own (pc_cpu_alloc_quiet,
 * pc_cpu_free_quiet) in both of its modes: the hit and the push must be
 * heard as such, from the rseq critical section where this machine lets
 * glibc register rseq, and under the CPU's lock with rseq:off.  The
 * thread stays on one CPU, so the warm stack is the one the next pair
 * finds (moved, it would miss on another CPU's empty stack).
 * front:thread has no quiet copies; its pair must be heard all the same. */
START_TEST(the_fast_path_is_heard_as_such)
{
	tl_stay_on_this_cpu();
	hl_heap_t *probe = tl_heap("percpu", "rseq:on");
	int rseq = tl_stat(probe, "policy_stats.rseq_available") != 0;
	hl_heap_destroy(probe);
	const char *locked = "per-CPU slab, class (under the CPU's lock)";
	const char *on = rseq ? "per-CPU slab, class (rseq)" : locked;
	if (!rseq)
		printf("percpu: rseq is not available here: rseq:on runs in lock mode, the rseq path is not tested\n");
	tl_fast_path_heard("percpu", "rseq:on", on, on);
	tl_fast_path_heard("percpu", "rseq:off", locked, locked);
	tl_fast_path_heard("percpu", "front:thread", "thread cache, class", "thread cache, class");
}
END_TEST

static Suite *percpu_suite(void)
{
	Suite *s = suite_create("percpu");
	TCase *tc = tcase_create("model");
	tcase_add_test(tc, percpu_events_follow_the_counters);
	tcase_add_test(tc, the_fast_path_is_heard_as_such);
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, usable_sizes_follow_tcmalloc_classes);
	tcase_add_test(tc, exact_index_is_the_division_for_every_class);
	tcase_add_test(tc, objects_come_from_spans_in_a_heap_of_page_spans);
	tcase_add_test(tc, rseq_off_forces_the_lock_fallback);
	tcase_add_test(tc, no_rseq_registration_means_lock_mode);
	tcase_add_test(tc, fresh_objects_come_in_address_order);
	tcase_add_test(tc, restarts_lose_and_duplicate_nothing);
	tcase_add_test(tc, release_rate_releases_free_pages_over_time);
	tcase_add_test(tc, front_thread_uses_gperftools_classes);
	tcase_add_test(tc, hugepage_on_keeps_more_hugepages_intact);
	tcase_add_test(tc, trim_releases_whole_empty_hugepages_first);
	tcase_add_test(tc, checker_catches_a_wrong_hugepage_count);
	tcase_add_test(tc, hugepage_counts_stay_true_under_churn);
	tcase_add_test(tc, checker_finds_an_object_dropped_from_a_cpu_stack);
	tcase_add_test(tc, per_cpu_misses_size_and_move_as_tcmalloc_does);
	tcase_add_test(tc, checker_finds_an_object_dropped_from_a_transfer_cache_batch);
	tcase_add_test(tc, checker_finds_an_object_dropped_from_a_thread_cache);
	tcase_add_test(tc, checker_finds_an_object_leaked_from_a_span);
	tcase_add_test(tc, checker_finds_objects_counted_in_a_large_span);
	tcase_add_test(tc, a_span_given_back_leaves_no_class_in_the_pagemap);
	tcase_add_test(tc, checker_finds_a_page_with_a_wrong_class);
	tcase_add_test(tc, checker_finds_a_slab_left_stopped);
	tcase_add_test(tc, front_thread_cuts_a_span_through_every_object);
	tcase_add_test(tc, slow_paths_on_their_own_cpu_need_no_fence);
	tcase_add_test(tc, checker_finds_no_loss_under_threads);
	tcase_add_test(tc, checker_counts_what_a_fork_left_behind);
	suite_add_tcase(s, tc);
	return s;
}

TL_MAIN(percpu_suite)
