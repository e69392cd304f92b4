/*
 * test_events.c -- decision events: every policy, on a workload
 * built to go down each of its paths, reports a path's event exactly when
 * the statistic that counts the path moves.  Every expected number is the
 * growth of a counter the heap keeps anyway (policy_stats, os.*, ops.*),
 * read before and after; none is copied from the events themselves.  Then
 * the listener's contract: one heap's listener hears nothing of another's,
 * hl_events_take gives the events of the last call, and a removed listener
 * is not called again.
 */
#include "testlib.h"
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- a listener that keeps every event -------------------------------------- */

typedef struct tally {
	hl_event_t *ev;
	size_t n, cap;
} tally_t;

static void keep(hl_heap_t *h, const hl_event_t *e, void *arg)
{
	tally_t *t = arg;
	(void)h;
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 1024;
		t->ev = realloc(t->ev, t->cap * sizeof *t->ev);
		ck_assert_ptr_nonnull(t->ev);
	}
	t->ev[t->n++] = *e;
}

/** Events of @p kind (-1: any) whose `what` starts with @p prefix (NULL: any). */
static double n_of(const tally_t *t, int kind, const char *prefix)
{
	double n = 0;
	for (size_t i = 0; i < t->n; i++)
		if ((kind < 0 || (int)t->ev[i].kind == kind) &&
		    (!prefix || !strncmp(t->ev[i].what, prefix, strlen(prefix))))
			n++;
	return n;
}

/* The counters a test compares, read at one moment. */
enum { NKEYS = 16 };
typedef struct snap {
	const char *const *keys;
	double v[NKEYS];
} snap_t;

static const char *const os_keys[] = {
	"os.mmap_calls", "os.munmap_calls", "os.madvise_dontneed_calls", "os.madvise_free_calls",
	"os.mprotect_calls", "os.mincore_calls", "os.brk_calls", "os.mremap_calls", NULL,
};

static void take_snap(hl_heap_t *h, const char *const *keys, snap_t *s)
{
	s->keys = keys;
	for (int i = 0; keys[i]; i++)
		s->v[i] = tl_stat(h, keys[i]);
}

/** Growth of @p key between two snaps of the same keys. */
static double grew(const snap_t *a, const snap_t *b, const char *key)
{
	for (int i = 0; a->keys[i]; i++)
		if (!strcmp(a->keys[i], key))
			return b->v[i] - a->v[i];
	ck_abort_msg("no counter %s in the snap", key);
	return 0;
}

/** Every kernel call the page source counted (mincore aside: it is how
 *  heaplab measures) was reported as one "os" event, call by call. */
static void expect_os_events(const tally_t *t, const snap_t *a, const snap_t *b)
{
	for (int c = 0; os_keys[c]; c++) {
		if (strstr(os_keys[c], "mincore"))
			continue;
		double events = 0;
		for (size_t i = 0; i < t->n; i++)
			events += t->ev[i].kind == HL_EV_OS && t->ev[i].index == c;
		ck_assert_msg(events == grew(a, b, os_keys[c]), "%s grew by %.0f, %.0f os events", os_keys[c],
			      grew(a, b, os_keys[c]), events);
	}
}

/* One run: a fresh heap under a listener, its counters (@p keys and the
 * page source's) read before the workload and after it. */
typedef struct run {
	tally_t t;
	hl_heap_t *h;
	snap_t a, b, oa, ob;
} run_t;

static hl_heap_t *run_begin(run_t *r, const char *policy, const char *conf, const char *const *keys)
{
	memset(r, 0, sizeof *r);
	r->h = tl_heap(policy, conf);
	/* a first statistics read may make this thread's record (pools asks its
	 * guest's statistics for it): one metadata mapping, before listening */
	double ignored;
	hl_stat(r->h, "policy_stats", &ignored);
	ck_assert_int_eq(hl_set_listener(r->h, keep, &r->t), 0);
	take_snap(r->h, keys, &r->a);
	take_snap(r->h, os_keys, &r->oa);
	return r->h;
}

