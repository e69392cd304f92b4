/*
 * sharded: the claims of the mimalloc model, each a test.
 *
 * Expected values come from mimalloc v2's published facts, not from the
 * policy's code: the smallest class is 8 bytes, then classes go by 16
 * bytes to 64, then four per doubling (the ladder Debian's mimalloc
 * 2.0.9 shows through malloc_usable_size, fidelity row
 * mimalloc.ladder-tiny); a small page is 64 KiB; a remote free is one push onto the
 * page's thread_free list; a thread's end abandons its segments.
 */
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "testlib_events.h"

#define SMALL_PAGE (64 * 1024)
/* mimalloc 2.0.9 starts a page of blocks of up to 1 KiB 384 bytes in */
#define PAGE_OFFSET 384

/* mimalloc's size-class ladder. */
static size_t class_size(size_t n)
{
	if (n <= 8)
		return 8;
	if (n <= 64)
		return (n + 15) & ~(size_t)15;
	for (size_t p = 64;; p *= 2)
		for (size_t k = 1; k <= 4; k++)
			if (n <= p + k * p / 4)
				return p + k * p / 4;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

START_TEST(fresh_page_blocks_are_one_block_size_apart)
{
	static const size_t sizes[] = { 1, 8, 9, 16, 40, 64, 100, 250, 1000, 3000, 16384 };
	hl_heap_t *h = tl_heap("sharded", NULL);
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		char *a = hl_malloc(h, sizes[i]), *b = hl_malloc(h, sizes[i]);
		size_t cls = class_size(sizes[i]);
		/* 8-byte blocks too sit one class size apart, as in mimalloc */
		ck_assert_msg(b - a == (ptrdiff_t)cls, "size %zu: blocks %td apart, class %zu", sizes[i], b - a, cls);
		ck_assert_uint_eq(hl_usable_size(h, a), cls);
	}
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

START_TEST(blocks_of_a_class_share_a_64k_page)
{
	hl_heap_t *h = tl_heap("sharded", NULL);
	size_t cls = class_size(1024);
	char *first = hl_malloc(h, 1024);
	uintptr_t page = (uintptr_t)first & ~(uintptr_t)(SMALL_PAGE - 1);
	for (size_t i = 1; i < (SMALL_PAGE - PAGE_OFFSET) / cls; i++) {
		char *p = hl_malloc(h, 1024);
		ck_assert_uint_eq((uintptr_t)p & ~(uintptr_t)(SMALL_PAGE - 1), page);
	}
	char *next = hl_malloc(h, 1024); /* the 64th needs another page */
	ck_assert_uint_ne((uintptr_t)next & ~(uintptr_t)(SMALL_PAGE - 1), page);
	ck_assert_double_eq(tl_stat(h, "policy_stats.pages.small"), 2);
	ck_assert_double_eq(tl_stat(h, "policy_stats.pages.full"), 1);
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

/* ---- a producer allocating, a consumer freeing, a million blocks ------- */

enum { RING = 1024, BLOCKS = 1000000 };
typedef struct ring {
	hl_heap_t *h;
	void *slot[RING];
	_Atomic size_t head, tail;   /* head: next to write, tail: next to read */
	long freed;
} ring_t;

static void *consumer(void *arg)
{
	ring_t *r = arg;
	for (long i = 0; i < BLOCKS; i++) {
		size_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
		while (atomic_load_explicit(&r->head, memory_order_acquire) == t)
			sched_yield();
		void *p = r->slot[t % RING];
		atomic_store_explicit(&r->tail, t + 1, memory_order_release);
		hl_free(r->h, p);
		r->freed++;
	}
	return NULL;
}

START_TEST(producer_consumer_loses_nothing)
{
	static ring_t r;
	/* debug:off: in an --enable-debug build the guard's serialised,
	 * checked calls made this exceed the timeout */
	r.h = tl_heap("sharded", "ledger:off,debug:off");
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, consumer, &r), 0);
	for (long i = 0; i < BLOCKS; i++) {
		size_t hd = atomic_load_explicit(&r.head, memory_order_relaxed);
		while (hd - atomic_load_explicit(&r.tail, memory_order_acquire) == RING)
			sched_yield();
		void *p = hl_malloc(r.h, 16 + (size_t)(i % 8) * 24);
		ck_assert_ptr_nonnull(p);
		r.slot[hd % RING] = p;
		atomic_store_explicit(&r.head, hd + 1, memory_order_release);
	}
	pthread_join(th, NULL);
	ck_assert_int_eq(r.freed, BLOCKS);
	ck_assert_double_eq(tl_stat(r.h, "policy_stats.remote_frees"), BLOCKS);
	tl_check_clean(r.h); /* the page equation holds on every page */
	hl_trim(r.h, 0);     /* the producer collects every remote free */
	ck_assert_double_eq(tl_stat(r.h, "policy_stats.blocks.thread_free"), 0);
	ck_assert_double_eq(tl_stat(r.h, "policy_stats.blocks.delayed"), 0);
	ck_assert_double_eq(tl_stat(r.h, "policy_stats.blocks.live"), 0);
	ck_assert_double_eq(tl_stat(r.h, "policy_stats.segments.in_use"), 0);
	tl_check_clean(r.h);
	hl_heap_destroy(r.h);
}
END_TEST

