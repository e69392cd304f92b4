/*
 * The conformance suite: every contract of the public API, run against
 * every compiled-in policy (or those named in HL_TEST_POLICIES=a,b), and
 * against the layouts a policy can switch to (its table's layouts:
 * another place for the headers, another front).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testlib.h"
#include "policy.h" /* realloc_zero_allocates, layouts */

enum { MAX_RUNS = 16 };
static const char *policies[MAX_RUNS];
static const char *confs[MAX_RUNS];     /**< the layout's options, or NULL */
static int npolicies;

/* Each picked policy once more under each layout of its table, whose
 * memory differs from the defaults' enough to deserve every contract
 * again. */
static void add_layouts(void)
{
	for (int i = 0, n = npolicies; i < n; i++) {
		const char *const *layouts = hl_policy_find(policies[i])->layouts;
		for (size_t v = 0; layouts && layouts[v]; v++) {
			if (npolicies == MAX_RUNS) {
				fprintf(stderr, "test_conformance: more than %d policies and layouts\n", MAX_RUNS);
				exit(1);
			}
			policies[npolicies] = policies[i];
			confs[npolicies++] = layouts[v];
		}
	}
}

static void pick_policies(void)
{
	npolicies = tl_pick_policies(policies, MAX_RUNS, HL_SKELETON_POLICY);  /* the lab's skeleton: its contracts are the student's work */
	add_layouts();
}

/* A tiny deterministic generator, so failures reproduce. */
static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static int scaled(int ops);

static size_t random_size(uint64_t *s)
{
	uint64_t r = rng_next(s) % 100;
	if (r < 60)
		return (size_t)(rng_next(s) % 128);
	if (r < 90)
		return (size_t)(rng_next(s) % 2048);
	if (r < 99)
		return (size_t)(rng_next(s) % 65536);
	return (size_t)(rng_next(s) % (600 * 1024));
}

