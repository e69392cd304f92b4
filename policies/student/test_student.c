/*
 * student: the skeleton's contracts, which stay true as a student
 * completes it (so these tests keep guarding the finished policy).
 */
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include "testlib_events.h"

START_TEST(blocks_are_aligned_and_hold_their_data)
{
	hl_heap_t *h = tl_heap("student", NULL);
	void *p[64];
	for (unsigned i = 0; i < 64; i++) {
		size_t n = 1 + i * 37;
		p[i] = hl_malloc(h, n);
		ck_assert_ptr_nonnull(p[i]);
		ck_assert_uint_eq((uintptr_t)p[i] & 15, 0);
		ck_assert_uint_ge(hl_usable_size(h, p[i]), n);
		tl_fill(p[i], n, i);
	}
	for (unsigned i = 0; i < 64; i++)
		ck_assert(tl_intact(p[i], 1 + i * 37, i));
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

START_TEST(a_freed_block_is_found_again)
{
	hl_heap_t *h = tl_heap("student", NULL);
	char *a = hl_malloc(h, 200);
	hl_malloc(h, 200); /* keeps a from being the last block */
	hl_free(h, a);
	ck_assert_double_eq(tl_stat(h, "policy_stats.free_blocks"), 1);
	ck_assert_ptr_eq(hl_malloc(h, 100), a); /* first fit: the only free block */
	ck_assert_double_eq(tl_stat(h, "policy_stats.free_blocks"), 0);
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

START_TEST(memalign_lands_on_the_alignment)
{
	hl_heap_t *h = tl_heap("student", NULL);
	hl_malloc(h, 24);
	for (size_t align = 32; align <= 65536; align *= 4) {
		char *p = hl_memalign(h, align, 100);
		ck_assert_ptr_nonnull(p);
		ck_assert_uint_eq((uintptr_t)p % align, 0);
		memset(p, 0xab, 100);
	}
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

START_TEST(replays_a_classic_trace)
{
	char path[4096];
	hl_trace_t *t = hl_trace_load(tl_trace_path("short1.rep", path, sizeof path));
	ck_assert_msg(t != NULL, "%s", hl_last_error());
	hl_heap_t *h = tl_heap("student", NULL);
	hl_replay_opts_t o = { .verify = true, .check_heap = true, .check_every = 1 };
	hl_replay_result_t r;
	ck_assert_msg(hl_replay(h, t, &o, &r) == 0, "%s", r.message);
	ck_assert(r.utilization > 0 && r.utilization <= 1);
	hl_heap_destroy(h);
	hl_trace_free(t);
}
END_TEST

START_TEST(double_free_aborts)
{
	hl_heap_t *h = tl_heap("student", NULL);
	void *p = hl_malloc(h, 40);
	hl_malloc(h, 40);
	hl_free(h, p);
	hl_free(h, p);
}
END_TEST

START_TEST(foreign_free_aborts)
{
	hl_heap_t *h = tl_heap("student", NULL);
	static char elsewhere[64] __attribute__((aligned(16)));
	hl_malloc(h, 40);
	hl_free(h, elsewhere + 16);
}
END_TEST

/* --- decision events: each path reports its event exactly when the
 * statistic that counts the path moves (tests/unit/testlib_events.h) ----------- */

static const char *const student_keys[] = { "policy_stats.blocks_visited", "policy_stats.extends", NULL };

START_TEST(student_events_follow_the_counters)
{
	TL_SKIP_UNLESS("student");
	tl_events_run_t r;
	tl_holes_workload(tl_run_begin(&r, "student", "", student_keys));
	tl_run_measure(&r);
	ck_assert_double_eq(tl_n_of(&r.t, HL_EV_FIRST_FIT, NULL) + tl_n_of(&r.t, HL_EV_REJECT, NULL),
			    tl_grew(&r.a, &r.b, "policy_stats.blocks_visited"));
	tl_expect_count(&r, HL_EV_GROW, NULL, "policy_stats.extends");
	tl_run_end(&r);
}
END_TEST

static Suite *student_suite(void)
{
	Suite *s = suite_create("student");
	TCase *tc = tcase_create("skeleton");
	tcase_add_test(tc, student_events_follow_the_counters);
	tcase_add_test(tc, blocks_are_aligned_and_hold_their_data);
	tcase_add_test(tc, a_freed_block_is_found_again);
	tcase_add_test(tc, memalign_lands_on_the_alignment);
	tcase_add_test(tc, replays_a_classic_trace);
	tcase_add_test_raise_signal(tc, double_free_aborts, SIGABRT);
	tcase_add_test_raise_signal(tc, foreign_free_aborts, SIGABRT);
	suite_add_tcase(s, tc);
	return s;
}

TL_MAIN(student_suite)