/** After the workload: the counters again, and the kernel calls checked. */
static void run_measure(run_t *r)
{
	take_snap(r->h, r->a.keys, &r->b);
	take_snap(r->h, os_keys, &r->ob);
	expect_os_events(&r->t, &r->oa, &r->ob);
}

/** Events of @p kind and @p what (a prefix, NULL: any) number as many as
 *  counter @p key grew. */
static void expect_count(const run_t *r, int kind, const char *what, const char *key)
{
	double events = n_of(&r->t, kind, what), counted = grew(&r->a, &r->b, key);
	ck_assert_msg(events == counted, "%s: %.0f %s events \"%s\", %s grew by %.0f", hl_heap_policy(r->h), events,
		      kind < 0 ? "any" : hl_event_kind_name(kind), what ? what : "", key, counted);
}

/** Each path of @p kinds / @p whats (ended by -1) was taken at least once. */
static void expect_paths(const run_t *r, const int *kinds, const char *const *whats)
{
	for (int i = 0; kinds[i] >= 0; i++)
		ck_assert_msg(n_of(&r->t, kinds[i], whats[i]) > 0, "%s: no %s event \"%s\"", hl_heap_policy(r->h),
			      hl_event_kind_name(kinds[i]), whats[i] ? whats[i] : "");
}

static void run_end(run_t *r)
{
	tl_check_clean(r->h);
	hl_heap_destroy(r->h);
	free(r->t.ev);
}

#define SKIP_UNLESS(policy)                                                    \
	do {                                                                   \
		if (!tl_has_policy(policy)) {                                  \
			printf("SKIP %s: policy not compiled in\n", policy);   \
			return;                                                \
		}                                                              \
	} while (0)

/* --- bins ---------------------------------------------------------------------- */

static const char *const bins_keys[] = {
	"policy_stats.tcache_hits", "policy_stats.tcache_misses", "policy_stats.mmapped_chunks", "os.brk_calls",
	NULL,
};

/* Small chunks kept apart by guards (no merging), freed, asked again: the
 * tcache, the unsorted scan (an exact fit, the rest sorted), small bins;
 * a large free chunk asked for slightly less (large bin best fit), one of
 * another bin (binmap search), a mapped chunk, then everything freed (merges,
 * the top trimmed) and malloc_trim. */
static void bins_workload(hl_heap_t *h, tally_t *t)
{
	enum { N = 24 };                       /* more than a tcache bin holds (16) */
	void *p[N], *g[N];
	for (int i = 0; i < N; i++) {
		p[i] = hl_malloc(h, 100);
		g[i] = hl_malloc(h, 24);
	}
	for (int i = 0; i < N; i++)
		hl_free(h, p[i]);
	void *other = hl_malloc(h, 300);       /* the scan files every 112 B chunk in its small bin */
	for (int i = 0; i < N; i++)
		p[i] = hl_malloc(h, 100);
	for (int i = 0; i < 4; i++)            /* back to the unsorted bin (or the tcache) */
		hl_free(h, p[i]);
	for (int i = 0; i < 4; i++)            /* an exact fit in the unsorted bin */
		p[i] = hl_malloc(h, 100);
	void *l1 = hl_malloc(h, 1570), *g1 = hl_malloc(h, 24);
	hl_free(h, l1);
	void *x = hl_malloc(h, 1540);
	void *l2 = hl_malloc(h, 3000), *g2 = hl_malloc(h, 200); /* not the 32 B left above */
	hl_free(h, l2);
	void *y = hl_malloc(h, 2000);
	snap_t a, b;
	take_snap(h, bins_keys, &a);
	double maps = n_of(t, HL_EV_MAP, NULL);
	void *big = hl_malloc(h, 1 << 20);
	take_snap(h, bins_keys, &b);
	ck_assert_double_eq(n_of(t, HL_EV_MAP, NULL) - maps, grew(&a, &b, "policy_stats.mmapped_chunks"));
	hl_free(h, big);
	void *all[] = { x, y, g1, g2, other };
	for (int i = 0; i < N; i++) {
		hl_free(h, p[i]);
		hl_free(h, g[i]);
	}
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
		hl_free(h, all[i]);
	hl_trim(h, 0);
}

