/*
 * test_bins.c -- the claims of policy `bins` (glibc ptmalloc model), each
 * a test that could fail: chunk sizes and usable bytes, immediate
 * coalescing (and the fastbin layer that delays it), the tcache's LIFO
 * depth, trimming at the top and malloc_trim inside a pinned heap, the
 * self-tuning mmap threshold, arenas per thread with their cap, and the
 * double-free abort.  Expected values come from the model's rules
 * (chunk = request + 8 rounded to 16, at least 32 ...), never from output.
 */
#include "testlib_events.h"
#include "policy.h"             /* hl_thread_get: the core's record of a thread */
#include "../trace/trace.h"            /* hl_trace_parse: a trace from a string */
#include <gnu/libc-version.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* --- the model's rules, restated for the tests ---------------------------- */
enum { MINSIZE = 32, OVERHEAD = 8, TC_MAX_USABLE = 1032 };
static const size_t TOP_PAD = 128 * 1024;

/** Chunk size glibc gives a request (the core turns 0 into 1). */
static size_t chunk_of(size_t n)
{
	if (n == 0)
		n = 1;
	size_t c = (n + OVERHEAD + 15) / 16 * 16;
	return c < MINSIZE ? MINSIZE : c;
}

static double pstat(hl_heap_t *h, const char *name)
{
	char path[128];
	snprintf(path, sizeof path, "policy_stats.%s", name);
	return tl_stat(h, path);
}

/* --- walker helpers --------------------------------------------------------- */
struct find { const void *addr; size_t size; int state; };

static int find_at(const hl_block_t *b, void *arg)
{
	struct find *f = arg;
	if (b->addr == f->addr) {
		f->size = b->size;
		f->state = (int)b->state;
		return 1;
	}
	return 0;
}

/** State and size of the block the walker reports at @p addr (-1 if none). */
static struct find block_at(hl_heap_t *h, const void *addr)
{
	struct find f = { addr, 0, -1 };
	hl_walk(h, find_at, &f);
	return f;
}

static const char *chunk_start(const void *p) { return (const char *)p - 16; }

/* --- sizes ---------------------------------------------------------------------- */