/* 16 bytes, or 8 for a block of 8 bytes or less (policy.h) */
START_TEST(every_block_is_aligned_for_its_size)
{
	hl_heap_t *h = tl_heap(policies[_i], confs[_i]);
	void *keep[600];
	for (size_t n = 0; n < 600; n++) {
		keep[n] = hl_malloc(h, n * 7);
		ck_assert_ptr_nonnull(keep[n]);
		ck_assert_msg((uintptr_t)keep[n] % hl_block_align(n * 7) == 0, "malloc(%zu) gave %p", n * 7,
			      keep[n]);
		ck_assert_uint_ge(hl_usable_size(h, keep[n]), n * 7);
	}
	for (size_t n = 0; n < 600; n++)
		hl_free(h, keep[n]);
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

START_TEST(memalign_up_to_one_mebibyte)
{
	hl_heap_t *h = tl_heap(policies[_i], confs[_i]);
	void *keep[64];
	int k = 0;
	for (size_t align = 1; align <= (1u << 20); align *= 2) {
		for (size_t n = 1; n <= 5000; n *= 9) {
			void *p = hl_memalign(h, align, n);
			ck_assert_msg(p != NULL, "memalign(%zu, %zu) failed", align, n);
			/* memalign(16, n) is 16-byte aligned even where malloc(n) is not */
			size_t want = align > hl_block_align(n) ? align : hl_block_align(n);
			ck_assert_msg((uintptr_t)p % want == 0, "memalign(%zu, %zu) gave %p", align, n, p);
			ck_assert_uint_ge(hl_usable_size(h, p), n);
			memset(p, 0x5a, n);
			if (k < 64)
				keep[k++] = p;
			else
				hl_free(h, p);
		}
		tl_check_clean(h);
	}
	for (int i = 0; i < k; i++)
		hl_free(h, keep[i]);
	void *out = NULL;
	ck_assert_int_eq(hl_posix_memalign(h, &out, 4096, 100), 0);
	ck_assert_uint_eq((uintptr_t)out % 4096, 0);
	hl_free(h, out);
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

/* Random operations checked against a shadow of every live block. */
static void shadow_run(const char *policy, const char *conf, int ops, int check_every, uint64_t seed)
{
	enum { SLOTS = 512 };
	hl_heap_t *h = tl_heap(policy, conf);
	void *p[SLOTS] = { 0 };
	size_t n[SLOTS] = { 0 };
	unsigned tag[SLOTS] = { 0 };
	uint64_t s = seed;
	for (int op = 0; op < ops; op++) {
		int i = (int)(rng_next(&s) % SLOTS);
		if (p[i]) {
			ck_assert_msg(tl_intact(p[i], n[i], tag[i]), "block %d changed while live (op %d)", i, op);
			if (rng_next(&s) % 3 == 0) {
				size_t m = random_size(&s);
				void *q = hl_realloc(h, p[i], m);
				if (m == 0 && !hl_policy_find(policy)->realloc_zero_allocates) {
					ck_assert_ptr_null(q);
					p[i] = NULL;
					continue;
				}
				ck_assert_ptr_nonnull(q);
				size_t keep = n[i] < m ? n[i] : m;
				ck_assert_msg(tl_intact(q, keep, tag[i]), "realloc lost contents (op %d)", op);
				p[i] = q;
				n[i] = m;
			} else {
				hl_free(h, p[i]);
				p[i] = NULL;
				continue;
			}
		} else {
			n[i] = random_size(&s);
			p[i] = rng_next(&s) % 5 ? hl_malloc(h, n[i]) : hl_calloc(h, 1, n[i]);
			ck_assert_ptr_nonnull(p[i]);
			ck_assert_uint_eq((uintptr_t)p[i] % hl_block_align(n[i]), 0);
		}
		tag[i] = (unsigned)op;
		tl_fill(p[i], n[i], tag[i]);
		if (check_every && op % check_every == 0)
			tl_check_clean(h);
	}
	size_t live = 0;
	for (int i = 0; i < SLOTS; i++)
		if (p[i])
			live += n[i];
	ck_assert_double_eq(tl_stat(h, "live_requested_bytes"), (double)live);
	for (int i = 0; i < SLOTS; i++)
		if (p[i]) {
			ck_assert(tl_intact(p[i], n[i], tag[i]));
			hl_free(h, p[i]);
		}
	ck_assert_double_eq(tl_stat(h, "live_requested_bytes"), 0);
	ck_assert_double_eq(tl_stat(h, "live_usable_bytes"), 0);
	tl_check_clean(h);
	hl_heap_destroy(h);
}

START_TEST(shadow_copy_checked_after_every_step)
{
	shadow_run(policies[_i], confs[_i], 3000, 1, 0x1234567);
}
END_TEST

START_TEST(shadow_copy_long_sequence)
{
	shadow_run(policies[_i], confs[_i], scaled(60000), 5000, 0xfeedbeef);
}
END_TEST

START_TEST(realloc_grow_shrink_in_place)
{
	hl_heap_t *h = tl_heap(policies[_i], confs[_i]);
	char *p = hl_malloc(h, 100);
	tl_fill(p, 100, 7);
	p = hl_realloc(h, p, 5000);
	ck_assert(tl_intact(p, 100, 7));
	tl_fill(p, 5000, 8);
	p = hl_realloc(h, p, 300000);
	ck_assert(tl_intact(p, 5000, 8));
	tl_fill(p, 300000, 9);
	p = hl_realloc(h, p, 40);
	ck_assert(tl_intact(p, 40, 9));
	size_t u = hl_usable_size(h, p);
	void *same = hl_realloc(h, p, u);
	ck_assert_ptr_eq(same, p); /* asking for what it already has never moves it */
	ck_assert(tl_intact(same, 40, 9));
	/* realloc(p, 0): NULL, or a new block where the modelled allocator
	 * gives one (mimalloc: sharded) */
	void *zero = hl_realloc(h, same, 0);
	if (hl_policy_find(policies[_i])->realloc_zero_allocates) {
		ck_assert_ptr_nonnull(zero);
		hl_free(h, zero);
	} else {
		ck_assert_ptr_null(zero);
	}
	void *fresh = hl_realloc(h, NULL, 64);
	ck_assert_ptr_nonnull(fresh);
	hl_free(h, fresh);
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

START_TEST(calloc_zeroes_even_reused_memory)
{
	hl_heap_t *h = tl_heap(policies[_i], confs[_i]);
	for (size_t n = 8; n <= 200000; n *= 5) {
		for (int round = 0; round < 3; round++) {
			unsigned char *p = hl_malloc(h, n);
			memset(p, 0xff, n);
			hl_free(h, p);
			unsigned char *z = hl_calloc(h, n / 8, 8);
			for (size_t i = 0; i < n / 8 * 8; i++)
				ck_assert_msg(z[i] == 0, "calloc(%zu) byte %zu is %d", n, i, z[i]);
			hl_free(h, z);
		}
	}
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

START_TEST(error_paths)
{
	hl_heap_t *h = tl_heap(policies[_i], confs[_i]);
	errno = 0;
	ck_assert_ptr_null(hl_calloc(h, SIZE_MAX / 2, 3));
	ck_assert_int_eq(errno, ENOMEM);
	errno = 0;
	ck_assert_ptr_null(hl_malloc(h, SIZE_MAX));
	ck_assert_int_eq(errno, ENOMEM);
	errno = 0;
	ck_assert_ptr_null(hl_malloc(h, SIZE_MAX - 4096));
	ck_assert_int_eq(errno, ENOMEM);
	errno = 0;
	ck_assert_ptr_null(hl_memalign(h, 48, 10));
	ck_assert_int_eq(errno, EINVAL);
	void *out = (void *)1;
	ck_assert_int_eq(hl_posix_memalign(h, &out, 4, 10), EINVAL);
	ck_assert_int_eq(hl_posix_memalign(h, &out, 24, 10), EINVAL);
	ck_assert_ptr_eq(out, (void *)1);
	hl_free(h, NULL);
	void *a = hl_malloc(h, 0), *b = hl_malloc(h, 0);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	ck_assert_ptr_ne(a, b);
	ck_assert_uint_eq((uintptr_t)a % hl_block_align(0), 0);
	hl_free(h, a);
	hl_free(h, b);
	char *big = hl_malloc(h, 100);
	ck_assert_ptr_null(hl_realloc(h, big, SIZE_MAX));
	ck_assert_int_eq(errno, ENOMEM);
	hl_free(h, big); /* a failed realloc leaves the block alone */
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

START_TEST(bad_configuration_is_refused)
{
	ck_assert_ptr_null(hl_heap_new(policies[_i], "no_such_key:1"));
	ck_assert_ptr_nonnull(strstr(hl_last_error(), "unknown option 'no_such_key'"));
	ck_assert_ptr_nonnull(strstr(hl_last_error(), "debug")); /* the valid keys are listed */
	ck_assert_ptr_null(hl_heap_new(policies[_i], "debug:maybe"));
	ck_assert_ptr_nonnull(strstr(hl_last_error(), "bad value 'maybe'"));
	ck_assert_ptr_null(hl_heap_new(policies[_i], "debug"));
	ck_assert_ptr_null(hl_heap_new("no-such-policy", NULL));
	ck_assert_ptr_nonnull(strstr(hl_last_error(), policies[_i])); /* names what exists */
}
END_TEST

START_TEST(statistics_measure_the_heap)
{
	hl_heap_t *h = tl_heap(policies[_i], confs[_i]);
	const size_t n = 4 << 20;
	char *p = hl_malloc(h, n);
	memset(p, 1, n);
	ck_assert_double_eq(tl_stat(h, "live_requested_bytes"), (double)n);
	ck_assert_double_ge(tl_stat(h, "peak_requested_bytes"), (double)n);
	ck_assert_double_ge(tl_stat(h, "live_usable_bytes"), (double)n);
	ck_assert_double_ge(tl_stat(h, "committed_bytes"), (double)n);
	ck_assert_double_ge(tl_stat(h, "reserved_bytes"), tl_stat(h, "committed_bytes"));
	/* every page was written, so mincore must see them resident */
	ck_assert_double_ge(tl_stat(h, "resident_bytes"), (double)n);
	ck_assert_double_ge(tl_stat(h, "ops.malloc"), 1);
	ck_assert_double_ge(tl_stat(h, "os.mmap_calls") + tl_stat(h, "os.mprotect_calls"), 1);
	hl_free(h, p);
	ck_assert_double_eq(tl_stat(h, "ops.free"), 1);
	ck_assert_double_eq(tl_stat(h, "live_requested_bytes"), 0);
	ck_assert_double_eq(tl_stat(h, "peak_requested_bytes"), (double)n);
	char buf[1 << 16];
	FILE *f = fmemopen(buf, sizeof buf, "w");
	ck_assert_int_eq(hl_stats_json(h, f), 0);
	fclose(f);
	ck_assert(buf[0] == '{');
	ck_assert_ptr_nonnull(strstr(buf, "\"policy_stats\":{"));
	ck_assert_ptr_nonnull(strstr(buf, "\"resident_bytes\":"));
	hl_heap_destroy(h);
}
END_TEST

typedef struct walk_find {
	const void *want;
	int found_live;
} walk_find_t;

static int find_block(const hl_block_t *b, void *arg)
{
	walk_find_t *w = arg;
	if (b->state == HL_BLOCK_LIVE && (const char *)w->want >= (const char *)b->addr &&
	    (const char *)w->want < (const char *)b->addr + (b->size ? b->size : 1))
		w->found_live++;
	return 0;
}

START_TEST(walker_and_snapshot_see_live_blocks)
{
	hl_heap_t *h = tl_heap(policies[_i], confs[_i]);
	void *p[20];
	for (int i = 0; i < 20; i++)
		p[i] = hl_malloc(h, (size_t)(i * 40 + 1));
	for (int i = 0; i < 20; i += 2)
		hl_free(h, p[i]);
	for (int i = 1; i < 20; i += 2) {
		walk_find_t w = { p[i], 0 };
		hl_walk(h, find_block, &w);
		ck_assert_msg(w.found_live == 1, "walker saw live block %d %d times", i, w.found_live);
		ck_assert(hl_owns(h, p[i]));
	}
	static char dot[1 << 20];
	FILE *f = fmemopen(dot, sizeof dot, "w");
	ck_assert_int_eq(hl_snapshot_dot(h, f, "conformance"), 0);
	fclose(f);
	ck_assert(strncmp(dot, "digraph", 7) == 0);
	ck_assert_ptr_nonnull(strstr(dot, "legend"));
	ck_assert_ptr_nonnull(strstr(dot, "region#"));
	for (int i = 1; i < 20; i += 2)
		hl_free(h, p[i]);
	hl_heap_destroy(h);
}
END_TEST

START_TEST(several_heaps_side_by_side)
{
	hl_heap_t *hs[MAX_RUNS];
	for (int k = 0; k < npolicies; k++)
		hs[k] = tl_heap(policies[k], confs[k]);
	void *p[MAX_RUNS][50];
	for (int i = 0; i < 50; i++)
		for (int k = 0; k < npolicies; k++) {
			p[k][i] = hl_malloc(hs[k], (size_t)(i * 13 + 1));
			tl_fill(p[k][i], (size_t)(i * 13 + 1), (unsigned)(k * 100 + i));
		}
	for (int k = 0; k < npolicies; k++)
		for (int j = 0; j < npolicies; j++)
			if (j != k && strcmp(policies[j], policies[k]))
				ck_assert_msg(!hl_owns(hs[j], p[k][7]), "%s claims a block of %s", policies[j], policies[k]);
	for (int k = 0; k < npolicies; k++) {
		for (int i = 0; i < 50; i++) {
			ck_assert(tl_intact(p[k][i], (size_t)(i * 13 + 1), (unsigned)(k * 100 + i)));
			hl_free(hs[k], p[k][i]);
		}
		tl_check_clean(hs[k]);
		hl_heap_destroy(hs[k]);
	}
}
END_TEST

/* Threads hammering one heap, with blocks passed between threads. */
typedef struct hammer {
	hl_heap_t *h;
	void *_Atomic *mailbox;
	int id;
} hammer_t;

enum { MAILBOX = 256, HAMMER_OPS = 40000, REALLOC_RACE_OPS = 100000 };

/* With --enable-debug every call runs the checker, which walks the heap:
 * the long tests then do a tenth of the work. */
static int scaled(int ops)
{
	hl_heap_t *h = hl_heap_new(policies[0], NULL);
	double debug = 0;
	hl_stat(h, "debug", &debug);
	hl_heap_destroy(h);
	return debug ? ops / 10 : ops;
}

static void *hammer(void *arg)
{
	hammer_t *a = arg;
	uint64_t s = 0x9e3779b9u * (uint64_t)(a->id + 1);
	void *mine[64] = { 0 };
	for (int op = 0, n = scaled(HAMMER_OPS); op < n; op++) {
		int i = (int)(rng_next(&s) % 64);
		if (mine[i]) {
			unsigned char *b = mine[i];
			if (b[0] != (unsigned char)a->id)
				return (void *)1;
			if (rng_next(&s) % 2) {
				hl_free(a->h, mine[i]);
			} else {
				/* hand it to whichever thread takes it from the mailbox */
				void *old = atomic_exchange(&a->mailbox[rng_next(&s) % MAILBOX], mine[i]);
				if (old)
					hl_free(a->h, old);
			}
			mine[i] = NULL;
		} else {
			size_t n = random_size(&s) % 4096 + 1;
			mine[i] = hl_malloc(a->h, n);
			if (!mine[i])
				return (void *)1;
			memset(mine[i], a->id, n);
		}
	}
	for (int i = 0; i < 64; i++)
		hl_free(a->h, mine[i]);
	return NULL;
}

START_TEST(threads_hammer_one_heap)
{
	for (int nthreads = 2; nthreads <= 8; nthreads *= 2) {
		hl_heap_t *h = tl_heap(policies[_i], confs[_i]);
		void *_Atomic mailbox[MAILBOX] = { 0 };
		pthread_t th[8];
		hammer_t args[8];
		for (int k = 0; k < nthreads; k++) {
			args[k] = (hammer_t){ h, mailbox, k };
			ck_assert_int_eq(pthread_create(&th[k], NULL, hammer, &args[k]), 0);
		}
		for (int k = 0; k < nthreads; k++) {
			void *rc;
			pthread_join(th[k], &rc);
			ck_assert_msg(rc == NULL, "thread %d saw a corrupted block", k);
		}
		for (int i = 0; i < MAILBOX; i++)
			hl_free(h, mailbox[i]);
		tl_check_clean(h);
		ck_assert_double_eq(tl_stat(h, "live_requested_bytes"), 0);
		ck_assert_double_eq(tl_stat(h, "live_usable_bytes"), 0);
		hl_heap_destroy(h);
	}
}
END_TEST

/* realloc that moves a block frees the old address inside the policy; the
 * core's ledger must forget the old address before then, or another thread
 * that is handed the same address at once loses its ledger entry to the
 * realloc's late removal, and its own free aborts as "not live". */
typedef struct reuser {
	hl_heap_t *h;
	atomic_bool done;
} reuser_t;

static void *reuse_freed_addresses(void *arg)
{
	reuser_t *r = arg;
	while (!atomic_load(&r->done)) {
		void *x = hl_malloc(r->h, 48);
		memset(x, 0x5a, 48);
		hl_free(r->h, x);
	}
	return NULL;
}

START_TEST(realloc_moving_while_another_thread_allocates)
{
	hl_heap_t *h = tl_heap(policies[_i], confs[_i]);
	reuser_t r = { .h = h };
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, reuse_freed_addresses, &r), 0);
	for (int i = 0, n = scaled(REALLOC_RACE_OPS); i < n; i++) {
		char *p = hl_malloc(h, 48);
		memset(p, 0x11, 48);
		char *q = hl_realloc(h, p, 3000);
		ck_assert_ptr_nonnull(q);
		ck_assert_int_eq(q[47], 0x11);
		hl_free(h, q);
	}
	atomic_store(&r.done, true);
	pthread_join(th, NULL);
	tl_check_clean(h);
	ck_assert_double_eq(tl_stat(h, "live_requested_bytes"), 0);
	hl_heap_destroy(h);
}
END_TEST

START_TEST(trim_keeps_live_blocks)
{
	hl_heap_t *h = tl_heap(policies[_i], confs[_i]);
	void *p[200];
	for (int i = 0; i < 200; i++) {
		p[i] = hl_malloc(h, 3000);
		tl_fill(p[i], 3000, (unsigned)i);
	}
	for (int i = 0; i < 200; i += 3)
		hl_free(h, p[i]);
	hl_trim(h, 0);
	for (int i = 0; i < 200; i++)
		if (i % 3) {
			ck_assert(tl_intact(p[i], 3000, (unsigned)i));
			hl_free(h, p[i]);
		}
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

static Suite *conformance_suite(void)
{
	pick_policies();
	Suite *s = suite_create("conformance");
	/* make check-threads (the ThreadSanitizer tree) leaves out the tcases
	 * tagged single-threaded (CK_EXCLUDE_TAGS, tests/local.mk) */
	TCase *tc = tcase_create("api");
	tcase_set_tags(tc, "single-threaded");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, every_block_is_aligned_for_its_size, 0, npolicies);
	tcase_add_loop_test(tc, memalign_up_to_one_mebibyte, 0, npolicies);
	tcase_add_loop_test(tc, shadow_copy_checked_after_every_step, 0, npolicies);
	tcase_add_loop_test(tc, shadow_copy_long_sequence, 0, npolicies);
	tcase_add_loop_test(tc, realloc_grow_shrink_in_place, 0, npolicies);
	tcase_add_loop_test(tc, calloc_zeroes_even_reused_memory, 0, npolicies);
	tcase_add_loop_test(tc, error_paths, 0, npolicies);
	tcase_add_loop_test(tc, bad_configuration_is_refused, 0, npolicies);
	tcase_add_loop_test(tc, statistics_measure_the_heap, 0, npolicies);
	tcase_add_loop_test(tc, walker_and_snapshot_see_live_blocks, 0, npolicies);
	tcase_add_loop_test(tc, trim_keeps_live_blocks, 0, npolicies);
	tcase_add_test(tc, several_heaps_side_by_side);
	suite_add_tcase(s, tc);
	TCase *threads = tcase_create("threads");
	tcase_set_timeout(threads, 120);
	tcase_add_loop_test(threads, threads_hammer_one_heap, 0, npolicies);
	tcase_add_loop_test(threads, realloc_moving_while_another_thread_allocates, 0, npolicies);
	suite_add_tcase(s, threads);
	return s;
}

TL_MAIN(conformance_suite)