static void bins_case(const char *conf, const int *paths, const char *const *whats)
{
	run_t r;
	bins_workload(run_begin(&r, "bins", conf, bins_keys), &r.t);
	run_measure(&r);
	expect_count(&r, HL_EV_CACHE_HIT, NULL, "policy_stats.tcache_hits");
	expect_count(&r, HL_EV_CACHE_MISS, NULL, "policy_stats.tcache_misses");
	/* one thread, the main arena: every growth and trim of the top moves the break */
	ck_assert_double_eq(n_of(&r.t, HL_EV_GROW, "sysmalloc: brk") + n_of(&r.t, HL_EV_SHRINK, NULL),
			    grew(&r.a, &r.b, "os.brk_calls"));
	ck_assert_double_eq(n_of(&r.t, HL_EV_MAP, NULL) - n_of(&r.t, HL_EV_UNMAP, NULL),
			    grew(&r.a, &r.b, "policy_stats.mmapped_chunks"));
	expect_paths(&r, paths, whats);
	run_end(&r);
}

START_TEST(bins_events_follow_the_counters)
{
	SKIP_UNLESS("bins");
	static const int with_tcache[] = { HL_EV_CACHE_HIT, HL_EV_CACHE_MISS, HL_EV_CACHE_PUT, HL_EV_SPLIT,
					   HL_EV_GROW,      HL_EV_MAP,        HL_EV_UNMAP,     HL_EV_MERGE,
					   HL_EV_CACHE_FILL, HL_EV_SHRINK,    -1 };
	static const char *const with_tcache_what[] = { "tcache bin", NULL, "tcache bin", "top", "sysmalloc: brk",
							"sysmalloc", "mmapped", NULL, NULL, NULL };
	bins_case("version:2.43", with_tcache, with_tcache_what); /* its paths: no fastbins */
	static const int bins_only[] = { HL_EV_EXACT_FIT, HL_EV_SORT, HL_EV_EXACT_FIT, HL_EV_BEST_FIT, HL_EV_SCAN,
					 HL_EV_MERGE,     HL_EV_MERGE, HL_EV_LIST_PUSH, HL_EV_SHRINK, -1 };
	static const char *const bins_only_what[] = { "unsorted bin", "unsorted chunk into small bin", "small bin",
						      "large bin", "binmap", "with the next", "into top",
						      "unsorted bin", NULL };
	bins_case("version:2.43,tcache_count:0", bins_only, bins_only_what);
}
END_TEST

/* --- slab ---------------------------------------------------------------------- */

static const char *const slab_keys[] = {
	"policy_stats.tcache_hits", "policy_stats.tcache_fills", "policy_stats.tcache_flushes",
	"policy_stats.purge_calls", "policy_stats.purge_lazy_calls", NULL,
};

