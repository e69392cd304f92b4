/*
 * Fuzz harness: the option-string parser (core/conf.c), through
 * hl_heap_new, for every compiled-in policy.
 *
 * The bytes (up to their first NUL) are a configuration string.  Every
 * policy must either refuse it with one line that starts with its name,
 * or make a heap that serves a few requests of every kind and passes its
 * checker: a string the parser accepts must give a working heap.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "heaplab.h"
#include "fuzz.h"

static const char H[] = "fuzz_conf";

enum { CONF_MAX = 512 };

/* One clean line: no newline, no control byte echoed from the input. */
static bool printable(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s == 0x7f)
			return false;
	return true;
}

static void check_refusal(const char *pol, const char *conf)
{
	const char *e = hl_last_error();
	size_t n = strlen(pol);
	if (strncmp(e, pol, n) != 0 || e[n] != ':' || !printable(e))
		fuzz_bug(H, "%s refused '%s' without one '%s: ...' line: '%s'", pol, conf, pol, e);
}

static void must_check(hl_heap_t *h, const char *pol, const char *conf, const char *when)
{
	if (hl_check(h, stderr) != 0)
		fuzz_bug(H, "%s with '%s': the checker fails %s", pol, conf, when);
}

/* A few requests of every kind on a heap the string configured. */
static void exercise(hl_heap_t *h, const char *pol, const char *conf)
{
	static const size_t sizes[] = { 0, 1, 24, 100, 512, 4000, 70000, 300000 };
	enum { N = sizeof sizes / sizeof sizes[0] };
	void *p[N + 2];
	for (size_t i = 0; i < N; i++) {
		p[i] = hl_malloc(h, sizes[i]);
		if (!p[i])
			fuzz_bug(H, "%s with '%s': malloc(%zu) failed", pol, conf, sizes[i]);
		memset(p[i], 0x5a, sizes[i]);
	}
	p[N] = hl_memalign(h, 4096, 100);
	p[N + 1] = hl_calloc(h, 10, 30);
	if (!p[N] || !p[N + 1])
		fuzz_bug(H, "%s with '%s': memalign or calloc failed", pol, conf);
	must_check(h, pol, conf, "after the allocations");
	p[3] = hl_realloc(h, p[3], 9000);
	if (!p[3])
		fuzz_bug(H, "%s with '%s': realloc failed", pol, conf);
	for (size_t i = 0; i < N + 2; i += 2)
		hl_free(h, p[i]);
	hl_trim(h, 0);
	must_check(h, pol, conf, "after frees and a trim");
	for (size_t i = 1; i < N + 2; i += 2)
		hl_free(h, p[i]);
	must_check(h, pol, conf, "once everything is freed");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char conf[CONF_MAX + 1];
	size_t n = size < CONF_MAX ? size : CONF_MAX;
	memcpy(conf, data, n);
	conf[n] = 0;
	for (size_t k = 0; k < hl_policy_count(); k++) {
		const char *pol = hl_policy_name(k);
		hl_heap_t *h = hl_heap_new(pol, conf);
		if (!h) {
			check_refusal(pol, conf);
			continue;
		}
		fuzz_ran(H, "%s", pol);
		exercise(h, pol, conf);
		hl_heap_destroy(h);
	}
	return 0;
}