START_TEST(usable_sizes_follow_the_chunk_rule)
{
	static const size_t req[] = { 0, 1, 24, 25, 40, 41, 1000, 1032, 1033 };
	hl_heap_t *h = tl_heap("bins", "tcache_count:0");
	char *prev = NULL;
	size_t prev_chunk = 0;
	for (size_t i = 0; i < sizeof req / sizeof req[0]; i++) {
		char *p = hl_malloc(h, req[i]);
		ck_assert_ptr_nonnull(p);
		ck_assert_uint_eq((uintptr_t)p % 16, 0);
		ck_assert_uint_eq(hl_usable_size(h, p), chunk_of(req[i]) - OVERHEAD);
		if (prev)   /* carved one after the other from the top */
			ck_assert_uint_eq((size_t)(p - prev), prev_chunk);
		prev = p;
		prev_chunk = chunk_of(req[i]);
	}
	/* two worked examples of the rounding: 1 byte and 25 bytes */
	ck_assert_uint_eq(chunk_of(1), 32);
	ck_assert_uint_eq(chunk_of(1) - OVERHEAD, 24);
	ck_assert_uint_eq(chunk_of(25), 48);
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

/* --- coalescing ------------------------------------------------------------------- */

START_TEST(free_neighbours_merge_at_once)
{
	hl_heap_t *h = tl_heap("bins", "tcache_count:0");
	char *a = hl_malloc(h, 200), *b = hl_malloc(h, 200), *c = hl_malloc(h, 200);
	char *guard = hl_malloc(h, 200);
	size_t cs = chunk_of(200);
	ck_assert_ptr_eq(b, a + cs);
	ck_assert_ptr_eq(c, b + cs);
	hl_free(h, a);
	hl_free(h, c);
	ck_assert_int_eq(block_at(h, chunk_start(a)).state, HL_BLOCK_FREE);
	ck_assert_int_eq(block_at(h, chunk_start(c)).state, HL_BLOCK_FREE);
	hl_free(h, b);                   /* joins both neighbours */
	struct find f = block_at(h, chunk_start(a));
	ck_assert_int_eq(f.state, HL_BLOCK_FREE);
	ck_assert_uint_eq(f.size, 3 * cs);
	ck_assert_int_eq(block_at(h, chunk_start(b)).state, -1);
	ck_assert_int_eq(block_at(h, chunk_start(c)).state, -1);
	tl_check_clean(h);
	/* the merged chunk serves a request three chunks wide, in place */
	char *big = hl_malloc(h, 3 * cs - OVERHEAD);
	ck_assert_ptr_eq(big, a);
	hl_free(h, big);
	hl_free(h, guard);
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

START_TEST(fastbins_delay_merging_until_consolidation)
{
	hl_heap_t *h = tl_heap("bins", "tcache_count:0,fastbins:on");
	char *a = hl_malloc(h, 40), *b = hl_malloc(h, 40);
	char *guard = hl_malloc(h, 40);
	hl_free(h, a);
	hl_free(h, b);
	/* both small: kept apart in a fastbin, marked in use by the tags */
	ck_assert_uint_eq(block_at(h, chunk_start(a)).size, chunk_of(40));
	ck_assert_uint_eq(block_at(h, chunk_start(b)).size, chunk_of(40));
	tl_check_clean(h);
	void *large = hl_malloc(h, 2000);   /* a large request consolidates */
	struct find f = block_at(h, chunk_start(a));
	ck_assert_int_eq(f.state, HL_BLOCK_FREE);
	ck_assert_uint_eq(f.size, 2 * chunk_of(40));
	tl_check_clean(h);
	hl_free(h, large);
	hl_free(h, guard);
	hl_heap_destroy(h);
}
END_TEST

/* --- tcache ------------------------------------------------------------------------ */

/** Frees N same-size blocks in allocation order, allocates N again and
 *  checks the order: the last @p depth freed come back newest first, the
 *  rest in the order they were freed. */
static void tcache_order(const char *conf, int depth)
{
	enum { N = 40 };
	hl_heap_t *h = tl_heap("bins", conf);
	char *p[N];
	for (int i = 0; i < N; i++)
		p[i] = hl_malloc(h, 100);
	void *guard = hl_malloc(h, 100);
	for (int i = 0; i < N; i++)
		hl_free(h, p[i]);
	tl_check_clean(h);
	double hits0 = pstat(h, "tcache_hits");
	for (int i = 0; i < N; i++) {
		char *q = hl_malloc(h, 100);
		char *want = i < depth ? p[depth - 1 - i] : p[i];
		ck_assert_msg(q == want, "%s: allocation %d got block %ld, model says %ld", conf, i,
			      (long)((q - p[0]) / (long)chunk_of(100)), (long)((want - p[0]) / (long)chunk_of(100)));
	}
	ck_assert_double_eq(pstat(h, "tcache_hits") - hits0, depth);
	tl_check_clean(h);
	hl_free(h, guard);
	hl_heap_destroy(h);
}

START_TEST(tcache_depth_16_in_glibc_2_43)
{
	tcache_order("version:2.43", 16);
}
END_TEST

/* With no options bins is the running glibc's release (2.35 .. 2.43):
 * before 2.43, 7 chunks per tcache bin and fastbins; from 2.43, 16 and
 * none.  An option given explicitly wins over the version's value. */
START_TEST(defaults_follow_the_running_glibc)
{
	int major = 0, minor = 0;
	ck_assert_int_eq(sscanf(gnu_get_libc_version(), "%d.%d", &major, &minor), 2);
	bool old = major == 2 && minor < 43;
	hl_heap_t *h = tl_heap("bins", "");
	ck_assert_double_eq(pstat(h, "tcache_count"), old ? 7 : 16);
	ck_assert_double_eq(pstat(h, "fastbins"), old ? 1 : 0);
	hl_heap_destroy(h);
	static const struct { const char *conf; double depth, fast; } v[] = {
		{ "version:2.35", 7, 1 },  { "version:2.42", 7, 1 },  { "version:2.43", 16, 0 },
		{ "version:2.36,tcache_count:3", 3, 1 }, { "version:2.43,fastbins:on", 16, 1 },
		{ "version:2.36,fastbins:off", 7, 0 },
	};
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		h = tl_heap("bins", v[i].conf);
		ck_assert_msg(pstat(h, "tcache_count") == v[i].depth && pstat(h, "fastbins") == v[i].fast,
			      "%s: tcache_count %g, fastbins %g", v[i].conf, pstat(h, "tcache_count"),
			      pstat(h, "fastbins"));
		hl_heap_destroy(h);
	}
	ck_assert_ptr_null(hl_heap_new("bins", "version:2.34"));
}
END_TEST

/* (fastbins off: before 2.43 the 112-byte chunks past the tcache would go
 * to a fastbin, LIFO too, not back in the order they were freed) */
START_TEST(tcache_old_depth_7)
{
	tcache_order("tcache_count:7,fastbins:off", 7);
}
END_TEST

START_TEST(tcache_off)
{
	tcache_order("tcache_count:0,fastbins:off", 0);
}
END_TEST

START_TEST(tcache_holds_up_to_1032_usable_bytes)
{
	hl_heap_t *h = tl_heap("bins", NULL);
	void *g0 = hl_malloc(h, 1);
	void *a = hl_malloc(h, TC_MAX_USABLE), *g1 = hl_malloc(h, 1);
	void *b = hl_malloc(h, TC_MAX_USABLE + 1), *g2 = hl_malloc(h, 1);
	hl_free(h, a);
	hl_free(h, b);
	ck_assert_int_eq(block_at(h, chunk_start(a)).state, HL_BLOCK_CACHED);
	ck_assert_int_eq(block_at(h, chunk_start(b)).state, HL_BLOCK_FREE);
	tl_check_clean(h);
	hl_free(h, g0), hl_free(h, g1), hl_free(h, g2);
	hl_heap_destroy(h);
}
END_TEST

/* --- glibc 2.42's large tcache bins (option tcache_max) ------------------------------
 * Not measurable here (the installed glibc is 2.36): the rules below are
 * read from malloc/malloc.c at the glibc-2.42 tag and in 2.43's sources,
 * and restated in the tests, not taken from the model. */

/** glibc's large_csize2tidx as written there: TCACHE_SMALL_BINS +
 *  __builtin_clz (MAX_TCACHE_SMALL_SIZE) - __builtin_clz (nb), with
 *  MAX_TCACHE_SMALL_SIZE = tidx2csize (63) = 63 * 16 + 32 (2.43; 2.42's
 *  tidx2usize (63), 8 less, has the same leading zeros). */
static unsigned glibc_large_tidx(size_t nb)
{
	return 64 + (unsigned)__builtin_clz(63 * 16 + 32) - (unsigned)__builtin_clz((unsigned)nb);
}

/** Whether a block of @p n bytes, freed (a live block beside it) and asked
 *  again, came back from the tcache under @p conf: the hit counted, the
 *  same block. */
static bool large_comes_back(const char *conf, size_t n)
{
	hl_heap_t *h = tl_heap("bins", conf);
	void *p = hl_malloc(h, n), *guard = hl_malloc(h, 1);
	hl_free(h, p);
	bool cached = block_at(h, chunk_start(p)).state == HL_BLOCK_CACHED;
	tl_check_clean(h);
	double hits0 = pstat(h, "tcache_hits");
	void *q = hl_malloc(h, n);
	bool hit = pstat(h, "tcache_hits") == hits0 + 1;
	ck_assert_msg(cached == hit && (!hit || q == p), "%s, %zu bytes: cached %d, hit %d", conf, n, cached, hit);
	tl_check_clean(h);
	hl_free(h, q), hl_free(h, guard);
	hl_heap_destroy(h);
	return hit;
}

START_TEST(tcache_max_opens_the_large_bins_from_glibc_2_42)
{
	enum { K64 = 64 * 1024 };         /* below the 128 KiB mmap threshold */
	/* do_set_tcache_max: nb = request2size (value), refused (default kept)
	 * when its large index reaches TCACHE_MAX_BINS, 76: 4 MiB itself is
	 * refused, 4194280 (a chunk of 4194288) is the largest taken */
	ck_assert_uint_eq(glibc_large_tidx(chunk_of(4u << 20)), 76);
	ck_assert_uint_eq(glibc_large_tidx(chunk_of(4194280)), 75);
	ck_assert(large_comes_back("version:2.43,tcache_max:4194280", K64));
	ck_assert(large_comes_back("version:2.42,tcache_max:4194280", K64));
	ck_assert(!large_comes_back("version:2.43", K64));
	ck_assert(!large_comes_back("version:2.43,tcache_max:4M", K64));
	ck_assert(!large_comes_back("version:2.41,tcache_max:4194280", K64));
	/* glibc 2.36's do_set_tcache_max refuses anything above 1032 */
	ck_assert(!large_comes_back("version:2.36,tcache_max:1M", K64));
	/* the cut-off, nb < mp_.tcache_max_bytes: request2size (value) in
	 * 2.42, one more from 2.43 (the chunk of the value itself cached) */
	ck_assert(!large_comes_back("version:2.42,tcache_max:65536", 65536));
	ck_assert(large_comes_back("version:2.42,tcache_max:65536", 65536 - 16));
	ck_assert(large_comes_back("version:2.43,tcache_max:65536", 65536));
	ck_assert(!large_comes_back("version:2.43,tcache_max:65536", 65536 + 16));
	/* mmapped chunks never go there (a 64 KiB block mapped: an explicit
	 * threshold, and no top_pad leaving the top room for it) */
	ck_assert(!large_comes_back("version:2.43,tcache_max:1M,mmap_threshold:32K,top_pad:0", K64));
	ck_assert_ptr_null(hl_heap_new("bins", "tcache_max:1000"));
}
END_TEST

/* With one chunk a bin, a second chunk freed goes to the tcache only when
 * its large bin differs from the first's: the bins are glibc's. */
START_TEST(tcache_large_bins_are_glibcs_powers_of_two)
{
	static const size_t pairs[][2] = {
		{ 1056, 2032 }, { 2032, 2048 }, { 2048, 4080 }, { 4096, 8192 }, { 8192, 16368 },
		{ 65536, 131056 }, { 131072, 262144 }, { 1 << 21, (1 << 22) - 16 }, { 1 << 20, 1 << 21 },
	};
	const char *conf = "version:2.43,tcache_max:4194280,tcache_count:1,mmap_threshold:8M";
	for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
		hl_heap_t *h = tl_heap("bins", conf);
		void *a = hl_malloc(h, pairs[i][0] - OVERHEAD), *g1 = hl_malloc(h, 1);
		void *b = hl_malloc(h, pairs[i][1] - OVERHEAD), *g2 = hl_malloc(h, 1);
		hl_free(h, a);
		hl_free(h, b);
		bool apart = glibc_large_tidx(pairs[i][0]) != glibc_large_tidx(pairs[i][1]);
		ck_assert_int_eq(block_at(h, chunk_start(a)).state, HL_BLOCK_CACHED);
		ck_assert_msg((block_at(h, chunk_start(b)).state == HL_BLOCK_CACHED) == apart,
			      "chunks %zu and %zu: glibc's bins %u and %u", pairs[i][0], pairs[i][1],
			      glibc_large_tidx(pairs[i][0]), glibc_large_tidx(pairs[i][1]));
		tl_check_clean(h);
		hl_free(h, g1), hl_free(h, g2);
		hl_heap_destroy(h);
	}
}
END_TEST