START_TEST(slab_events_follow_the_counters)
{
	SKIP_UNLESS("slab");
	run_t r;
	hl_heap_t *h = run_begin(&r, "slab", "dirty_decay_ms:0", slab_keys);
	enum { N = 1200 };
	static void *p[N];
	for (int i = 0; i < N; i++)           /* more than a bin holds: fills, new slabs */
		p[i] = hl_malloc(h, 100);
	for (int i = 0; i < N; i++)           /* more than a bin keeps: flushes, slabs emptied */
		hl_free(h, p[i]);
	for (int i = 0; i < N / 2; i++)
		p[i] = hl_malloc(h, 100);
	void *big = hl_malloc(h, 200000), *big2 = hl_malloc(h, 300000);
	hl_free(h, big);
	hl_free(h, big2);
	for (int i = 0; i < N / 2; i++)
		hl_free(h, p[i]);
	hl_trim(h, 0);
	run_measure(&r);
	expect_count(&r, HL_EV_CACHE_HIT, NULL, "policy_stats.tcache_hits");
	expect_count(&r, HL_EV_CACHE_FILL, NULL, "policy_stats.tcache_fills");
	expect_count(&r, HL_EV_CACHE_FLUSH, NULL, "policy_stats.tcache_flushes");
	ck_assert_double_eq(n_of(&r.t, HL_EV_DECAY, NULL), grew(&r.a, &r.b, "policy_stats.purge_calls") +
								   grew(&r.a, &r.b, "policy_stats.purge_lazy_calls"));
	static const int paths[] = { HL_EV_CACHE_MISS, HL_EV_CACHE_PUT, HL_EV_NEW, HL_EV_RETIRE, HL_EV_SPLIT,
				     HL_EV_MERGE, HL_EV_GROW, -1 };
	static const char *const whats[] = { NULL, NULL, "slab", "slab", "extent", "extent", NULL };
	expect_paths(&r, paths, whats);
	run_end(&r);
}
END_TEST

/* --- sharded --------------------------------------------------------------------- */

static const char *const sharded_keys[] = {
	"policy_stats.pages.made", "policy_stats.pages.freed", "policy_stats.extends",
	"policy_stats.remote_frees", "policy_stats.purges", "ops.malloc", NULL,
};

static void *free_elsewhere(void *arg)
{
	void **pp = arg;
	hl_heap_t *h = pp[0];
	for (int i = 1; pp[i]; i++)
		hl_free(h, pp[i]);
	return NULL;
}

START_TEST(sharded_events_follow_the_counters)
{
	SKIP_UNLESS("sharded");
	run_t r;
	hl_heap_t *h = run_begin(&r, "sharded", "purge_delay:0", sharded_keys);
	enum { N = 3000 };
	static void *p[N];
	for (int i = 0; i < N; i++)           /* several pages: extends, full pages */
		p[i] = hl_malloc(h, 64);
	snap_t m;
	take_snap(h, sharded_keys, &m);
	/* every small malloc so far popped a page's free list once */
	ck_assert_double_eq(n_of(&r.t, HL_EV_LIST_POP, NULL), grew(&r.a, &m, "ops.malloc"));
	void *remote[66] = { h };
	for (int i = 0; i < 64; i++)
		remote[1 + i] = p[i];
	pthread_t th;                          /* another thread frees 64 of them */
	ck_assert_int_eq(pthread_create(&th, NULL, free_elsewhere, remote), 0);
	pthread_join(th, NULL);
	for (int i = 64; i < N; i++)
		hl_free(h, p[i]);
	for (int i = 0; i < 200; i++)          /* collects local_free and thread_free */
		p[i] = hl_malloc(h, 64);
	for (int i = 0; i < 200; i++)
		hl_free(h, p[i]);
	void *big = hl_malloc(h, 1 << 20);
	hl_free(h, big);
	hl_trim(h, 0);
	run_measure(&r);
	expect_count(&r, HL_EV_NEW, "page from", "policy_stats.pages.made");
	expect_count(&r, HL_EV_RETIRE, "page back", "policy_stats.pages.freed");
	expect_count(&r, HL_EV_NEW, "blocks carved", "policy_stats.extends");
	expect_count(&r, HL_EV_REMOTE_FREE, NULL, "policy_stats.remote_frees");
	expect_count(&r, HL_EV_PURGE, NULL, "policy_stats.purges");
	static const int paths[] = { HL_EV_LIST_PUSH, HL_EV_MOVE, HL_EV_COLLECT, HL_EV_COLLECT, HL_EV_MAP,
				     HL_EV_NEW, -1 };
	static const char *const whats[] = { "page local_free", "page full", "thread_free", "free list empty",
					     NULL, "segment" };
	expect_paths(&r, paths, whats);
	run_end(&r);
}
END_TEST

/* --- pools ------------------------------------------------------------------------- */