/* ---- a full page hears about a remote free through the delayed list ---- */

typedef struct one_free { hl_heap_t *h; void *p; } one_free_t;

static void *free_one(void *arg)
{
	one_free_t *f = arg;
	hl_free(f->h, f->p);
	return NULL;
}

START_TEST(remote_free_into_full_page_goes_through_delayed_list)
{
	hl_heap_t *h = tl_heap("sharded", "ledger:off");
	size_t per_page = (SMALL_PAGE - PAGE_OFFSET) / class_size(1024);
	void *first = hl_malloc(h, 1024);
	for (size_t i = 1; i <= per_page; i++)
		hl_malloc(h, 1024); /* the last one moves the first page to the full queue */
	ck_assert_double_eq(tl_stat(h, "policy_stats.pages.full"), 1);
	one_free_t f = { h, first };
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, free_one, &f), 0);
	pthread_join(th, NULL);
	ck_assert_double_eq(tl_stat(h, "policy_stats.blocks.delayed"), 1);
	ck_assert_double_eq(tl_stat(h, "policy_stats.blocks.thread_free"), 0);
	tl_check_clean(h);
	hl_malloc(h, 5000); /* a slow path of the owner takes the delayed list */
	ck_assert_double_eq(tl_stat(h, "policy_stats.delayed_frees"), 1);
	ck_assert_double_eq(tl_stat(h, "policy_stats.pages.full"), 0); /* back in its queue */
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

/* ---- a thread ends with live blocks --------------------------------- */

enum { LEFT_SMALL = 100, LEFT_MEDIUM = 3 };
typedef struct leaver { hl_heap_t *h; void *small[LEFT_SMALL]; void *medium[LEFT_MEDIUM]; void *large; } leaver_t;

static void *leave_blocks(void *arg)
{
	leaver_t *l = arg;
	for (int i = 0; i < LEFT_SMALL; i++)
		l->small[i] = hl_malloc(l->h, 64);
	for (int i = 0; i < LEFT_MEDIUM; i++)
		l->medium[i] = hl_malloc(l->h, 20000);
	l->large = hl_malloc(l->h, 300 * 1024);
	return NULL;
}

/* The slice of its 32 MiB segment that @p p lies in. */
static unsigned slice_of(const void *p)
{
	return (unsigned)(((uintptr_t)p & ((32u << 20) - 1)) >> 16);
}

