/**
 * @file testlib_events.h
 * @brief What the Check suites share to test decision events: a listener
 * that keeps every event, counters read before and after a workload, and
 * the assertion that a path's events number as many as the statistic
 * that counts the path grew (tests/unit/test_events.c; each policy's suite,
 * policies/NAME/test_NAME.c, tests its own paths with them).
 */
#ifndef HL_TESTLIB_EVENTS_H
#define HL_TESTLIB_EVENTS_H

#include "testlib.h"

/** Every event a listener heard. */
typedef struct tl_tally {
	hl_event_t *ev;
	size_t n, cap;
} tl_tally_t;

/** A listener (hl_set_listener) that keeps each event in the tl_tally_t
 *  @p arg. */
void tl_keep(hl_heap_t *h, const hl_event_t *e, void *arg);
/** Events of @p kind (-1: any) whose `what` starts with @p prefix (NULL: any). */
double tl_n_of(const tl_tally_t *t, int kind, const char *prefix);
/** True when @p t heard, from index @p from on, an event of @p kind whose
 *  `what` is @p what (NULL: any event at all). */
int tl_heard(const tl_tally_t *t, size_t from, int kind, const char *what);

enum { TL_NKEYS = 16 };
/** The counters a test compares, read at one moment. */
typedef struct tl_snap {
	const char *const *keys;
	double v[TL_NKEYS];
} tl_snap_t;

/** Reads statistics @p keys (ended by NULL) of @p h into @p s. */
void tl_take_snap(hl_heap_t *h, const char *const *keys, tl_snap_t *s);
/** Growth of @p key between two snaps of the same keys. */
double tl_grew(const tl_snap_t *a, const tl_snap_t *b, const char *key);

/** One run: a fresh heap under a listener, its counters (@p keys and the
 *  page source's) read before the workload and after it. */
typedef struct tl_events_run {
	tl_tally_t t;
	hl_heap_t *h;
	tl_snap_t a, b, oa, ob;
} tl_events_run_t;

/** Starts a run on a new heap of @p policy with @p conf; returns the heap. */
hl_heap_t *tl_run_begin(tl_events_run_t *r, const char *policy, const char *conf, const char *const *keys);
/** After the workload: the counters again, and every kernel call the page
 *  source counted (mincore aside: it is how heaplab measures) checked to
 *  have been reported as one "os" event, call by call. */
void tl_run_measure(tl_events_run_t *r);
/** Events of @p kind and @p what (a prefix, NULL: any) number as many as
 *  counter @p key grew. */
void tl_expect_count(const tl_events_run_t *r, int kind, const char *what, const char *key);
/** Each path of @p kinds / @p whats (ended by -1) was taken at least once. */
void tl_expect_paths(const tl_events_run_t *r, const int *kinds, const char *const *whats);
/** The heap checked clean and destroyed, the events freed. */
void tl_run_end(tl_events_run_t *r);

/** Blocks of mixed sizes freed in an order that leaves holes, asked
 *  again, one grown by realloc, all freed, the heap trimmed. */
void tl_holes_workload(hl_heap_t *h);

/** A heap nobody listens to runs its policy's quiet copies (no fast-path
 *  events); one given a listener, or given one again after it was
 *  removed, must run the copies with every point: on a warm heap of
 *  @p name with @p conf the next malloc and free take the fast path (a
 *  cache hit, a push), and each must be heard — as @p hit and @p put when
 *  the caller knows the fast path's own events, any event when NULL. */
void tl_fast_path_heard(const char *name, const char *conf, const char *hit, const char *put);

/** Returns from the test (with a line saying so) when policy @p policy
 *  is not compiled in. */
#define TL_SKIP_UNLESS(policy)                                                 \
	do {                                                                   \
		if (!tl_has_policy(policy)) {                                  \
			printf("SKIP %s: policy not compiled in\n", policy);   \
			return;                                                \
		}                                                              \
	} while (0)
#endif
