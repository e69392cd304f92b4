/*
 * Policy tests for `firstfit`: each fit and each list order takes the
 * block the textbook rules predict, splitting leaves the remainder free,
 * coalescing on/off shapes the free list, next fit resumes where it
 * stopped, and misuse aborts with "heaplab: firstfit: ...".
 *
 * Expected values come from the model's rules, not from its output:
 *   asize(n) = max(MIN, round16(n + H)),  MIN = round16(H + 24),
 *   a split keeps the front of a block, the remainder stays free when it
 *   is at least MIN bytes.
 */
#include "config.h"
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testlib_events.h"

#define H 16                      /* default header */
#define MIN_BLOCK 48              /* round16(16 + 24) */

/** Block bytes for a request of n with header h (the model's rule). */
static size_t asize_for(size_t n, size_t h)
{
	size_t s = (n + h + 15) & ~(size_t)15, min = (h + 24 + 15) & ~(size_t)15;
	return s < min ? min : s;
}

/** Request that yields a block of exactly @p block bytes (default header). */
static size_t req_for(size_t block) { return block - H; }

static hl_heap_t *ff_heap(const char *conf)
{
	char buf[256];
	snprintf(buf, sizeof buf, "trim_threshold:0%s%s", conf && *conf ? "," : "", conf ? conf : "");
	return tl_heap("firstfit", buf);
}

static size_t pstat(hl_heap_t *h, const char *key)
{
	char path[96];
	snprintf(path, sizeof path, "policy_stats.%s", key);
	return (size_t)tl_stat(h, path);
}

/** Allocates the whole free tail (the only free block) so that later
 *  searches see only the blocks a test frees. */
static void *eat_tail(hl_heap_t *h)
{
	ck_assert_uint_eq(pstat(h, "free_blocks"), 1);
	void *p = hl_malloc(h, pstat(h, "free_bytes") - H);
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(pstat(h, "free_blocks"), 0);
	return p;
}

/* ---- layout ------------------------------------------------------------- */

