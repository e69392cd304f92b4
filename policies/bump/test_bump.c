/*
 * bump: the claims of a region allocator, each a test.
 */
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include "testlib_events.h"

START_TEST(blocks_follow_each_other)
{
	hl_heap_t *h = tl_heap("bump", NULL);
	/* each block is a 16-byte header plus the request rounded up to 16 */
	char *a = hl_malloc(h, 1), *b = hl_malloc(h, 40), *c = hl_malloc(h, 48);
	ck_assert_ptr_eq(b, a + 16 + 16);
	ck_assert_ptr_eq(c, b + 16 + 48);
	ck_assert_uint_eq(hl_usable_size(h, a), 16);
	ck_assert_uint_eq(hl_usable_size(h, b), 48);
	hl_heap_destroy(h);
}
END_TEST

START_TEST(free_records_nothing)
{
	hl_heap_t *h = tl_heap("bump", NULL);
	char *a = hl_malloc(h, 100);
	hl_free(h, a);
	char *b = hl_malloc(h, 100);
	ck_assert_ptr_eq(b, a + 16 + 112); /* the freed space is never handed out again */
	ck_assert_double_eq(tl_stat(h, "policy_stats.frees_ignored"), 1);
	ck_assert_double_eq(tl_stat(h, "policy_stats.blocks"), 2);
	hl_heap_destroy(h);
}
END_TEST

START_TEST(reset_drops_everything_at_once)
{
	/* 50,000 calls: without the per-call checker of debug builds */
	hl_heap_t *h = tl_heap("bump", "region_size:1M,commit_step:64K,debug:off");
	char *first = hl_malloc(h, 64);
	for (int i = 0; i < 50000; i++)
		memset(hl_malloc(h, 64), 1, 64); /* several regions' worth */
	ck_assert_double_ge(tl_stat(h, "policy_stats.regions"), 3);
	double before = tl_stat(h, "committed_bytes");
	ck_assert_int_eq(hl_reset(h), 0);
	ck_assert_double_eq(tl_stat(h, "policy_stats.regions"), 1);
	ck_assert_double_lt(tl_stat(h, "committed_bytes"), before / 10);
	ck_assert_double_eq(tl_stat(h, "live_requested_bytes"), 0);
	char *again = hl_malloc(h, 64);
	ck_assert_ptr_nonnull(again);
	tl_check_clean(h);
	(void)first;
	hl_heap_destroy(h);
}
END_TEST

START_TEST(the_last_block_grows_in_place)
{
	hl_heap_t *h = tl_heap("bump", NULL);
	hl_malloc(h, 10);
	char *p = hl_malloc(h, 32);
	ck_assert_ptr_eq(hl_realloc(h, p, 5000), p);
	char *q = hl_malloc(h, 16);
	ck_assert_ptr_eq(q, p + 5008 + 16);
	ck_assert_ptr_ne(hl_realloc(h, p, 6000), p); /* no longer last: it moves */
	hl_heap_destroy(h);
}
END_TEST

START_TEST(trim_returns_committed_tail)
{
	hl_heap_t *h = tl_heap("bump", "commit_step:1M");
	hl_malloc(h, 3 * tl_page()); /* past the first page: one commit step */
	double committed = tl_stat(h, "committed_bytes");
	ck_assert_double_ge(committed, 1 << 20);
	ck_assert_uint_ge(hl_trim(h, 0), (1u << 20) - 4 * tl_page());
	/* what stays: the pages up to the cursor (descriptor + header + 3 pages) */
	ck_assert_double_le(tl_stat(h, "committed_bytes"), (double)(4 * tl_page()));
	hl_heap_destroy(h);
}
END_TEST

static void free_foreign(const void *conf)
{
	hl_heap_t *h = hl_heap_new("bump", conf);
	static char not_mine[64] __attribute__((aligned(16)));
	hl_malloc(h, 10);
	hl_free(h, not_mine);
}

START_TEST(foreign_free_aborts)
{
	/* the policy's own check (ledger off) and the core's (ledger on), then
	 * debug mode's guard, which names it before the policy is asked */
	tl_expect_abort(free_foreign, "ledger:off,debug:off", "heaplab: bump: free of a pointer this heap does not own");
	tl_expect_abort(free_foreign, "ledger:on,debug:off", "heaplab: bump: free of a pointer this heap does not own");
	tl_expect_abort(free_foreign, "debug:on", "heaplab: bump: free of a pointer this heap never handed out");
}
END_TEST

/* --- decision events: each path reports its event exactly when the
 * statistic that counts the path moves (tests/unit/testlib_events.h) ----------- */

static const char *const bump_keys[] = {
	"policy_stats.blocks", "policy_stats.regions", "policy_stats.frees_ignored", NULL,
};

START_TEST(bump_events_follow_the_counters)
{
	TL_SKIP_UNLESS("bump");
	tl_events_run_t r;
	hl_heap_t *h = tl_run_begin(&r, "bump", "region_size:1M", bump_keys);
	tl_holes_workload(h);
	hl_malloc(h, 700000);                  /* two more regions */
	hl_malloc(h, 700000);
	void *q = hl_malloc(h, 100);
	q = hl_realloc(h, q, 300);            /* the last block grows in place */
	hl_free(h, q);
	tl_run_measure(&r);
	ck_assert_double_eq(tl_n_of(&r.t, HL_EV_BUMP, "cursor moved") - tl_n_of(&r.t, HL_EV_BUMP, "cursor moved: the last"),
			    tl_grew(&r.a, &r.b, "policy_stats.blocks"));
	tl_expect_count(&r, HL_EV_NEW, "region", "policy_stats.regions");
	tl_expect_count(&r, HL_EV_LOOK, "free ignored", "policy_stats.frees_ignored");
	ck_assert(tl_n_of(&r.t, HL_EV_BUMP, "cursor moved: the last") > 0);
	tl_run_end(&r);
}
END_TEST

static Suite *bump_suite(void)
{
	Suite *s = suite_create("bump");
	TCase *tc = tcase_create("bump");
	tcase_add_test(tc, bump_events_follow_the_counters);
	tcase_add_test(tc, blocks_follow_each_other);
	tcase_add_test(tc, free_records_nothing);
	tcase_add_test(tc, reset_drops_everything_at_once);
	tcase_add_test(tc, the_last_block_grows_in_place);
	tcase_add_test(tc, trim_returns_committed_tail);
	tcase_add_test(tc, foreign_free_aborts);
	suite_add_tcase(s, tc);
	return s;
}

TL_MAIN(bump_suite)