/* A large bin holds several sizes, sorted: 2.42's tcache_get_large hands
 * out the first chunk big enough, 2.43's only one of the exact size. */
START_TEST(tcache_large_bin_exact_fit_from_2_43)
{
	static const struct { const char *conf; bool bigger; } v[] = {
		{ "version:2.42,tcache_max:1M", true }, { "version:2.43,tcache_max:1M", false },
	};
	for (size_t i = 0; i < 2; i++) {
		hl_heap_t *h = tl_heap("bins", v[i].conf);
		void *big = hl_malloc(h, 3000), *g = hl_malloc(h, 1);   /* chunks 3008 and 2512: bin 65 */
		hl_free(h, big);
		double hits0 = pstat(h, "tcache_hits");
		void *q = hl_malloc(h, 2500);
		ck_assert_msg((q == big) == v[i].bigger && (pstat(h, "tcache_hits") > hits0) == v[i].bigger,
			      "%s", v[i].conf);
		tl_check_clean(h);
		hl_free(h, q), hl_free(h, g);   /* (in 2.43 big is still cached) */
		hl_heap_destroy(h);
	}
}
END_TEST

/* --- giving memory back ---------------------------------------------------------------- */

enum { NBIG = 64, BIG = 16 * 1024 };

/** NBIG blocks of BIG bytes (touched) and a pin above them; returns pin. */
static char *fill_below_pin(hl_heap_t *h, char **p)
{
	for (int i = 0; i < NBIG; i++) {
		p[i] = hl_malloc(h, BIG);
		memset(p[i], 0x5a, BIG);
	}
	char *pin = hl_malloc(h, 2000);        /* beyond the tcache: freed for real */
	ck_assert_ptr_eq(pin, p[NBIG - 1] + chunk_of(BIG));
	tl_fill(pin, 2000, 7);
	return pin;
}

