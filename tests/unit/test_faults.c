/*
 * The kernel says no: every policy under the page source's fault seam
 * (the core's options os_fail_at and os_fail_every, core/os.c).
 *
 * For every compiled-in policy the failure point walks through every call
 * of the page source that the kernel could refuse (mmap, mprotect to
 * read/write, mremap, munmap of a region) while a short workload runs: the
 * heap is built, three threads allocate blocks of many sizes, move them
 * with realloc, align them with memalign, zero them with calloc, free them
 * and trim the heap.  After each refusal:
 *   - every call either succeeded (by another route: a parked segment, a
 *     cache, a retry) or returned NULL with errno ENOMEM, and free kept
 *     errno;
 *   - every block handed out still holds what was written into it;
 *   - the policy's checker finds nothing wrong;
 *   - once the one failure is behind it, the heap serves the workload again
 *     in full (os_fail_at fails one call only).
 * The walk stops at the first run in which the fault point lies past the
 * workload's last call.  A run with every second, third or fifth call
 * refused (os_fail_every) must end as cleanly, with no crash or hang.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testlib.h"

enum { THREADS = 3, SLOTS = 24, MAX_RUNS = 4000 };

static const char *policies[16];
static int npolicies;

static void pick_policies(void)
{
	npolicies = tl_pick_policies(policies, 16, NULL);
}

/* What went wrong in a run, first problem only (threads write it). */
static char problem[256];
static atomic_int problems;

static void wrong(const char *fmt, const char *what, size_t n, int err)
{
	if (atomic_fetch_add(&problems, 1) == 0)
		snprintf(problem, sizeof problem, fmt, what, n, err);
}

typedef struct run {
	hl_heap_t *h;
	bool must_succeed;        /* the fault is behind us: no NULL allowed */
	atomic_int nulls;
} run_t;

static const size_t sizes[] = {
	1, 8, 24, 48, 100, 250, 512, 1000, 2000, 4000, 8192, 9000, 20000, 40000,
	70000, 130000, 300000, 600000, 1 << 20, 3 << 20,
};

/* The part of a block the workload writes and checks: all of a small one,
 * its first 4 KiB otherwise. */
static size_t written(size_t n) { return n < 4096 ? n : 4096; }

/* A NULL must say ENOMEM, and is allowed only while a fault can come. */
static bool got(run_t *r, void *p, const char *what, size_t n, int err)
{
	if (p)
		return true;
	atomic_fetch_add(&r->nulls, 1);
	if (err != ENOMEM)
		wrong("%s(%zu) returned NULL with errno %d, not ENOMEM", what, n, err);
	else if (r->must_succeed)
		wrong("%s(%zu) failed (errno %d) after the one injected fault", what, n, err);
	return false;
}

static void release(run_t *r, void *p, size_t n, unsigned seed)
{
	if (!p)
		return;
	if (!tl_intact(p, written(n), seed))
		wrong("a block of %s%zu bytes lost its contents (errno %d)", "", n, 0);
	errno = 4321;
	hl_free(r->h, p);
	if (errno != 4321)
		wrong("%s of %zu bytes changed errno to %d", "free", n, errno);
}

static void *workload(void *arg)
{
	run_t *r = arg;
	hl_heap_t *h = r->h;
	static _Thread_local void *blk[SLOTS];
	static _Thread_local size_t len[SLOTS];
	unsigned base = (unsigned)(uintptr_t)pthread_self() * 7u;
	size_t nsizes = sizeof sizes / sizeof *sizes;
	for (int i = 0; i < SLOTS; i++) {
		len[i] = sizes[(size_t)i % nsizes];
		errno = 0;
		blk[i] = hl_malloc(h, len[i]);
		if (got(r, blk[i], "malloc", len[i], errno))
			tl_fill(blk[i], written(len[i]), base + (unsigned)i);
	}
	/* realloc: grow some, shrink others; a failed one keeps its block */
	for (int i = 0; i < SLOTS; i += 3) {
		if (!blk[i])
			continue;
		size_t to = i % 2 ? len[i] / 2 + 1 : len[i] * 3 + 5000;
		errno = 0;
		void *q = hl_realloc(h, blk[i], to);
		if (got(r, q, "realloc", to, errno)) {
			size_t keep = written(len[i] < to ? len[i] : to);
			if (!tl_intact(q, keep, base + (unsigned)i))
				wrong("realloc to %s%zu bytes lost the contents (errno %d)", "", to, 0);
			blk[i] = q;
			len[i] = to;
			tl_fill(q, written(to), base + (unsigned)i);
		}
	}
	/* memalign and calloc, freed at once */
	static const size_t aligns[] = { 64, 4096, 65536 };
	for (int i = 0; i < 3; i++) {
		errno = 0;
		void *p = hl_memalign(h, aligns[i], 3000 * (size_t)(i + 1));
		if (got(r, p, "memalign", aligns[i], errno)) {
			if ((uintptr_t)p % aligns[i])
				wrong("memalign(%s%zu) misaligned (errno %d)", "", aligns[i], 0);
			tl_fill(p, 3000, 99);
			release(r, p, 3000, 99);
		}
		errno = 0;
		void *c = hl_calloc(h, 100, 40 * (size_t)(i + 1));
		if (got(r, c, "calloc", 4000 * (size_t)(i + 1), errno)) {
			for (size_t k = 0; k < 4000 * (size_t)(i + 1); k++)
				if (((unsigned char *)c)[k]) {
					wrong("calloc(%s%zu) not zeroed (errno %d)", "", 4000 * (size_t)(i + 1), 0);
					break;
				}
			hl_free(h, c);
		}
	}
	for (int i = 0; i < SLOTS; i += 2) {
		release(r, blk[i], len[i], base + (unsigned)i);
		blk[i] = NULL;
	}
	hl_trim(h, 0);
	for (int i = 1; i < SLOTS; i += 2) {
		release(r, blk[i], len[i], base + (unsigned)i);
		blk[i] = NULL;
	}
	hl_trim(h, 0);
	return NULL;
}