/* Pages freed in the middle of a segment: a new page takes the free
 * slices mimalloc 2.0.9's span queues give it (segment.c,
 * mi_segments_page_find_and_allocate): the shortest queue that fits
 * first, in it the span freed last; adjacent freed pages merge into one
 * span.  The slices were measured on the real library with the same
 * calls (LD_PRELOAD libmimalloc.so.2): pages of 1000-byte blocks at
 * slices 1 to 6, then 63 blocks a page freed. */
START_TEST(new_page_takes_the_span_queues_choice)
{
	static const struct {
		int freed[3];         /* pages emptied, in this order (-1: none) */
		unsigned slices[4];   /* where pages of 64, 3000, 5000 and 8000 bytes go */
	} cases[] = {
		{ { 1, 3, -1 }, { 4, 2, 7, 8 } }, /* spans {2} then {4}: the later first */
		{ { 1, 2, 4 }, { 5, 2, 3, 7 } },  /* {2,3} and {5}: the one-slice span first */
	};
	static const size_t sizes[] = { 64, 3000, 5000, 8000 };
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		hl_heap_t *h = tl_heap("sharded", NULL);
		static void *b[6][63];
		for (int pg = 0; pg < 6; pg++)
			for (int i = 0; i < 63; i++) {
				b[pg][i] = hl_malloc(h, 1000);
				ck_assert_uint_eq(slice_of(b[pg][i]), 1 + (unsigned)pg);
			}
		for (int k = 0; k < 3 && cases[c].freed[k] >= 0; k++)
			for (int i = 0; i < 63; i++)
				hl_free(h, b[cases[c].freed[k]][i]);
		tl_check_clean(h);
		for (size_t k = 0; k < 4; k++) {
			void *p = hl_malloc(h, sizes[k]);
			ck_assert_msg(slice_of(p) == cases[c].slices[k], "case %zu: %zu bytes at slice %u, mimalloc %u", c,
				      sizes[k], slice_of(p), cases[c].slices[k]);
		}
		tl_check_clean(h);
		hl_heap_destroy(h);
	}
}
END_TEST

START_TEST(exiting_thread_abandons_and_another_reclaims)
{
	static leaver_t l;
	l.h = tl_heap("sharded", "ledger:off");
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, leave_blocks, &l), 0);
	pthread_join(th, NULL);
	ck_assert_double_eq(tl_stat(l.h, "policy_stats.segments.abandoned"), 1);
	ck_assert_double_eq(tl_stat(l.h, "policy_stats.blocks.live"), LEFT_SMALL + LEFT_MEDIUM + 1);
	tl_check_clean(l.h);
	for (int i = 0; i < LEFT_SMALL; i++)
		hl_free(l.h, l.small[i]);
	for (int i = 0; i < LEFT_MEDIUM; i++)
		hl_free(l.h, l.medium[i]);
	hl_free(l.h, l.large);
	/* the frees wait on thread_free: nobody owns the pages */
	ck_assert_double_eq(tl_stat(l.h, "policy_stats.blocks.thread_free"), LEFT_SMALL + LEFT_MEDIUM + 1);
	tl_check_clean(l.h);
	void *p = hl_malloc(l.h, 64); /* this thread's slow path reclaims */
	ck_assert_ptr_nonnull(p);
	ck_assert_double_eq(tl_stat(l.h, "policy_stats.segments.reclaimed"), 1);
	ck_assert_double_eq(tl_stat(l.h, "policy_stats.segments.abandoned"), 0);
	ck_assert_double_eq(tl_stat(l.h, "policy_stats.blocks.thread_free"), 0);
	ck_assert_double_eq(tl_stat(l.h, "policy_stats.blocks.live"), 1);
	tl_check_clean(l.h);
	hl_heap_destroy(l.h);
}
END_TEST

/* ---- fork: only the forking thread lives on in the child -------------- */

typedef struct holder { hl_heap_t *h; pthread_barrier_t ready, done; void *blocks[50]; } holder_t;