START_TEST(live_chunk_at_top_pins_the_region_below)
{
	hl_heap_t *h = tl_heap("bins", NULL);
	char *p[NBIG];
	char *pin = fill_below_pin(h, p);
	double before = tl_stat(h, "committed_bytes");
	for (int i = 0; i < NBIG; i++)
		hl_free(h, p[i]);
	ck_assert_double_eq(tl_stat(h, "committed_bytes"), before);
	ck_assert_uint_eq(block_at(h, chunk_start(p[0])).size, NBIG * chunk_of(BIG));
	hl_free(h, pin);                       /* everything joins the top: trimmed */
	double freed = (double)(NBIG * chunk_of(BIG) + chunk_of(2000));
	ck_assert_double_le(tl_stat(h, "committed_bytes"), before - freed + (double)TOP_PAD + 2.0 * (double)tl_page());
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

START_TEST(trim_drops_resident_pages_inside_a_pinned_heap)
{
	hl_heap_t *h = tl_heap("bins", NULL);
	char *p[NBIG];
	char *pin = fill_below_pin(h, p);
	for (int i = 0; i < NBIG; i++)
		hl_free(h, p[i]);
	double before = tl_stat(h, "resident_bytes");
	double committed = tl_stat(h, "committed_bytes");
	ck_assert_uint_gt(hl_trim(h, 0), 0);
	double after = tl_stat(h, "resident_bytes");
	/* every whole page of the free chunk (all but its header page and tail) */
	double inside = (double)(NBIG * chunk_of(BIG)) - 2.0 * (double)tl_page();
	ck_assert_double_ge(before - after, inside);
	ck_assert_double_ge(tl_stat(h, "committed_bytes"), committed - (double)TOP_PAD - (double)tl_page());
	ck_assert(tl_intact(pin, 2000, 7));
	tl_check_clean(h);
	char *again = hl_malloc(h, BIG);       /* purged pages serve again */
	ck_assert_ptr_eq(again, p[0]);
	memset(again, 1, BIG);
	hl_free(h, again);
	hl_free(h, pin);
	hl_heap_destroy(h);
}
END_TEST

/* --- the mmap threshold -------------------------------------------------------------- */

enum { FOURMB = 4 << 20 };

START_TEST(freeing_a_big_block_raises_the_threshold)
{
	hl_heap_t *h = tl_heap("bins", NULL);
	ck_assert_double_eq(pstat(h, "mmap_threshold"), 128 * 1024);
	void *p = hl_malloc(h, FOURMB);
	ck_assert_double_eq(pstat(h, "mmapped_chunks"), 1);
	hl_free(h, p);
	ck_assert_double_gt(pstat(h, "mmap_threshold"), FOURMB);
	ck_assert_double_eq(pstat(h, "trim_threshold"), 2 * pstat(h, "mmap_threshold"));
	double maps = 0;
	for (int i = 0; i < 10; i++) {
		void *q = hl_malloc(h, FOURMB);
		ck_assert_double_eq(pstat(h, "mmapped_chunks"), 0);
		ck_assert(hl_owns(h, q));
		memset(q, 2, FOURMB);
		hl_free(h, q);
		if (i == 0)        /* the first one grew the break; the top keeps it */
			maps = tl_stat(h, "os.mmap_calls") + tl_stat(h, "os.mprotect_calls");
	}
	ck_assert_double_eq(tl_stat(h, "os.mmap_calls") + tl_stat(h, "os.mprotect_calls"), maps);
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

START_TEST(explicit_threshold_keeps_big_blocks_mapped)
{
	hl_heap_t *h = tl_heap("bins", "mmap_threshold:131072");
	for (int i = 0; i < 5; i++) {
		void *q = hl_malloc(h, FOURMB);
		ck_assert_double_eq(pstat(h, "mmapped_chunks"), 1);
		ck_assert_uint_ge(hl_usable_size(h, q), FOURMB);
		hl_free(h, q);
		ck_assert_double_eq(pstat(h, "mmapped_chunks"), 0);
		ck_assert_double_eq(pstat(h, "mmap_threshold"), 131072);
	}
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

START_TEST(growing_a_mapped_block_moves_pages_not_copies)
{
	/* glibc resizes a mapped chunk with mremap: the pages move, so the old
	 * and the new copy are never both committed, and shrinking stays put */
	hl_heap_t *h = tl_heap("bins", "mmap_threshold:131072");
	const size_t small = 1 << 20, big = 3 << 20;
	char *p = hl_malloc(h, small);
	tl_fill(p, small, 5);
	double committed = tl_stat(h, "committed_bytes");
	double remaps = tl_stat(h, "os.mremap_calls");
	char *q = hl_realloc(h, p, big);
	ck_assert(tl_intact(q, small, 5));
	ck_assert_double_eq(tl_stat(h, "os.mremap_calls"), remaps + 1);
	ck_assert_double_eq(pstat(h, "mmapped_chunks"), 1);
	ck_assert_double_le(tl_stat(h, "os.peak_committed_bytes"),
			    committed + (double)(big - small + tl_page()));
	char *r = hl_realloc(h, q, 200000);          /* shrinking stays in place */
	ck_assert_ptr_eq(r, q);
	ck_assert_double_eq(tl_stat(h, "os.mremap_calls"), remaps + 2);
	ck_assert_double_le(tl_stat(h, "committed_bytes"), committed);
	ck_assert_ptr_eq(hl_realloc(h, r, hl_usable_size(h, r)), r);
	tl_check_clean(h);
	hl_free(h, r);
	hl_heap_destroy(h);
}
END_TEST

/* --- arenas ----------------------------------------------------------------------------- */

enum { NTHREADS = 4 };

struct arena_run {
	hl_heap_t *h;
	pthread_barrier_t *all_bound;
};

static void *bind_and_wait(void *arg)
{
	struct arena_run *r = arg;
	void *p = hl_malloc(r->h, 64);         /* first allocation binds an arena */
	pthread_barrier_wait(r->all_bound);    /* every thread alive at once */
	hl_free(r->h, p);
	return NULL;
}

static void run_threads(hl_heap_t *h, int n)
{
	pthread_t th[NTHREADS];
	pthread_barrier_t b;
	pthread_barrier_init(&b, NULL, (unsigned)n);
	struct arena_run r = { h, &b };
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, bind_and_wait, &r), 0);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&b);
}

static void arenas_for(const char *conf, double want)
{
	hl_heap_t *h = tl_heap("bins", conf);
	hl_free(h, hl_malloc(h, 64));          /* this thread takes the main arena */
	run_threads(h, NTHREADS);
	ck_assert_msg(pstat(h, "arenas") == want, "%s: %g arenas, want %g", conf, pstat(h, "arenas"), want);
	run_threads(h, NTHREADS);              /* parked arenas are reused */
	ck_assert_double_eq(pstat(h, "arenas"), want);
	tl_check_clean(h);
	hl_heap_destroy(h);
}

START_TEST(each_thread_gets_its_own_arena)
{
	arenas_for("", 1 + NTHREADS);          /* below arena_test (8): no cap yet */
}
END_TEST

START_TEST(arena_max_makes_threads_share)
{
	arenas_for("arena_max:2", 2);
	arenas_for("arena_max:3", 3);
}
END_TEST

/* A replayed "#@exit", by glibc's rule: a thread's exit
 * flushes its tcache into its arena and puts the arena on the free list
 * (arena_thread_freeres), and the next new thread takes it from there
 * (get_free_list) before it would make one. */
struct exit_replay {
	void *block[3];        /* address of blocks 0..2 when allocated */
};

static int note_blocks(const hl_replay_t *rp, void *arg)
{
	struct exit_replay *e = arg;
	const hl_trace_t *t = hl_replay_trace(rp);
	size_t i = hl_replay_op(rp);
	long id = hl_trace_op_id(t, i);
	if (hl_trace_op_kind(t, i) == 'a' && id >= 0 && id < 3)
		e->block[id] = hl_replay_block(rp, id);
	return 0;
}

/* Replays @p text on a fresh bins heap; the number of arenas at the end. */
static double arenas_after(const char *text, struct exit_replay *e)
{
	hl_trace_t *t = hl_trace_parse("exit.rep", text, strlen(text));
	ck_assert_msg(t != NULL, "%s", hl_last_error());
	hl_heap_t *h = tl_heap("bins", "tcache_count:7");
	hl_replay_opts_t o = { .verify = true, .check_heap = true, .check_every = 1, .after_op = note_blocks, .arg = e };
	hl_replay_result_t r;
	ck_assert_msg(hl_replay(h, t, &o, &r) == 0, "%s", r.message);
	double n = pstat(h, "arenas");
	hl_heap_destroy(h);
	hl_trace_free(t);
	return n;
}

