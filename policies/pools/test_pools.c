/* Check suite of the `pools` policy (CPython's pymalloc).  Expected values
 * are derived from the model's facts: 512-byte threshold, classes
 * (n - 1) / alignment, a 48-byte pool header, capacity
 * (pool_size - 48) / stride, arena_size / pool_size pools per arena, one
 * fewer when the arena's mapping is not pool-aligned (CPython 3.11 on this
 * machine: 4 arenas at start-up, 65,536 bytes lost to arena alignment). */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>
#include "testlib_events.h"
#include "policy.h"
#include "os.h"

enum { HEADER = 48, THRESHOLD = 512 };

static size_t per_pool(size_t pool, size_t stride) { return (pool - HEADER) / stride; }

static double pstat(hl_heap_t *h, const char *path)
{
	char full[200];
	snprintf(full, sizeof full, "policy_stats.%s", path);
	return tl_stat(h, full);
}

static double class_stat(hl_heap_t *h, size_t cls, const char *key)
{
	char path[96];
	snprintf(path, sizeof path, "classes.%zu.%s", cls, key);
	return pstat(h, path);
}

/* ------------------------------------------------------------------ */

START_TEST(threshold_512_pool_513_fallback)
{
	hl_heap_t *h = tl_heap("pools", NULL);
	size_t top = (THRESHOLD - 1) / 16;          /* class of 512 bytes */
	void *p = hl_malloc(h, THRESHOLD);
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(hl_usable_size(h, p), THRESHOLD);
	ck_assert_int_eq(class_stat(h, top, "blocks_in_use"), 1);
	ck_assert_int_eq(pstat(h, "small_mallocs"), 1);
	ck_assert_int_eq(pstat(h, "fallback_mallocs"), 0);
	void *q = hl_malloc(h, THRESHOLD + 1);
	ck_assert_ptr_nonnull(q);
	ck_assert_int_eq(class_stat(h, top, "blocks_in_use"), 1);
	ck_assert_int_eq(pstat(h, "small_mallocs"), 1);
	ck_assert_int_eq(pstat(h, "fallback_mallocs"), 1);
	ck_assert_int_eq(pstat(h, "arenas_allocated_current"), 1);
	tl_check_clean(h);
	hl_free(h, q);
	ck_assert_int_eq(pstat(h, "fallback_frees"), 1);
	hl_free(h, p);
	ck_assert_int_eq(pstat(h, "small_frees"), 1);
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

/* calloc: a pool block is cleared (it may be a freed one); a large block is
 * what the fallback makes of it: glibc's model clears no fresh mmapped
 * chunk (no page touched), mimalloc's clears it (every page touched). */
START_TEST(calloc_large_as_the_fallback)
{
	hl_heap_t *h = tl_heap("pools", "debug:off");
	char *small = hl_malloc(h, 100);
	memset(small, 7, 100);
	hl_free(h, small);
	char *again = hl_calloc(h, 1, 100);
	ck_assert_ptr_eq(again, small);
	for (int i = 0; i < 100; i++)
		ck_assert_int_eq(again[i], 0);
	size_t big = 8 << 20;
	double before = tl_stat(h, "resident_bytes");
	char *p = hl_calloc(h, 1, big);
	ck_assert(p && p[0] == 0 && p[big - 1] == 0);
	ck_assert_double_lt(tl_stat(h, "resident_bytes") - before, 1 << 20);
	hl_free(h, p);
	hl_free(h, again);
	hl_heap_destroy(h);
	h = tl_heap("pools", "debug:off,fallback:sharded");
	before = tl_stat(h, "resident_bytes");
	p = hl_calloc(h, 1, big);
	ck_assert_double_ge(tl_stat(h, "resident_bytes") - before, (double)big);
	hl_free(h, p);
	hl_heap_destroy(h);
}
END_TEST

START_TEST(classes_16_bytes_apart)
{
	hl_heap_t *h = tl_heap("pools", NULL);
	ck_assert_int_eq(pstat(h, "size_classes"), THRESHOLD / 16);
	ck_assert_int_eq(pstat(h, "pools_per_arena"), (1 << 20) / (16 << 10));
	ck_assert_int_eq(pstat(h, "pool_header_bytes"), HEADER);
	for (size_t n = 1; n <= THRESHOLD; n++) {
		void *p = hl_malloc(h, n);
		ck_assert_uint_eq((uintptr_t)p % 16, 0);
		ck_assert_uint_eq(hl_usable_size(h, p), (n + 15) / 16 * 16);
		ck_assert_int_eq(class_stat(h, (n - 1) / 16, "blocks_in_use"), 1);
		hl_free(h, p);
	}
	ck_assert_int_eq(class_stat(h, 1, "blocks_per_pool"), per_pool(16 << 10, 32));
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

/* The radix tree over 64-bit addresses with 1 MiB arenas: 44 key bits cut
 * into 15 + 15 + 14 (interior = (64 - 20 + 2) / 3), 8-byte pointers and
 * 8-byte bottom entries: CPython's "bytes lost to arena map" lines. */
START_TEST(arena_map_has_cpython_sizes)
{
	hl_heap_t *h = tl_heap("pools", NULL);
	hl_free(h, hl_malloc(h, 8));
	unsigned interior = (64 - 20 + 2) / 3, bot = 64 - 20 - 2 * interior;
	ck_assert_int_eq(pstat(h, "bytes_lost_arena_map_root"), 8 << interior);
	ck_assert_int_eq(pstat(h, "arena_map_mid_nodes"), 1);
	ck_assert_int_eq(pstat(h, "bytes_lost_arena_map_mid"), 8 << interior);
	ck_assert_int_eq(pstat(h, "arena_map_bot_nodes"), 1);
	ck_assert_int_eq(pstat(h, "bytes_lost_arena_map_bot"), 8 << bot);
	hl_heap_destroy(h);
}
END_TEST

/* ------------------------------------------------------------------ */
/* placement, not count                                                */

enum { MILLION = 1000000 };

static size_t fill_million(hl_heap_t *h, void **v)
{
	for (size_t i = 0; i < MILLION; i++) {
		v[i] = hl_malloc(h, 32);
		ck_assert_ptr_nonnull(v[i]);
	}
	/* 64 pools an arena, less one for each arena whose mapping was not
	 * pool-aligned: just enough arenas for the pools the blocks need */
	size_t pools_needed = (MILLION + per_pool(16 << 10, 32) - 1) / per_pool(16 << 10, 32);
	size_t arenas = (size_t)pstat(h, "arenas_allocated_current");
	size_t pools = 64 * arenas - (size_t)pstat(h, "arenas_unaligned");
	ck_assert_uint_ge(pools, pools_needed);
	ck_assert_uint_lt(pools, pools_needed + 63);
	return arenas;
}

START_TEST(every_10000th_pins_every_arena)
{
	hl_heap_t *h = tl_heap("pools", "ledger:off,debug:off");
	void **v = malloc(MILLION * sizeof *v);
	size_t arenas = fill_million(h, v);
	for (size_t i = 0; i < MILLION; i++)
		if (i % 10000)
			hl_free(h, v[i]);
	/* an arena holds 32130 or 32640 blocks, more than 10,000: each keeps a
	 * survivor */
	ck_assert_int_eq(pstat(h, "arenas_allocated_current"), arenas);
	ck_assert_int_eq(pstat(h, "arenas_reclaimed"), 0);
	ck_assert_int_eq(pstat(h, "classes.1.blocks_in_use"), MILLION / 10000);
	tl_check_clean(h);
	free(v);
	hl_heap_destroy(h);
}
END_TEST

START_TEST(first_100_let_arenas_go)
{
	hl_heap_t *h = tl_heap("pools", "ledger:off,debug:off");
	void **v = malloc(MILLION * sizeof *v);
	size_t arenas = fill_million(h, v);
	size_t unaligned = (size_t)pstat(h, "arenas_unaligned");
	for (size_t i = 100; i < MILLION; i++)
		hl_free(h, v[i]);
	/* The 100 survivors share the first pool, so arena 0 keeps all its
	 * pools but one free.  An arena that empties later moves right past
	 * every arena with fewer free pools; it passes arena 0, becomes the
	 * last usable arena and is kept (bpo-37257), only when it has more
	 * pools than arena 0: when its mapping is pool-aligned (64 pools) and
	 * arena 0's is not (63).  Every later one stops before it and is
	 * returned.  So one arena stays, or two when the kernel placed the
	 * arenas at mixed alignments (some aligned, some not). */
	size_t kept = (size_t)pstat(h, "arenas_allocated_current");
	ck_assert_int_ge(kept, 1);
	ck_assert_int_le(kept, unaligned > 0 && unaligned < arenas ? 2 : 1);
	ck_assert_int_eq(pstat(h, "arenas_reclaimed"), arenas - kept);
	ck_assert_int_eq(pstat(h, "arenas_highwater"), arenas);
	tl_check_clean(h);
	free(v);
	hl_heap_destroy(h);
}
END_TEST

/* ------------------------------------------------------------------ */
/* usable_arenas order                                                 */

/* 64 KiB arenas of 16 pools of 4 KiB; 512-byte blocks, 7 per pool. */
#define SMALL_GEOM "arena_size:64K,pool_size:4K,ledger:off,debug:off"
enum { NPOOLS = 16, PERPOOL = (4096 - HEADER) / 512, NARENAS = 3 };

static void *blk[NARENAS][NPOOLS][PERPOOL];

static void fill_arenas(hl_heap_t *h)
{
	for (int a = 0; a < NARENAS; a++)
		for (int p = 0; p < NPOOLS; p++)
			for (int b = 0; b < PERPOOL; b++)
				blk[a][p][b] = hl_malloc(h, 512);
	ck_assert_int_eq(pstat(h, "arenas_allocated_current"), NARENAS);
	ck_assert_int_eq(pstat(h, "usable_arenas_count"), 0);   /* all full */
}

static void empty_pools(hl_heap_t *h, int a, int from, int n)
{
	for (int p = from; p < from + n; p++)
		for (int b = 0; b < PERPOOL; b++) {
			hl_free(h, blk[a][p][b]);
			blk[a][p][b] = NULL;
		}
}

static void expect_order(hl_heap_t *h, const int *arena, const int *nfree, int n)
{
	ck_assert_int_eq(pstat(h, "usable_arenas_count"), n);
	for (int i = 0; i < n; i++) {
		char path[64];
		snprintf(path, sizeof path, "usable_arenas.%d.arena", i);
		ck_assert_int_eq(pstat(h, path), arena[i]);
		snprintf(path, sizeof path, "usable_arenas.%d.nfreepools", i);
		ck_assert_int_eq(pstat(h, path), nfree[i]);
	}
}

static int arena_of(void *p)
{
	for (int a = 0; a < NARENAS; a++) {
		/* the arena's first pool; its mapping lies where mmap put it */
		uintptr_t base = (uintptr_t)blk[a][0][0] & ~(uintptr_t)(4096 - 1);
		if ((uintptr_t)p - base < 64 * 1024)
			return a;
	}
	return -1;
}

START_TEST(usable_arenas_most_used_first)
{
	hl_heap_t *h = tl_heap("pools", SMALL_GEOM);
	fill_arenas(h);
	empty_pools(h, 0, 0, 5);
	empty_pools(h, 1, 3, 2);
	empty_pools(h, 2, 4, 9);
	expect_order(h, (int[]){ 1, 0, 2 }, (int[]){ 2, 5, 9 }, 3);
	tl_check_clean(h);
	/* a pool of a new class comes from the head: arena 1, the fullest */
	void *q = hl_malloc(h, 16);
	ck_assert_int_eq(arena_of(q), 1);
	expect_order(h, (int[]){ 1, 0, 2 }, (int[]){ 1, 5, 9 }, 3);
	/* arena 0 overtakes arena 2 in emptiness: it slides right */
	empty_pools(h, 0, 5, 6);
	expect_order(h, (int[]){ 1, 2, 0 }, (int[]){ 1, 9, 11 }, 3);
	/* one block back in a full pool does not change the arena's count */
	hl_free(h, blk[2][0][0]);
	blk[2][0][0] = NULL;
	expect_order(h, (int[]){ 1, 2, 0 }, (int[]){ 1, 9, 11 }, 3);
	tl_check_clean(h);
	hl_free(h, q);
	hl_heap_destroy(h);
}
END_TEST

START_TEST(arena_returned_only_when_all_pools_free)
{
	hl_heap_t *h = tl_heap("pools", SMALL_GEOM);
	fill_arenas(h);
	empty_pools(h, 0, 0, NPOOLS - 1);
	for (int b = 0; b < PERPOOL - 1; b++)
		hl_free(h, blk[0][NPOOLS - 1][b]);
	ck_assert_int_eq(pstat(h, "arenas_reclaimed"), 0);     /* one block pins it */
	double reserved = tl_stat(h, "reserved_bytes");
	hl_free(h, blk[0][NPOOLS - 1][PERPOOL - 1]);
	/* arena 0 is wholly free and another arena is usable after it?  No: it
	 * is the only usable arena, so it is kept (bpo-37257) */
	ck_assert_int_eq(pstat(h, "arenas_reclaimed"), 0);
	empty_pools(h, 1, 0, 1);         /* arena 1 becomes usable, sorts first */
	empty_pools(h, 2, 0, NPOOLS);    /* wholly free, not last: returned */
	ck_assert_int_eq(pstat(h, "arenas_reclaimed"), 1);
	ck_assert_int_eq(pstat(h, "arenas_allocated_current"), NARENAS - 1);
	ck_assert_double_eq(tl_stat(h, "reserved_bytes"), reserved - 64 * 1024);
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

/* ------------------------------------------------------------------ */
/* the old geometry                                                    */

/* Fills exactly one arena with @p per_arena blocks of @p n bytes, then
 * one more block opens a second arena; returns the per_arena + 1 blocks. */
static void **fill_arena_and_spill(hl_heap_t *h, size_t per_arena, size_t n)
{
	void **v = malloc((per_arena + 1) * sizeof *v);
	for (size_t i = 0; i < per_arena; i++)
		v[i] = hl_malloc(h, n);
	ck_assert_int_eq(pstat(h, "arenas_allocated_current"), 1);
	v[per_arena] = hl_malloc(h, n);
	ck_assert_int_eq(pstat(h, "arenas_allocated_current"), 2);
	tl_check_clean(h);
	return v;
}

START_TEST(old_geometry_gives_old_numbers)
{
	hl_heap_t *h = tl_heap("pools", "arena_size:256K,pool_size:4K,alignment:8,ledger:off,debug:off");
	ck_assert_int_eq(pstat(h, "size_classes"), THRESHOLD / 8);
	ck_assert_int_eq(pstat(h, "pools_per_arena"), (256 << 10) / (4 << 10));
	ck_assert_int_eq(pstat(h, "arena_size"), 256 << 10);
	ck_assert_int_eq(pstat(h, "pool_size"), 4 << 10);
	for (size_t n = 1; n <= THRESHOLD; n += 7) {
		void *p = hl_malloc(h, n);
		ck_assert_uint_eq(hl_usable_size(h, p), (n + 7) / 8 * 8);
		ck_assert_uint_eq((uintptr_t)p % 16, 0);
		ck_assert_int_eq(class_stat(h, (n - 1) / 8, "blocks_in_use"), 1);
		hl_free(h, p);
	}
	/* 16-byte blocks pack as in CPython: (4096 - 48) / 16 per pool */
	size_t per_arena = 64 * per_pool(4096, 16);
	ck_assert_int_eq(class_stat(h, 1, "blocks_per_pool"), per_pool(4096, 16));
	void **v = fill_arena_and_spill(h, per_arena, 16);
	for (size_t i = 0; i <= per_arena; i++)
		hl_free(h, v[i]);
	free(v);
	hl_heap_destroy(h);
}
END_TEST

/* CPython's new_arena maps an arena where mmap puts it (page-aligned) and
 * rounds its base up to a pool boundary, losing one pool when it was not
 * aligned; arenas:aligned asks for arena-aligned mappings and keeps all 64.
 * Whether the mapping was aligned is read from the page source (the first
 * block's offset in its region), not from the policy. */
START_TEST(arena_loses_a_pool_when_mmap_is_not_pool_aligned)
{
	hl_heap_t *h = tl_heap("pools", _i ? "arenas:aligned,ledger:off,debug:off" : "ledger:off,debug:off");
	void *first = hl_malloc(h, THRESHOLD);
	size_t off = 0;
	ck_assert_int_ge(hl_os_locate(hl_heap_os(h), first, &off), 0);
	bool lost = off != HEADER;       /* the pool did not start the mapping */
	if (_i)
		ck_assert(!lost);
	ck_assert_int_eq(pstat(h, "arena_pools"), 64 - lost);
	size_t per_arena = (64 - lost) * per_pool(16 << 10, THRESHOLD);
	void **v = fill_arena_and_spill(h, per_arena - 1, THRESHOLD);
	ck_assert_int_eq(pstat(h, "bytes_lost_arena_alignment") >= (lost ? 16 << 10 : 0), 1);
	for (size_t i = 0; i < per_arena; i++)
		hl_free(h, v[i]);
	hl_free(h, first);
	free(v);
	hl_heap_destroy(h);
}
END_TEST

START_TEST(bad_geometry_rejected)
{
	ck_assert_ptr_null(hl_heap_new("pools", "arena_size:100K"));
	ck_assert_ptr_null(hl_heap_new("pools", "pool_size:128K,arena_size:64K"));
	ck_assert_ptr_null(hl_heap_new("pools", "alignment:4"));
}
END_TEST

/* ------------------------------------------------------------------ */
/* realloc, memalign, fallback                                         */

START_TEST(realloc_follows_pymalloc)
{
	hl_heap_t *h = tl_heap("pools", NULL);
	char *p = hl_malloc(h, 100);                 /* 112-byte class */
	tl_fill(p, 100, 3);
	ck_assert_ptr_eq(hl_realloc(h, p, 112), p);  /* grows within class */
	ck_assert_ptr_eq(hl_realloc(h, p, 85), p);   /* 4*85 > 3*112: stays */
	char *q = hl_realloc(h, p, 80);              /* shrinks by > 1/4: moves */
	ck_assert_ptr_ne(q, p);
	ck_assert(tl_intact(q, 80, 3));
	char *r = hl_realloc(h, q, 2000);            /* to the fallback */
	ck_assert(tl_intact(r, 80, 3));
	ck_assert_int_eq(pstat(h, "fallback_mallocs"), 1);
	double small = pstat(h, "small_mallocs");
	char *s = hl_realloc(h, r, 16);              /* stays with the fallback */
	ck_assert(tl_intact(s, 16, 3));
	ck_assert_int_eq(pstat(h, "small_mallocs"), small);
	void *m = hl_memalign(h, 64, 32);            /* memalign beyond 16 */
	ck_assert_uint_eq((uintptr_t)m % 64, 0);
	ck_assert_int_eq(pstat(h, "small_mallocs"), small);
	hl_free(h, m);
	hl_free(h, s);
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

START_TEST(fallback_option)
{
	if (!tl_has_policy("firstfit"))
		return;
	hl_heap_t *h = tl_heap("pools", "fallback:firstfit");
	void *p = hl_malloc(h, 4000);
	ck_assert(hl_owns(h, p));
	ck_assert_int_eq(pstat(h, "fallback_mallocs"), 1);
	hl_free(h, p);
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

/* A hosted policy finds NULL in its policy_tls (the host's tls_empty),
 * where on its own heap it finds its empty record: sharded, slab and
 * percpu's front:thread give one, and must take both for "none yet" (core/policy.h).
 * Each thread's first request above 512 bytes reaches the fallback with
 * NULL there. */
static void *hosted_thread(void *arg)
{
	hl_heap_t *h = arg;
	for (int i = 0; i < 64; i++) {
		/* above pools' 512, within sharded's direct table (1 KiB) */
		void *p = hl_malloc(h, 520 + (size_t)i * 8);
		ck_assert_ptr_nonnull(p);
		hl_free(h, p);
	}
	return NULL;
}

START_TEST(hosted_policy_starts_from_null)
{
	static const char *const policies[] = { "sharded", "percpu", "slab" };
	static const char *const confs[] = { "fallback:sharded", "fallback:percpu,fallback_conf:front=thread",
					     "fallback:slab" };
	for (size_t c = 0; c < sizeof confs / sizeof *confs; c++) {
		if (!tl_has_policy(policies[c]))
			continue;
		hl_heap_t *h = tl_heap("pools", confs[c]);
		pthread_t th[2];
		for (int i = 0; i < 2; i++)
			ck_assert_int_eq(pthread_create(&th[i], NULL, hosted_thread, h), 0);
		hosted_thread(h);
		for (int i = 0; i < 2; i++)
			pthread_join(th[i], NULL);
		ck_assert_int_eq(pstat(h, "fallback_mallocs"), 3 * 64);
		tl_check_clean(h);
		hl_heap_destroy(h);
	}
}
END_TEST

/* ------------------------------------------------------------------ */
/* looking inside                                                      */

struct census { size_t live, live_bytes; };

static int count_live(const hl_block_t *b, void *arg)
{
	struct census *c = arg;
	if (b->state == HL_BLOCK_LIVE) {
		c->live++;
		c->live_bytes += b->size;
	}
	return 0;
}

START_TEST(walker_sees_both_sides)
{
	hl_heap_t *h = tl_heap("pools", NULL);
	void *v[50];
	for (int i = 0; i < 50; i++)
		v[i] = hl_malloc(h, i % 2 ? 40 : 1000);
	for (int i = 0; i < 50; i += 5)
		hl_free(h, v[i]);
	struct census c = { 0, 0 };
	ck_assert_int_eq(hl_walk(h, count_live, &c), 0);
	ck_assert_uint_eq(c.live, 40);
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

START_TEST(checker_catches_bad_count)
{
	hl_heap_t *h = tl_heap("pools", NULL);
	void *p = hl_malloc(h, 64), *q = hl_malloc(h, 64);
	uint32_t *count = (uint32_t *)((uintptr_t)p & ~(uintptr_t)(16 * 1024 - 1));
	(*count)++;
	ck_assert_int_gt(hl_check(h, NULL), 0);
	(*count)--;
	tl_check_clean(h);
	hl_free(h, p);
	hl_free(h, q);
	hl_heap_destroy(h);
}
END_TEST

START_TEST(snapshot_draws_lists)
{
	hl_heap_t *h = tl_heap("pools", NULL);
	void *a = hl_malloc(h, 24), *b = hl_malloc(h, 700);
	FILE *f = tmpfile();
	ck_assert_int_eq(hl_snapshot_dot(h, f, "pools"), 0);
	long n = ftell(f);
	char *text = calloc(1, (size_t)n + 1);
	rewind(f);
	ck_assert_int_eq(fread(text, 1, (size_t)n, f), (size_t)n);
	ck_assert_ptr_nonnull(strstr(text, "usable_arenas"));
	ck_assert_ptr_nonnull(strstr(text, "usedpools[1] 32B"));
	ck_assert_ptr_nonnull(strstr(text, "fallback: "));
	ck_assert_ptr_nonnull(strstr(text, "blocks of pool 0"));
	free(text);
	fclose(f);
	hl_free(h, a);
	hl_free(h, b);
	hl_heap_destroy(h);
}
END_TEST

/* fallback_conf reaches the fallback: bins built with tcache_count=0 and a
 * 64 KiB mmap threshold says so, and keeps no freed fallback block in a
 * tcache (with its default of 16 it would keep this one). */
START_TEST(fallback_conf_reaches_the_fallback)
{
	if (!tl_has_policy("bins"))
		return;
	hl_heap_t *h = tl_heap("pools", "fallback:bins,fallback_conf:tcache_count=0;mmap_threshold=64K,"
				 "ledger:off");
	ck_assert_int_eq(pstat(h, "fallback.tcache_count"), 0);
	ck_assert_int_eq(pstat(h, "fallback.mmap_threshold"), 64 << 10);
	void *keep = hl_malloc(h, 1000);
	void *p = hl_malloc(h, 1000);
	hl_free(h, p);
	ck_assert_int_eq(pstat(h, "fallback.arena.0.cached_bytes"), 0);
	hl_free(h, keep);
	tl_check_clean(h);
	hl_heap_destroy(h);
	/* the same block with bins' defaults stays in the tcache */
	h = tl_heap("pools", "fallback:bins,ledger:off");
	keep = hl_malloc(h, 1000);
	p = hl_malloc(h, 1000);
	hl_free(h, p);
	ck_assert_int_gt(pstat(h, "fallback.arena.0.cached_bytes"), 0);
	hl_free(h, keep);
	hl_heap_destroy(h);
}
END_TEST

/* A fallback that cannot serve is refused with one line naming the
 * choices, which are the registry's policies but pools and bump. */
START_TEST(unknown_fallback_lists_the_registry)
{
	ck_assert_ptr_null(hl_heap_new("pools", "fallback:nosuch"));
	const char *err = hl_last_error();
	ck_assert_ptr_nonnull(strstr(err, "fallback 'nosuch'"));
	const char *choices = strstr(err, "choices: ");
	ck_assert_ptr_nonnull(choices);
	for (size_t i = 0; i < hl_policy_count(); i++) {
		const char *name = hl_policy_name(i);
		bool refused = !strcmp(name, "pools") || !strcmp(name, "bump");
		char word[40];
		snprintf(word, sizeof word, " %s", name);
		size_t n = strlen(word);
		const char *at = strstr(choices, word);
		bool listed = at && (at[n] == ',' || at[n] == 0);
		ck_assert_msg(listed != refused, "%s %s in: %s", name, refused ? "listed" : "missing", err);
	}
	if (tl_has_policy("bump")) {
		ck_assert_ptr_null(hl_heap_new("pools", "fallback:bump"));
		ck_assert_ptr_nonnull(strstr(hl_last_error(), "region allocator"));
	}
	ck_assert_ptr_null(hl_heap_new("pools", "fallback:pools"));
	ck_assert_ptr_nonnull(strstr(hl_last_error(), "the host itself"));
	if (tl_has_policy("bins")) {
		ck_assert_ptr_null(hl_heap_new("pools", "fallback_conf:nope=1"));
		ck_assert_ptr_nonnull(strstr(hl_last_error(), "fallback_conf (for bins): unknown option 'nope'"));
	}
}
END_TEST

/* ------------------------------------------------------------------ */
/* the fallback's view of a thread                                     */

/* pools keeps no per-thread word: the fallback gets the core's record of
 * the calling thread, the very record its checker finds again through
 * hl_thread_get().  A private record handed to the fallback instead made
 * the bins checker read pools' word as a tcache and fail at the first
 * check of book/traces/reuse.rep (1 MiB allocated and freed 8 times). */
START_TEST(fallback_checker_after_big_blocks)
{
	if (!tl_has_policy("bins"))
		return;
	hl_heap_t *h = tl_heap("pools", "fallback:bins,debug:off");
	for (int i = 0; i < 8; i++) {
		void *p = hl_malloc(h, 1 << 20);
		ck_assert_ptr_nonnull(p);
		tl_check_clean(h);
		hl_free(h, p);
		tl_check_clean(h);
	}
	ck_assert_int_eq(pstat(h, "fallback_mallocs"), 8);
	hl_heap_destroy(h);
}
END_TEST

static int count_cached(const hl_block_t *b, void *arg)
{
	*(size_t *)arg += b->state == HL_BLOCK_CACHED;
	return 0;
}

static size_t cached_blocks(hl_heap_t *h)
{
	size_t n = 0;
	ck_assert_int_eq(hl_walk(h, count_cached, &n), 0);
	return n;
}

/* A 600-byte block freed through pools lands in the calling thread's bins
 * tcache (chunk 600 + 8 rounded up to 16 = 608 bytes, tcache bin
 * (608 - 32) / 16 = 36), and the checker run by that thread looks at
 * exactly that cache: a smashed key in the cached block is reported. */
START_TEST(fallback_checker_sees_callers_tcache)
{
	if (!tl_has_policy("bins"))
		return;
	hl_heap_t *h = tl_heap("pools", "fallback:bins,debug:off,ledger:off");
	uint64_t *p = hl_malloc(h, 600);
	hl_free(h, p);
	ck_assert_uint_eq(cached_blocks(h), 1);
	tl_check_clean(h);
	p[1] ^= 1;                  /* the tcache key: second payload word */
	char text[512] = "";
	FILE *f = fmemopen(text, sizeof text - 1, "w");
	ck_assert_int_gt(hl_check(h, f), 0);
	fclose(f);
	ck_assert_msg(strstr(text, "tcache bin 36: bad entry") != NULL, "report: %s", text);
	p[1] ^= 1;
	tl_check_clean(h);
	ck_assert_ptr_eq(hl_malloc(h, 600), p);     /* served from the tcache */
	hl_free(h, p);
	hl_heap_destroy(h);
}
END_TEST

static void *cache_four(void *arg)
{
	hl_heap_t *h = arg;
	void *v[4];
	for (int i = 0; i < 4; i++)
		v[i] = hl_malloc(h, 600 + 16 * i);
	for (int i = 0; i < 4; i++)
		hl_free(h, v[i]);
	return (void *)(hl_check(h, NULL) == 0 ? cached_blocks(h) : 0);
}

/* A thread caches four fallback blocks (its own checker sees them clean);
 * its exit reaches the fallback with the record the fallback filled in, so
 * that tcache is drained back to the arena and nothing stays cached. */
START_TEST(fallback_tcache_drained_at_thread_exit)
{
	if (!tl_has_policy("bins"))
		return;
	hl_heap_t *h = tl_heap("pools", "fallback:bins,debug:off,ledger:off");
	pthread_t t;
	void *cached = NULL;
	pthread_create(&t, NULL, cache_four, h);
	pthread_join(t, &cached);
	ck_assert_uint_eq((uintptr_t)cached, 4);     /* four sizes, four bins */
	ck_assert_uint_eq(cached_blocks(h), 0);
	ck_assert_int_eq(pstat(h, "fallback_frees"), 4);
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

/* ------------------------------------------------------------------ */
/* threads                                                             */

static void *hammer(void *arg)
{
	hl_heap_t *h = arg;
	void *v[64] = { 0 };
	unsigned x = (unsigned)(uintptr_t)&v;
	for (int i = 0; i < 20000; i++) {
		x = x * 1103515245u + 12345u;
		int k = (int)(x >> 8) % 64;
		if (v[k])
			hl_free(h, v[k]);
		v[k] = hl_malloc(h, 1 + (x >> 16) % 700);
		ck_assert_ptr_nonnull(v[k]);
	}
	for (int k = 0; k < 64; k++)
		hl_free(h, v[k]);
	return NULL;
}

START_TEST(threads_share_one_lock)
{
	hl_heap_t *h = tl_heap("pools", "ledger:off,debug:off");
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, hammer, h);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	tl_check_clean(h);
	ck_assert_int_eq(pstat(h, "small_mallocs"), pstat(h, "small_frees"));
	ck_assert_int_eq(pstat(h, "fallback_mallocs"), pstat(h, "fallback_frees"));
	hl_heap_destroy(h);
}
END_TEST

/* The lock is biased to one thread (as the GIL stays with the running
 * thread); another thread arriving takes the bias over, and after
 * lock_bias_moves_max hand-overs the heap gives the bias up for the plain
 * spinlock.  The heap stays consistent across every change. */
START_TEST(bias_moves_then_gives_up)
{
	hl_heap_t *h = tl_heap("pools", "ledger:off,debug:off");
	void *p = hl_malloc(h, 32);
	if (pstat(h, "lock_bias_enabled") == 0)
		return;                  /* no membarrier(2) here: plain spinlock */
	ck_assert_int_eq(pstat(h, "lock_bias_moves"), 0);
	pthread_t t;
	pthread_create(&t, NULL, tl_thread_touch, h);
	pthread_join(t, NULL);
	ck_assert_int_eq(pstat(h, "lock_bias_moves"), 1);   /* main -> worker */
	int max = (int)pstat(h, "lock_bias_moves_max");
	hl_free(h, p);   /* the stats reader revoked it: a claim, not a move */
	/* ping-pong: each round moves the bias to a worker and back to main
	 * (a new thread may get the old one's record, so main interleaves) */
	int rounds = max / 2 + 1;
	for (int i = 0; i < rounds; i++) {
		pthread_create(&t, NULL, tl_thread_touch, h);
		pthread_join(t, NULL);
		tl_thread_touch(h);
	}
	ck_assert_int_eq(pstat(h, "lock_bias_enabled"), 0);
	ck_assert_int_eq(pstat(h, "lock_bias_moves"), max + 1);
	ck_assert_int_eq(pstat(h, "small_mallocs"), 2 + 2 * rounds);
	ck_assert_int_eq(pstat(h, "small_frees"), 2 + 2 * rounds);
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

/* fork(): the child can go on allocating from the same heap. */
START_TEST(fork_child_allocates)
{
	hl_heap_t *h = tl_heap("pools", NULL);
	void *p = hl_malloc(h, 100), *q = hl_malloc(h, 1000);
	pid_t pid = fork();
	if (pid == 0) {
		void *a = hl_malloc(h, 100), *b = hl_malloc(h, 2000);
		hl_free(h, p);
		hl_free(h, q);
		hl_free(h, a);
		hl_free(h, b);
		_exit(hl_check(h, NULL) == 0 && a && b ? 0 : 1);
	}
	int st;
	waitpid(pid, &st, 0);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	hl_free(h, p);
	hl_free(h, q);
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

/* ------------------------------------------------------------------ */
/* where the pool headers live (headers:inline, CPython's, or :table)  */

enum { ARENA = 1 << 20, POOL = 16 << 10, SLOT = 64 };

static uintptr_t arena_base(const void *p) { return (uintptr_t)p & ~(uintptr_t)(ARENA - 1); }
static uintptr_t pool_base(const void *p) { return (uintptr_t)p & ~(uintptr_t)(POOL - 1); }
static size_t pool_number(const void *p) { return (pool_base(p) - arena_base(p)) / POOL; }

/* The live-block count is the header's first word (ref.count): inline it
 * sits at the pool's start; in the table, at arena + 64 * pool number,
 * and the pool's own first 48 bytes stay zero. */
START_TEST(header_count_where_the_layout_puts_it)
{
	for (int table = 0; table <= 1; table++) {
		/* both layouts on arena-aligned arenas (headers:table implies it) */
		hl_heap_t *h = tl_heap("pools", table ? "headers:table" : "arenas:aligned");
		void *v[5];
		for (int i = 0; i < 5; i++)
			v[i] = hl_malloc(h, 100);
		void *w = hl_malloc(h, 300);           /* another class, another pool */
		ck_assert_uint_ne(pool_base(v[0]), pool_base(w));
		const uint32_t *inl = (const uint32_t *)pool_base(v[0]);
		const uint32_t *slot = (const uint32_t *)(arena_base(v[0]) + SLOT * pool_number(v[0]));
		if (table) {
			ck_assert_uint_eq(pool_number(v[0]), 1);       /* pool 0 is the table */
			ck_assert_uint_eq(*slot, 5);
			ck_assert_uint_eq(*(const uint32_t *)(arena_base(w) + SLOT * pool_number(w)), 1);
			for (int b = 0; b < HEADER / 4; b++)
				ck_assert_uint_eq(inl[b], 0);
		} else {
			ck_assert_uint_eq(pool_number(v[0]), 0);
			ck_assert_uint_eq(*inl, 5);
			ck_assert_uint_eq(*(const uint32_t *)pool_base(w), 1);
		}
		hl_free(h, v[4]);
		ck_assert_uint_eq(table ? *slot : *inl, 4);
		/* blocks start after 48 bytes in both layouts */
		ck_assert_uint_eq((uintptr_t)v[0] - pool_base(v[0]), HEADER);
		tl_check_clean(h);
		for (int i = 0; i < 4; i++)
			hl_free(h, v[i]);
		hl_free(h, w);
		hl_heap_destroy(h);
	}
}
END_TEST

/* The layouts differ only in where headers live: the same program gets the
 * same block (pool by pool, offset by offset) from both, one pool further
 * along in the table layout; capacities and list orders are shared. */
START_TEST(table_layout_hands_out_the_same_blocks)
{
	hl_heap_t *in = tl_heap("pools", "arenas:aligned,ledger:off,debug:off");
	hl_heap_t *tb = tl_heap("pools", "headers:table,ledger:off,debug:off");
	ck_assert_int_eq(pstat(in, "pools_per_arena"), ARENA / POOL);
	ck_assert_int_eq(pstat(tb, "pools_per_arena"), ARENA / POOL - 1);
	for (unsigned c = 0; c < THRESHOLD / 16; c++)
		ck_assert_int_eq(class_stat(in, c, "blocks_per_pool"), class_stat(tb, c, "blocks_per_pool"));
	enum { RING = 800, OPS = 40000 };
	void *a[RING] = { 0 }, *b[RING] = { 0 };
	uint64_t s = 0x2545f4914f6cdd1dull;
	for (int op = 0; op < OPS; op++) {
		int k = op % RING;
		hl_free(in, a[k]);
		hl_free(tb, b[k]);
		s ^= s << 13, s ^= s >> 7, s ^= s << 17;
		size_t n = 1 + s % THRESHOLD;
		a[k] = hl_malloc(in, n);
		b[k] = hl_malloc(tb, n);
		ck_assert_uint_eq((uintptr_t)a[k] & (POOL - 1), (uintptr_t)b[k] & (POOL - 1));
		ck_assert_uint_eq(pool_number(a[k]) + 1, pool_number(b[k]));
	}
	ck_assert_int_eq(pstat(in, "arenas_allocated_current"), 1);
	ck_assert_int_eq(pstat(tb, "arenas_allocated_current"), 1);
	ck_assert_int_eq(pstat(tb, "bytes_lost_header_table"), POOL);
	tl_check_clean(in);
	tl_check_clean(tb);
	hl_heap_destroy(in);
	hl_heap_destroy(tb);
}
END_TEST

/* In the table layout an arena still goes back only when wholly free,
 * and a full arena holds 63 pools' worth of blocks. */
START_TEST(table_layout_arena_holds_63_pools)
{
	hl_heap_t *h = tl_heap("pools", "headers:table,ledger:off,debug:off");
	size_t per_arena = 63 * per_pool(POOL, 512);
	void **v = fill_arena_and_spill(h, per_arena, 512);
	for (size_t i = 0; i + 1 < per_arena; i++)
		hl_free(h, v[i]);
	hl_free(h, v[per_arena]);           /* arena 1 is free but the last usable one */
	ck_assert_int_eq(pstat(h, "arenas_reclaimed"), 0);
	hl_free(h, v[per_arena - 1]);       /* arena 0 wholly free, arena 1 listed after it */
	ck_assert_int_eq(pstat(h, "arenas_reclaimed"), 1);
	tl_check_clean(h);
	free(v);
	hl_heap_destroy(h);
}
END_TEST

/* ------------------------------------------------------------------ */
/* misuse                                                              */

/* ledger:off so the policy, not the core's ledger, meets the bad pointer */
static void do_double_free(const void *unused)
{
	hl_heap_t *h = hl_heap_new("pools", "ledger:off,debug:off");
	void *p = hl_malloc(h, 48);
	hl_malloc(h, 48);                 /* keeps the pool in use */
	hl_free(h, p);
	hl_free(h, p);
}

static void do_double_free_empty(const void *unused)
{
	hl_heap_t *h = hl_heap_new("pools", "debug:off"); /* pools' own check */
	void *p = hl_malloc(h, 48);
	hl_free(h, p);
	hl_free(h, p);
}

static void do_interior_free(const void *unused)
{
	hl_heap_t *h = hl_heap_new("pools", "debug:on,ledger:off");
	char *p = hl_malloc(h, 48);
	hl_malloc(h, 48);
	hl_free(h, p + 16);
}

static void do_table_free(const void *unused)
{
	hl_heap_t *h = hl_heap_new("pools", "headers:table,ledger:off,debug:off");
	char *p = hl_malloc(h, 48);
	hl_free(h, (void *)(((uintptr_t)p & ~(uintptr_t)(ARENA - 1)) + 5 * SLOT + 16));
}

static void do_empty_pool_free(const void *unused)
{
	hl_heap_t *h = hl_heap_new("pools", "ledger:off,debug:off");
	char *p = hl_malloc(h, 48);
	hl_malloc(h, 48);
	hl_free(h, p + 16 * 1024 + 64);   /* inside a never-carved pool */
}

START_TEST(misuse_double_free) { tl_expect_abort(do_double_free, NULL, "heaplab: pools: double free"); }
END_TEST
START_TEST(misuse_double_free_ledger)
{
	tl_expect_abort(do_double_free_empty, NULL, "heaplab: pools: double free (its pool is already empty)");
}
END_TEST
START_TEST(misuse_interior_free)
{
	/* debug:on: the core's guard knows the live blocks and names it first */
	tl_expect_abort(do_interior_free, NULL,
			"heaplab: pools: free of an address inside the heap that is not the start of a live block");
}
END_TEST
START_TEST(misuse_free_inside_header_table)
{
	tl_expect_abort(do_table_free, NULL, "heaplab: pools: free of a pointer pymalloc did not hand out");
}
END_TEST
START_TEST(misuse_foreign_free)
{
	tl_expect_abort(do_empty_pool_free, NULL, "heaplab: pools: free of a pointer pymalloc did not hand out");
}
END_TEST

/* --- decision events: each path reports its event exactly when the
 * statistic that counts the path moves (tests/unit/testlib_events.h) ----------- */

static const char *const pools_keys[] = {
	"policy_stats.small_mallocs", "policy_stats.small_frees", "policy_stats.fallback_mallocs",
	"policy_stats.fallback_frees", "policy_stats.arenas_allocated_total", "policy_stats.arenas_reclaimed",
	NULL,
};

START_TEST(pools_events_follow_the_counters)
{
	TL_SKIP_UNLESS("pools");
	tl_events_run_t r;
	hl_heap_t *h = tl_run_begin(&r, "pools", "", pools_keys);
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
	tl_run_measure(&r);
	ck_assert_double_eq(tl_n_of(&r.t, HL_EV_LIST_POP, NULL) + tl_n_of(&r.t, HL_EV_NEW, "pool first"),
			    tl_grew(&r.a, &r.b, "policy_stats.small_mallocs"));
	tl_expect_count(&r, HL_EV_LIST_PUSH, NULL, "policy_stats.small_frees");
	tl_expect_count(&r, HL_EV_HANDOFF, "the fallback allocator (above", "policy_stats.fallback_mallocs");
	tl_expect_count(&r, HL_EV_HANDOFF, "the fallback allocator (not", "policy_stats.fallback_frees");
	tl_expect_count(&r, HL_EV_NEW, "arena", "policy_stats.arenas_allocated_total");
	tl_expect_count(&r, HL_EV_RETIRE, "arena", "policy_stats.arenas_reclaimed");
	static const int paths[] = { HL_EV_MOVE, HL_EV_MOVE, HL_EV_MOVE, HL_EV_LOOK, HL_EV_LOOK, HL_EV_RETIRE, -1 };
	static const char *const whats[] = { "pool full", "pool was full", "pool empty",
					     "arena at the head of usable_arenas (most used first): a cached",
					     "arena at the head of usable_arenas (most used first): a never", "arena" };
	tl_expect_paths(&r, paths, whats);
	tl_run_end(&r);
}
END_TEST

static Suite *pools_suite(void)
{
	Suite *s = suite_create("pools");
	TCase *tc = tcase_create("model");
	tcase_add_test(tc, pools_events_follow_the_counters);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, threshold_512_pool_513_fallback);
	tcase_add_test(tc, calloc_large_as_the_fallback);
	tcase_add_test(tc, classes_16_bytes_apart);
	tcase_add_test(tc, arena_map_has_cpython_sizes);
	tcase_add_test(tc, every_10000th_pins_every_arena);
	tcase_add_test(tc, first_100_let_arenas_go);
	tcase_add_test(tc, usable_arenas_most_used_first);
	tcase_add_test(tc, arena_returned_only_when_all_pools_free);
	tcase_add_test(tc, old_geometry_gives_old_numbers);
	tcase_add_test(tc, bad_geometry_rejected);
	tcase_add_test(tc, realloc_follows_pymalloc);
	tcase_add_test(tc, fallback_option);
	tcase_add_test(tc, hosted_policy_starts_from_null);
	tcase_add_test(tc, fallback_conf_reaches_the_fallback);
	tcase_add_test(tc, unknown_fallback_lists_the_registry);
	tcase_add_test(tc, walker_sees_both_sides);
	tcase_add_test(tc, checker_catches_bad_count);
	tcase_add_test(tc, snapshot_draws_lists);
	tcase_add_test(tc, fallback_checker_after_big_blocks);
	tcase_add_test(tc, fallback_checker_sees_callers_tcache);
	tcase_add_test(tc, fallback_tcache_drained_at_thread_exit);
	tcase_add_test(tc, threads_share_one_lock);
	tcase_add_test(tc, bias_moves_then_gives_up);
	tcase_add_test(tc, fork_child_allocates);
	tcase_add_test(tc, header_count_where_the_layout_puts_it);
	tcase_add_test(tc, table_layout_hands_out_the_same_blocks);
	tcase_add_test(tc, table_layout_arena_holds_63_pools);
	tcase_add_loop_test(tc, arena_loses_a_pool_when_mmap_is_not_pool_aligned, 0, 2);
	suite_add_tcase(s, tc);
	TCase *mis = tcase_create("misuse");
	tcase_add_test(mis, misuse_double_free);
	tcase_add_test(mis, misuse_double_free_ledger);
	tcase_add_test(mis, misuse_interior_free);
	tcase_add_test(mis, misuse_foreign_free);
	tcase_add_test(mis, misuse_free_inside_header_table);
	suite_add_tcase(s, mis);
	return s;
}

TL_MAIN(pools_suite)