static void *hold_blocks(void *arg)
{
	holder_t *k = arg;
	for (int i = 0; i < 50; i++)
		k->blocks[i] = hl_malloc(k->h, 128);
	pthread_barrier_wait(&k->ready);
	pthread_barrier_wait(&k->done); /* still alive while the parent forks */
	return NULL;
}

/* Forks while a second thread holds 50 blocks of 128 bytes (and the
 * forking thread has a page of its own); the child runs @p child, whose
 * result is its exit status, and the test wants 0. */
static void fork_beside_a_holder(int (*child)(holder_t *k))
{
	static holder_t k;
	k.h = tl_heap("sharded", "ledger:off");
	pthread_barrier_init(&k.ready, NULL, 2);
	pthread_barrier_init(&k.done, NULL, 2);
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, hold_blocks, &k), 0);
	pthread_barrier_wait(&k.ready);
	hl_free(k.h, hl_malloc(k.h, 64));
	pid_t pid = fork();
	if (pid == 0)
		_exit(child(&k));
	int status;
	waitpid(pid, &status, 0);
	pthread_barrier_wait(&k.done);
	pthread_join(th, NULL);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
	tl_check_clean(k.h);
	hl_heap_destroy(k.h);
}

/* mimalloc leaves the heaps of the threads that did not survive a fork as
 * they were: nothing abandons them, so nothing reclaims their segments,
 * and the child's frees of their blocks wait on thread_free for good. */
static int child_frees_the_vanished_threads_blocks(holder_t *k)
{
	double abandoned = -1, reclaimed = -1, waiting = -1;
	hl_stat(k->h, "policy_stats.segments.abandoned", &abandoned);
	for (int i = 0; i < 50; i++)
		hl_free(k->h, k->blocks[i]); /* the vanished thread's blocks */
	void *p = hl_malloc(k->h, 128);  /* a page of this thread's own */
	hl_stat(k->h, "policy_stats.segments.reclaimed", &reclaimed);
	hl_stat(k->h, "policy_stats.blocks.thread_free", &waiting);
	return abandoned == 0 && reclaimed == 0 && waiting == 50 && p && hl_check(k->h, stderr) == 0 ? 0 : 1;
}

START_TEST(fork_child_leaves_the_other_threads_heaps_alone)
{
	fork_beside_a_holder(child_frees_the_vanished_threads_blocks);
}
END_TEST

static void *free_held_blocks(void *arg)
{
	holder_t *k = arg;
	for (int i = 0; i < 50; i++)
		hl_free(k->h, k->blocks[i]);
	return NULL;
}

/* The core gives a new thread of the child the record of a thread the fork
 * left behind (exited): that thread's frees into the vanished thread's
 * pages are still remote ones, waiting on thread_free, not pushes onto
 * a frozen heap's local_free. */
static int new_thread_frees_the_vanished_threads_blocks(holder_t *k)
{
	double waiting = -1;
	pthread_t t2;
#if defined(__SANITIZE_THREAD__)
	/* ThreadSanitizer does not support starting a thread after a
	 * multi-threaded fork (it exits 66): this check runs in the other
	 * builds only */
	(void)k, (void)waiting, (void)t2;
	return 0;
#endif
	if (pthread_create(&t2, NULL, free_held_blocks, k) != 0 || pthread_join(t2, NULL) != 0)
		return 2;
	hl_stat(k->h, "policy_stats.blocks.thread_free", &waiting);
	return waiting == 50 && hl_check(k->h, stderr) == 0 ? 0 : 1;
}

START_TEST(fork_child_thread_in_a_vanished_threads_record_frees_remotely)
{
	fork_beside_a_holder(new_thread_frees_the_vanished_threads_blocks);
}
END_TEST

/* Threads that allocate and free (their own blocks and each other's,
 * small, medium and large) while the main thread forks: whatever a fork
 * catches them in the middle of, the child's checker finds the heap whole
 * and the child can go on allocating and freeing. */