START_TEST(consecutive_blocks_follow_the_size_rule)
{
	static const char *confs[] = { "header:8", "header:16", "header:32" };
	static const size_t hdrs[] = { 8, 16, 32 };
	hl_heap_t *h = ff_heap(confs[_i]);
	size_t sizes[] = { 1, 24, 100, 500, 17 };
	char *prev = hl_malloc(h, sizes[0]);

	ck_assert_uint_eq(pstat(h, "header_bytes"), hdrs[_i]);
	ck_assert_uint_eq(pstat(h, "alignment"), 16);
	for (size_t i = 1; i < sizeof sizes / sizeof *sizes; i++) {
		char *p = hl_malloc(h, sizes[i]);
		ck_assert_uint_eq((uintptr_t)p % 16, 0);
		ck_assert_uint_eq((size_t)(p - prev), asize_for(sizes[i - 1], hdrs[_i]));
		ck_assert_uint_eq(hl_usable_size(h, p), asize_for(sizes[i], hdrs[_i]) - hdrs[_i]);
		prev = p;
	}
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

START_TEST(split_leaves_the_remainder_free)
{
	hl_heap_t *h = ff_heap(NULL);
	void *p = hl_malloc(h, 100);
	size_t heap = pstat(h, "heap_bytes");

	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(pstat(h, "splits"), 1);
	ck_assert_uint_eq(pstat(h, "free_blocks"), 1);
	ck_assert_uint_eq(pstat(h, "free_bytes"), heap - asize_for(100, H));
	ck_assert_uint_eq(pstat(h, "largest_free_block"), heap - asize_for(100, H));
	/* a remainder smaller than MIN is not split off: the block is given whole */
	void *fill = eat_tail(h);
	void *gap_left = hl_malloc(h, 16), *a = hl_malloc(h, req_for(128)), *guard = hl_malloc(h, 16);
	(void)gap_left; (void)guard; (void)fill;
	hl_free(h, a);
	size_t splits = pstat(h, "splits");
	void *b = hl_malloc(h, req_for(128 - 32));   /* remainder 32 < MIN */
	ck_assert_ptr_eq(b, a);
	ck_assert_uint_eq(pstat(h, "splits"), splits);
	ck_assert_uint_eq(hl_usable_size(h, b), 128 - H);
	/* a remainder of exactly MIN is split off and stays free */
	hl_free(h, b);
	size_t nfree = pstat(h, "free_blocks"), bytes = pstat(h, "free_bytes");
	b = hl_malloc(h, req_for(128 - MIN_BLOCK));
	ck_assert_ptr_eq(b, a);
	ck_assert_uint_eq(pstat(h, "splits"), splits + 1);
	ck_assert_uint_eq(pstat(h, "free_blocks"), nfree);
	ck_assert_uint_eq(pstat(h, "free_bytes"), bytes - (128 - MIN_BLOCK));
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

/* ---- fits and orders ---------------------------------------------------- */

enum { A, B, C };
static const char *const fits[] = { "first", "next", "best", "worst" };
static const char *const orders[] = { "address", "lifo", "fifo", "size-asc", "size-desc" };
/*
 * Free blocks A = 128, B = 64, C = 256 bytes, in address order, freed in
 * the order C, A, B.  The lists then read:
 *   address   A B C        lifo      B A C        fifo      C A B
 *   size-asc  B A C        size-desc C A B
 * A request of 40 bytes needs a 64-byte block.  First fit takes the first
 * element; next fit starts at the head too (its rover fell off the list
 * end when the tail was taken whole); best fit takes B (exact); worst C.
 */
static const int expect_40[4][5] = {
	/*             address lifo fifo size-asc size-desc */
	/* first */  { A,      B,   C,   B,       C },
	/* next  */  { A,      B,   C,   B,       C },
	/* best  */  { B,      B,   B,   B,       B },
	/* worst */  { C,      C,   C,   C,       C },
};
/* A request of 100 needs 128: B is too small everywhere. */
static const int expect_100[4][5] = {
	/* first */  { A,      A,   C,   A,       C },
	/* next  */  { A,      A,   C,   A,       C },
	/* best  */  { A,      A,   A,   A,       A },
	/* worst */  { C,      C,   C,   C,       C },
};

/** Allocates blocks of @p bytes[i] bytes kept apart by small live
 *  blocks, eats the tail, then frees them in the order @p free_order.
 *  The free list then holds exactly those blocks. */
static void free_blocks_of(hl_heap_t *h, const size_t *bytes, const int *free_order, int n, void **blk)
{
	for (int i = 0; i < n; i++) {
		blk[i] = hl_malloc(h, req_for(bytes[i]));
		ck_assert_ptr_nonnull(hl_malloc(h, 16));   /* keeps neighbours apart */
	}
	eat_tail(h);
	for (int i = 0; i < n; i++)
		hl_free(h, blk[free_order[i]]);
	ck_assert_uint_eq(pstat(h, "free_blocks"), (size_t)n);
	tl_check_clean(h);
}

/** Builds the A/B/C free list of the comment above; fills @p blk. */
static hl_heap_t *abc_heap(const char *fit, const char *order, void *blk[3])
{
	char conf[128];
	static const size_t bytes[3] = { 128, 64, 256 };
	static const int freed[3] = { C, A, B };

	snprintf(conf, sizeof conf, "fit:%s,order:%s", fit, order);
	hl_heap_t *h = ff_heap(conf);
	free_blocks_of(h, bytes, freed, 3, blk);
	return h;
}

START_TEST(each_fit_and_order_takes_the_predicted_block)
{
	int f = _i / 5, o = _i % 5;
	void *blk[3];
	static const char *names = "ABC";

	for (int round = 0; round < 2; round++) {
		hl_heap_t *h = abc_heap(fits[f], orders[o], blk);
		size_t n = round ? 100 : 40;
		int want = round ? expect_100[f][o] : expect_40[f][o];
		void *p = hl_malloc(h, n);
		ck_assert_msg(p == blk[want], "fit:%s order:%s malloc(%zu): expected block %c",
			      fits[f], orders[o], n, names[want]);
		ck_assert_uint_eq(pstat(h, "searches") > 0, 1);
		tl_check_clean(h);
		hl_heap_destroy(h);
	}
}
END_TEST

START_TEST(best_and_worst_examine_the_whole_list)
{
	void *blk[3];
	hl_heap_t *h = abc_heap("best", "address", blk);
	size_t before = pstat(h, "search_steps");
	ck_assert_ptr_eq(hl_malloc(h, 60), blk[A]);   /* needs 80: A (128) beats C (256) */
	ck_assert_uint_eq(pstat(h, "search_steps") - before, 3);
	hl_heap_destroy(h);

	h = abc_heap("first", "address", blk);
	before = pstat(h, "search_steps");
	ck_assert_ptr_eq(hl_malloc(h, 200), blk[C]);  /* needs 224: only C */
	ck_assert_uint_eq(pstat(h, "search_steps") - before, 3);
	before = pstat(h, "search_steps");
	ck_assert_ptr_eq(hl_malloc(h, 40), blk[A]);   /* first element fits */
	ck_assert_uint_eq(pstat(h, "search_steps") - before, 1);
	hl_heap_destroy(h);
}
END_TEST

/* Equal candidates: best and worst fit take the first one they meet. */
START_TEST(ties_go_to_the_first_block_met)
{
	static const size_t best_sizes[3] = { 128, 256, 128 }, worst_sizes[3] = { 256, 64, 256 };
	static const int in_order[3] = { 0, 1, 2 };
	void *blk[3];
	hl_heap_t *h = ff_heap("fit:best");

	free_blocks_of(h, best_sizes, in_order, 3, blk);
	ck_assert_ptr_eq(hl_malloc(h, 80), blk[0]);   /* needs 96: 128 twice */
	hl_heap_destroy(h);
	h = ff_heap("fit:worst");
	free_blocks_of(h, worst_sizes, in_order, 3, blk);
	ck_assert_ptr_eq(hl_malloc(h, 40), blk[0]);   /* 256 twice */
	hl_heap_destroy(h);
}
END_TEST

START_TEST(next_fit_resumes_after_the_last_allocation)
{
	for (int next = 0; next < 2; next++) {
		hl_heap_t *h = ff_heap(next ? "fit:next" : "fit:first");
		void *blk[3];
		for (int i = 0; i < 3; i++) {
			blk[i] = hl_malloc(h, req_for(64));
			ck_assert_ptr_nonnull(hl_malloc(h, 16));
		}
		eat_tail(h);
		for (int i = 0; i < 3; i++)
			hl_free(h, blk[i]);
		/* the first search starts at the head either way */
		ck_assert_ptr_eq(hl_malloc(h, req_for(64)), blk[0]);
		hl_free(h, blk[0]);              /* A is back at the list head */
		void *p = hl_malloc(h, req_for(64));
		ck_assert_ptr_eq(p, next ? blk[1] : blk[0]);
		if (next) {
			ck_assert_ptr_eq(hl_malloc(h, req_for(64)), blk[2]);
			ck_assert_ptr_eq(hl_malloc(h, req_for(64)), blk[0]);   /* wraps */
		}
		tl_check_clean(h);
		hl_heap_destroy(h);
	}
}
END_TEST

/* ---- coalescing --------------------------------------------------------- */

/** Three touching 64-byte blocks A B C, a guard, the tail eaten; frees
 *  A, B, C in that order. */
static hl_heap_t *three_freed(const char *conf, void *blk[3], void **tail)
{
	hl_heap_t *h = ff_heap(conf);
	for (int i = 0; i < 3; i++)
		blk[i] = hl_malloc(h, req_for(64));
	ck_assert_ptr_nonnull(hl_malloc(h, 16));
	*tail = eat_tail(h);
	for (int i = 0; i < 3; i++)
		hl_free(h, blk[i]);
	tl_check_clean(h);
	return h;
}

START_TEST(coalescing_merges_neighbours)
{
	void *blk[3], *tail;
	hl_heap_t *h = three_freed("coalesce:on", blk, &tail);

	ck_assert_uint_eq(pstat(h, "free_blocks"), 1);
	ck_assert_uint_eq(pstat(h, "largest_free_block"), 3 * 64);
	ck_assert_uint_eq(pstat(h, "free_bytes"), 3 * 64);
	ck_assert_uint_eq(pstat(h, "coalesces"), 2);
	/* 150 needs 176: fits in the merged 192 (remainder 16 < MIN: whole) */
	void *p = hl_malloc(h, 150);
	ck_assert_ptr_eq(p, blk[0]);
	ck_assert_uint_eq(hl_usable_size(h, p), 3 * 64 - H);
	ck_assert_uint_eq(pstat(h, "free_blocks"), 0);
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

START_TEST(without_coalescing_the_holes_stay_apart)
{
	void *blk[3], *tail;
	hl_heap_t *h = three_freed("coalesce:off", blk, &tail);

	ck_assert_uint_eq(pstat(h, "free_blocks"), 3);
	ck_assert_uint_eq(pstat(h, "largest_free_block"), 64);
	ck_assert_uint_eq(pstat(h, "free_bytes"), 3 * 64);
	ck_assert_uint_eq(pstat(h, "coalesces"), 0);
	/* 192 bytes are free, but no hole holds 176: the heap grows */
	size_t heap = pstat(h, "heap_bytes");
	char *p = hl_malloc(h, 150);
	ck_assert_ptr_nonnull(p);
	ck_assert(p > (char *)tail);
	ck_assert_uint_gt(pstat(h, "heap_bytes"), heap);
	ck_assert_uint_eq(pstat(h, "free_blocks"), 4);   /* three holes + new tail */
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

/*
 * Five touching 64-byte blocks; free A, E, C, then B, which joins A and C
 * into one 192-byte block.  Under address order it keeps A's place (the
 * head); LIFO lists it at the front as a newly freed block; FIFO at the
 * back, behind E.  A request of 40 under first fit shows where it went.
 */
START_TEST(a_merged_block_is_listed_as_the_order_says)
{
	static const char *conf[] = { "order:address", "order:lifo", "order:fifo" };
	hl_heap_t *h = ff_heap(conf[_i]);
	void *blk[5];

	for (int i = 0; i < 5; i++)
		blk[i] = hl_malloc(h, req_for(64));
	ck_assert_ptr_nonnull(hl_malloc(h, 16));
	eat_tail(h);
	hl_free(h, blk[0]);
	hl_free(h, blk[4]);
	hl_free(h, blk[2]);
	hl_free(h, blk[1]);
	ck_assert_uint_eq(pstat(h, "free_blocks"), 2);
	ck_assert_uint_eq(pstat(h, "largest_free_block"), 192);
	tl_check_clean(h);
	ck_assert_ptr_eq(hl_malloc(h, 40), _i == 2 ? blk[4] : blk[0]);
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

START_TEST(freeing_next_to_the_tail_merges_into_it)
{
	hl_heap_t *h = ff_heap(NULL);
	size_t heap0;
	void *a = hl_malloc(h, 100), *b = hl_malloc(h, 100);

	heap0 = pstat(h, "heap_bytes");
	hl_free(h, b);                      /* joins the free tail */
	ck_assert_uint_eq(pstat(h, "free_blocks"), 1);
	ck_assert_uint_eq(pstat(h, "free_bytes"), heap0 - asize_for(100, H));
	hl_free(h, a);                      /* the whole heap is one free block */
	ck_assert_uint_eq(pstat(h, "free_bytes"), heap0);
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

/* ---- growing and trimming ----------------------------------------------- */

START_TEST(the_break_grows_and_trims)
{
	hl_heap_t *h = ff_heap("grow:64K");
	size_t big = 1 << 20;
	void *small = hl_malloc(h, 32);
	void *p = hl_malloc(h, big);

	ck_assert_ptr_nonnull(p);
	ck_assert_uint_ge(pstat(h, "heap_bytes"), big + asize_for(32, H));
	ck_assert_uint_ge(pstat(h, "grows"), 2);
	hl_free(h, p);
	size_t heap = pstat(h, "heap_bytes");
	size_t given = hl_trim(h, 0);
	ck_assert_uint_ge(given, big - tl_page());
	ck_assert_uint_eq(pstat(h, "heap_bytes"), heap - given);
	ck_assert_uint_eq(given % tl_page(), 0);
	tl_check_clean(h);
	hl_free(h, small);
	hl_trim(h, 0);
	ck_assert_uint_eq(pstat(h, "heap_bytes"), 0);   /* H = 16: nothing is left */
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

START_TEST(a_large_free_tail_is_trimmed_at_once)
{
	hl_heap_t *h = tl_heap("firstfit", "grow:64K,trim_threshold:128K");
	void *keep = hl_malloc(h, 32), *p = hl_malloc(h, 1 << 20);
	hl_free(h, p);
	/* the tail is cut back to `grow` bytes, rounded to pages */
	ck_assert_uint_le(pstat(h, "heap_bytes"), 64 * 1024 + tl_page());
	ck_assert_uint_eq(pstat(h, "trims"), 1);
	hl_free(h, keep);
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

/* ---- memalign and realloc ----------------------------------------------- */

START_TEST(memalign_frees_the_leading_gap)
{
	hl_heap_t *h = ff_heap(NULL);
	char *p0 = hl_malloc(h, 16);             /* block [lo, lo+48), lo page aligned */
	char *q = hl_memalign(h, 256, 100);

	ck_assert_uint_eq((uintptr_t)q % 256, 0);
	/* the padded block starts at lo+48; its aligned payload is lo+256; the
	 * 192 bytes in front become a free block, the rest joins the tail */
	ck_assert_ptr_eq(q, p0 - H + 256);
	ck_assert_uint_eq(pstat(h, "free_blocks"), 2);
	tl_check_clean(h);
	ck_assert_ptr_eq(hl_malloc(h, 150), p0 + 48);  /* 176 fits the 192 gap */
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

START_TEST(memalign_never_leaves_a_gap_below_min)
{
	hl_heap_t *h = ff_heap(NULL);
	char *p0 = hl_malloc(h, req_for(224));   /* block [lo, lo+224) */
	char *q = hl_memalign(h, 256, 100);

	/* the padded payload sits at lo+240: aligning up gives a 16-byte gap,
	 * too small for a free block, so the next boundary (lo+512) is used */
	ck_assert_ptr_eq(q, p0 - H + 512);
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

/* A small deterministic generator, so every run does the same ops. */
static unsigned next_rand(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return (*s >> 8) & 0xffffff;
}

/* Every fit x order x coalesce x header: random malloc, memalign,
 * realloc and free, contents checked, checker clean after each step. */
START_TEST(random_ops_keep_every_invariant)
{
	enum { SLOTS = 48, OPS = 500 };
	static const char *const hdrs[] = { "8", "16", "32" };
	char conf[160];
	void *p[SLOTS] = { 0 };
	size_t n[SLOTS] = { 0 };
	unsigned seed = (unsigned)_i + 1;

	snprintf(conf, sizeof conf, "fit:%s,order:%s,coalesce:%s,header:%s,trim_threshold:8K,grow:4K",
		 fits[_i % 4], orders[_i / 4 % 5], _i / 20 % 2 ? "off" : "on", hdrs[_i / 40]);
	hl_heap_t *h = tl_heap("firstfit", conf);
	for (int op = 0; op < OPS; op++) {
		unsigned r = next_rand(&seed), k = r % SLOTS, size = 1 + next_rand(&seed) % 3000;
		if (!p[k]) {
			p[k] = r % 7 == 0 ? hl_memalign(h, (size_t)32 << (r % 8), size) : hl_malloc(h, size);
			ck_assert_ptr_nonnull(p[k]);
			ck_assert_uint_eq((uintptr_t)p[k] % 16, 0);
			n[k] = size;
			tl_fill(p[k], size, k);
		} else if (r % 4 == 0) {
			ck_assert(tl_intact(p[k], n[k], k));
			p[k] = hl_realloc(h, p[k], size);
			ck_assert(tl_intact(p[k], n[k] < size ? n[k] : size, k));
			n[k] = size;
			tl_fill(p[k], size, k);
		} else {
			ck_assert_msg(tl_intact(p[k], n[k], k), "%s: block %u damaged", conf, k);
			hl_free(h, p[k]);
			p[k] = NULL;
		}
		tl_check_clean(h);
	}
	for (int k = 0; k < SLOTS; k++)
		hl_free(h, p[k]);
	ck_assert_uint_eq(pstat(h, "live_blocks"), 0);
	tl_check_clean(h);
	hl_trim(h, 0);
	/* coalesced, the heap is one free block and goes back but for a
	 * page; without coalescing only the last hole can be cut */
	if (_i / 20 % 2 == 0)
		ck_assert_uint_le(pstat(h, "heap_bytes"), tl_page());
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

START_TEST(realloc_stays_in_place_when_it_can)
{
	hl_heap_t *h = ff_heap(NULL);
	char *a = hl_malloc(h, 200), *b = hl_malloc(h, 100);
	ck_assert_ptr_nonnull(hl_malloc(h, 16));
	tl_fill(a, 200, 1);
	ck_assert_ptr_eq(hl_realloc(h, a, 50), a);           /* shrink: tail split off */
	ck_assert_uint_eq(hl_usable_size(h, a), asize_for(50, H) - H);
	hl_free(h, b);                                       /* b joins the split-off tail */
	ck_assert_ptr_eq(hl_realloc(h, a, 300), a);          /* grows over the free neighbour */
	ck_assert(tl_intact(a, 50, 1));
	/* the last block grows in place by moving the break */
	char *last = hl_malloc(h, 1000);
	ck_assert_ptr_eq(hl_realloc(h, last, 100000), last);
	ck_assert_uint_eq(pstat(h, "live_blocks"), 3);
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

/* ---- pictures and misuse ------------------------------------------------ */

START_TEST(snapshot_draws_the_list_and_the_rover)
{
	void *blk[3];
	hl_heap_t *h = abc_heap("next", "address", blk);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	hl_malloc(h, 40);
	ck_assert_int_eq(hl_snapshot_dot(h, f, "abc"), 0);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "fflist"));
	ck_assert_ptr_nonnull(strstr(buf, "ffrover"));
	ck_assert_ptr_nonnull(strstr(buf, "free 64"));
	free(buf);
	hl_heap_destroy(h);
}
END_TEST

/** Walk visitor: totals by state. */
struct totals { size_t live, live_bytes, free, free_bytes; };
static int add_block(const hl_block_t *b, void *arg)
{
	struct totals *t = arg;
	if (b->state == HL_BLOCK_LIVE) {
		t->live++;
		t->live_bytes += b->size + H;     /* payload + its header */
	} else {
		ck_assert_int_eq(b->state, HL_BLOCK_FREE);
		t->free++;
		t->free_bytes += b->size;
	}
	return 0;
}

START_TEST(the_walk_covers_the_heap_exactly)
{
	hl_heap_t *h = ff_heap("coalesce:off");
	void *p[20];
	struct totals t = { 0, 0, 0, 0 };

	for (int i = 0; i < 20; i++)
		p[i] = hl_malloc(h, 10 + 37 * (size_t)i);
	for (int i = 0; i < 20; i += 3)
		hl_free(h, p[i]);
	ck_assert_int_eq(hl_walk(h, add_block, &t), 0);
	ck_assert_uint_eq(t.live, pstat(h, "live_blocks"));
	ck_assert_uint_eq(t.free, pstat(h, "free_blocks"));
	ck_assert_uint_eq(t.free_bytes, pstat(h, "free_bytes"));
	ck_assert_uint_eq(t.live_bytes + t.free_bytes, pstat(h, "heap_bytes"));
	hl_heap_destroy(h);
}
END_TEST

/** Visitor that calls back into the heap, as the core's statistics do. */
static int ask_usable(const hl_block_t *b, void *arg)
{
	if (b->state == HL_BLOCK_LIVE)
		ck_assert_uint_eq(hl_usable_size(arg, b->addr), b->size);
	return 0;
}

START_TEST(a_walk_visitor_may_call_into_the_heap)
{
	hl_heap_t *h = ff_heap("ledger:off");
	for (int i = 0; i < 200; i++)
		ck_assert_ptr_nonnull(hl_malloc(h, 24 + (size_t)i));
	ck_assert_int_eq(hl_walk(h, ask_usable, h), 0);
	ck_assert_double_gt(tl_stat(h, "live_usable_bytes"), 0);
	hl_heap_destroy(h);
}
END_TEST

/* The checker notices what an overflow or a dangling pointer breaks. */
START_TEST(the_checker_finds_smashed_blocks)
{
	hl_heap_t *h = ff_heap(NULL);
	char *a = hl_malloc(h, 64), *b = hl_malloc(h, 64);
	ck_assert_ptr_nonnull(hl_malloc(h, 64));
	hl_free(h, b);
	tl_check_clean(h);
	memset(b + 32, 0x5a, 32);                 /* use after free: hits the footer */
	ck_assert_int_gt(hl_check(h, NULL), 0);
	hl_heap_destroy(h);

	h = ff_heap(NULL);
	a = hl_malloc(h, 64);
	b = hl_malloc(h, 64);
	ck_assert_ptr_nonnull(hl_malloc(h, 64));
	hl_free(h, b);
	memset(a + hl_usable_size(h, a), 0x5a, 16); /* overflow into b's header */
	ck_assert_int_gt(hl_check(h, NULL), 0);
	hl_heap_destroy(h);

	h = ff_heap(NULL);
	a = hl_malloc(h, 64);
	b = hl_malloc(h, 64);
	ck_assert_ptr_nonnull(hl_malloc(h, 64));
	hl_free(h, a);
	hl_free(h, b);                            /* merges with a */
	tl_check_clean(h);
	char *self = a - H;
	memcpy(a, &self, sizeof self);            /* smashed link: the block follows itself */
	ck_assert_int_gt(hl_check(h, NULL), 0);
	hl_heap_destroy(h);
}
END_TEST

/* Misuse, each run by tl_expect_abort in a child; @p conf is the heap's
 * configuration string. */
static void double_free(const void *conf)
{
	hl_heap_t *h = hl_heap_new("firstfit", conf);
	void *a = hl_malloc(h, 64);
	ck_assert_ptr_nonnull(hl_malloc(h, 64));
	hl_free(h, a);
	hl_free(h, a);
}

static void foreign_pointer(const void *conf)
{
	hl_heap_t *h = hl_heap_new("firstfit", conf);
	static _Alignas(16) char elsewhere[64];
	hl_malloc(h, 64);
	hl_free(h, elsewhere + 16);
}

static void interior_pointer(const void *conf)
{
	hl_heap_t *h = hl_heap_new("firstfit", conf);
	char *a = hl_malloc(h, 256);
	hl_free(h, a + 64);
}

START_TEST(misuse_aborts_with_a_message)
{
	/* debug:off: the policy's own checks (with debug:on the core's guard
	 * names every misuse first, from its map of live blocks) */
	tl_expect_abort(double_free, "ledger:off,debug:off", "heaplab: firstfit: double free");
	tl_expect_abort(foreign_pointer, "ledger:off,debug:off", "heaplab: firstfit: invalid pointer");
	tl_expect_abort(interior_pointer, "ledger:off,debug:off", "heaplab: firstfit: invalid pointer");
	/* without a tag word (header:8) only the guard's map can tell an
	 * interior pointer from a block */
	tl_expect_abort(interior_pointer, "ledger:off,debug:on,header:8",
			"heaplab: firstfit: free of an address inside the heap that is not the start of a live block");
}
END_TEST

START_TEST(double_free_raises_sigabrt)
{
	double_free("ledger:off");
}
END_TEST

START_TEST(bad_options_are_refused)
{
	ck_assert_ptr_null(hl_heap_new("firstfit", "fit:middle"));
	ck_assert_ptr_null(hl_heap_new("firstfit", "header:12"));
	ck_assert_ptr_null(hl_heap_new("firstfit", "order:random"));
}
END_TEST

static const char *const ff_keys[] = {
	"policy_stats.search_steps", "policy_stats.splits", "policy_stats.coalesces", "policy_stats.grows",
	"policy_stats.trims", NULL,
};

static void firstfit_case(const char *conf)
{
	tl_events_run_t r;
	tl_holes_workload(tl_run_begin(&r, "firstfit", conf, ff_keys));
	tl_run_measure(&r);
	tl_expect_count(&r, -1, "candidate", "policy_stats.search_steps");
	ck_assert_double_eq(tl_n_of(&r.t, HL_EV_REJECT, "candidate") + tl_n_of(&r.t, HL_EV_LOOK, "candidate"),
			    tl_grew(&r.a, &r.b, "policy_stats.search_steps"));
	tl_expect_count(&r, HL_EV_SPLIT, NULL, "policy_stats.splits");
	tl_expect_count(&r, HL_EV_MERGE, NULL, "policy_stats.coalesces");
	tl_expect_count(&r, HL_EV_GROW, NULL, "policy_stats.grows");
	tl_expect_count(&r, HL_EV_SHRINK, NULL, "policy_stats.trims");
	ck_assert_msg(tl_n_of(&r.t, HL_EV_REJECT, "candidate") > 0, "firstfit (%s): no candidate rejected", conf);
	tl_run_end(&r);
}

START_TEST(firstfit_events_follow_the_counters)
{
	TL_SKIP_UNLESS("firstfit");
	firstfit_case("fit:first");
	firstfit_case("fit:best");
	firstfit_case("fit:next,order:lifo");
	firstfit_case("fit:worst,order:fifo");
}
END_TEST

static Suite *firstfit_suite(void)
{
	Suite *s = suite_create("firstfit");
	TCase *tc = tcase_create("model");
	tcase_add_test(tc, firstfit_events_follow_the_counters);

	tcase_add_loop_test(tc, consecutive_blocks_follow_the_size_rule, 0, 3);
	tcase_add_test(tc, split_leaves_the_remainder_free);
	tcase_add_loop_test(tc, each_fit_and_order_takes_the_predicted_block, 0, 20);
	tcase_add_test(tc, best_and_worst_examine_the_whole_list);
	tcase_add_test(tc, ties_go_to_the_first_block_met);
	tcase_add_test(tc, next_fit_resumes_after_the_last_allocation);
	tcase_add_test(tc, coalescing_merges_neighbours);
	tcase_add_test(tc, without_coalescing_the_holes_stay_apart);
	tcase_add_loop_test(tc, a_merged_block_is_listed_as_the_order_says, 0, 3);
	tcase_add_test(tc, freeing_next_to_the_tail_merges_into_it);
	tcase_add_test(tc, the_break_grows_and_trims);
	tcase_add_test(tc, a_large_free_tail_is_trimmed_at_once);
	tcase_add_test(tc, memalign_frees_the_leading_gap);
	tcase_add_test(tc, memalign_never_leaves_a_gap_below_min);
	tcase_add_test(tc, realloc_stays_in_place_when_it_can);
	tcase_add_loop_test(tc, random_ops_keep_every_invariant, 0, 120);
	tcase_add_test(tc, snapshot_draws_the_list_and_the_rover);
	tcase_add_test(tc, the_walk_covers_the_heap_exactly);
	tcase_add_test(tc, a_walk_visitor_may_call_into_the_heap);
	tcase_add_test(tc, the_checker_finds_smashed_blocks);
	tcase_add_test(tc, misuse_aborts_with_a_message);
	tcase_add_test_raise_signal(tc, double_free_raises_sigabrt, SIGABRT);
	tcase_add_test(tc, bad_options_are_refused);
	suite_add_tcase(s, tc);
	return s;
}

TL_MAIN(firstfit_suite)
