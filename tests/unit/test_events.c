/*
 * test_events.c -- the decision events' contract, on every compiled-in
 * policy: one heap's listener hears nothing of another's, hl_events_take
 * gives the events of the last call, a removed listener is not called
 * again, and the fast path is heard once a listener is set (under each
 * policy's defaults and its variants).  That each policy reports a path's
 * event exactly when the statistic that counts the path moves is tested in
 * its own suite (policies/NAME/test_NAME.c), with tests/unit/testlib_events.h.
 */
#include "testlib_events.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- the listener's contract ----------------------------------------------------------- */

START_TEST(a_listener_hears_only_its_heap)
{
	for (size_t i = 0; i < hl_policy_count(); i++) {
		const char *name = hl_policy_name(i);
		tl_tally_t ta = { 0 }, tb = { 0 };
		hl_heap_t *a = tl_heap(name, NULL), *b = tl_heap(name, NULL);
		ck_assert_int_eq(hl_set_listener(a, tl_keep, &ta), 0);
		void *p = hl_malloc(b, 100);
		hl_free(b, p);
		ck_assert_msg(ta.n == 0, "%s: heap a heard %zu events of heap b", name, ta.n);
		p = hl_malloc(a, 100);
		ck_assert_msg(ta.n > 0, "%s: malloc reported no step", name);
		size_t after_malloc = ta.n;
		hl_free(a, p);
		ck_assert_msg(ta.n > after_malloc, "%s: free reported no step", name);
		ck_assert_int_eq(hl_set_listener(a, NULL, NULL), 0);
		size_t before = ta.n;
		hl_free(a, hl_malloc(a, 100));
		ck_assert_msg(ta.n == before, "%s: a removed listener was called", name);
		ck_assert_int_eq(hl_set_listener(b, tl_keep, &tb), 0);
		hl_heap_destroy(a);
		hl_heap_destroy(b);     /* its listener goes with it */
		free(ta.ev);
		free(tb.ev);
	}
}
END_TEST

/* Each policy under its defaults and under each of its variants (its
 * table's: other fronts, caches off); a policy's own suite checks that
 * its fast path is heard as its own events. */
START_TEST(the_fast_path_is_heard_once_a_listener_is_set)
{
	tl_stay_on_this_cpu();  /* a per-CPU cache's warm stack stays the next pair's */
	for (size_t i = 0; i < hl_policy_count(); i++) {
		const char *name = hl_policy_name(i);
		tl_fast_path_heard(name, NULL, NULL, NULL);
		const char *const *variants = hl_policy_variants(name);
		for (size_t v = 0; variants && variants[v]; v++)
			tl_fast_path_heard(name, variants[v], NULL, NULL);
	}
}
END_TEST

START_TEST(take_gives_the_events_of_the_last_call)
{
	for (size_t i = 0; i < hl_policy_count(); i++) {
		const char *name = hl_policy_name(i);
		hl_heap_t *h = tl_heap(name, NULL);
		hl_event_t ev[64];
		tl_tally_t t = { 0 };
		ck_assert_int_eq(hl_events_keep(h, true), 0);
		ck_assert_int_eq(hl_set_listener(h, tl_keep, &t), 0);
		void *p = hl_malloc(h, 100);
		size_t n = hl_events_take(h, ev, 64);
		ck_assert_msg(n > 0 && n == t.n, "%s: kept %zu events, the listener heard %zu", name, n, t.n);
		ck_assert_uint_eq(hl_events_take(h, ev, 64), 0);
		hl_free(h, p);
		n = hl_events_take(h, ev, 64);
		ck_assert_msg(n > 0, "%s: free kept no event", name);
		char line[256];
		for (size_t k = 0; k < n && k < 64; k++) {
			ck_assert_str_ne(hl_event_kind_name(ev[k].kind), "unknown");
			ck_assert(strlen(hl_event_text(h, &ev[k], line, sizeof line)) > 0);
		}
		ck_assert_int_eq(hl_events_keep(h, false), 0);
		hl_free(h, hl_malloc(h, 100));
		ck_assert_uint_eq(hl_events_take(h, ev, 64), 0);
		hl_heap_destroy(h);
		free(t.ev);
	}
}
END_TEST

static Suite *events_suite(void)
{
	Suite *s = suite_create("events");
	TCase *api = tcase_create("listener");
	tcase_set_timeout(api, 60);
	tcase_add_test(api, a_listener_hears_only_its_heap);
	tcase_add_test(api, take_gives_the_events_of_the_last_call);
	tcase_add_test(api, the_fast_path_is_heard_once_a_listener_is_set);
	suite_add_tcase(s, api);
	return s;
}

TL_MAIN(events_suite)