enum { CHURNERS = 3, CHURN_RING = 256, CHURN_SHARED = 64, FORKS = 200 };
typedef struct churn {
	hl_heap_t *h;
	atomic_bool stop;
	_Atomic(void *) shared[CHURN_SHARED];
} churn_t;

static size_t churn_size(uint64_t r)
{
	switch (r % 16) {
	case 0: return 20000 + r % 100000;       /* medium pages */
	case 1: return 300 * 1024 + r % 4096;    /* a large page */
	default: return 1 + r % 1024;            /* the direct table's sizes */
	}
}

static void *churn(void *arg)
{
	churn_t *c = arg;
	void *ring[CHURN_RING] = { 0 };
	uint64_t r = (uint64_t)(uintptr_t)&ring;
	for (unsigned i = 0; !atomic_load(&c->stop); i++) {
		r = r * 6364136223846793005ull + 1442695040888963407ull;
		unsigned k = i % CHURN_RING;
		hl_free(c->h, ring[k]);
		ring[k] = hl_malloc(c->h, churn_size(r >> 33));
		if (r >> 60 == 0) { /* hand a block to whichever thread comes next */
			void *mine = ring[k];
			ring[k] = atomic_exchange(&c->shared[(r >> 40) % CHURN_SHARED], mine);
		}
	}
	for (unsigned k = 0; k < CHURN_RING; k++)
		hl_free(c->h, ring[k]);
	return NULL;
}

static int child_after_fork(hl_heap_t *h)
{
	if (hl_check(h, stderr) != 0)
		return 1;
	void *p[64];
	for (int i = 0; i < 64; i++)
		p[i] = hl_malloc(h, churn_size((uint64_t)i * 7));
	for (int i = 0; i < 64; i++)
		hl_free(h, p[i]);
	return hl_check(h, stderr) != 0;
}

START_TEST(fork_while_other_threads_allocate_and_free)
{
	static churn_t c;
	/* debug:off: the guard would run one call at a time, so a fork could
	 * never catch a thread inside the allocator */
	c.h = tl_heap("sharded", "ledger:off,debug:off,purge_delay:0");
	atomic_store(&c.stop, false);
	pthread_t th[CHURNERS];
	for (int i = 0; i < CHURNERS; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, churn, &c), 0);
	int failed = 0, first_status = 0;
	for (int n = 0; n < FORKS; n++) {
		pid_t pid = fork();
		if (pid == 0)
			_exit(child_after_fork(c.h));
		ck_assert_int_ge(pid, 0);
		int status;
		waitpid(pid, &status, 0);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			if (!failed++)
				first_status = status;
		}
	}
	atomic_store(&c.stop, true);
	for (int i = 0; i < CHURNERS; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < CHURN_SHARED; i++)
		hl_free(c.h, atomic_load(&c.shared[i]));
	ck_assert_msg(failed == 0, "%d of %d fork children failed (first status %d)", failed, FORKS,
		      first_status);
	tl_check_clean(c.h);
	hl_heap_destroy(c.h);
}
END_TEST

/* ---- purging ---------------------------------------------------------- */

/* Fills two small pages with 1 KiB blocks, touches them, frees them all:
 * the first page empties while another page of its class is in use, so it
 * goes back to its segment at once.  Returns resident bytes before. */
static double fill_two_pages_and_free(hl_heap_t *h, void **keep)
{
	enum { N = 2 * SMALL_PAGE / 1024 };
	void *p[N];
	*keep = hl_malloc(h, 300 * 1024); /* a large page: keeps the segment in
					   use; freeing it later frees a page */
	for (int i = 0; i < N; i++) {
		p[i] = hl_malloc(h, 1024);
		memset(p[i], 0xab, 1024);
	}
	double before = tl_stat(h, "resident_bytes");
	for (int i = 0; i < N; i++)
		hl_free(h, p[i]);
	return before;
}