START_TEST(a_replayed_thread_exit_hands_its_arena_to_the_next_thread)
{
	static const char with_exit[] =
		"a 0 100\n"               /* thread 0: the main arena */
		"t 1\na 1 100\nf 1\n"     /* thread 1: arena 1; block 1 into its tcache */
		"#@exit 1\n"              /* tcache flushed, arena 1 on the free list */
		"t 2\na 2 100\n";          /* thread 2: arena 1 again */
	struct exit_replay e = { { NULL } };
	ck_assert_double_eq(arenas_after(with_exit, &e), 2);
	/* thread 2's tcache record and block land where thread 1's were: the
	 * flush gave block 1's chunk back to arena 1 */
	ck_assert_ptr_nonnull(e.block[1]);
	ck_assert_ptr_eq(e.block[2], e.block[1]);
	/* the same ops without the exit: thread 2 gets an arena of its own */
	static const char without[] = "a 0 100\nt 1\na 1 100\nf 1\nt 2\na 2 100\n";
	struct exit_replay f = { { NULL } };
	ck_assert_double_eq(arenas_after(without, &f), 3);
	ck_assert_ptr_ne(f.block[2], f.block[1]);
	/* a number used again after its exit is a new thread: it too finds
	 * arena 1 on the free list */
	static const char again[] = "a 0 100\nt 1\na 1 100\nf 1\n#@exit 1\nt 1\na 2 100\n";
	struct exit_replay g = { { NULL } };
	ck_assert_double_eq(arenas_after(again, &g), 2);
	ck_assert_ptr_eq(g.block[2], g.block[1]);
}
END_TEST

static void *alloc_and_keep(void *arg)
{
	return hl_malloc(arg, 5000);
}

START_TEST(secondary_arena_chunks_are_found_by_masking)
{
	hl_heap_t *h = tl_heap("bins", "tcache_count:0");
	hl_free(h, hl_malloc(h, 64));          /* this thread: main arena */
	pthread_t th;
	void *p = NULL;
	ck_assert_int_eq(pthread_create(&th, NULL, alloc_and_keep, h), 0);
	pthread_join(th, &p);
	ck_assert_ptr_nonnull(p);
	ck_assert_double_eq(pstat(h, "arenas"), 2);
	ck_assert_double_eq(pstat(h, "arena.1.in_use_bytes"), (double)chunk_of(5000));
	double main_in_use = pstat(h, "arena.0.in_use_bytes");
	hl_free(h, p);                         /* freed here, goes home to arena 1 */
	ck_assert_double_eq(pstat(h, "arena.1.in_use_bytes"), 0);
	ck_assert_double_eq(pstat(h, "arena.0.in_use_bytes"), main_in_use);
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

START_TEST(arena_cap_per_core_once_arena_test_is_passed)
{
	/* arenas are made freely while there are no more than arena_test of
	 * them; then the cap becomes arenas_per_core x online cores */
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	double cap = (double)(cores > 0 ? cores : 1), free_make = 1 + 1;
	double want = 1 + NTHREADS;
	if (want > (cap > free_make ? cap : free_make))
		want = cap > free_make ? cap : free_make;
	arenas_for("arena_test:1,arenas_per_core:1", want);
}
END_TEST

struct drain_run {
	hl_heap_t *h;
	pthread_barrier_t cached, checked;
};

static void *cache_and_exit(void *arg)
{
	struct drain_run *r = arg;
	void *p[10];
	for (int i = 0; i < 10; i++)
		p[i] = hl_malloc(r->h, 100);
	for (int i = 0; i < 10; i++)
		hl_free(r->h, p[i]);            /* all ten stay in this thread's tcache */
	pthread_barrier_wait(&r->cached);
	pthread_barrier_wait(&r->checked);
	return NULL;
}

START_TEST(thread_exit_drains_the_tcache_home)
{
	struct drain_run r = { .h = tl_heap("bins", "version:2.43") }; /* 16 a bin: all ten cached */
	hl_free(r.h, hl_malloc(r.h, 64));
	pthread_barrier_init(&r.cached, NULL, 2);
	pthread_barrier_init(&r.checked, NULL, 2);
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, cache_and_exit, &r), 0);
	pthread_barrier_wait(&r.cached);
	ck_assert_double_eq(pstat(r.h, "arena.1.cached_bytes"), 10.0 * (double)chunk_of(100));
	pthread_barrier_wait(&r.checked);
	pthread_join(th, NULL);
	ck_assert_double_eq(pstat(r.h, "arena.1.cached_bytes"), 0);
	ck_assert_double_eq(pstat(r.h, "arena.1.in_use_bytes"), 0);
	ck_assert_double_eq(pstat(r.h, "arena.1.threads"), 0);   /* parked */
	tl_check_clean(r.h);
	pthread_barrier_destroy(&r.cached);
	pthread_barrier_destroy(&r.checked);
	hl_heap_destroy(r.h);
}
END_TEST

/* glibc's tcache_init takes the thread's tcache record from its arena: its
 * struct's size asked (640 bytes up to 2.41, a 656-byte chunk; 760 from
 * 2.42, a 768-byte chunk), in front of everything the thread allocates
 * there, reported as metadata; none without a tcache; a second thread's
 * record is freed when the thread exits. */
struct meta_count { size_t records, size; const void *first_live; };

static int count_records(const hl_block_t *b, void *arg)
{
	struct meta_count *m = arg;
	if (b->state == HL_BLOCK_META && b->size == m->size)
		m->records++;
	if (b->state == HL_BLOCK_LIVE && !m->first_live)
		m->first_live = b->addr;
	return 0;
}

static struct meta_count records_in(hl_heap_t *h, size_t size)
{
	struct meta_count m = { 0, size, NULL };
	hl_walk(h, count_records, &m);
	return m;
}

static void record_first(const char *conf, size_t size)
{
	hl_heap_t *h = tl_heap("bins", conf);
	char *p = hl_malloc(h, 24);
	struct meta_count m = records_in(h, size);
	ck_assert_uint_eq(m.records, 1);
	ck_assert_ptr_eq(m.first_live, p);
	struct find rec = block_at(h, chunk_start(p) - size);
	ck_assert_int_eq(rec.state, HL_BLOCK_META);
	ck_assert_uint_eq(rec.size, size);
	ck_assert_double_eq(pstat(h, "arena.0.tcache_struct_bytes"), (double)size);
	ck_assert_double_eq(pstat(h, "arena.0.in_use_bytes"), (double)chunk_of(24));
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, tl_thread_touch, h), 0);
	pthread_join(th, NULL);
	ck_assert_uint_eq(records_in(h, size).records, 1);      /* the other thread's went back */
	tl_check_clean(h);
	hl_free(h, p);
	hl_heap_destroy(h);
}

