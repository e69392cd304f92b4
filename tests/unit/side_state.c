/* A second policy state beside a heap, for tests that damage it (see
 * side_state.h). */
#include <stdio.h>
#include <string.h>
#include "testlib.h"
#include "side_state.h"

void *tl_side_open(tl_side_t *x, const char *policy, const char *conf)
{
	hl_conf_t c;
	char err[256];
	*x = (tl_side_t){ .h = tl_heap(policy, "ledger:on"), .pol = hl_policy_find(policy) };
	ck_assert_ptr_nonnull(x->pol);
	ck_assert_msg(hl_conf_parse(&c, x->pol->options, conf, err, sizeof err) == 0, "%s: %s", conf, err);
	x->state = x->pol->init(x->h, &c);
	ck_assert_ptr_nonnull(x->state);
	return x->state;
}

int tl_side_check(tl_side_t *x, char *text, size_t len)
{
	memset(text, 0, len);
	FILE *f = fmemopen(text, len - 1, "w");
	ck_assert_ptr_nonnull(f);
	hl_report_t r = { .out = f, .policy = x->pol->name };
	int n = x->pol->check(x->state, &r);
	fclose(f);
	return n;
}

void tl_side_clean(tl_side_t *x)
{
	char text[2048];
	int n = tl_side_check(x, text, sizeof text);
	ck_assert_msg(n == 0, "%d problem(s): %s", n, text);
}

void tl_side_finds(tl_side_t *x, const char *want)
{
	char text[2048];
	int n = tl_side_check(x, text, sizeof text);
	ck_assert_msg(n >= 1 && strstr(text, want), "%d problem(s), report \"%s\", wanted \"%s\"", n, text, want);
}

void tl_side_close(tl_side_t *x)
{
	tl_side_clean(x);
	hl_heap_destroy(x->h);
}
