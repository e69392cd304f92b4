/* Check suite of the `slab` policy (jemalloc 5.3).  Expected values come
 * from the model's facts: the size-class ladder (8, 16-byte steps to 128,
 * then four classes per doubling), small classes below four pages, slabs
 * of lcm(page, size) bytes, tcache bins of clamp(2 * regions, 20, 200)
 * slots filled half at a time, decay 0 = at once and -1 = never. */
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "testlib_events.h"
#include "side_state.h"
#include "slab_fast.h"

/* A policy statistic named printf-style, e.g. "classes.%u.slabs". */
static double pstat(hl_heap_t *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static double pstat(hl_heap_t *h, const char *fmt, ...)
{
	char full[200] = "policy_stats.";
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(full + strlen(full), sizeof full - strlen(full), fmt, ap);
	va_end(ap);
	return tl_stat(h, full);
}

/* The ladder, written from its definition. */
static size_t ladder(unsigned i)
{
	if (i == 0)
		return 8;
	if (i <= 8)
		return 16 * i;
	unsigned k = 7 + (i - 9) / 4, j = (i - 9) % 4 + 1;
	return ((size_t)1 << k) + ((size_t)j << (k - 2));
}

static size_t lcm_page(size_t size)
{
	size_t a = tl_page(), b = size;
	while (b) {
		size_t t = a % b;
		a = b;
		b = t;
	}
	return tl_page() / a * size;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void nap_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* ---- size classes -------------------------------------------------------- */

START_TEST(size_class_table)
{
	hl_heap_t *h = tl_heap("slab", NULL);
	static const size_t ask[][2] = { { 1, 8 }, { 8, 8 }, { 9, 16 }, { 17, 32 }, { 128, 128 },
					 { 129, 160 }, { 1025, 1280 }, { 14336, 14336 } };
	for (size_t i = 0; i < sizeof ask / sizeof ask[0]; i++) {
		void *p = hl_malloc(h, ask[i][0]);
		ck_assert_uint_eq(hl_usable_size(h, p), ask[i][1]);
		hl_free(h, p);
	}
	/* 14336 is the last small class, 14337 needs a large extent */
	unsigned last = 0;
	while (ladder(last + 1) < 4 * tl_page())
		last++;
	ck_assert_uint_eq(ladder(last), 14336);
	ck_assert_uint_eq(pstat(h, "classes.%u.size", last), 14336);
	void *small = hl_malloc(h, 14336);
	ck_assert_uint_eq(pstat(h, "classes.%u.live_regions", last), 1);
	ck_assert_int_eq(pstat(h, "large_extents"), 0);
	hl_free(h, small);
	void *big = hl_malloc(h, 14337);
	ck_assert_uint_eq(hl_usable_size(h, big), 16384);
	ck_assert_uint_eq((uintptr_t)big % tl_page(), 0);
	ck_assert_int_eq(pstat(h, "large_extents"), 1);
	hl_free(h, big);
	/* large requests round up the same ladder, to whole pages */
	for (size_t n = 14337; n < (4u << 20); n = n * 5 / 4 + 4093) {
		unsigned k = 0;
		while (ladder(k) < n)
			k++;
		void *q = hl_malloc(h, n);
		ck_assert_uint_eq(hl_usable_size(h, q), ladder(k));
		ck_assert_uint_eq(ladder(k) % tl_page(), 0);
		hl_free(h, q);
	}
	for (unsigned i = 0; i <= last; i++) {
		/* regions sit one class size apart, the 8-byte class too (512 to
		 * a 4 KiB slab, as jemalloc's) */
		size_t stride = ladder(i);
		ck_assert_uint_eq(pstat(h, "classes.%u.size", i), ladder(i));
		ck_assert_uint_eq(pstat(h, "classes.%u.stride", i), stride);
		ck_assert_uint_eq(pstat(h, "classes.%u.slab_size", i), lcm_page(stride));
		ck_assert_uint_eq(pstat(h, "classes.%u.regions_per_slab", i), lcm_page(stride) / stride);
	}
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

START_TEST(regions_adjacent_no_header)
{
	hl_heap_t *h = tl_heap("slab", NULL);
	char *p = hl_malloc(h, 64), *q = hl_malloc(h, 64);
	ck_assert_int_eq(q - p, 64);
	ck_assert_uint_eq(hl_usable_size(h, p), 64);
	char *a = hl_malloc(h, 40), *b = hl_malloc(h, 40);
	ck_assert_int_eq(b - a, 48);
	ck_assert_uint_eq(hl_usable_size(h, a), 48);
	/* the first region of a fresh slab is the slab's first byte */
	ck_assert_uint_eq((uintptr_t)p % tl_page(), 0);
	ck_assert_uint_eq((uintptr_t)a % tl_page(), 0);
	memset(p, 0xff, 128);  /* both blocks, edge to edge: nothing between to smash */
	tl_check_clean(h);
	hl_free(h, p);
	hl_free(h, q);
	hl_free(h, a);
	hl_free(h, b);
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

/* ---- thread cache ------------------------------------------------------- */

START_TEST(tcache_fill_hit_flush)
{
	hl_heap_t *h = tl_heap("slab", NULL);
	unsigned c64 = 4;                      /* 8, 16, 32, 48, 64 */
	ck_assert_uint_eq(ladder(c64), 64);
	size_t nregs = tl_page() / 64, slots = 2 * nregs > 200 ? 200 : 2 * nregs;
	void *p = hl_malloc(h, 64);
	ck_assert_int_eq(pstat(h, "tcache_fills"), 1);
	ck_assert_uint_eq(pstat(h, "classes.%u.cached_regions", c64), slots / 2 - 1);
	ck_assert_uint_eq(pstat(h, "classes.%u.live_regions", c64), 1);
	void *q = hl_malloc(h, 64);
	ck_assert_int_eq(pstat(h, "tcache_hits"), 1);
	hl_free(h, q);
	hl_free(h, p);
	ck_assert_uint_eq(pstat(h, "classes.%u.live_regions", c64), 0);
	/* free more than a bin holds: it flushes its older half */
	void **v = malloc(sizeof(void *) * 2 * slots);
	for (size_t i = 0; i < 2 * slots; i++)
		v[i] = hl_malloc(h, 64);
	ck_assert_int_eq(pstat(h, "tcache_flushes"), 0);
	for (size_t i = 0; i < 2 * slots; i++)
		hl_free(h, v[i]);
	ck_assert_int_ge(pstat(h, "tcache_flushes"), 1);
	ck_assert_uint_le(pstat(h, "classes.%u.cached_regions", c64), slots);
	tl_check_clean(h);
	free(v);
	hl_heap_destroy(h);
}
END_TEST

START_TEST(tcache_off)
{
	hl_heap_t *h = tl_heap("slab", "tcache:false");
	void *p = hl_malloc(h, 64), *q = hl_malloc(h, 64);
	ck_assert_int_eq((char *)q - (char *)p, 64);
	ck_assert_uint_eq(pstat(h, "classes.%u.cached_regions", 4u), 0);
	hl_free(h, p);
	ck_assert_uint_eq(pstat(h, "classes.%u.live_regions", 4u), 1);
	ck_assert_int_eq(pstat(h, "tcache_hits"), 0);
	hl_free(h, q);
	/* the emptied slab went back to the arena as dirty pages */
	ck_assert_uint_eq(pstat(h, "classes.%u.slabs", 4u), 0);
	ck_assert_uint_ge(pstat(h, "dirty_bytes"), tl_page());
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

/* A slab that gets a region back while the bin has no slabcur joins the
 * nonfull heap, and the next region comes from the oldest slab there
 * (jemalloc 5.3's arena_bin_lower_slab).  Measured on jemalloc 5.3.0 with
 * tcache:false: six 2 KiB blocks fill three one-page slabs S0 S1 S2; a2
 * (S1), a0 and a1 (S0: it empties, slabcur is none) and a5 (S2) freed;
 * the next malloc(2048) is a2, not a5. */
START_TEST(bin_without_slabcur_takes_the_oldest)
{
	hl_heap_t *h = tl_heap("slab", "tcache:false");
	char *a[6];
	for (int i = 0; i < 6; i++)
		a[i] = hl_malloc(h, 2048);
	for (int i = 0; i < 6; i += 2)
		ck_assert_ptr_eq(a[i + 1], a[i] + 2048);   /* two a slab */
	hl_free(h, a[2]);
	hl_free(h, a[0]);
	hl_free(h, a[1]);
	hl_free(h, a[5]);
	char *p = hl_malloc(h, 2048);
	ck_assert_ptr_eq(p, a[2]);
	tl_check_clean(h);
	hl_free(h, p);
	hl_free(h, a[3]);
	hl_free(h, a[4]);
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

/* ---- extents ------------------------------------------------------------ */

typedef struct { size_t dirty_blocks, dirty_bytes, live_large; } ext_count_t;

static int count_extents(const hl_block_t *b, void *arg)
{
	ext_count_t *c = arg;
	if (b->state == HL_BLOCK_DIRTY) {
		c->dirty_blocks++;
		c->dirty_bytes += b->size;
	}
	return 0;
}

/* The dirty extents of @p h, counted by its walker. */
static ext_count_t dirty_extents(hl_heap_t *h)
{
	ext_count_t n = { 0 };
	hl_walk(h, count_extents, &n);
	return n;
}

START_TEST(extents_split_and_merge)
{
	hl_heap_t *h = tl_heap("slab", "tcache:false,dirty_decay_ms:-1");
	size_t sz = 64 * 1024, ext = sz + tl_page();   /* a large block's extent has a page more */
	char *a = hl_malloc(h, sz), *b = hl_malloc(h, sz), *c = hl_malloc(h, sz);
	/* carved from one chunk in address order: split, lowest first */
	ck_assert_ptr_eq(b, a + ext);
	ck_assert_ptr_eq(c, b + ext);
	hl_free(h, a);
	hl_free(h, b);
	ext_count_t n = { 0 };
	hl_walk(h, count_extents, &n);
	ck_assert_uint_eq(n.dirty_blocks, 1);   /* a and b merged */
	ck_assert_uint_eq(n.dirty_bytes, 2 * ext);
	/* dirty pages are reused first: the lowest fitting extent */
	char *d = hl_malloc(h, sz);
	ck_assert_ptr_eq(d, a);
	tl_check_clean(h);
	hl_free(h, d);
	hl_free(h, c);
	ck_assert_uint_eq(dirty_extents(h).dirty_blocks, 1);
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

/* jemalloc 5.3's dirty ecache: an extent is cut only for a request of
 * 1/64 of its bucket's size and up (opt_lg_extent_max_active_fit), and an
 * extent under 16 KiB freed to dirty is filed unmerged (delay_coalesce).
 * A freed 4 MiB block is an extent of 4 MiB and a page, filed with the
 * 5 MiB ones (sl_eset_bucket): measured on jemalloc 5.3.0 with
 * tcache:false, a 64 KiB block lies elsewhere and an 80 KiB one at its
 * start. */
START_TEST(dirty_fit_and_delayed_merge)
{
	hl_heap_t *h = tl_heap("slab", "tcache:false,dirty_decay_ms:-1");
	size_t big = 4u << 20;
	char *a = hl_malloc(h, big);
	hl_free(h, a);
	/* a one-page slab (64-byte class) is not cut from the 4 MiB extent */
	char *s = hl_malloc(h, 64);
	ck_assert(s < a || s >= a + big);
	/* 16 and 64 KiB (extents of 20 and 68) are under 1/64 of 5 MiB: not
	 * cut either; 80 KiB is */
	char *l = hl_malloc(h, 16 << 10);
	ck_assert(l < a || l >= a + big);
	char *k = hl_malloc(h, 64 << 10);
	ck_assert(k < a || k >= a + big);
	char *m = hl_malloc(h, 80 << 10);
	ck_assert_ptr_eq(m, a);
	hl_free(h, m);
	hl_free(h, k);
	hl_free(h, l);
	hl_free(h, s);
	tl_check_clean(h);
	hl_heap_destroy(h);
	/* two neighbouring 8 KiB regions, each the one region of a two-page
	 * slab: freed, their extents stay apart (both dirty) until a purge
	 * merges them, and then they leave */
	h = tl_heap("slab", "tcache:false,dirty_decay_ms:-1");
	char *x = hl_malloc(h, 8 << 10), *y = hl_malloc(h, 8 << 10);
	ck_assert_ptr_eq(y, x + (8 << 10));
	hl_free(h, x);
	hl_free(h, y);
	ext_count_t n = dirty_extents(h);
	ck_assert_uint_eq(n.dirty_blocks, 2);
	ck_assert_uint_eq(n.dirty_bytes, 16 << 10);
	tl_check_clean(h);
	ck_assert_uint_eq(hl_trim(h, 0), 16 << 10);
	ck_assert_uint_eq(dirty_extents(h).dirty_blocks, 0);
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

/* True when the @p n bytes at @p p all read zero. */
static bool all_zero(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* calloc as jemalloc 5.3 clears: a large block from a zeroed extent (fresh,
 * or purged to returned) not at all, from a dirty one by MADV_DONTNEED over
 * the extent (os.purged_bytes grows by it), from the thread cache and a
 * small region with memset (no purge).  Every block reads zero. */
START_TEST(calloc_clears_as_jemalloc)
{
	hl_heap_t *h = tl_heap("slab", "debug:off,dirty_decay_ms:-1");
	size_t big = 1 << 20, cached = 20 * 1024;
	double purged = tl_stat(h, "os.purged_bytes");
	char *p = hl_calloc(h, 1, big);
	ck_assert(all_zero(p, big));
	ck_assert_double_eq(tl_stat(h, "os.purged_bytes"), purged);   /* fresh: nothing to do */
	tl_fill(p, big, 3);
	hl_free(h, p);
	char *q = hl_calloc(h, 1, big);
	ck_assert_ptr_eq(q, p);                                         /* the dirty extent again */
	ck_assert(all_zero(q, big));
	ck_assert_double_eq(tl_stat(h, "os.purged_bytes"), purged + big + tl_page()); /* zeroed by a purge of the extent */
	char *c = hl_calloc(h, 1, cached);
	tl_fill(c, cached, 4);
	hl_free(h, c);                                                  /* into the thread cache */
	char *c2 = hl_calloc(h, 1, cached);
	ck_assert_ptr_eq(c2, c);
	ck_assert(all_zero(c2, cached));
	char *r = hl_malloc(h, 100);
	tl_fill(r, 100, 5);
	hl_free(h, r);
	char *r2 = hl_calloc(h, 1, 100);
	ck_assert_ptr_eq(r2, r);
	ck_assert(all_zero(r2, 100));
	ck_assert_double_eq(tl_stat(h, "os.purged_bytes"), purged + big + tl_page()); /* memset, not purged */
	tl_check_clean(h);
	hl_free(h, q);
	hl_free(h, c2);
	hl_free(h, r2);
	tl_check_clean(h);
	hl_heap_destroy(h);

	/* decay 0: a freed extent is purged to returned at once, zeroed */
	h = tl_heap("slab", "debug:off,dirty_decay_ms:0");
	p = hl_malloc(h, big);
	tl_fill(p, big, 6);
	hl_free(h, p);
	purged = tl_stat(h, "os.purged_bytes");
	q = hl_calloc(h, 1, big);
	ck_assert_ptr_eq(q, p);
	ck_assert(all_zero(q, big));
	ck_assert_double_eq(tl_stat(h, "os.purged_bytes"), purged);
	tl_check_clean(h);
	hl_free(h, q);
	hl_heap_destroy(h);
}
END_TEST

START_TEST(memalign_small_and_large)
{
	hl_heap_t *h = tl_heap("slab", NULL);
	size_t aligns[] = { 32, 64, 256, 4096, 65536, 1 << 20 };
	for (size_t i = 0; i < sizeof aligns / sizeof aligns[0]; i++) {
		void *p = hl_memalign(h, aligns[i], 100);
		ck_assert_ptr_nonnull(p);
		ck_assert_uint_eq((uintptr_t)p % aligns[i], 0);
		tl_check_clean(h);
		hl_free(h, p);
	}
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

START_TEST(realloc_in_place)
{
	hl_heap_t *h = tl_heap("slab", "tcache:false,dirty_decay_ms:-1");
	/* within one class a block stays */
	char *p = hl_malloc(h, 130);
	ck_assert_ptr_eq(hl_realloc(h, p, 160), p);
	/* a large block grows into the free extent after it */
	char *big = hl_malloc(h, 64 * 1024);
	tl_fill(big, 64 * 1024, 7);
	char *grown = hl_realloc(h, big, 96 * 1024);
	ck_assert_ptr_eq(grown, big);
	ck_assert_uint_eq(hl_usable_size(h, grown), 96 * 1024);
	ck_assert(tl_intact(grown, 64 * 1024, 7));
	tl_check_clean(h);
	/* and shrinks in place, its tail becoming dirty pages */
	double dirty = pstat(h, "dirty_bytes");
	ck_assert_ptr_eq(hl_realloc(h, grown, 40 * 1024), big);
	ck_assert_uint_eq(hl_usable_size(h, big), 40 * 1024);
	ck_assert_double_eq(pstat(h, "dirty_bytes"), dirty + 56 * 1024);
	/* a neighbour in the way makes it move: a 48 KiB block (an extent of
	 * 52) takes the freed tail of 56, past the extent's extra page, as on
	 * jemalloc 5.3.0 (a 52 KiB block's search starts a bucket above the
	 * tail's and goes elsewhere: sl_eset_first_bucket) */
	char *wall = hl_malloc(h, 48 * 1024);
	ck_assert_ptr_eq(wall, big + 40 * 1024 + tl_page());
	char *moved = hl_realloc(h, big, 80 * 1024);
	ck_assert_ptr_ne(moved, big);
	tl_check_clean(h);
	hl_free(h, moved);
	hl_free(h, wall);
	hl_free(h, p);
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

START_TEST(tcache_gc_flushes_idle_bins)
{
	hl_heap_t *h = tl_heap("slab", NULL);
	hl_free(h, hl_malloc(h, 64));
	double idle = pstat(h, "classes.%u.cached_regions", 4u);
	ck_assert_double_gt(idle, 0);
	/* one GC step per 64 KiB allocated and one per 64 KiB freed, one bin
	 * per step: six sweeps over every bin (at most 80) while class 64
	 * stays untouched */
	for (int i = 0; i < 3 * 80 * 64; i++)
		hl_free(h, hl_malloc(h, 1024));
	ck_assert_double_lt(pstat(h, "classes.%u.cached_regions", 4u), idle / 2);
	ck_assert_int_gt(pstat(h, "tcache_flushes"), 0);
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

/* When a GC step comes, and which bin it visits, as measured on the
 * installed jemalloc 5.3.0 (stats.arenas.0.bins.2.nflushes read after the
 * n-th call of this very sequence, one process per n): malloc(14336),
 * malloc(32), then malloc(8192) and free by turns, in a process whose
 * first call is libstdc++'s malloc(72704) before main (libjemalloc.so.2
 * links libstdc++; fidelity/README.md, "Placement").  Allocated and freed
 * bytes are counted apart and a step runs when either count reaches
 * 64 KiB: the 80 KiB block makes step 0 (bin 0); bin 2 (32 bytes) is
 * visited at step 2 (its low water set at the 99 regions the fill left)
 * and flushed at step 43, by the call of index 350 (from the 14336-byte
 * one), the 176th malloc(8192).  One counter for both would flush it
 * elsewhere. */
START_TEST(tcache_gc_steps_as_jemalloc)
{
	hl_heap_t *h = tl_heap("slab", NULL);
	ck_assert_uint_eq(ladder(2), 32);
	void *pool = hl_malloc(h, 72704);
	void *first = hl_malloc(h, 14336), *kept = hl_malloc(h, 32), *p = NULL;
	double idle = pstat(h, "classes.%u.cached_regions", 2u);
	ck_assert_double_eq(idle, 99);
	for (int i = 2; i < 350; i++) {
		if (i % 2 == 0)
			p = hl_malloc(h, 8192);
		else
			hl_free(h, p);
	}
	ck_assert_double_eq(pstat(h, "classes.%u.cached_regions", 2u), idle);
	p = hl_malloc(h, 8192);   /* call 350 */
	ck_assert_double_eq(pstat(h, "classes.%u.cached_regions", 2u), idle - (idle - (int)idle / 4));
	hl_free(h, p);
	hl_free(h, kept);
	hl_free(h, first);
	hl_free(h, pool);
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

typedef struct { size_t live, cached, free_; } reg_count_t;

static int count_regions(const hl_block_t *b, void *arg)
{
	reg_count_t *c = arg;
	if (b->size != 64)
		return 0;
	c->live += b->state == HL_BLOCK_LIVE;
	c->cached += b->state == HL_BLOCK_CACHED;
	c->free_ += b->state == HL_BLOCK_FREE;
	return 0;
}

START_TEST(walker_sees_live_cached_free)
{
	hl_heap_t *h = tl_heap("slab", NULL);
	void *v[10];
	for (int i = 0; i < 10; i++)
		v[i] = hl_malloc(h, 64);
	for (int i = 0; i < 4; i++)
		hl_free(h, v[i]);
	reg_count_t c = { 0 };
	hl_walk(h, count_regions, &c);
	ck_assert_uint_eq(c.live, 6);
	ck_assert_uint_eq(c.cached, pstat(h, "classes.%u.cached_regions", 4u));
	ck_assert_uint_eq(c.live + c.cached + c.free_, tl_page() / 64);
	for (int i = 4; i < 10; i++)
		hl_free(h, v[i]);
	hl_heap_destroy(h);
}
END_TEST

/* ---- decay -------------------------------------------------------------- */

enum { KIB_BLOCKS = 200 * 1024 };   /* 200 MB of 1 KiB blocks */

/* Allocates @p n 1 KiB blocks, touches each, frees all; returns peak RSS. */
static double fill_and_free(hl_heap_t *h, size_t n)
{
	char **v = malloc(n * sizeof *v);
	ck_assert_ptr_nonnull(v);
	for (size_t i = 0; i < n; i++) {
		v[i] = hl_malloc(h, 1024);
		ck_assert_ptr_nonnull(v[i]);
		v[i][0] = 1;
	}
	double peak = tl_stat(h, "resident_bytes");
	ck_assert_double_ge(peak, (double)n * 1024 * 0.9);
	for (size_t i = 0; i < n; i++)
		hl_free(h, v[i]);
	free(v);
	return peak;
}

/* Allocator activity that reaches the arena: 64 KiB blocks are above
 * tcache_max, so each malloc and free ticks decay.  (Small blocks would
 * only hit the thread cache, which in jemalloc 5.3 ticks nothing: fidelity
 * row jemalloc.decay-100ms-tcache-hits.) */
static void arena_activity(hl_heap_t *h)
{
	for (int i = 0; i < 50; i++)
		hl_free(h, hl_malloc(h, 64 << 10));
}

/* Polls RSS until it is below a tenth of @p peak or @p seconds pass. */
static bool falls_within(hl_heap_t *h, double peak, double seconds, bool activity)
{
	double end = now_s() + seconds;
	do {
		if (activity)
			arena_activity(h);
		if (tl_stat(h, "resident_bytes") < peak / 10)
			return true;
		nap_ms(10);
	} while (now_s() < end);
	return false;
}

START_TEST(decay_with_activity)
{
	hl_heap_t *h = tl_heap("slab", "dirty_decay_ms:100,muzzy_decay_ms:100,debug:off");
	double peak = fill_and_free(h, KIB_BLOCKS);
	ck_assert_msg(falls_within(h, peak, 2.0, true), "resident %.0f of peak %.0f after 2 s",
		      tl_stat(h, "resident_bytes"), peak);
	ck_assert_int_gt(pstat(h, "purge_lazy_calls"), 1);   /* dirty -> muzzy, in steps */
	ck_assert_int_gt(pstat(h, "purge_calls"), 1);        /* muzzy -> returned */
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

START_TEST(decay_background_no_activity)
{
	hl_heap_t *h = tl_heap("slab", "background_thread:true,dirty_decay_ms:100,muzzy_decay_ms:100,debug:off");
	ck_assert_int_eq(pstat(h, "background_thread"), 1);
	double peak = fill_and_free(h, KIB_BLOCKS);
	ck_assert_msg(falls_within(h, peak, 2.0, false), "resident %.0f of peak %.0f after 2 s",
		      tl_stat(h, "resident_bytes"), peak);
	ck_assert_int_gt(pstat(h, "background_runs"), 0);
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

/* Decay follows a curve: part of the dirty pages are purged, some stay. */
START_TEST(decay_is_gradual)
{
	hl_heap_t *h = tl_heap("slab", "dirty_decay_ms:1000,debug:off");
	fill_and_free(h, 16 * 1024);
	double total = pstat(h, "dirty_bytes"), lowest = total;
	bool partial = false;
	for (double end = now_s() + 3.0; !partial && now_s() < end; nap_ms(10)) {
		arena_activity(h);
		double d = pstat(h, "dirty_bytes");
		lowest = d < lowest ? d : lowest;
		partial = d > total * 0.1 && d < total * 0.9;
	}
	ck_assert_msg(partial, "dirty bytes went from %.0f to %.0f without a step between", total, lowest);
	ck_assert_int_gt(pstat(h, "purge_calls"), 0);
	hl_heap_destroy(h);
}
END_TEST

/* Thread-cache hits tick nothing (jemalloc 5.3: only fills, flushes and
 * arena allocations and frees do).  Measured on the real library by
 * fidelity row jemalloc.decay-100ms-tcache-hits: with 100 ms decay and
 * only malloc(64)/free going on for 1 s, 100 % of a freed 200 MB heap
 * stays resident in most runs (the GC's flushes tick, and jemalloc's
 * ticker is random: 2 runs of 9 purged); the model's countdown does not
 * reach 1000 ticks in 0.5 s of it. */
START_TEST(tcache_hits_do_not_decay)
{
	hl_heap_t *h = tl_heap("slab", "dirty_decay_ms:100,muzzy_decay_ms:100,debug:off");
	double peak = fill_and_free(h, 16 * 1024);
	/* the frees above are arena work and may already have purged some
	 * (on a loaded machine they take long enough): only the phase of
	 * cache hits below is judged */
	double epochs = pstat(h, "decay_epochs"), resident = tl_stat(h, "resident_bytes");
	/* a fixed count of hits (100,000 pairs), spread over at least 0.5 s,
	 * so that the number of decay checks does not depend on the machine's
	 * speed: every 2,000 pairs the naps let epochs come due */
	for (int round = 0; round < 50; round++, nap_ms(10))
		for (int i = 0; i < 2000; i++)
			hl_free(h, hl_malloc(h, 64));
	/* the tcache GC's flushes do tick (in jemalloc too): the flushes of
	 * the cached 1 KiB regions reach the arena, so a check or two comes.
	 * Were hits ticking, 200,000 operations would bring 200 checks, each
	 * advancing both decays' epochs (dirty and muzzy). */
	double advanced = pstat(h, "decay_epochs") - epochs;
	ck_assert_msg(advanced <= 8, "%.0f decay epochs advanced during cache hits", advanced);
	if (advanced == 0)
		ck_assert_double_ge(tl_stat(h, "resident_bytes"), resident * 0.9);
	ck_assert(falls_within(h, peak, 2.0, true));   /* arena work does decay */
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

START_TEST(decay_never)
{
	hl_heap_t *h = tl_heap("slab", "dirty_decay_ms:-1,muzzy_decay_ms:-1,debug:off");
	double peak = fill_and_free(h, 16 * 1024);
	ck_assert(!falls_within(h, peak, 0.3, true));
	ck_assert_double_ge(tl_stat(h, "resident_bytes"), peak * 0.9);
	ck_assert_int_eq(pstat(h, "purge_lazy_calls"), 0);
	ck_assert_int_eq(pstat(h, "purge_calls"), 0);
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

START_TEST(decay_zero_at_once)
{
	hl_heap_t *h = tl_heap("slab", "dirty_decay_ms:0,debug:off");
	double peak = fill_and_free(h, 16 * 1024);
	ck_assert_double_lt(tl_stat(h, "resident_bytes"), peak / 10);
	ck_assert_int_eq(pstat(h, "dirty_bytes"), 0);
	/* muzzy_decay_ms defaults to 0: straight to MADV_DONTNEED */
	ck_assert_int_eq(pstat(h, "muzzy_decay_ms"), 0);
	ck_assert_int_eq(pstat(h, "purge_lazy_calls"), 0);
	ck_assert_int_gt(pstat(h, "purge_calls"), 0);
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

START_TEST(decay_defaults)
{
	hl_heap_t *h = tl_heap("slab", NULL);
	ck_assert_int_eq(pstat(h, "dirty_decay_ms"), 10000);
	ck_assert_int_eq(pstat(h, "muzzy_decay_ms"), 0);
	ck_assert_int_eq(pstat(h, "background_thread"), 0);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	ck_assert_int_eq(pstat(h, "narenas"), ncpu > 1 ? 4 * ncpu : 1);
	hl_heap_destroy(h);
}
END_TEST

/* jemalloc 5.3 turns its background threads off in a fork child
 * (background_thread_postfork_child).  Measured on the real library with
 * fidelity row jemalloc.fork-child-no-background-thread (probe
 * jemalloc_decay 200 2000 idle fork, MALLOC_CONF=background_thread:true,
 * dirty_decay_ms:100,muzzy_decay_ms:100): nothing of what the child freed
 * leaves while it sleeps 2 s (drop 0 %, and 100 % kept on a quiet
 * machine).  The model's child must keep it too, while the parent's thread
 * goes on. */
START_TEST(fork_child_has_no_background_thread)
{
	hl_heap_t *h = tl_heap("slab", "background_thread:true,dirty_decay_ms:100,muzzy_decay_ms:100,debug:off");
	hl_free(h, hl_malloc(h, 100));
	/* Fork only once the thread has made a pass: a thread still starting
	 * can hold the C library's (or a sanitizer's) allocator lock, which
	 * GCC 12's ASan does not take across fork, and the child then hangs
	 * in its first malloc (seen in CI under ASan+UBSan). */
	for (int i = 0; i < 500 && pstat(h, "background_runs") < 1; i++)
		nap_ms(10);
	ck_assert_int_ge(pstat(h, "background_runs"), 1);
	fflush(NULL);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		double running = pstat(h, "background_thread");
		double runs0 = pstat(h, "background_runs");
		double peak = fill_and_free(h, 8192);
		double freed = tl_stat(h, "resident_bytes");
		nap_ms(1000);
		double rss = tl_stat(h, "resident_bytes");
		bool kept = rss >= freed - peak * 0.01;   /* nothing purged while asleep */
		if (!kept || running != 0 || pstat(h, "background_runs") != runs0)
			fprintf(stderr, "child: resident %.0f -> %.0f of peak %.0f, thread %.0f, runs %.0f -> %.0f\n",
				freed, rss, peak, running, runs0, pstat(h, "background_runs"));
		_exit(running == 0 && kept && pstat(h, "background_runs") == runs0 && hl_check(h, stderr) == 0 ? 0 : 1);
	}
	int status = 0;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	ck_assert_int_eq(pstat(h, "background_thread"), 1);
	hl_heap_destroy(h);
}
END_TEST

/* In a fork child only the forking thread lives.  jemalloc 5.3 keeps
 * the other threads' tcaches as they were (tsd_postfork_child keeps only
 * the forking thread's tsd): flushing them could free a block twice when
 * a thread was halfway through a push or pop at the fork, which
 * bench/stress caught.  So the child must give none of another thread's
 * cached blocks back: the blocks not free stay as many as before. */
typedef struct cacher {
	hl_heap_t *h;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int stage;                 /* 1: blocks cached; 2: may exit */
} cacher_t;

static void *cache_and_wait(void *arg)
{
	cacher_t *c = arg;
	void *p[20];
	for (int i = 0; i < 20; i++)
		p[i] = hl_malloc(c->h, 100);
	for (int i = 0; i < 20; i++)
		hl_free(c->h, p[i]);
	pthread_mutex_lock(&c->lock);
	c->stage = 1;
	pthread_cond_broadcast(&c->cond);
	while (c->stage != 2)
		pthread_cond_wait(&c->cond, &c->lock);
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

static int count_not_free(const hl_block_t *b, void *arg)
{
	if (b->state == HL_BLOCK_LIVE || b->state == HL_BLOCK_CACHED)
		++*(size_t *)arg;
	return 0;
}

START_TEST(fork_child_leaves_other_threads_tcaches_alone)
{
	hl_heap_t *h = tl_heap("slab", "debug:off");
	cacher_t c = { .h = h, .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, cache_and_wait, &c), 0);
	pthread_mutex_lock(&c.lock);
	while (c.stage != 1)
		pthread_cond_wait(&c.cond, &c.lock);
	pthread_mutex_unlock(&c.lock);
	size_t before = 0;
	hl_walk(h, count_not_free, &before);
	ck_assert_uint_ge(before, 20);
	fflush(NULL);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		size_t after = 0;
		hl_walk(h, count_not_free, &after);
		if (after != before)
			fprintf(stderr, "child: %zu blocks not free, %zu before the fork\n", after, before);
		_exit(after == before && hl_check(h, stderr) == 0 ? 0 : 1);
	}
	int status = 0;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	pthread_mutex_lock(&c.lock);
	c.stage = 2;
	pthread_cond_broadcast(&c.cond);
	pthread_mutex_unlock(&c.lock);
	pthread_join(th, NULL);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	hl_heap_destroy(h);
}
END_TEST

/* ---- oversize: the huge arena and the eager purge ---------------------- */

/* Allocates @p mib MiB, touches it, frees it; returns the part of it still
 * resident right after the free (0..1). */
static double kept_after_free(hl_heap_t *h, size_t mib)
{
	double before = tl_stat(h, "resident_bytes");
	char *p = hl_malloc(h, mib << 20);
	ck_assert_ptr_nonnull(p);
	memset(p, 1, mib << 20);
	double peak = tl_stat(h, "resident_bytes") - before;
	hl_free(h, p);
	return (tl_stat(h, "resident_bytes") - before) / peak;
}

/* Expected values from the real jemalloc 5.3, fidelity rows
 * jemalloc.oversize-freed-at-once (a freed 10 MiB block: 2-3 % left),
 * jemalloc.below-oversize-kept (6 MiB: 100 %), jemalloc.oversize-decay-never
 * (10 MiB with dirty_decay_ms:-1: 100 %) and jemalloc.oversize-arena0
 * (10 MiB with oversize_threshold:0: 2 %, arena 0 keeps its 8 MiB purge). */
START_TEST(oversize_goes_to_huge_arena)
{
	hl_heap_t *h = tl_heap("slab", "debug:off");
	ck_assert_int_eq(pstat(h, "huge_arena"), 0);
	ck_assert_double_gt(kept_after_free(h, 6), 0.9);
	ck_assert_int_eq(pstat(h, "huge_arena"), 0);
	ck_assert_double_lt(kept_after_free(h, 10), 0.05);
	ck_assert_int_eq(pstat(h, "huge_arena"), 1);
	/* the huge arena is listed after the automatic ones, decay 0 */
	ck_assert_int_eq(pstat(h, "arena_list.1.huge"), 1);
	ck_assert_int_eq(pstat(h, "arena_list.1.dirty_decay_ms"), 0);
	ck_assert_int_eq(pstat(h, "arena_list.0.dirty_decay_ms"), 10000);
	tl_check_clean(h);
	hl_heap_destroy(h);

	h = tl_heap("slab", "dirty_decay_ms:-1,debug:off");
	ck_assert_double_gt(kept_after_free(h, 10), 0.9);
	ck_assert_int_eq(pstat(h, "arena_list.1.dirty_decay_ms"), -1);
	tl_check_clean(h);
	hl_heap_destroy(h);

	h = tl_heap("slab", "oversize_threshold:0,debug:off");
	ck_assert_double_lt(kept_after_free(h, 10), 0.05);
	ck_assert_int_eq(pstat(h, "huge_arena"), 0);
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

/* ---- arenas ------------------------------------------------------------- */

typedef struct {
	hl_heap_t *h;
	pthread_barrier_t *in, *out;
} spread_arg_t;

static void *spread_thread(void *arg)
{
	spread_arg_t *a = arg;
	void *p = hl_malloc(a->h, 64);
	pthread_barrier_wait(a->in);
	pthread_barrier_wait(a->out);
	hl_free(a->h, p);
	return NULL;
}

/* Starts @p n threads that each allocate, then reads the arena stats. */
static void spread(const char *conf, int n, int want_used, int want_max)
{
	hl_heap_t *h = tl_heap("slab", conf);
	pthread_barrier_t in, out;
	pthread_barrier_init(&in, NULL, (unsigned)n + 1);
	pthread_barrier_init(&out, NULL, (unsigned)n + 1);
	pthread_t th[8];
	spread_arg_t arg = { h, &in, &out };
	for (int i = 0; i < n; i++)
		pthread_create(&th[i], NULL, spread_thread, &arg);
	pthread_barrier_wait(&in);
	ck_assert_int_eq(pstat(h, "threads"), n);
	ck_assert_int_eq(pstat(h, "arenas_in_use"), want_used);
	ck_assert_int_eq(pstat(h, "max_threads_per_arena"), want_max);
	for (int i = 0; i < want_used; i++)
		ck_assert_int_ge(pstat(h, "arena_list.%d.threads", i), 1);
	pthread_barrier_wait(&out);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	ck_assert_int_eq(pstat(h, "threads"), 0);
	/* exiting threads drained their caches back into the slabs */
	ck_assert_int_eq(pstat(h, "classes.%u.cached_regions", 4u), 0);
	ck_assert_int_eq(pstat(h, "classes.%u.slabs", 4u), 0);
	tl_check_clean(h);
	hl_heap_destroy(h);
}

START_TEST(threads_spread_over_arenas)
{
	spread("narenas:4", 4, 4, 1);
	spread("narenas:2", 4, 2, 2);
	spread("narenas:1", 3, 1, 3);
}
END_TEST

/* ---- metadata ------------------------------------------------------------ */

enum { META_N = 2000 };

typedef struct {
	hl_heap_t *h;
	double on_arena, after_extents;
} meta_arg_t;

/* On a fresh thread (so on a new arena): one small block, the metadata
 * then, META_N large blocks, the metadata then; all freed. */
static void *meta_thread(void *arg)
{
	meta_arg_t *m = arg;
	void *first = hl_malloc(m->h, 64);
	m->on_arena = tl_stat(m->h, "os.metadata_resident_bytes");
	static void *v[META_N];
	for (int i = 0; i < META_N; i++)
		v[i] = hl_malloc(m->h, 16384);
	m->after_extents = tl_stat(m->h, "os.metadata_resident_bytes");
	for (int i = 0; i < META_N; i++)
		hl_free(m->h, v[i]);
	hl_free(m->h, first);
	return NULL;
}

/* jemalloc 5.3.0 gives each arena its metadata from the arena's own base:
 * the arena itself, 91,128 B, every page written at creation (88 KiB of
 * RSS per arena: 135 - 44 KiB per thread from
 * `MALLOC_CONF=narenas:1 LD_PRELOAD=libjemalloc.so.2
 * fidelity/probes/jemalloc_arenas 7` and without narenas:1, less a 4 KiB
 * slab page), and one 128-byte edata_t per extent, which a freed extent
 * gives back to its arena's own cache, never to another arena's
 * (src/edata_cache.c).  So a second arena needs records of its own even
 * when the first has thousands spare. */
START_TEST(each_arena_has_its_own_metadata)
{
	hl_heap_t *h = tl_heap("slab", "narenas:2,tcache:off,dirty_decay_ms:-1");
	static void *v[META_N];
	for (int i = 0; i < META_N; i++) /* arena 0: META_N extent records... */
		v[i] = hl_malloc(h, 16384);
	for (int i = 0; i < META_N; i++) /* ...given back as the extents merge */
		hl_free(h, v[i]);
	double before = tl_stat(h, "os.metadata_resident_bytes");
	meta_arg_t m = { h, 0, 0 };
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, meta_thread, &m), 0);
	pthread_join(th, NULL);
	ck_assert_int_eq(pstat(h, "arenas"), 2);
	ck_assert_double_ge(m.on_arena - before, 88 * 1024);
	ck_assert_double_ge(m.after_extents - m.on_arena, META_N * 128.0);
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

/* A thread's end: jemalloc 5.3's tcache_destroy purges the thread's arena
 * whole when no thread is left bound to it and no background thread runs,
 * whatever the decay time (the rows jemalloc.thread-exit-*: 3 % of a
 * freed 100 MB left under jemalloc, 100 % with narenas:1 or
 * background_thread:true). */
enum { END_BLOCKS = 4096 };

static void *end_thread(void *arg)
{
	hl_heap_t *h = arg;
	static void *v[END_BLOCKS];
	for (int i = 0; i < END_BLOCKS; i++)
		v[i] = hl_malloc(h, 1024);
	for (int i = 0; i < END_BLOCKS; i++)
		hl_free(h, v[i]);
	return NULL;
}

/* Dirty bytes of every arena once a thread has filled and emptied 4 MiB
 * and ended, the calling thread bound to arena 0 throughout. */
static double dirty_after_thread_end(const char *conf)
{
	hl_heap_t *h = tl_heap("slab", conf);
	void *mine = hl_malloc(h, 64);
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, end_thread, h), 0);
	pthread_join(th, NULL);
	double dirty = tl_stat(h, "policy_stats.dirty_bytes") + tl_stat(h, "policy_stats.muzzy_bytes");
	hl_free(h, mine);
	tl_check_clean(h);
	hl_heap_destroy(h);
	return dirty;
}

START_TEST(thread_end_purges_an_arena_left_empty)
{
	ck_assert_double_lt(dirty_after_thread_end("debug:off"), 64 * 1024);
	ck_assert_double_lt(dirty_after_thread_end("debug:off,dirty_decay_ms:-1,muzzy_decay_ms:-1"), 64 * 1024);
	ck_assert_double_ge(dirty_after_thread_end("debug:off,narenas:1"), 3.5 * 1024 * 1024);
	ck_assert_double_ge(dirty_after_thread_end("debug:off,background_thread:true"), 3.5 * 1024 * 1024);
}
END_TEST

/* ---- misuse ------------------------------------------------------------- */

START_TEST(double_free_aborts)
{
	hl_heap_t *h = tl_heap("slab", "ledger:off,tcache:false");
	void *p = hl_malloc(h, 64);
	void *keep = hl_malloc(h, 64);
	(void)keep;
	hl_free(h, p);
	hl_free(h, p);
}
END_TEST

START_TEST(foreign_pointer_aborts)
{
	hl_heap_t *h = tl_heap("slab", "ledger:off");
	static char outside[64];
	hl_free(h, outside + 16);
}
END_TEST

static void interior_free(const void *arg)
{
	(void)arg;
	hl_heap_t *h = hl_heap_new("slab", "ledger:off,debug:off"); /* slab's own check */
	char *p = hl_malloc(h, 64);
	hl_free(h, p + 16);
}

START_TEST(interior_pointer_message)
{
	tl_expect_abort(interior_free, NULL,
			"heaplab: slab: free of a pointer that is not the start of a region (0x");
}
END_TEST

/* A region's index is found by one multiply by the inverse of its
 * stride's odd factor (sl_region_index): in every small class, a whole
 * slab's regions go back one by one (the last index of the slab included)
 * and an address between two region starts is refused: 16-byte aligned
 * where the stride allows, else half a stride in. */
static size_t off_start_class;   /* the class interior_free_in_class uses */

static void interior_free_in_class(const void *arg)
{
	size_t stride = *(const size_t *)arg;
	hl_heap_t *h = hl_heap_new("slab", "ledger:off,debug:off");
	char *p = hl_malloc(h, off_start_class);
	hl_free(h, p + (stride > 16 ? 16 * ((stride / 16 + 1) / 2) : stride / 2));
}

START_TEST(region_starts_in_every_class)
{
	hl_heap_t *h = tl_heap("slab", "tcache:off,ledger:off,debug:off");
	for (unsigned i = 0; ladder(i) < 4 * tl_page(); i++) {
		size_t size = ladder(i), stride = size;
		size_t nregs = (size_t)pstat(h, "classes.%u.regions_per_slab", i);
		ck_assert_uint_gt(nregs, 0);
		char **r = malloc(nregs * sizeof *r);
		ck_assert_ptr_nonnull(r);
		for (size_t k = 0; k < nregs; k++)
			r[k] = hl_malloc(h, size);
		ck_assert_uint_eq(pstat(h, "classes.%u.slabs", i), 1);
		for (size_t k = nregs; k-- > 0;)
			hl_free(h, r[k]);
		ck_assert_uint_eq(pstat(h, "classes.%u.live_regions", i), 0);
		free(r);
		off_start_class = size;
		tl_expect_abort(interior_free_in_class, &stride,
				"heaplab: slab: free of a pointer that is not the start of a region (0x");
	}
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

/* ---- tcache bins: jemalloc 5.3's marks ------------------------------------
 * A second slab state (side_state.h) whose thread record's tcache the tests
 * reach by type.  Class 4 is 64 bytes. */

/* A second state whose thread cached one 64-byte region: its tcache. */
static sl_tcache_t *side_with_cached_64(tl_side_t *x)
{
	sl_state_t *s = tl_side_open(x, "slab", "");
	ck_assert_uint_eq(ladder(4), 64);
	x->pol->free(s, &x->t, x->pol->malloc(s, &x->t, 64));
	tl_side_clean(x);
	return x->t.policy_tls;
}

START_TEST(malloc_hits_stop_at_the_low_water_mark)
{
	tl_side_t x;
	sl_tcache_t *tc = side_with_cached_64(&x);
	sl_state_t *s = x.state;
	unsigned n = sl_cbin_ncached(tc, 4);
	ck_assert_uint_eq(n, s->ncached_max[4] / 2);        /* a fill brings half */
	ck_assert_uint_eq(sl_cbin_low_water(&tc->bins[4]), 0); /* it was empty */
	/* a GC visit of the bin: nothing idle (its low water was 0), and the
	 * mark is set at what it holds now */
	tc->next_gc = 4;
	tc->gc_bytes[SL_GC_ALLOC] = 0;
	sl_tcache_event(s, tc, SL_GC_ALLOC);
	ck_assert_uint_eq(sl_cbin_ncached(tc, 4), n);
	ck_assert_uint_eq(sl_cbin_low_water(&tc->bins[4]), n);
	/* the hit refuses at the mark and changes nothing */
	ck_assert_ptr_null(sl_malloc_hit(s, &x.t, 64));
	ck_assert_uint_eq(sl_cbin_ncached(tc, 4), n);
	/* the slow path pops the top and lowers the mark with it */
	void *top = *tc->head[4];
	void *p = x.pol->malloc(s, &x.t, 64);
	ck_assert_ptr_eq(p, top);
	ck_assert_uint_eq(sl_cbin_ncached(tc, 4), n - 1);
	ck_assert_uint_eq(sl_cbin_low_water(&tc->bins[4]), n - 1);
	/* a push does not raise it; the hit pops down to it, then refuses */
	ck_assert(sl_free_hit(s, &x.t, p));
	ck_assert_uint_eq(sl_cbin_low_water(&tc->bins[4]), n - 1);
	ck_assert_ptr_eq(sl_malloc_hit(s, &x.t, 64), p);
	ck_assert_ptr_null(sl_malloc_hit(s, &x.t, 64));
	x.pol->free(s, &x.t, p);
	tl_side_close(&x);
}
END_TEST

START_TEST(free_hits_stop_at_the_full_mark)
{
	tl_side_t x;
	sl_tcache_t *tc = side_with_cached_64(&x);
	sl_state_t *s = x.state;
	unsigned cap = s->ncached_max[4];
	void **v = malloc((cap + 1) * sizeof *v);
	ck_assert_ptr_nonnull(v);
	for (unsigned i = 0; i < cap + 1; i++)
		v[i] = x.pol->malloc(s, &x.t, 64);
	unsigned m = sl_cbin_ncached(tc, 4), room = cap - m;
	ck_assert_uint_lt(m, cap / 2);
	for (unsigned i = 0; i < room; i++)
		ck_assert(sl_free_hit(s, &x.t, v[i]));
	ck_assert_uint_eq(sl_cbin_ncached(tc, 4), cap);
	ck_assert(!sl_free_hit(s, &x.t, v[room]));          /* full: refused, unchanged */
	ck_assert_uint_eq(sl_cbin_ncached(tc, 4), cap);
	ck_assert_ptr_eq(*tc->head[4], v[room - 1]);
	/* the slow path flushes the bottom half, then pushes */
	x.pol->free(s, &x.t, v[room]);
	ck_assert_uint_eq(sl_cbin_ncached(tc, 4), cap / 2 + 1);
	ck_assert_ptr_eq(tc->head[4][0], v[room]);
	ck_assert_ptr_eq(tc->head[4][cap / 2], v[room - cap / 2]); /* the oldest kept */
	for (unsigned i = room + 1; i < cap + 1; i++)
		x.pol->free(s, &x.t, v[i]);
	free(v);
	tl_side_close(&x);
}
END_TEST

/* The checker verifies the calling thread's tcache only (others change it
 * without a lock), so this test damages the heap's own. */
START_TEST(checker_finds_a_bin_head_out_of_its_slots)
{
	hl_heap_t *h = tl_heap("slab", NULL);
	hl_free(h, hl_malloc(h, 64));
	tl_check_clean(h);
	sl_tcache_t *tc = hl_thread_get(h)->policy_tls;
	unsigned cap = sl_cbin_capacity(&tc->bins[4]), n = sl_cbin_ncached(tc, 4);
	ck_assert_uint_gt(n, 0);
	char want[96];
	void **head = tc->head[4];
	tc->head[4] = head - (cap - n) - 1;                  /* one below the first slot */
	snprintf(want, sizeof want, "heaplab: slab: check: tcache bin 4: %u cached > %u", cap + 1, cap);
	tl_check_finds(h, want);
	tc->head[4] = head;
	uint16_t mark = tc->bins[4].low_water_bits;
	tc->bins[4].low_water_bits = sl_cbin_bits(head - 1); /* one more than it holds */
	snprintf(want, sizeof want, "heaplab: slab: check: tcache bin 4: low water %u above the %u cached", n + 1, n);
	tl_check_finds(h, want);
	tc->bins[4].low_water_bits = mark;
	tl_check_clean(h);
	hl_heap_destroy(h);
}
END_TEST

/* --- decision events: each path reports its event exactly when the
 * statistic that counts the path moves (tests/unit/testlib_events.h) ----------- */

static const char *const slab_keys[] = {
	"policy_stats.tcache_hits", "policy_stats.tcache_fills", "policy_stats.tcache_flushes",
	"policy_stats.purge_calls", "policy_stats.purge_lazy_calls", NULL,
};

START_TEST(slab_events_follow_the_counters)
{
	TL_SKIP_UNLESS("slab");
	tl_events_run_t r;
	hl_heap_t *h = tl_run_begin(&r, "slab", "dirty_decay_ms:0", slab_keys);
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
	tl_run_measure(&r);
	tl_expect_count(&r, HL_EV_CACHE_HIT, NULL, "policy_stats.tcache_hits");
	tl_expect_count(&r, HL_EV_CACHE_FILL, NULL, "policy_stats.tcache_fills");
	tl_expect_count(&r, HL_EV_CACHE_FLUSH, NULL, "policy_stats.tcache_flushes");
	ck_assert_double_eq(tl_n_of(&r.t, HL_EV_DECAY, NULL), tl_grew(&r.a, &r.b, "policy_stats.purge_calls") +
								   tl_grew(&r.a, &r.b, "policy_stats.purge_lazy_calls"));
	static const int paths[] = { HL_EV_CACHE_MISS, HL_EV_CACHE_PUT, HL_EV_NEW, HL_EV_RETIRE, HL_EV_SPLIT,
				     HL_EV_MERGE, HL_EV_GROW, -1 };
	static const char *const whats[] = { NULL, NULL, "slab", "slab", "extent", "extent", NULL };
	tl_expect_paths(&r, paths, whats);
	tl_run_end(&r);
}
END_TEST

static Suite *slab_suite(void)
{
	Suite *s = suite_create("slab");
	TCase *tc = tcase_create("model");
	tcase_add_test(tc, slab_events_follow_the_counters);
	tcase_add_test(tc, size_class_table);
	tcase_add_test(tc, region_starts_in_every_class);
	tcase_add_test(tc, regions_adjacent_no_header);
	tcase_add_test(tc, tcache_fill_hit_flush);
	tcase_add_test(tc, tcache_off);
	tcase_add_test(tc, bin_without_slabcur_takes_the_oldest);
	tcase_add_test(tc, extents_split_and_merge);
	tcase_add_test(tc, dirty_fit_and_delayed_merge);
	tcase_add_test(tc, calloc_clears_as_jemalloc);
	tcase_add_test(tc, memalign_small_and_large);
	tcase_add_test(tc, realloc_in_place);
	tcase_add_test(tc, tcache_gc_flushes_idle_bins);
	tcase_add_test(tc, tcache_gc_steps_as_jemalloc);
	tcase_add_test(tc, walker_sees_live_cached_free);
	tcase_add_test(tc, threads_spread_over_arenas);
	tcase_add_test(tc, each_arena_has_its_own_metadata);
	tcase_add_test(tc, thread_end_purges_an_arena_left_empty);
	tcase_add_test(tc, malloc_hits_stop_at_the_low_water_mark);
	tcase_add_test(tc, free_hits_stop_at_the_full_mark);
	tcase_add_test(tc, checker_finds_a_bin_head_out_of_its_slots);
	suite_add_tcase(s, tc);
	TCase *dc = tcase_create("decay");
	tcase_set_timeout(dc, 30);
	tcase_add_test(dc, decay_defaults);
	tcase_add_test(dc, decay_with_activity);
	tcase_add_test(dc, decay_background_no_activity);
	tcase_add_test(dc, decay_is_gradual);
	tcase_add_test(dc, tcache_hits_do_not_decay);
	tcase_add_test(dc, decay_never);
	tcase_add_test(dc, decay_zero_at_once);
	tcase_add_test(dc, fork_child_has_no_background_thread);
	tcase_add_test(dc, fork_child_leaves_other_threads_tcaches_alone);
	tcase_add_test(dc, oversize_goes_to_huge_arena);
	suite_add_tcase(s, dc);
	TCase *mc = tcase_create("misuse");
	tcase_add_test_raise_signal(mc, double_free_aborts, SIGABRT);
	tcase_add_test_raise_signal(mc, foreign_pointer_aborts, SIGABRT);
	tcase_add_test(mc, interior_pointer_message);
	suite_add_tcase(s, mc);
	return s;
}

TL_MAIN(slab_suite)