/* Policies that run the workload on one thread and not at all with
 * repeated refusals, each with its reason; none today (bins' thread exit
 * after failed allocations, the last, is fixed).  Said on stderr; never
 * counted as a pass of theirs. */
static const char *const not_yet = "";

static bool is_not_yet(const char *policy)
{
	char name[64], list[64];
	snprintf(name, sizeof name, ",%s,", policy);
	snprintf(list, sizeof list, ",%s,", not_yet);
	return strstr(list, name) != NULL;
}

/* The workload on THREADS threads at once (the first on this thread). */
static void run_threads(run_t *r)
{
	pthread_t t[THREADS];
	int started = 0;
	for (int i = 1; i < (is_not_yet(hl_heap_policy(r->h)) ? 1 : THREADS); i++)
		if (pthread_create(&t[started], NULL, workload, r) == 0)
			started++;
	workload(r);
	for (int i = 0; i < started; i++)
		pthread_join(t[i], NULL);
}

static double os_stat(hl_heap_t *h, const char *name)
{
	double v = -1;
	ck_assert_msg(hl_stat(h, name, &v) == 0, "no statistic %s", name);
	return v;
}

/* One run with the conf; returns true when the fault came at all (false:
 * the failure point lies past the workload). */
static bool one_run(const char *policy, const char *conf)
{
	atomic_store(&problems, 0);
	if (getenv("HL_FAULTS_VERBOSE"))
		fprintf(stderr, "%s %s\n", policy, conf);
	errno = 0;
	hl_heap_t *h = hl_heap_new(policy, conf);
	if (!h) {
		ck_assert_msg(errno == ENOMEM, "%s, %s: hl_heap_new failed with errno %d (%s), not ENOMEM", policy,
			      conf, errno, hl_last_error());
		return true;
	}
	run_t r = { .h = h };
	run_threads(&r);
	ck_assert_msg(!atomic_load(&problems), "%s, %s: %s", policy, conf, problem);
	ck_assert_msg(hl_check(h, stderr) == 0, "%s, %s: the checker found problems after the fault", policy, conf);
	bool fired = os_stat(h, "os.faults_injected") > 0;
	if (fired && !strstr(conf, "every")) {
		/* the one failure is behind us: all of it must work now */
		r.must_succeed = true;
		run_threads(&r);
		ck_assert_msg(!atomic_load(&problems), "%s, %s, after the fault: %s", policy, conf, problem);
		ck_assert_msg(hl_check(h, stderr) == 0, "%s, %s: the checker found problems on the second pass",
			      policy, conf);
	}
	hl_heap_destroy(h);
	return fired;
}

START_TEST(every_kernel_call_refused_in_turn)
{
	const char *policy = policies[_i];
	char conf[64];
	int n = 1;
	for (; n < MAX_RUNS; n++) {
		snprintf(conf, sizeof conf, "os_fail_at:%d", n);
		if (!one_run(policy, conf))
			break;
	}
	ck_assert_msg(n > 1 && n < MAX_RUNS, "%s: the walk ended after %d runs", policy, n);
	fprintf(stderr, "%s: %d kernel calls refused in turn%s\n", policy, n - 1,
		is_not_yet(policy) ? " (ONE thread only: see not_yet)" : "");
}
END_TEST