START_TEST(tcache_record_is_the_first_chunk_of_the_arena)
{
	record_first("version:2.36,ledger:off", 656);
	record_first("version:2.41,ledger:off", 656);
	record_first("version:2.42,ledger:off", 768);
	record_first("version:2.43,ledger:off", 768);

	hl_heap_t *h;
	char *p;
	h = tl_heap("bins", "tcache_count:0,ledger:off");
	p = hl_malloc(h, 24);
	ck_assert_uint_eq(records_in(h, 656).records + records_in(h, 768).records, 0);
	ck_assert_double_eq(pstat(h, "arena.0.tcache_struct_bytes"), 0);
	hl_free(h, p);
	hl_heap_destroy(h);
}
END_TEST

START_TEST(realloc_grows_in_place_into_free_space)
{
	hl_heap_t *h = tl_heap("bins", "tcache_count:0");
	char *a = hl_malloc(h, 100);
	tl_fill(a, 100, 3);
	char *b = hl_realloc(h, a, 5000);        /* a borders the top: grows into it */
	ck_assert_ptr_eq(b, a);
	ck_assert(tl_intact(b, 100, 3));
	char *x = hl_malloc(h, 200), *y = hl_malloc(h, 200), *g = hl_malloc(h, 200);
	hl_free(h, y);
	tl_fill(x, 200, 4);
	size_t both = 2 * chunk_of(200);
	char *x2 = hl_realloc(h, x, both - OVERHEAD);  /* takes the free neighbour */
	ck_assert_ptr_eq(x2, x);
	ck_assert_uint_eq(hl_usable_size(h, x2), both - OVERHEAD);
	ck_assert(tl_intact(x2, 200, 4));
	char *x3 = hl_realloc(h, x2, 100);             /* shrinks in place, tail freed */
	ck_assert_ptr_eq(x3, x);
	ck_assert_uint_eq(hl_usable_size(h, x3), chunk_of(100) - OVERHEAD);
	ck_assert_int_eq(block_at(h, x3 + chunk_of(100) - 16).state, HL_BLOCK_FREE);
	tl_check_clean(h);
	hl_free(h, b), hl_free(h, x3), hl_free(h, g);
	hl_heap_destroy(h);
}
END_TEST

enum { NSUB = 700, SUBBLOCK = 120000 };   /* 84 MB: more than one sub-heap */

static void *fill_two_subheaps(void *arg)
{
	hl_heap_t *h = arg;
	static void *p[NSUB];
	for (int i = 0; i < NSUB; i++)
		ck_assert_ptr_nonnull(p[i] = hl_malloc(h, SUBBLOCK));
	ck_assert_double_eq(pstat(h, "arena.1.subheaps"), 2);
	ck_assert_double_eq(pstat(h, "mmapped_chunks"), 0);
	/* a chunk's sub-heap is its address rounded down to 64 MiB */
	ck_assert_uint_ne((uintptr_t)p[0] >> 26, (uintptr_t)p[NSUB - 1] >> 26);
	tl_check_clean(h);
	for (int i = 0; i < NSUB; i += 2)
		hl_free(h, p[i]);
	tl_check_clean(h);
	for (int i = NSUB - 1; i > 0; i -= 2)
		hl_free(h, p[i]);
	return NULL;
}

START_TEST(secondary_arena_spans_sub_heaps_and_drops_empty_ones)
{
	hl_heap_t *h = tl_heap("bins", NULL);
	hl_free(h, hl_malloc(h, 64));
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, fill_two_subheaps, h), 0);
	pthread_join(th, NULL);
	ck_assert_double_eq(pstat(h, "arena.1.subheaps"), 1);
	/* what is left committed is the first sub-heap's top, trimmed to top_pad */
	ck_assert_double_le(pstat(h, "arena.1.system_current"), (double)TOP_PAD + 4.0 * (double)tl_page());
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

/** Random mallocs, memaligns, reallocs and frees, the checker every few
 *  hundred operations, payloads verified. */
static void random_ops(const char *conf)
{
	enum { SLOTS = 300, OPS = 12000 };
	hl_heap_t *h = tl_heap("bins", conf);
	static char *p[SLOTS];
	static size_t n[SLOTS];
	uint64_t s = 88172645463325252ull;
	for (int i = 0; i < OPS; i++) {
		s ^= s << 13, s ^= s >> 7, s ^= s << 17;
		int k = (int)(s % SLOTS);
		if (p[k]) {
			ck_assert_msg(tl_intact(p[k], n[k], (unsigned)k), "%s: block %d damaged", conf, k);
			hl_free(h, p[k]);
			p[k] = NULL;
			continue;
		}
		size_t r = (s >> 20) % 100, want = r < 75 ? (s >> 32) % 700 + 1 : (s >> 32) % 200000 + 1;
		if (r % 9 == 0)
			p[k] = hl_memalign(h, (size_t)64 << (s >> 40) % 8, want);
		else if (r % 7 == 0 && (p[k] = hl_malloc(h, 10)))
			p[k] = hl_realloc(h, p[k], want);
		else
			p[k] = hl_malloc(h, want);
		ck_assert_ptr_nonnull(p[k]);
		n[k] = want;
		tl_fill(p[k], want, (unsigned)k);
		if (i % 400 == 0)
			tl_check_clean(h);
		if (i % 3000 == 0)
			hl_trim(h, 0);
	}
	for (int k = 0; k < SLOTS; k++) {
		hl_free(h, p[k]);
		p[k] = NULL;
	}
	tl_check_clean(h);
	hl_heap_destroy(h);
}

START_TEST(random_operations_keep_every_invariant)
{
	random_ops("");
	random_ops("tcache_count:0");
	random_ops("fastbins:on,tcache_count:7");
	random_ops("mmap_threshold:0");
}
END_TEST