static const char *const pools_keys[] = {
	"policy_stats.small_mallocs", "policy_stats.small_frees", "policy_stats.fallback_mallocs",
	"policy_stats.fallback_frees", "policy_stats.arenas_allocated_total", "policy_stats.arenas_reclaimed",
	NULL,
};

START_TEST(pools_events_follow_the_counters)
{
	SKIP_UNLESS("pools");
	run_t r;
	hl_heap_t *h = run_begin(&r, "pools", "", pools_keys);
	enum { N = 5000 };                     /* 5000 x 496 B: more than two arenas */
	static void *p[N];
	for (int i = 0; i < N; i++)
		p[i] = hl_malloc(h, 496);
	for (int i = 0; i < N; i += 2)         /* every full pool gets a block back */
		hl_free(h, p[i]);
	for (int i = 0; i < N; i += 2)
		p[i] = hl_malloc(h, 496);
	for (int i = 0; i < N; i++)            /* pools empty, arenas freed */
		hl_free(h, p[i]);
	p[0] = hl_malloc(h, 496);              /* a cached free pool again */
	hl_free(h, p[0]);
	void *big = hl_malloc(h, 4000);
	hl_free(h, big);
	run_measure(&r);
	ck_assert_double_eq(n_of(&r.t, HL_EV_LIST_POP, NULL) + n_of(&r.t, HL_EV_NEW, "pool first"),
			    grew(&r.a, &r.b, "policy_stats.small_mallocs"));
	expect_count(&r, HL_EV_LIST_PUSH, NULL, "policy_stats.small_frees");
	expect_count(&r, HL_EV_HANDOFF, "the fallback allocator (above", "policy_stats.fallback_mallocs");
	expect_count(&r, HL_EV_HANDOFF, "the fallback allocator (not", "policy_stats.fallback_frees");
	expect_count(&r, HL_EV_NEW, "arena", "policy_stats.arenas_allocated_total");
	expect_count(&r, HL_EV_RETIRE, "arena", "policy_stats.arenas_reclaimed");
	static const int paths[] = { HL_EV_MOVE, HL_EV_MOVE, HL_EV_MOVE, HL_EV_LOOK, HL_EV_LOOK, HL_EV_RETIRE, -1 };
	static const char *const whats[] = { "pool full", "pool was full", "pool empty",
					     "arena at the head of usable_arenas (most used first): a cached",
					     "arena at the head of usable_arenas (most used first): a never", "arena" };
	expect_paths(&r, paths, whats);
	run_end(&r);
}
END_TEST

/* --- percpu -------------------------------------------------------------------------- */

/* Many objects of one class freed and asked again, so that stacks run dry
 * (underflows refilled from the transfer cache, which empties and misses
 * on the way) and fill up (batches spilled back to it). */
static void percpu_churn(hl_heap_t *h)
{
	enum { N = 3000 };
	static void *p[N];
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < N; i++)
			p[i] = hl_malloc(h, 48);
		for (int i = 0; i < N; i++)
			hl_free(h, p[i]);
	}
}

