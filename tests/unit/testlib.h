/**
 * @file testlib.h
 * @brief Small helpers shared by the Check suites.
 */
#ifndef HL_TESTLIB_H
#define HL_TESTLIB_H

#include <check.h>
#include <stdint.h>
#include "heaplab.h"

/** A heap of @p policy with @p conf; fails the test when it cannot be made. */
hl_heap_t *tl_heap(const char *policy, const char *conf);
/** A statistic by path; fails the test when the path does not exist. */
double tl_stat(hl_heap_t *h, const char *path);
/** Fails the test (printing the problems) unless hl_check finds nothing. */
void tl_check_clean(hl_heap_t *h);
/** Fails the test unless hl_check finds a problem in @p h whose report
 *  contains @p want. */
void tl_check_finds(hl_heap_t *h, const char *want);
/** True when @p name is a compiled-in policy. */
int tl_has_policy(const char *name);
/** The policies a suite runs: those named in $HL_TEST_POLICIES (a comma
 *  list), else every compiled-in one but @p leave_out (NULL: none); at most
 *  @p max into @p out.  Returns how many. */
int tl_pick_policies(const char **out, int max, const char *leave_out);
/** Keeps the calling thread on the CPU it runs on now (percpu's tests:
 *  a move between two calls would reach another CPU's stacks). */
void tl_stay_on_this_cpu(void);
/** Fills @p n bytes at @p p with a pattern derived from @p seed. */
void tl_fill(void *p, size_t n, unsigned seed);
/** True when the pattern of tl_fill(p, n, seed) is intact. */
int tl_intact(const void *p, size_t n, unsigned seed);
/** Runs @p s with CK_FORK and returns the number of failures. */
int tl_run(Suite *s);
/** Page size. */
size_t tl_page(void);
/** Thread body: one malloc(64) and its free on heap @p heap (an
 *  hl_heap_t *), so the thread gets its per-heap state; returns NULL. */
void *tl_thread_touch(void *heap);
/** Path of a trace shipped in traces/ (uses $srcdir). */
const char *tl_trace_path(const char *name, char *buf, size_t len);

/** Runs @p fn(@p arg) in a forked child with its stderr captured, and
 *  fails the test unless the child dies of SIGABRT having written @p text
 *  (e.g. "heaplab: bins: double free"). */
void tl_expect_abort(void (*fn)(const void *arg), const void *arg, const char *text);

/** Standard main() for a suite built by @p make_suite. */
#define TL_MAIN(make_suite) \
	int main(void) { return tl_run(make_suite()) ? 1 : 0; }
#endif
