/*
 * Tests of the `percpu` policy (TCMalloc): size classes, the tiers,
 * rseq restarts, front:thread.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testlib.h"

START_TEST(usable_sizes_follow_tcmalloc_classes)
{
	hl_heap_t *h = tl_heap("percpu", NULL);
	void *p = hl_malloc(h, 1);
	ck_assert_uint_eq(hl_usable_size(h, p), 8);
	hl_free(h, p);
	hl_heap_destroy(h);
}
END_TEST

static Suite *percpu_suite(void)
{
	Suite *s = suite_create("percpu");
	TCase *tc = tcase_create("model");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, usable_sizes_follow_tcmalloc_classes);
	suite_add_tcase(s, tc);
	return s;
}

TL_MAIN(percpu_suite)