START_TEST(percpu_events_follow_the_counters)
{
	SKIP_UNLESS("percpu");
	/* per CPU, under the CPU's lock: one thread kept on one CPU, so the
	 * fresh heap's list of CPUs it ran on has that one entry, whose
	 * underflows (none before the churn) are the misses */
	tl_stay_on_this_cpu();
	static const char *const cpu_keys[] = { "policy_stats.transfer_cache_hits", NULL };
	run_t r;
	percpu_churn(run_begin(&r, "percpu", "rseq:off", cpu_keys));
	run_measure(&r);
	ck_assert_double_eq(n_of(&r.t, HL_EV_CACHE_MISS, "per-CPU slab, class"),
			    tl_stat(r.h, "policy_stats.cpus.0.underflows"));
	ck_assert_double_eq(tl_stat(r.h, "policy_stats.cpus.0.cpu"), sched_getcpu());
	expect_count(&r, HL_EV_LIST_POP, "transfer cache: a batch", "policy_stats.transfer_cache_hits");
	static const int cpu_paths[] = { HL_EV_CACHE_HIT, HL_EV_CACHE_FILL, HL_EV_CACHE_FLUSH, HL_EV_NEW, -1 };
	static const char *const cpu_whats[] = { "per-CPU slab, class (under the CPU's lock)",
						 "per-CPU slab from the transfer cache", "per-CPU slab to the transfer cache",
						 "span from the page heap, class" };
	expect_paths(&r, cpu_paths, cpu_whats);
	run_end(&r);
	/* per thread (gperftools' front) */
	static const char *const thread_keys[] = { "policy_stats.thread_cache_hits", "policy_stats.thread_cache_misses",
						   "policy_stats.transfer_cache_hits", NULL };
	percpu_churn(run_begin(&r, "percpu", "front:thread", thread_keys));
	run_measure(&r);
	expect_count(&r, HL_EV_CACHE_HIT, "thread cache, class", "policy_stats.thread_cache_hits");
	expect_count(&r, HL_EV_CACHE_MISS, "thread cache, class", "policy_stats.thread_cache_misses");
	expect_count(&r, HL_EV_LIST_POP, "transfer cache: a batch", "policy_stats.transfer_cache_hits");
	ck_assert_msg(n_of(&r.t, HL_EV_CACHE_MISS, "thread cache, class") > 0, "percpu front:thread: no miss");
	run_end(&r);
}
END_TEST

/* --- firstfit, bump, student --------------------------------------------------------- */

static const char *const ff_keys[] = {
	"policy_stats.search_steps", "policy_stats.splits", "policy_stats.coalesces", "policy_stats.grows",
	"policy_stats.trims", NULL,
};

/* Blocks of mixed sizes freed in an order that leaves holes, asked again. */
static void holes_workload(hl_heap_t *h)
{
	enum { N = 64 };
	void *p[N];
	for (int i = 0; i < N; i++)
		p[i] = hl_malloc(h, 32 + (size_t)(i % 7) * 48);
	for (int i = 0; i < N; i += 3)
		hl_free(h, p[i]);
	for (int i = 0; i < N; i += 3)
		p[i] = hl_malloc(h, 16 + (size_t)(i % 5) * 40);
	p[0] = hl_realloc(h, p[0], 20000);
	for (int i = N - 1; i >= 0; i--)
		hl_free(h, p[i]);
	hl_trim(h, 0);
}

static void firstfit_case(const char *conf)
{
	run_t r;
	holes_workload(run_begin(&r, "firstfit", conf, ff_keys));
	run_measure(&r);
	expect_count(&r, -1, "candidate", "policy_stats.search_steps");
	ck_assert_double_eq(n_of(&r.t, HL_EV_REJECT, "candidate") + n_of(&r.t, HL_EV_LOOK, "candidate"),
			    grew(&r.a, &r.b, "policy_stats.search_steps"));
	expect_count(&r, HL_EV_SPLIT, NULL, "policy_stats.splits");
	expect_count(&r, HL_EV_MERGE, NULL, "policy_stats.coalesces");
	expect_count(&r, HL_EV_GROW, NULL, "policy_stats.grows");
	expect_count(&r, HL_EV_SHRINK, NULL, "policy_stats.trims");
	ck_assert_msg(n_of(&r.t, HL_EV_REJECT, "candidate") > 0, "firstfit (%s): no candidate rejected", conf);
	run_end(&r);
}

START_TEST(firstfit_events_follow_the_counters)
{
	SKIP_UNLESS("firstfit");
	firstfit_case("fit:first");
	firstfit_case("fit:best");
	firstfit_case("fit:next,order:lifo");
	firstfit_case("fit:worst,order:fifo");
}
END_TEST

static const char *const bump_keys[] = {
	"policy_stats.blocks", "policy_stats.regions", "policy_stats.frees_ignored", NULL,
};

