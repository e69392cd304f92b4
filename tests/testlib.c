/* Helpers shared by the Check suites (see testlib.h). */
#include "testlib.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

hl_heap_t *tl_heap(const char *policy, const char *conf)
{
	hl_heap_t *h = hl_heap_new(policy, conf);
	ck_assert_msg(h != NULL, "hl_heap_new(%s, %s): %s", policy, conf ? conf : "", hl_last_error());
	return h;
}

double tl_stat(hl_heap_t *h, const char *path)
{
	double v = 0;
	ck_assert_msg(hl_stat(h, path, &v) == 0, "no statistic %s in policy %s", path, hl_heap_policy(h));
	return v;
}

void tl_check_clean(hl_heap_t *h)
{
	int n = hl_check(h, stderr);
	ck_assert_msg(n == 0, "hl_check found %d problem(s) in %s", n, hl_heap_policy(h));
}

int tl_has_policy(const char *name)
{
	return hl_policy_summary(name) != NULL;
}

void tl_fill(void *p, size_t n, unsigned seed)
{
	unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		b[i] = (unsigned char)(seed * 31u + i * 7u + (i >> 8));
}

int tl_intact(const void *p, size_t n, unsigned seed)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		if (b[i] != (unsigned char)(seed * 31u + i * 7u + (i >> 8)))
			return 0;
	return 1;
}

int tl_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed;
}

size_t tl_page(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

const char *tl_trace_path(const char *name, char *buf, size_t len)
{
	const char *src = getenv("srcdir");
	snprintf(buf, len, "%s/traces/%s", src ? src : ".", name);
	return buf;
}
