/*
 * Policy tests for `buddy`: a request is rounded up to a power of two, a
 * block is aligned to its own size, a fresh region is halved down to the
 * order asked, two freed buddies merge into their parent, realloc splits
 * and merges in place, a request above the largest order gets a mapping
 * of its own, internal fragmentation is what the rounding says, and
 * misuse aborts with "heaplab: buddy: ...".
 *
 * Expected values come from the buddy rules, not from the model's output:
 *   order(n) = max(min_order, ceil(log2 n)),  block = 2^order(n),
 *   buddy(offset, k) = offset XOR 2^k,
 *   a split keeps the lower half and lists the upper one.
 * Most tests use max_order:12 (a 4 KiB region) so that the arithmetic
 * stays small; min_order is 5 (32 B) unless said.
 */
#include "config.h"
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testlib_events.h"

#define SMALL "max_order:12"      /* a region of 4096 B: orders 5 .. 12 */

static hl_heap_t *bd_heap(const char *conf) { return tl_heap("buddy", conf); }

static size_t pstat(hl_heap_t *h, const char *key)
{
	char path[96];
	snprintf(path, sizeof path, "policy_stats.%s", key);
	return (size_t)tl_stat(h, path);
}

/** Free blocks of order @p k (policy_stats.free_by_order.orderK). */
static size_t free_of(hl_heap_t *h, unsigned k)
{
	char key[48];
	snprintf(key, sizeof key, "free_by_order.order%u", k);
	return pstat(h, key);
}

/* ---- rounding and alignment -------------------------------------------- */