/* purge_delay 0: at once; 150: not before a slow path after 150 ms;
 * -1: never. */
static const struct purge_case {
	const char *conf;
	long wait_ms;
	bool at_once, after_wait;
} purge_cases[] = {
	{ "purge_delay:0", 0, true, true },
	{ "purge_delay:150", 250, false, true },
	{ "purge_delay:-1", 30, false, false },
};

START_TEST(empty_page_is_purged_after_the_delay)
{
	const struct purge_case *c = &purge_cases[_i];
	hl_heap_t *h = tl_heap("sharded", c->conf);
	void *keep;
	double before = fill_two_pages_and_free(h, &keep);
	ck_assert_int_eq(tl_stat(h, "policy_stats.purges") >= 1, c->at_once);
	ck_assert_int_eq(tl_stat(h, "resident_bytes") <= before - SMALL_PAGE, c->at_once);
	sleep_ms(c->wait_ms);
	hl_free(h, keep); /* freeing a page runs the purges that are due */
	ck_assert_int_eq(tl_stat(h, "policy_stats.purges") >= 1, c->after_wait);
	/* the free wrote one link into the large block: one OS page more */
	ck_assert_int_eq(tl_stat(h, "resident_bytes") <= before - SMALL_PAGE + (double)tl_page(),
			 c->after_wait);
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

/* ---- large, huge and aligned blocks -------------------------------------- */

/* ---- the segment cache -------------------------------------------------- */

#define SEGMENT ((uintptr_t)32 << 20)

/* mimalloc 2.0.9 does not unmap a segment whose last page is freed: it
 * parks it, still resident, for the next new segment (on Debian's
 * libmimalloc the half-gigabyte program stays at 500 MiB after freeing
 * everything: fidelity row mimalloc.halfgig-freeall).  With
 * segment_purge_delay:0 the parked segment is purged at once
 * (MIMALLOC_SEGMENT_DECOMMIT_DELAY=0 brings that program down to about
 * 50 MiB); segment_cache:off unmaps it. */
static const struct cache_case {
	const char *conf;
	bool parked, resident;
} cache_cases[] = {
	{ NULL, true, true },
	{ "segment_purge_delay:0", true, false },
	{ "segment_cache:off", false, false },
};

START_TEST(empty_segment_is_parked_for_the_next_one)
{
	const struct cache_case *c = &cache_cases[_i];
	enum { BIG = 4 << 20 };
	hl_heap_t *h = tl_heap("sharded", c->conf);
	char *big = hl_malloc(h, BIG);
	memset(big, 1, BIG);
	double before = tl_stat(h, "resident_bytes");
	hl_free(h, big);
	ck_assert_double_eq(tl_stat(h, "policy_stats.segments.cached"), c->parked);
	ck_assert_int_eq(tl_stat(h, "resident_bytes") > before - BIG / 2, c->resident);
	char *again = hl_malloc(h, BIG);
	if (c->parked)
		ck_assert_uint_eq((uintptr_t)again & ~(SEGMENT - 1), (uintptr_t)big & ~(SEGMENT - 1));
	ck_assert_double_eq(tl_stat(h, "policy_stats.segments.cached"), 0);
	hl_free(h, again);
	hl_trim(h, 0); /* mi_collect(true): parked segments go back */
	ck_assert_double_eq(tl_stat(h, "policy_stats.segments.cached"), 0);
	ck_assert_double_lt(tl_stat(h, "resident_bytes"), before - BIG / 2);
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

START_TEST(large_huge_and_aligned_blocks)
{
	hl_heap_t *h = tl_heap("sharded", NULL);
	char *large = hl_malloc(h, 300 * 1024), *huge = hl_malloc(h, 40u << 20);
	ck_assert_ptr_nonnull(large);
	ck_assert_ptr_nonnull(huge);
	memset(huge, 1, 40u << 20);
	ck_assert_double_eq(tl_stat(h, "policy_stats.segments.huge"), 1);
	ck_assert_double_eq(tl_stat(h, "policy_stats.pages.large"), 1);
	ck_assert_double_eq(tl_stat(h, "policy_stats.pages.huge"), 1);
	tl_check_clean(h);
	for (size_t align = 32; align <= (1u << 20); align *= 4) {
		char *p = hl_memalign(h, align, 100);
		ck_assert_uint_eq((uintptr_t)p % align, 0);
		ck_assert_uint_ge(hl_usable_size(h, p), 100);
		tl_check_clean(h);
		hl_free(h, p);
	}
	hl_free(h, huge);
	hl_free(h, large);
	ck_assert_double_eq(tl_stat(h, "policy_stats.segments.huge"), 0);
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

/* ---- secure mode ------------------------------------------------------- */

static int count_guard(const hl_block_t *b, void *arg)
{
	if (b->state == HL_BLOCK_GUARD)
		++*(int *)arg;
	return 0;
}

START_TEST(secure_mode_has_guard_pages)
{
	hl_heap_t *h = tl_heap("sharded", "secure:on");
	void *a = hl_malloc(h, 64), *b = hl_malloc(h, 20000);
	int guards = 0;
	hl_walk(h, count_guard, &guards);
	ck_assert_int_ge(guards, 3); /* segment header, two pages */
	hl_free(h, a);
	hl_free(h, b);
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

static void double_free(const void *arg)
{
	(void)arg;
	/* debug:off: secure mode's own check (the guard would name it first) */
	hl_heap_t *h = hl_heap_new("sharded", "secure:on,ledger:off,debug:off");
	void *p = hl_malloc(h, 64);
	hl_malloc(h, 64);
	hl_free(h, p);
	hl_free(h, p);
}

static void corrupt_free_list(const void *arg)
{
	(void)arg;
	/* debug:off — in a debug build the core's checker would find the smashed
	 * link first; this is about what malloc itself notices */
	hl_heap_t *h = hl_heap_new("sharded", "secure:on,ledger:off,debug:off");
	uintptr_t *a = hl_malloc(h, 64), *b = hl_malloc(h, 64);
	hl_malloc(h, 64);
	hl_free(h, a);
	hl_free(h, b);
	b[0] ^= 0x5a5a5a5a5a5aull; /* a use after free smashes b's link */
	for (int i = 0; i < 2 * SMALL_PAGE / 64; i++)
		hl_malloc(h, 64);
}

START_TEST(secure_double_free_message)
{
	tl_expect_abort(double_free, NULL, "heaplab: sharded: double free");
}
END_TEST

START_TEST(secure_corrupted_pointer_message)
{
	tl_expect_abort(corrupt_free_list, NULL, "heaplab: sharded: corrupted free list pointer");
}
END_TEST

START_TEST(secure_double_free_aborts) { double_free(NULL); }
END_TEST

START_TEST(secure_corrupted_pointer_aborts) { corrupt_free_list(NULL); }
END_TEST

START_TEST(foreign_pointer_aborts)
{
	static char not_ours[64] __attribute__((aligned(16)));
	hl_heap_t *h = hl_heap_new("sharded", "ledger:off");
	hl_malloc(h, 16);
	hl_free(h, not_ours);
}
END_TEST

START_TEST(bad_options_are_refused)
{
	ck_assert_ptr_null(hl_heap_new("sharded", "purge_delay:-2"));
	ck_assert_ptr_null(hl_heap_new("sharded", "secure:maybe"));
	ck_assert_ptr_null(hl_heap_new("sharded", "segment:1M"));
}
END_TEST

/* --- decision events: each path reports its event exactly when the
 * statistic that counts the path moves (tests/unit/testlib_events.h) ----------- */

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
	TL_SKIP_UNLESS("sharded");
	tl_events_run_t r;
	hl_heap_t *h = tl_run_begin(&r, "sharded", "purge_delay:0", sharded_keys);
	enum { N = 3000 };
	static void *p[N];
	for (int i = 0; i < N; i++)           /* several pages: extends, full pages */
		p[i] = hl_malloc(h, 64);
	tl_snap_t m;
	tl_take_snap(h, sharded_keys, &m);
	/* every small malloc so far popped a page's free list once */
	ck_assert_double_eq(tl_n_of(&r.t, HL_EV_LIST_POP, NULL), tl_grew(&r.a, &m, "ops.malloc"));
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
	tl_run_measure(&r);
	tl_expect_count(&r, HL_EV_NEW, "page from", "policy_stats.pages.made");
	tl_expect_count(&r, HL_EV_RETIRE, "page back", "policy_stats.pages.freed");
	tl_expect_count(&r, HL_EV_NEW, "blocks carved", "policy_stats.extends");
	tl_expect_count(&r, HL_EV_REMOTE_FREE, NULL, "policy_stats.remote_frees");
	tl_expect_count(&r, HL_EV_PURGE, NULL, "policy_stats.purges");
	static const int paths[] = { HL_EV_LIST_PUSH, HL_EV_MOVE, HL_EV_COLLECT, HL_EV_COLLECT, HL_EV_MAP,
				     HL_EV_NEW, -1 };
	static const char *const whats[] = { "page local_free", "page full", "thread_free", "free list empty",
					     NULL, "segment" };
	tl_expect_paths(&r, paths, whats);
	tl_run_end(&r);
}
END_TEST

static Suite *sharded_suite(void)
{
	Suite *s = suite_create("sharded");
	TCase *tc = tcase_create("model");
	tcase_add_test(tc, sharded_events_follow_the_counters);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, fresh_page_blocks_are_one_block_size_apart);
	tcase_add_test(tc, blocks_of_a_class_share_a_64k_page);
	tcase_add_test(tc, new_page_takes_the_span_queues_choice);
	tcase_add_test(tc, producer_consumer_loses_nothing);
	tcase_add_test(tc, remote_free_into_full_page_goes_through_delayed_list);
	tcase_add_test(tc, exiting_thread_abandons_and_another_reclaims);
	tcase_add_test(tc, fork_child_leaves_the_other_threads_heaps_alone);
	tcase_add_test(tc, fork_child_thread_in_a_vanished_threads_record_frees_remotely);
	tcase_add_loop_test(tc, empty_page_is_purged_after_the_delay, 0,
			    sizeof purge_cases / sizeof purge_cases[0]);
	tcase_add_loop_test(tc, empty_segment_is_parked_for_the_next_one, 0,
			    sizeof cache_cases / sizeof cache_cases[0]);
	tcase_add_test(tc, large_huge_and_aligned_blocks);
	tcase_add_test(tc, secure_mode_has_guard_pages);
	tcase_add_test(tc, bad_options_are_refused);
	suite_add_tcase(s, tc);
	TCase *fk = tcase_create("fork");
	tcase_set_timeout(fk, 300); /* 200 forks: slow on a loaded machine */
	tcase_add_test(fk, fork_while_other_threads_allocate_and_free);
	suite_add_tcase(s, fk);
	TCase *mis = tcase_create("misuse");
	tcase_add_test(mis, secure_double_free_message);
	tcase_add_test(mis, secure_corrupted_pointer_message);
	tcase_add_test_raise_signal(mis, secure_double_free_aborts, SIGABRT);
	tcase_add_test_raise_signal(mis, secure_corrupted_pointer_aborts, SIGABRT);
	tcase_add_test_raise_signal(mis, foreign_pointer_aborts, SIGABRT);
	suite_add_tcase(s, mis);
	return s;
}

TL_MAIN(sharded_suite)