START_TEST(fork_child_allocates_on_every_arena)
{
	hl_heap_t *h = tl_heap("bins", NULL);
	void *keep = hl_malloc(h, 300);
	run_threads(h, 2);                     /* two parked secondary arenas */
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {                        /* every lock was re-made */
		void *p = hl_malloc(h, 5000);
		hl_free(h, keep);
		hl_free(h, p);
		_exit(hl_check(h, NULL) == 0 && p ? 0 : 1);
	}
	int status;
	waitpid(pid, &status, 0);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	hl_free(h, keep);
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

/* --- misuse ------------------------------------------------------------------------------- */

static void free_twice(const void *conf)
{
	hl_heap_t *h = hl_heap_new("bins", conf);
	void *p = hl_malloc(h, 100);
	void *guard = hl_malloc(h, 100);
	hl_free(h, p);
	hl_free(h, p);
	(void)guard;
}

START_TEST(double_free_aborts_with_the_message)
{
	/* glibc's own texts (tests/programs/misuse.sh compares them with glibc's run);
	 * debug:off, or the core's guard would name the double free first */
	tl_expect_abort(free_twice, "debug:off", "heaplab: bins: free(): double free detected in tcache 2");
	tl_expect_abort(free_twice, "tcache_count:0,debug:off", "heaplab: bins: double free or corruption");
	tl_expect_abort(free_twice, "tcache_count:0,fastbins:on,debug:off", "heaplab: bins: double free or corruption");
	tl_expect_abort(free_twice, "debug:on", "heaplab: bins: free of a freed block (double free)");
}
END_TEST

START_TEST(double_free_raises_sigabrt)
{
	free_twice("");
}
END_TEST

START_TEST(checker_reports_broken_tags_and_lists)
{
	hl_heap_t *h = tl_heap("bins", "tcache_count:0");
	size_t *a = hl_malloc(h, 200), *b = hl_malloc(h, 200);
	void *guard = hl_malloc(h, 200);
	hl_free(h, a);                          /* a: free, in the unsorted bin */
	tl_check_clean(h);
	size_t *b_prev_size = b - 2;            /* b's header: prev_size, size */
	size_t saved = *b_prev_size;
	*b_prev_size = saved + 16;              /* the tags now disagree */
	ck_assert_int_gt(hl_check(h, NULL), 0);
	*b_prev_size = saved;
	tl_check_clean(h);
	size_t saved_bk = a[1];                 /* a's bk link */
	a[1] = (size_t)b;                       /* smash the list */
	ck_assert_int_gt(hl_check(h, NULL), 0);
	a[1] = saved_bk;
	tl_check_clean(h);
	(void)guard;
	hl_heap_destroy(h);
}
END_TEST

/* The checker finds the calling thread's tcache through the core's record
 * of the thread and believes the word only when bins' registry lists it:
 * a foreign word there (what a host policy handing bins a private record
 * of its own leaves behind) is reported, not read as a tcache. */
START_TEST(checker_rejects_a_foreign_tcache_word)
{
	static uint64_t foreign[256];           /* zeros: would look like an empty tcache */
	hl_heap_t *h = tl_heap("bins", "debug:off,ledger:off");
	hl_free(h, hl_malloc(h, 100));          /* this thread now has a tcache */
	hl_thread_t *t = hl_thread_get(h);
	void *mine = t->policy_tls;
	ck_assert_ptr_nonnull(mine);
	t->policy_tls = foreign;
	tl_check_finds(h, "not a tcache of this heap");
	t->policy_tls = mine;
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

static void malloc_over_smashed_list(const void *conf)
{
	hl_heap_t *h = hl_heap_new("bins", conf);
	size_t *a = hl_malloc(h, 2000);
	void *guard = hl_malloc(h, 100);
	hl_free(h, a);
	a[0] = (size_t)guard;                   /* fd now points elsewhere */
	hl_malloc(h, 3000);
}

START_TEST(malloc_aborts_on_a_smashed_list)
{
	/* debug:off: glibc's check (the guard reports the write into a freed chunk first) */
	tl_expect_abort(malloc_over_smashed_list, "debug:off", "heaplab: bins: malloc(): unsorted double linked list corrupted");
}
END_TEST

/* Safe-linking: a tcache link is stored as (slot address >> 12) XOR target.
 * A link forged to a target that is not 16-byte aligned once decoded is
 * refused with glibc 2.36's message, whoever wrote it. */
static void malloc_over_forged_tcache_link(const void *conf)
{
	hl_heap_t *h = hl_heap_new("bins", conf);
	void *z = hl_malloc(h, 100);
	uintptr_t *a = hl_malloc(h, 100);
	char *guard = hl_malloc(h, 100);
	hl_free(h, z);
	hl_free(h, a);                           /* a heads its bin, which counts 2 */
	a[0] = ((uintptr_t)&a[0] >> 12) ^ (uintptr_t)(guard + 8);
	hl_malloc(h, 100);
	hl_malloc(h, 100);
}

START_TEST(safe_linking_refuses_a_forged_tcache_link)
{
	tl_expect_abort(malloc_over_forged_tcache_link, "", "heaplab: bins: malloc(): unaligned tcache chunk detected");
}
END_TEST

/* Three free chunks of one size sorted into a large bin: glibc 2.36 takes
 * the one after the size's skip-list leader (the chunk sorted first), so
 * the leader keeps its nextsize links.  With the tcache off, A, B and C
 * freed in that order are sorted A, then C and B behind it; malloc takes C
 * (what the same sequence returns on the real glibc 2.36). */
START_TEST(large_bin_spares_the_skip_list_leader)
{
	hl_heap_t *h = tl_heap("bins", "tcache_count:0");
	char *a = hl_malloc(h, 2000), *b, *c;
	hl_malloc(h, 100);
	b = hl_malloc(h, 2000);
	hl_malloc(h, 100);
	c = hl_malloc(h, 2000);
	hl_malloc(h, 100);
	hl_free(h, a);
	hl_free(h, b);
	hl_free(h, c);
	hl_malloc(h, 5000);                      /* sorts A, B, C into their large bin */
	ck_assert_ptr_eq(hl_malloc(h, 2000), c);
	ck_assert_ptr_eq(hl_malloc(h, 2000), b);
	ck_assert_ptr_eq(hl_malloc(h, 2000), a); /* the leader goes last */
	hl_heap_destroy(h);
}
END_TEST

/* Allocator-induced false sharing: two threads that take turns at malloc(16)
 * get neighbouring 32-byte chunks when they share an arena (arena_max:1),
 * so some pair of their blocks falls on one 64-byte cache line; with an
 * arena each (the default) no block of one is near the other's. */
struct turns {
	hl_heap_t *h;
	pthread_barrier_t step;
	char *block[2][2];                       /* [thread][turn] */
};

static void *take_turns(void *arg)
{
	struct turns *r = arg;
	hl_free(r->h, hl_malloc(r->h, 16));      /* bind an arena, make the tcache */
	pthread_barrier_wait(&r->step);
	for (int turn = 0; turn < 2; turn++) {
		pthread_barrier_wait(&r->step);  /* the main thread has had its turn */
		r->block[1][turn] = hl_malloc(r->h, 16);
		pthread_barrier_wait(&r->step);
	}
	return NULL;
}

static bool threads_share_a_line(const char *conf)
{
	struct turns r = { .h = tl_heap("bins", conf) };
	hl_free(r.h, hl_malloc(r.h, 16));
	pthread_barrier_init(&r.step, NULL, 2);
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, take_turns, &r), 0);
	pthread_barrier_wait(&r.step);
	for (int turn = 0; turn < 2; turn++) {
		r.block[0][turn] = hl_malloc(r.h, 16);
		pthread_barrier_wait(&r.step);
		pthread_barrier_wait(&r.step);
	}
	pthread_join(th, NULL);
	pthread_barrier_destroy(&r.step);
	bool shared = false;
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 2; j++)
			shared |= (uintptr_t)r.block[0][i] / 64 == (uintptr_t)r.block[1][j] / 64;
	hl_heap_destroy(r.h);
	return shared;
}