START_TEST(kernel_refusing_again_and_again)
{
	const char *policy = policies[_i];
	if (is_not_yet(policy)) {
		fprintf(stderr, "%s: repeated refusals NOT RUN (see not_yet)\n",
			policy);
		return;
	}
	static const int every[] = { 2, 3, 5 };
	for (size_t k = 0; k < sizeof every / sizeof *every; k++) {
		char conf[64];
		snprintf(conf, sizeof conf, "os_fail_every:%d", every[k]);
		one_run(policy, conf);
	}
}
END_TEST

/* The seam itself: the N-th call fails once, and says so. */
START_TEST(the_seam_refuses_the_call_it_is_told_to)
{
	hl_heap_t *h = tl_heap(policies[0], "os_fail_every:0");
	double calls = -1;
	ck_assert_int_eq(hl_stat(h, "os.faults_injected", &calls), -1);  /* no plan: not shown */
	hl_heap_destroy(h);
	/* find a call made after the heap is built, then refuse it */
	h = tl_heap(policies[0], "os_fail_at:1000000");
	double before = os_stat(h, "os.fallible_calls");
	void *p = hl_malloc(h, 8 << 20);
	ck_assert_ptr_nonnull(p);
	double after = os_stat(h, "os.fallible_calls");
	ck_assert_msg(after > before, "a malloc of 8 MiB made no call the kernel could refuse");
	hl_free(h, p);
	hl_heap_destroy(h);
	char conf[64];
	snprintf(conf, sizeof conf, "os_fail_at:%.0f", before + 1);
	h = tl_heap(policies[0], conf);
	errno = 0;
	p = hl_malloc(h, 8 << 20);
	ck_assert_msg(os_stat(h, "os.faults_injected") == 1, "the planned call was not refused");
	ck_assert_msg(p || errno == ENOMEM, "NULL without ENOMEM");
	hl_free(h, p);
	p = hl_malloc(h, 8 << 20);
	ck_assert_ptr_nonnull(p);
	hl_free(h, p);
	ck_assert_double_eq(os_stat(h, "os.faults_injected"), 1);
	hl_heap_destroy(h);
}
END_TEST

/* A munmap the kernel refuses (at the process's mapping limit): free keeps
 * errno, the region keeps its record (still counted, given back when the
 * heap is destroyed), and the heap goes on.  bins maps a chunk above 32 MiB
 * on its own, as glibc does, and unmaps it on free. */
START_TEST(a_refused_munmap_keeps_its_record)
{
	const char *glibc = hl_policy_of_family("glibc");  /* maps a chunk above 32 MiB alone */
	if (!glibc)
		return;
	hl_heap_t *h = tl_heap(glibc, "os_fail_at:1000000");
	void *warm = hl_malloc(h, 100);
	double at = os_stat(h, "os.fallible_calls");
	void *p = hl_malloc(h, 64 << 20);
	ck_assert_ptr_nonnull(p);
	double munmap_at = os_stat(h, "os.fallible_calls") + 1;
	hl_free(h, p);
	hl_free(h, warm);
	ck_assert_msg(os_stat(h, "os.fallible_calls") == munmap_at, "freeing the 64 MiB chunk made %.0f calls",
		      os_stat(h, "os.fallible_calls") - munmap_at + 1);
	hl_heap_destroy(h);
	char conf[64];
	snprintf(conf, sizeof conf, "os_fail_at:%.0f", munmap_at);
	h = tl_heap(glibc, conf);
	warm = hl_malloc(h, 100);
	ck_assert_double_eq(os_stat(h, "os.fallible_calls"), at);
	p = hl_malloc(h, 64 << 20);
	ck_assert_ptr_nonnull(p);
	double regions = os_stat(h, "os.regions"), reserved = os_stat(h, "reserved_bytes");
	errno = 1789;
	hl_free(h, p);
	ck_assert_int_eq(errno, 1789);
	ck_assert_double_eq(os_stat(h, "os.faults_injected"), 1);
	ck_assert_double_eq(os_stat(h, "os.regions"), regions);
	ck_assert_double_eq(os_stat(h, "reserved_bytes"), reserved);
	tl_check_clean(h);
	p = hl_malloc(h, 64 << 20);
	ck_assert_ptr_nonnull(p);
	hl_free(h, p);
	hl_free(h, warm);
	ck_assert_double_eq(os_stat(h, "os.regions"), regions);
	hl_heap_destroy(h);
}
END_TEST

static Suite *faults_suite(void)
{
	pick_policies();
	Suite *s = suite_create("faults");
	TCase *tc = tcase_create("faults");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, the_seam_refuses_the_call_it_is_told_to);
	tcase_add_test(tc, a_refused_munmap_keeps_its_record);
	tcase_add_loop_test(tc, every_kernel_call_refused_in_turn, 0, npolicies);
	tcase_add_loop_test(tc, kernel_refusing_again_and_again, 0, npolicies);
	suite_add_tcase(s, tc);
	return s;
}

TL_MAIN(faults_suite)