START_TEST(bump_events_follow_the_counters)
{
	SKIP_UNLESS("bump");
	run_t r;
	hl_heap_t *h = run_begin(&r, "bump", "region_size:1M", bump_keys);
	holes_workload(h);
	hl_malloc(h, 700000);                  /* two more regions */
	hl_malloc(h, 700000);
	void *q = hl_malloc(h, 100);
	q = hl_realloc(h, q, 300);            /* the last block grows in place */
	hl_free(h, q);
	run_measure(&r);
	ck_assert_double_eq(n_of(&r.t, HL_EV_BUMP, "cursor moved") - n_of(&r.t, HL_EV_BUMP, "cursor moved: the last"),
			    grew(&r.a, &r.b, "policy_stats.blocks"));
	expect_count(&r, HL_EV_NEW, "region", "policy_stats.regions");
	expect_count(&r, HL_EV_LOOK, "free ignored", "policy_stats.frees_ignored");
	ck_assert(n_of(&r.t, HL_EV_BUMP, "cursor moved: the last") > 0);
	run_end(&r);
}
END_TEST

static const char *const student_keys[] = { "policy_stats.blocks_visited", "policy_stats.extends", NULL };

START_TEST(student_events_follow_the_counters)
{
	SKIP_UNLESS("student");
	run_t r;
	holes_workload(run_begin(&r, "student", "", student_keys));
	run_measure(&r);
	ck_assert_double_eq(n_of(&r.t, HL_EV_FIRST_FIT, NULL) + n_of(&r.t, HL_EV_REJECT, NULL),
			    grew(&r.a, &r.b, "policy_stats.blocks_visited"));
	expect_count(&r, HL_EV_GROW, NULL, "policy_stats.extends");
	run_end(&r);
}
END_TEST

/* --- the listener's contract ----------------------------------------------------------- */

START_TEST(a_listener_hears_only_its_heap)
{
	for (size_t i = 0; i < hl_policy_count(); i++) {
		const char *name = hl_policy_name(i);
		tally_t ta = { 0 }, tb = { 0 };
		hl_heap_t *a = tl_heap(name, NULL), *b = tl_heap(name, NULL);
		ck_assert_int_eq(hl_set_listener(a, keep, &ta), 0);
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
		ck_assert_int_eq(hl_set_listener(b, keep, &tb), 0);
		hl_heap_destroy(a);
		hl_heap_destroy(b);     /* its listener goes with it */
		free(ta.ev);
		free(tb.ev);
	}
}
END_TEST

/** True when @p t heard, from index @p from on, an event of @p kind whose
 *  `what` is @p what (NULL: any event at all). */
static int heard(const tally_t *t, size_t from, int kind, const char *what)
{
	for (size_t i = from; i < t->n; i++)
		if (!what || ((int)t->ev[i].kind == kind && !strcmp(t->ev[i].what, what)))
			return 1;
	return 0;
}

/* A heap nobody listens to runs its policy's quiet copies (no fast-path
 * events); one given a listener, or given one again after it was removed,
 * must run the copies with every point: on a warm heap the next malloc and
 * free take the fast path (a cache hit, a push), and each must be heard.
 * @p hit and @p put name the fast path's own events when the test knows
 * them (percpu's), NULL when any event will do. */