START_TEST(a_shared_arena_puts_two_threads_on_one_cache_line)
{
	ck_assert(threads_share_a_line("arena_max:1"));
	ck_assert(!threads_share_a_line(""));
}
END_TEST

/* --- decision events: each path reports its event exactly when the
 * statistic that counts the path moves (tests/unit/testlib_events.h) ----------- */

static const char *const bins_keys[] = {
	"policy_stats.tcache_hits", "policy_stats.tcache_misses", "policy_stats.mmapped_chunks", "os.brk_calls",
	NULL,
};

/* Small chunks kept apart by guards (no merging), freed, asked again: the
 * tcache, the unsorted scan (an exact fit, the rest sorted), small bins;
 * a large free chunk asked for slightly less (large bin best fit), one of
 * another bin (binmap search), a mapped chunk, then everything freed (merges,
 * the top trimmed) and malloc_trim. */
static void bins_workload(hl_heap_t *h, tl_tally_t *t)
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
	tl_snap_t a, b;
	tl_take_snap(h, bins_keys, &a);
	double maps = tl_n_of(t, HL_EV_MAP, NULL);
	void *big = hl_malloc(h, 1 << 20);
	tl_take_snap(h, bins_keys, &b);
	ck_assert_double_eq(tl_n_of(t, HL_EV_MAP, NULL) - maps, tl_grew(&a, &b, "policy_stats.mmapped_chunks"));
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
	tl_events_run_t r;
	bins_workload(tl_run_begin(&r, "bins", conf, bins_keys), &r.t);
	tl_run_measure(&r);
	tl_expect_count(&r, HL_EV_CACHE_HIT, NULL, "policy_stats.tcache_hits");
	tl_expect_count(&r, HL_EV_CACHE_MISS, NULL, "policy_stats.tcache_misses");
	/* one thread, the main arena: every growth and trim of the top moves the break */
	ck_assert_double_eq(tl_n_of(&r.t, HL_EV_GROW, "sysmalloc: brk") + tl_n_of(&r.t, HL_EV_SHRINK, NULL),
			    tl_grew(&r.a, &r.b, "os.brk_calls"));
	ck_assert_double_eq(tl_n_of(&r.t, HL_EV_MAP, NULL) - tl_n_of(&r.t, HL_EV_UNMAP, NULL),
			    tl_grew(&r.a, &r.b, "policy_stats.mmapped_chunks"));
	tl_expect_paths(&r, paths, whats);
	tl_run_end(&r);
}

START_TEST(bins_events_follow_the_counters)
{
	TL_SKIP_UNLESS("bins");
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

static Suite *bins_suite(void)
{
	Suite *s = suite_create("bins");
	TCase *tc = tcase_create("model");
	tcase_add_test(tc, bins_events_follow_the_counters);
	tcase_set_timeout(tc, 30);
	/* 48,000 operations on one thread with the checker every 400: long
	 * under ThreadSanitizer (over 300 s on a loaded machine) and nothing
	 * for it to find, so make check-threads leaves it out (tests/local.mk) */
	TCase *random = tcase_create("random");
	tcase_set_timeout(random, 60);
	tcase_set_tags(random, "single-threaded");
	tcase_add_test(random, random_operations_keep_every_invariant);
	suite_add_tcase(s, random);
	tcase_add_test(tc, usable_sizes_follow_the_chunk_rule);
	tcase_add_test(tc, free_neighbours_merge_at_once);
	tcase_add_test(tc, fastbins_delay_merging_until_consolidation);
	tcase_add_test(tc, tcache_depth_16_in_glibc_2_43);
	tcase_add_test(tc, defaults_follow_the_running_glibc);
	tcase_add_test(tc, tcache_old_depth_7);
	tcase_add_test(tc, tcache_off);
	tcase_add_test(tc, tcache_holds_up_to_1032_usable_bytes);
	tcase_add_test(tc, tcache_max_opens_the_large_bins_from_glibc_2_42);
	tcase_add_test(tc, tcache_large_bins_are_glibcs_powers_of_two);
	tcase_add_test(tc, tcache_large_bin_exact_fit_from_2_43);
	tcase_add_test(tc, live_chunk_at_top_pins_the_region_below);
	tcase_add_test(tc, trim_drops_resident_pages_inside_a_pinned_heap);
	tcase_add_test(tc, freeing_a_big_block_raises_the_threshold);
	tcase_add_test(tc, explicit_threshold_keeps_big_blocks_mapped);
	tcase_add_test(tc, growing_a_mapped_block_moves_pages_not_copies);
	tcase_add_test(tc, each_thread_gets_its_own_arena);
	tcase_add_test(tc, arena_max_makes_threads_share);
	tcase_add_test(tc, a_replayed_thread_exit_hands_its_arena_to_the_next_thread);
	tcase_add_test(tc, secondary_arena_chunks_are_found_by_masking);
	tcase_add_test(tc, arena_cap_per_core_once_arena_test_is_passed);
	tcase_add_test(tc, thread_exit_drains_the_tcache_home);
	tcase_add_test(tc, tcache_record_is_the_first_chunk_of_the_arena);
	tcase_add_test(tc, realloc_grows_in_place_into_free_space);
	tcase_add_test(tc, secondary_arena_spans_sub_heaps_and_drops_empty_ones);
	tcase_add_test(tc, fork_child_allocates_on_every_arena);
	tcase_add_test(tc, double_free_aborts_with_the_message);
	tcase_add_test(tc, checker_reports_broken_tags_and_lists);
	tcase_add_test(tc, checker_rejects_a_foreign_tcache_word);
	tcase_add_test(tc, malloc_aborts_on_a_smashed_list);
	tcase_add_test(tc, safe_linking_refuses_a_forged_tcache_link);
	tcase_add_test(tc, large_bin_spares_the_skip_list_leader);
	tcase_add_test(tc, a_shared_arena_puts_two_threads_on_one_cache_line);
	tcase_add_test_raise_signal(tc, double_free_raises_sigabrt, SIGABRT);
	suite_add_tcase(s, tc);
	return s;
}

TL_MAIN(bins_suite)