START_TEST(a_request_gets_the_next_power_of_two)
{
	static const size_t asked[] = { 1, 8, 32, 33, 100, 128, 129, 1000, 4095, 4097, 100000 };
	static const size_t block[] = { 32, 32, 32, 64, 128, 128, 256, 1024, 4096, 8192, 131072 };
	hl_heap_t *h = bd_heap(NULL);
	char *base = hl_malloc(h, 32);        /* a fresh region's first block: offset 0 */

	ck_assert_uint_eq((uintptr_t)base % tl_page(), 0);
	for (size_t i = 0; i < sizeof asked / sizeof *asked; i++) {
		char *p = hl_malloc(h, asked[i]);
		ck_assert_ptr_nonnull(p);
		ck_assert_uint_eq(hl_usable_size(h, p), block[i]);
		/* a block of order k sits on a multiple of 2^k from the base,
		 * which is on a page: in memory, up to a page, too */
		ck_assert_uint_eq((size_t)(p - base) % block[i], 0);
		ck_assert_uint_eq((uintptr_t)p % (block[i] < tl_page() ? block[i] : tl_page()), 0);
	}
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

START_TEST(memalign_is_a_request_of_the_alignment_order)
{
	hl_heap_t *h = bd_heap(NULL);
	void *p = hl_memalign(h, 4096, 10), *q = NULL;

	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq((uintptr_t)p % 4096, 0);
	ck_assert_uint_eq(hl_usable_size(h, p), 4096);
	ck_assert_int_eq(hl_posix_memalign(h, &q, 256, 300), 0);
	ck_assert_uint_eq((uintptr_t)q % 512, 0);        /* 300 B: order 9 */
	ck_assert_uint_eq(hl_usable_size(h, q), 512);
	/* an alignment above a page: a mapping aligned to it (regions are
	 * only page-aligned) */
	void *big = hl_memalign(h, (size_t)8 << 20, 100);
	ck_assert_ptr_nonnull(big);
	ck_assert_uint_eq((uintptr_t)big % ((size_t)8 << 20), 0);
	ck_assert_uint_eq(pstat(h, "large_blocks"), 1);
	ck_assert_uint_eq(hl_usable_size(h, big), tl_page());
	tl_check_clean(h);
	hl_free(h, big);
	hl_free(h, p);
	hl_free(h, q);
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

/* ---- split and merge ---------------------------------------------------- */

START_TEST(the_first_request_halves_a_region_down_to_its_order)
{
	hl_heap_t *h = bd_heap(SMALL);
	char *a = hl_malloc(h, 100);          /* order 7 from a block of order 12 */

	ck_assert_uint_eq(pstat(h, "regions"), 1);
	ck_assert_uint_eq(pstat(h, "splits"), 12 - 7);
	for (unsigned k = 7; k < 12; k++)      /* one upper half of each order */
		ck_assert_uint_eq(free_of(h, k), 1);
	ck_assert_uint_eq(free_of(h, 12), 0);
	ck_assert_uint_eq(pstat(h, "free_bytes"), 4096 - 128);
	/* the next request of the same order takes a's buddy: offset 0 XOR 128 */
	char *b = hl_malloc(h, 120);
	ck_assert_ptr_eq(b, a + 128);
	ck_assert_uint_eq(pstat(h, "splits"), 12 - 7);
	ck_assert_uint_eq(free_of(h, 7), 0);
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

START_TEST(two_freed_buddies_merge_into_their_parent)
{
	hl_heap_t *h = bd_heap(SMALL);
	char *a = hl_malloc(h, 100);          /* offset 0, order 7 */
	char *b = hl_malloc(h, 100);          /* offset 128: a's buddy */
	char *c = hl_malloc(h, 200);          /* offset 256, order 8: the parent's buddy */

	ck_assert_ptr_eq(b, a + 128);
	ck_assert_ptr_eq(c, a + 256);
	size_t f7 = free_of(h, 7), f8 = free_of(h, 8), merges = pstat(h, "merges");
	hl_free(h, a);                         /* b is live: no merge */
	ck_assert_uint_eq(free_of(h, 7), f7 + 1);
	ck_assert_uint_eq(pstat(h, "merges"), merges);
	ck_assert_uint_eq(pstat(h, "merges_refused"), 1);
	hl_free(h, b);                         /* a + b = the block of order 8 at 0;
						  its buddy (256) is c, live */
	ck_assert_uint_eq(free_of(h, 7), f7);
	ck_assert_uint_eq(free_of(h, 8), f8 + 1);
	ck_assert_uint_eq(pstat(h, "merges"), merges + 1);
	/* the merged block is reused whole by a request of its order */
	ck_assert_ptr_eq(hl_malloc(h, 256), a);
	hl_free(h, a);
	hl_free(h, c);                         /* now everything merges back */
	ck_assert_uint_eq(pstat(h, "free_blocks"), 1);
	ck_assert_uint_eq(free_of(h, 12), 1);
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

START_TEST(realloc_halves_and_merges_in_place)
{
	hl_heap_t *h = bd_heap(SMALL);
	char *p = hl_malloc(h, 1000);         /* order 10 at offset 0 */

	tl_fill(p, 100, 7);
	size_t f7 = free_of(h, 7), f8 = free_of(h, 8), f9 = free_of(h, 9);
	ck_assert_ptr_eq(hl_realloc(h, p, 100), p);       /* order 7: 512, 256, 128 freed */
	ck_assert_uint_eq(hl_usable_size(h, p), 128);
	ck_assert_uint_eq(free_of(h, 7), f7 + 1);
	ck_assert_uint_eq(free_of(h, 8), f8 + 1);
	ck_assert_uint_eq(free_of(h, 9), f9 + 1);
	ck_assert_ptr_eq(hl_realloc(h, p, 900), p);       /* the buddies above are free */
	ck_assert_uint_eq(hl_usable_size(h, p), 1024);
	ck_assert(tl_intact(p, 100, 7));
	/* a live buddy above stops it: the block moves */
	char *q = hl_malloc(h, 1000);                     /* offset 1024: p's buddy */
	ck_assert_ptr_eq(q, p + 1024);
	char *moved = hl_realloc(h, p, 1500);
	ck_assert_ptr_ne(moved, p);
	ck_assert(tl_intact(moved, 100, 7));
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

START_TEST(a_request_above_the_largest_order_gets_its_own_mapping)
{
	hl_heap_t *h = bd_heap(SMALL);
	char *p = hl_malloc(h, 4097);

	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(pstat(h, "large_blocks"), 1);
	ck_assert_uint_eq(pstat(h, "regions"), 0);
	ck_assert_uint_eq(hl_usable_size(h, p), (4097 + tl_page() - 1) / tl_page() * tl_page());
	tl_check_clean(h);
	hl_free(h, p);
	ck_assert_uint_eq(pstat(h, "large_blocks"), 0);
	ck_assert_uint_eq(pstat(h, "large_unmaps"), 1);
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

/* ---- internal fragmentation -------------------------------------------- */

START_TEST(internal_fragmentation_is_the_rounding)
{
	hl_heap_t *h = bd_heap(NULL);
	/* The worst case: one byte more than a power of two, each doubled.
	 *   asked   33 + 65 + 129 + 257 + 513 + 1025        = 2022
	 *   blocks  64 + 128 + 256 + 512 + 1024 + 2048      = 4032
	 *   lost    4032 - 2022                             = 2010 (49.9 %) */
	void *p[6];
	for (int i = 0; i < 6; i++)
		p[i] = hl_malloc(h, ((size_t)32 << i) + 1);
	ck_assert_uint_eq(pstat(h, "requested_bytes"), 2022);
	ck_assert_uint_eq(pstat(h, "rounded_bytes"), 4032);
	ck_assert_uint_eq(pstat(h, "internal_fragmentation_bytes"), 2010);
	ck_assert_int_eq((int)(tl_stat(h, "policy_stats.internal_fragmentation_percent") * 10), 498);
	/* the best case, a power of two exactly, loses nothing */
	void *exact = hl_malloc(h, 256);
	ck_assert_uint_eq(pstat(h, "internal_fragmentation_bytes"), 2010);
	hl_free(h, p[5]);                      /* 1025 in 2048 goes: 1023 lost less */
	ck_assert_uint_eq(pstat(h, "internal_fragmentation_bytes"), 2010 - 1023);
	hl_free(h, exact);
	for (int i = 0; i < 5; i++)
		hl_free(h, p[i]);
	ck_assert_uint_eq(pstat(h, "requested_bytes"), 0);
	ck_assert_uint_eq(pstat(h, "rounded_bytes"), 0);
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

/* ---- invariants, walk, checker ----------------------------------------- */

static int sum_region_blocks(const hl_block_t *b, void *arg)
{
	size_t *sum = arg;
	if (b->size_class)                     /* large blocks have class 0 */
		*sum += b->size;
	return 0;
}

START_TEST(random_ops_keep_every_invariant)
{
	static const char *confs[] = { SMALL, "min_order:4,max_order:14", NULL };
	hl_heap_t *h = bd_heap(confs[_i % 3]);
	enum { N = 64 };
	char *p[N] = { 0 };
	size_t n[N] = { 0 };
	unsigned seed = 12345u + (unsigned)_i;

	for (int op = 0; op < 2000; op++) {
		int i = rand_r(&seed) % N;
		if (p[i] && rand_r(&seed) % 3 == 0) {
			ck_assert(tl_intact(p[i], n[i], (unsigned)i));
			size_t m = 1 + (size_t)rand_r(&seed) % 3000;
			p[i] = hl_realloc(h, p[i], m);
			ck_assert(tl_intact(p[i], n[i] < m ? n[i] : m, (unsigned)i));
			n[i] = m;
			tl_fill(p[i], m, (unsigned)i);
		} else if (p[i]) {
			ck_assert(tl_intact(p[i], n[i], (unsigned)i));
			hl_free(h, p[i]);
			p[i] = NULL;
		} else {
			n[i] = 1 + (size_t)rand_r(&seed) % (rand_r(&seed) % 8 ? 300 : 9000);
			p[i] = rand_r(&seed) % 5 ? hl_malloc(h, n[i]) : hl_memalign(h, (size_t)32 << (rand_r(&seed) % 6), n[i]);
			ck_assert_ptr_nonnull(p[i]);
			ck_assert_uint_ge(hl_usable_size(h, p[i]), n[i]);
			tl_fill(p[i], n[i], (unsigned)i);
		}
		if (op % 97 == 0)
			tl_check_clean(h);
	}
	size_t sum = 0;
	hl_walk(h, sum_region_blocks, &sum);   /* blocks tile the regions */
	ck_assert_uint_eq(sum, pstat(h, "regions") * pstat(h, "region_bytes"));
	for (int i = 0; i < N; i++)
		hl_free(h, p[i]);
	ck_assert_uint_eq(pstat(h, "free_blocks"), pstat(h, "regions"));   /* each region whole again */
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

START_TEST(the_checker_finds_smashed_lists_and_maps)
{
	hl_heap_t *h = bd_heap("max_order:12,debug:off");
	char *a = hl_malloc(h, 100);

	memset(a + 128, 0x55, 16);             /* the links of the free buddy at 128 */
	tl_check_finds(h, "free[7]");
	hl_heap_destroy(h);
}
END_TEST

START_TEST(only_the_pages_blocks_use_are_committed)
{
	hl_heap_t *h = bd_heap(NULL);
	size_t page = tl_page();

	/* malloc(100) halves a 4 MiB region 15 times: the block (offset 0)
	 * and the links of each upper half listed (offsets 2^7 .. 2^21) are
	 * written; those of 2^7 .. 2^11 share page 0, so one page for them
	 * and one for each half of 4 KiB .. 2 MiB: 1 + 10 pages */
	hl_malloc(h, 100);
	ck_assert_uint_eq(page, 4096);
	ck_assert_uint_eq((size_t)tl_stat(h, "os.peak_committed_bytes"), 11 * page);
	/* a block of 64 KiB is committed whole: it was a listed half of
	 * 64 KiB at offset 64 KiB, whose first page was committed already */
	hl_malloc(h, (size_t)64 << 10);
	ck_assert_uint_eq((size_t)tl_stat(h, "os.peak_committed_bytes"), (11 + 15) * page);
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

START_TEST(trim_decommits_the_pages_inside_free_blocks)
{
	hl_heap_t *h = bd_heap(NULL);
	char *keep = hl_malloc(h, 100);                   /* offset 0: the region stays split */
	char *p = hl_malloc(h, (size_t)1 << 20);          /* the half of 1 MiB at offset 1 MiB */
	size_t page = tl_page();

	ck_assert_ptr_eq(p, keep + ((size_t)1 << 20));
	memset(p, 1, (size_t)1 << 20);
	hl_free(h, p);                                    /* its buddy at 0 is split: no merge */
	/* every other free block has only its first page committed */
	ck_assert_uint_eq(hl_trim(h, 0), ((size_t)1 << 20) - page);
	ck_assert_uint_eq(pstat(h, "decommitted_bytes"), ((size_t)1 << 20) - page);
	ck_assert_uint_eq(hl_trim(h, 0), 0);              /* nothing left to give */
	p = hl_malloc(h, (size_t)1 << 20);                /* committed again */
	memset(p, 2, (size_t)1 << 20);
	hl_free(h, p);
	hl_free(h, keep);
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

/* ---- misuse ------------------------------------------------------------- */

static void double_free(const void *conf)
{
	hl_heap_t *h = hl_heap_new("buddy", conf);
	char *a = hl_malloc(h, 40);
	hl_malloc(h, 40);                      /* keeps a from merging away */
	hl_free(h, a);
	hl_free(h, a);
}

static void interior_pointer(const void *conf)
{
	hl_heap_t *h = hl_heap_new("buddy", conf);
	char *a = hl_malloc(h, 256);
	hl_free(h, a + 64);
}

static void foreign_pointer(const void *conf)
{
	static char outside[64];
	hl_heap_t *h = hl_heap_new("buddy", conf);
	hl_malloc(h, 16);
	hl_free(h, outside + 16);
}

static void write_after_free(const void *conf)
{
	hl_heap_t *h = hl_heap_new("buddy", conf);
	char *a = hl_malloc(h, 40);
	hl_free(h, a);                         /* merged back into the whole region */
	memset(a, 'U', 16);
	hl_malloc(h, 40);
}

START_TEST(misuse_aborts_with_a_message)
{
	tl_expect_abort(double_free, "ledger:off,debug:off", "heaplab: buddy: double free");
	tl_expect_abort(interior_pointer, "ledger:off,debug:off", "heaplab: buddy: invalid pointer (not the start of a block)");
	tl_expect_abort(foreign_pointer, "ledger:off,debug:off", "heaplab: buddy: free of a pointer this heap does not own");
	tl_expect_abort(write_after_free, "ledger:off,debug:off", "heaplab: buddy: free list link overwritten");
}
END_TEST

START_TEST(bad_options_are_refused)
{
	ck_assert_ptr_null(hl_heap_new("buddy", "min_order:3"));
	ck_assert_ptr_null(hl_heap_new("buddy", "max_order:27"));
	ck_assert_ptr_null(hl_heap_new("buddy", "min_order:12,max_order:12"));
	ck_assert_ptr_null(hl_heap_new("buddy", "min_order:4,max_order:25"));   /* 2^21 units */
}
END_TEST

/* ---- events ------------------------------------------------------------- */

static const char *const bd_keys[] = {
	"policy_stats.splits", "policy_stats.merges", "policy_stats.merges_refused", "policy_stats.large_maps",
	"policy_stats.large_unmaps", "policy_stats.regions", NULL,
};

static void buddy_case(const char *conf)
{
	tl_events_run_t r;
	hl_heap_t *h = tl_run_begin(&r, "buddy", conf, bd_keys);
	tl_holes_workload(h);
	hl_free(h, hl_malloc(h, (size_t)80 << 20));   /* above any max_order: a mapping */
	tl_run_measure(&r);
	tl_expect_count(&r, HL_EV_SPLIT, NULL, "policy_stats.splits");
	tl_expect_count(&r, HL_EV_MERGE, NULL, "policy_stats.merges");
	tl_expect_count(&r, HL_EV_REJECT, "no merge", "policy_stats.merges_refused");
	tl_expect_count(&r, HL_EV_MAP, NULL, "policy_stats.large_maps");
	tl_expect_count(&r, HL_EV_UNMAP, NULL, "policy_stats.large_unmaps");
	tl_expect_count(&r, HL_EV_NEW, NULL, "policy_stats.regions");
	tl_run_end(&r);
}

START_TEST(buddy_events_follow_the_counters)
{
	TL_SKIP_UNLESS("buddy");
	buddy_case(NULL);
	buddy_case(SMALL);
	buddy_case("min_order:4,max_order:16");
}
END_TEST

static Suite *buddy_suite(void)
{
	Suite *s = suite_create("buddy");
	TCase *tc = tcase_create("model");

	tcase_add_test(tc, buddy_events_follow_the_counters);
	tcase_add_test(tc, a_request_gets_the_next_power_of_two);
	tcase_add_test(tc, memalign_is_a_request_of_the_alignment_order);
	tcase_add_test(tc, the_first_request_halves_a_region_down_to_its_order);
	tcase_add_test(tc, two_freed_buddies_merge_into_their_parent);
	tcase_add_test(tc, realloc_halves_and_merges_in_place);
	tcase_add_test(tc, a_request_above_the_largest_order_gets_its_own_mapping);
	tcase_add_test(tc, internal_fragmentation_is_the_rounding);
	tcase_add_loop_test(tc, random_ops_keep_every_invariant, 0, 9);
	tcase_add_test(tc, the_checker_finds_smashed_lists_and_maps);
	tcase_add_test(tc, only_the_pages_blocks_use_are_committed);
	tcase_add_test(tc, trim_decommits_the_pages_inside_free_blocks);
	tcase_add_test(tc, misuse_aborts_with_a_message);
	tcase_add_test(tc, bad_options_are_refused);
	suite_add_tcase(s, tc);
	return s;
}

TL_MAIN(buddy_suite)