static void fast_path_heard(const char *name, const char *conf, const char *hit, const char *put)
{
	hl_heap_t *h = tl_heap(name, conf);
	tally_t t = { 0 };
	const char *c = conf ? conf : "";
	hl_free(h, hl_malloc(h, 48));      /* warm: the next pair is a fast one */
	for (int round = 0; round < 2; round++) {
		ck_assert_int_eq(hl_set_listener(h, keep, &t), 0);
		size_t before = t.n;
		void *p = hl_malloc(h, 48);
		ck_assert_msg(heard(&t, before, HL_EV_CACHE_HIT, hit), "%s %s, round %d: the fast malloc was not heard%s%s",
			      name, c, round, hit ? " as " : "", hit ? hit : "");
		before = t.n;
		hl_free(h, p);
		ck_assert_msg(heard(&t, before, HL_EV_CACHE_PUT, put), "%s %s, round %d: the fast free was not heard%s%s",
			      name, c, round, put ? " as " : "", put ? put : "");
		ck_assert_int_eq(hl_set_listener(h, NULL, NULL), 0);
		before = t.n;
		hl_free(h, hl_malloc(h, 48));
		ck_assert_msg(t.n == before, "%s %s, round %d: a removed listener was called", name, c, round);
	}
	ck_assert_int_eq(hl_events_keep(h, true), 0);   /* keeping alone switches too */
	hl_event_t ev[16];
	hl_events_take(h, ev, 16);
	void *p = hl_malloc(h, 48);
	ck_assert_msg(hl_events_take(h, ev, 16) > 0, "%s %s: the fast malloc kept no event", name, c);
	hl_free(h, p);
	ck_assert_msg(hl_events_take(h, ev, 16) > 0, "%s %s: the fast free kept no event", name, c);
	hl_heap_destroy(h);
	free(t.ev);
}

/* percpu's per-CPU front has quiet copies of its own (pc_cpu_alloc_quiet,
 * pc_cpu_free_quiet) in both of its modes: the hit and the push must be
 * heard as such, from the rseq critical section where this machine lets
 * glibc register rseq, and under the CPU's lock with rseq:off.  The
 * thread stays on one CPU, so the warm stack is the one the next pair
 * finds (moved, it would miss on another CPU's empty stack).
 * front:thread has no quiet copies; its pair must be heard all the same. */
static void percpu_fast_path_heard(void)
{
	tl_stay_on_this_cpu();
	hl_heap_t *probe = tl_heap("percpu", "rseq:on");
	int rseq = tl_stat(probe, "policy_stats.rseq_available") != 0;
	hl_heap_destroy(probe);
	const char *locked = "per-CPU slab, class (under the CPU's lock)";
	const char *on = rseq ? "per-CPU slab, class (rseq)" : locked;
	if (!rseq)
		printf("percpu: rseq is not available here: rseq:on runs in lock mode, the rseq path is not tested\n");
	fast_path_heard("percpu", "rseq:on", on, on);
	fast_path_heard("percpu", "rseq:off", locked, locked);
	fast_path_heard("percpu", "front:thread", "thread cache, class", "thread cache, class");
}

START_TEST(the_fast_path_is_heard_once_a_listener_is_set)
{
	for (size_t i = 0; i < hl_policy_count(); i++)
		if (!strcmp(hl_policy_name(i), "percpu"))
			percpu_fast_path_heard();
		else
			fast_path_heard(hl_policy_name(i), NULL, NULL, NULL);
}
END_TEST

START_TEST(take_gives_the_events_of_the_last_call)
{
	for (size_t i = 0; i < hl_policy_count(); i++) {
		const char *name = hl_policy_name(i);
		hl_heap_t *h = tl_heap(name, NULL);
		hl_event_t ev[64];
		tally_t t = { 0 };
		ck_assert_int_eq(hl_events_keep(h, true), 0);
		ck_assert_int_eq(hl_set_listener(h, keep, &t), 0);
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
	TCase *tc = tcase_create("policies");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, bins_events_follow_the_counters);
	tcase_add_test(tc, slab_events_follow_the_counters);
	tcase_add_test(tc, sharded_events_follow_the_counters);
	tcase_add_test(tc, pools_events_follow_the_counters);
	tcase_add_test(tc, percpu_events_follow_the_counters);
	tcase_add_test(tc, firstfit_events_follow_the_counters);
	tcase_add_test(tc, bump_events_follow_the_counters);
	tcase_add_test(tc, student_events_follow_the_counters);
	suite_add_tcase(s, tc);
	TCase *api = tcase_create("listener");
	tcase_add_test(api, a_listener_hears_only_its_heap);
	tcase_add_test(api, take_gives_the_events_of_the_last_call);
	tcase_add_test(api, the_fast_path_is_heard_once_a_listener_is_set);
	suite_add_tcase(s, api);
	return s;
}

TL_MAIN(events_suite)
