/*
 * sharded.c — policy `sharded`: a working model of mimalloc v2.
 *
 * What it models
 *   mimalloc's free-list sharding, as in mimalloc 2.0.9 (the version
 *   Debian ships and bench/ compares with).  Memory comes in 32 MiB
 *   segments aligned to 32 MiB, cut into pages (64 KiB small, 512 KiB medium, one
 *   block per large page, a segment per huge block).  Each page serves one
 *   size class and keeps three free lists: `free` (malloc pops it),
 *   `local_free` (the owner's frees) and `thread_free` (other threads'
 *   frees, one CAS each).  Every thread has its own heap of page queues, so
 *   malloc and a local free take no lock and no atomic instruction.  See
 *   sharded.h for the diagram, the glossary and the invariants.
 *
 * Overhead and alignment
 *   No per-block header: a block's page is found by masking its address
 *   (segment) and shifting (slice index).  Per page a 112-byte descriptor in
 *   its segment's first slice (64 KiB per 32 MiB segment, 0.2%).  Internal
 *   fragmentation of the size classes: at most 12.5% above 64 bytes.
 *   Every block of 16 bytes and up is 16-byte aligned; requests of 1 to 8
 *   bytes get 8-byte blocks packed 8 apart, as in mimalloc (8,144 to a
 *   page; rows mimalloc.class8-*); blocks of power-of-two sizes are
 *   aligned to their size.
 *
 * Complexity
 *   malloc <= 1 KiB: one load of the direct table, one pop.  free: one
 *   mask, one push (local) or one CAS (remote).  Slow paths walk one page
 *   queue; a fresh page takes the first span long enough from the heap's
 *   span queues (free slice runs binned by length, the request's bin
 *   first), and a freed page merges with the free spans beside it.
 *
 * Options: described once, in the option table below (shd_options); `heaplab
 * options sharded` prints them, the book's options appendix is made from it.
 * What a help line cannot hold: purge_delay (ms before a free page is
 * purged) is mimalloc 2.0.9's decommit_delay (env MIMALLOC_DECOMMIT_DELAY,
 * legacy MIMALLOC_RESET_DELAY, default 25; 2.1 renamed it purge_delay,
 * default 10).  Due purges run when the heap next makes or frees a page
 * (no timer thread); each further page freed in the segment pushes the
 * deadline 1 ms further (2.0.9's decommit_extend_delay), so a burst of
 * frees is purged once, and a fresh page taking slices that wait for their
 * purge postpones it (fidelity rows mimalloc.purge-*).  segment_cache is
 * 2.0.9's 1024-slot segment cache (sharded_cache.c); a parked segment is
 * purged only when another one is parked later and finds it expired
 * (segment_purge_delay, 2.0.9's segment_decommit_delay, env
 * MIMALLOC_SEGMENT_DECOMMIT_DELAY).
 *
 * Named deviations (each measured by a fidelity row, policies/sharded/mimalloc.rows)
 *   - a parked segment keeps its 64 KiB header slice resident when purged.
 *
 * What it leaves out
 *   mimalloc's arenas, the heartbeat and deferred-free hooks, heap tags and
 *   first-class heaps (one heap per thread), reclaim-on-free, and the
 *   huge alignments (memalign refuses alignments above 16 MiB).  A
 *   double free is caught in secure mode only, and only when the freeing
 *   thread may read the page's lists (it owns the page, or the page is
 *   abandoned); with debug:on the core's guard (core/guard.c) catches it
 *   first, and every other misuse too.  Without either, as mimalloc's
 *   release build, only a pointer outside every segment aborts (mimalloc
 *   crashes there).  trim (malloc_trim) collects and purges the calling
 *   thread's heap and reclaims abandoned segments; its pad is ignored.
 */
#include "config.h"
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "sharded_heap.h"
#include "sharded_fast.h"

static const hl_option_t shd_options[] = {
	{ "secure", HL_OPT_BOOL, "off", 0, 1, NULL,
	  "encoded free lists, guard pages, random free-list order, double-free detection" },
	{ "purge_delay", HL_OPT_INT, "25", -1, 3600000, NULL,
	  "ms before an empty page is purged (0 = at once, -1 = never)" },
	{ "segment_cache", HL_OPT_BOOL, "on", 0, 1, NULL,
	  "park empty segments, still resident, for the next new segment (off = unmap at once)" },
	{ "segment_purge_delay", HL_OPT_INT, "500", -1, 3600000, NULL,
	  "ms before a parked segment may be purged, the next time another one is parked (0 = at once, -1 = never)" },
	{ NULL, 0, NULL, 0, 0, NULL, NULL },
};

/* ---- threads ------------------------------------------------------------- */

static void shd_thread_exit(void *vst, hl_thread_t *t)
{
	(void)vst;
	shd_heap_t *hp = shd_heap_of(t);
	if (hp)
		shd_heap_delete(hp);
	t->policy_tls = (void *)&shd_no_heap;
}

/* ---- malloc ------------------------------------------------------------ */

/* Everything that is not a pop from the direct page. */
static __attribute__((noinline)) void *shd_malloc_generic(shd_state_t *st, hl_thread_t *t, size_t n)
{
	shd_heap_t *hp = shd_heap_of(t);
	if (!hp && !(hp = shd_heap_new(st, t)))
		goto oom;
	if (atomic_load_explicit(&hp->delayed, memory_order_relaxed))
		shd_delayed_drain(hp);
	void *p;
	if (n > SHD_MEDIUM_OBJ_MAX) {
		p = shd_heap_alloc_large(hp, n);
	} else {
		shd_page_t *pg = shd_find_page(hp, n);
		if (pg)
			HL_EV(st->h, HL_EV_LIST_POP, "page free list (found by the slow path), bin", pg->bin, pg->block_size, pg->free);
		p = pg ? shd_page_pop(pg) : NULL;
	}
	if (p)
		return p;
oom:
	errno = ENOMEM;
	return NULL;
}

/* malloc: a pop from the direct page (sharded_fast.h), or the slow path.
 * Built twice (event.h, "Quiet copies"): shd_malloc with its event,
 * shd_malloc_quiet without. */
HL_EV_BODY void *shd_malloc_body(void *vst, hl_thread_t *t, size_t n, bool listening)
{
	/* NULL on a record a host made (core/policy.h) */
	const shd_heap_t *hp = t->policy_tls;
	shd_page_t *pg = hp ? shd_direct_page(hp, n) : NULL;
	if (HL_LIKELY(pg != NULL)) {
		if (listening) HL_EV(((shd_state_t *)vst)->h, HL_EV_LIST_POP, "page free list (direct table), bin", pg->bin, pg->block_size, pg->free);
		return shd_page_pop(pg);
	}
	return shd_malloc_generic(vst, t, n);
}
HL_EV_MALLOC_TWICE(shd_malloc)

/* ---- free -------------------------------------------------------------- */

/* Secure / debug check: a block whose link decodes into its own page may
 * already be free — look for it on the page's three lists.  In debug mode
 * the core has junk-filled the block already, so always look.  Only the
 * owner (or anyone, for an abandoned page) can read those lists safely: a
 * free from another thread into an owned page is not checked. */
static void shd_check_double_free(const shd_state_t *st, const shd_page_t *pg, const shd_block_t *b,
				  const shd_heap_t *self)
{
	shd_heap_t *owner = atomic_load_explicit(&pg->heap, memory_order_acquire);
	if (owner && owner != self)
		return;
	shd_block_t *n = shd_next_raw(pg, b);
	if (!st->debug && n && !shd_in_page(pg, n))
		return;
	const shd_block_t *lists[3] = { pg->free, pg->local_free,
		(const shd_block_t *)shd_tf_ptr(atomic_load(&pg->thread_free)) };
	for (int l = 0; l < 3; l++) {
		uint32_t steps = 0;
		for (const shd_block_t *q = lists[l]; q && shd_in_page(pg, q) && steps <= pg->capacity;
		     q = shd_next_raw(pg, q), steps++)
			if (q == b)
				hl_fatal(&hl_policy_sharded, "double free", b);
	}
}

/* The page of @p p, validated: in one of our segments (and, with checks
 * on, a segment whose cookie is intact), inside a page. */
static shd_page_t *shd_page_checked(shd_state_t *st, const void *p)
{
	shd_segment_t *s = shd_segment_of(p);
	if (HL_UNLIKELY(!shd_segmap_has(st, s) || (st->checks && s->cookie != ((uintptr_t)s ^ st->key))))
		hl_fatal(&hl_policy_sharded, "free of a pointer this heap does not own", p);
	shd_page_t *pg = shd_page_of(s, p);
	if (HL_UNLIKELY(!pg->bin || (uintptr_t)p < (uintptr_t)pg->start))
		hl_fatal(&hl_policy_sharded, "free of a pointer outside any page", p);
	return pg;
}

/* Block that @p p points into (memalign may hand out interior pointers). */
static inline shd_block_t *shd_block_of(const shd_page_t *pg, const void *p)
{
	if (!(shd_flags(pg) & SHD_PF_ALIGNED))
		return (shd_block_t *)p;
	size_t off = (size_t)((uintptr_t)p - (uintptr_t)pg->start);
	return (shd_block_t *)((uintptr_t)p - off % pg->block_size);
}

/* A huge block freed by a thread that does not own it: its owner frees the
 * segment only later, so mimalloc 2.0.9 gives the block's memory back at
 * once, all of it but the block's first word (the thread_free link), in
 * whole pages, with MADV_DONTNEED (_mi_free_block_mt calls
 * _mi_segment_huge_page_reset: MI_HUGE_PAGE_ABANDON is off in 2.0.9). */
static void shd_huge_remote_reset(shd_state_t *st, shd_page_t *pg, shd_block_t *b)
{
	uintptr_t lo = hl_align_up((uintptr_t)b + sizeof(shd_block_t), st->ospage);
	uintptr_t hi = ((uintptr_t)b + shd_block_usable(pg)) & ~(uintptr_t)(st->ospage - 1);
	if (hi > lo) {
		HL_EV(st->h, HL_EV_PURGE, "a huge block freed by another thread: its pages purged now, the segment freed by its owner later, bytes", pg->bin, hi - lo, b);
		hl_os_purge(st->os, (void *)lo, hi - lo);
	}
}

/* Every free but the plain local one: checks, interior pointers, full
 * pages, and frees of other heaps' blocks. */
static __attribute__((noinline)) void shd_free_generic(shd_state_t *st, hl_thread_t *t, void *p)
{
	shd_page_t *pg = shd_page_checked(st, p);
	shd_block_t *b = shd_block_of(pg, p);
	if (st->checks) {
		if (!shd_in_page(pg, b))
			hl_fatal(&hl_policy_sharded, "free of a pointer that is not a block", p);
		shd_check_double_free(st, pg, b, shd_heap_of(t));
	}
	shd_heap_t *hp = shd_heap_of(t);
	if (hp && atomic_load_explicit(&pg->heap, memory_order_relaxed) == hp) {
		HL_EV(st->h, HL_EV_LIST_PUSH, "page local_free (slow path: last block, full page, checks, interior pointer), bin", pg->bin, pg->block_size, b);
		shd_page_push_local(pg, b);
		shd_free_local_slow(hp, pg);
		return;
	}
	if (pg->kind == SHD_PAGE_HUGE)
		shd_huge_remote_reset(st, pg, b);
	HL_EV(st->h, HL_EV_REMOTE_FREE, "another thread's page: CAS onto its thread_free (the owner's delayed list when it is full), bin", pg->bin, pg->block_size, b);
	shd_free_remote(pg, b);
	if (hp || (hp = shd_heap_new(st, t)))
		hp->c.remote_frees++;
}

/* free: the push of sharded_fast.h — a block of a page of this thread's
 * heap, not full, no interior pointers, checks off, not the page's last —
 * or the slow path.  Built twice as malloc is. */
HL_EV_BODY void shd_free_body(void *vst, hl_thread_t *t, void *p, bool listening)
{
	shd_page_t *pg = shd_free_page(vst, t, p);
	if (HL_LIKELY(pg != NULL)) {
		if (listening) HL_EV(((shd_state_t *)vst)->h, HL_EV_LIST_PUSH, "page local_free, bin", pg->bin, pg->block_size, p);
		shd_free_push(pg, p);
		return;
	}
	shd_free_generic(vst, t, p);
}
HL_EV_FREE_TWICE(shd_free)

/* ---- memalign, sizes ----------------------------------------------------- */

static void *shd_memalign(void *vst, hl_thread_t *t, size_t align, size_t n)
{
	shd_state_t *st = vst;
	if (align > SHD_LARGE_OBJ_MAX) {
		errno = ENOMEM;
		return NULL;
	}
	/* Blocks of a size that is a multiple of align start aligned: pages
	 * start on 64 KiB slices (plus SHD_PAGE_OFFSET, a multiple of 128, for
	 * blocks up to 1 KiB), large blocks on OS pages. */
	size_t bsize = n <= SHD_MEDIUM_OBJ_MAX ? shd_bin_wsize(shd_bin_of(n)) * 8
					       : hl_align_up(n, st->ospage);
	if (bsize % align == 0 && shd_page_offset(bsize) % align == 0 &&
	    align <= (n <= SHD_MEDIUM_OBJ_MAX ? SHD_SLICE_SIZE : st->ospage))
		return shd_malloc(vst, t, n);
	uint8_t *p = shd_malloc(vst, t, n + align - 1);
	if (!p)
		return NULL;
	uint8_t *q = (uint8_t *)hl_ptr_align_up((uintptr_t)p, align);
	if (q != p) {
		shd_page_t *pg = shd_page_of(shd_segment_of(p), p);
		shd_flags_set(pg, shd_flags(pg) | SHD_PF_ALIGNED);
	}
	return q;
}

static size_t shd_usable_size(void *vst, const void *p)
{
	shd_page_t *pg = shd_page_checked(vst, p);
	shd_block_t *b = shd_block_of(pg, p);
	return shd_block_usable(pg) - (size_t)((uintptr_t)p - (uintptr_t)b);
}

/* realloc as mimalloc 2.0.9 does it (alloc.c, _mi_heap_realloc_zero): a
 * block stays where it is while the new size fits and wastes no more than
 * half of it (from usable/2 to usable bytes); otherwise it moves, even to
 * shrink, so a block cut to a small size leaves its large class.  (The
 * core's realloc kept any block that still fitted: perl's, mutt's and
 * login's traces parted there.) */
static void *shd_realloc(void *vst, hl_thread_t *t, void *p, size_t n)
{
	size_t size = shd_usable_size(vst, p);
	if (n <= size && n >= size / 2)
		return p;
	return hl_realloc_move(vst, t, p, size, n, shd_malloc, shd_free);
}

static bool shd_owns(void *vst, const void *p)
{
	shd_state_t *st = vst;
	shd_segment_t *s = shd_segment_of(p);
	if (shd_segmap_has(st, s) && s->cookie == ((uintptr_t)s ^ st->key)) {
		shd_page_t *pg = shd_page_of(s, p);
		return pg->bin && (uintptr_t)p >= (uintptr_t)pg->start &&
		       (uintptr_t)p < (uintptr_t)pg->start + (size_t)pg->reserved * pg->block_size;
	}
	return hl_os_contains(st->os, p);
}

/* ---- trim: collect everything of the calling thread, purge now, and give
 * the parked segments back (mimalloc's mi_collect(true)) ----------------- */

static size_t shd_trim(void *vst, size_t pad)
{
	shd_state_t *st = vst;
	hl_thread_t *t = hl_thread_get(st->h);
	shd_heap_t *hp = shd_heap_of(t);
	if (!hp && !(hp = shd_heap_new(st, t)))
		return 0;
	uint64_t before = hp->c.purged_bytes;
	shd_heap_collect(hp);
	return hp->c.purged_bytes - before + shd_cache_release_all(st);
}

/* ---- life cycle ---------------------------------------------------------- */

static void *shd_init(hl_heap_t *h, const hl_conf_t *conf)
{
	hl_os_t *os = hl_heap_os(h);
	shd_state_t *st = hl_policy_state_new(h, sizeof *st);
	size_t mapsize = (size_t)1 << (47 - SHD_SEGMENT_SHIFT);
	if (!st)
		return NULL;
	if (!(st->segmap = hl_os_reserve_meta(os, mapsize))) {
		hl_set_error("sharded: out of memory for the policy state");
		return NULL;
	}
	st->h = h;
	st->os = os;
	st->ospage = hl_os_page(os);
	st->secure = hl_conf_bool(conf, "secure");
	st->debug = hl_heap_debug(h);
	st->checks = st->secure || st->debug;
	st->purge_delay = hl_conf_int(conf, "purge_delay");
	st->cache_on = hl_conf_bool(conf, "segment_cache");
	st->segment_purge_delay = hl_conf_int(conf, "segment_purge_delay");
	st->key = hl_mix64(hl_clock_seed(h) ^ (uintptr_t)st);
	hl_meta_init_private(&st->heap_pool, os, sizeof(shd_heap_t));
	pthread_mutex_init(&st->lock, NULL);
	return st;
}

static void shd_destroy(void *vst)
{
	shd_state_t *st = vst;
	pthread_mutex_destroy(&st->lock);
}

static void shd_fork_prepare(void *vst)
{
	shd_state_t *st = vst;
	pthread_mutex_lock(&st->heap_pool.lock);
	pthread_mutex_lock(&st->lock);
}

static void shd_fork_parent(void *vst)
{
	shd_state_t *st = vst;
	pthread_mutex_unlock(&st->lock);
	pthread_mutex_unlock(&st->heap_pool.lock);
}

/* Only the forking thread lives on in the child.  The other threads'
 * heaps are left as the fork found them (see shd_heaps_fork_child). */
static void shd_fork_child(void *vst)
{
	shd_state_t *st = vst;
	pthread_mutex_init(&st->lock, NULL);
	hl_meta_fork_child(&st->heap_pool);
	shd_heaps_fork_child(st);
}

/* heaplab diagnose's candidates: knobs that change how memory comes back,
 * each with what the real allocator needs to do the same. */
static const hl_whatif_t shd_whatif[] = {
	{ "", "LD_PRELOAD=" HL_SYSTEM_LIBDIR "libmimalloc.so.2" },
	/* mimalloc 2.0.9 (Debian's) names the delay decommit_delay and ignores
	 * MIMALLOC_PURGE_DELAY, the name from 2.1 on: MIMALLOC_VERBOSE=1 shows
	 * decommit_delay 25 under the one and 0 under the other. */
	{ "purge_delay:0", "LD_PRELOAD=" HL_SYSTEM_LIBDIR "libmimalloc.so.2 MIMALLOC_DECOMMIT_DELAY=0" },
	{ NULL, NULL },
};

/* Configurations the fuzzers run beside the defaults (core/policy.h). */
static const char *const shd_variants[] = {
	"secure:on",
	"purge_delay:0,segment_cache:off",
	"purge_delay:0,segment_purge_delay:0",
	NULL,
};

const hl_policy_t hl_policy_sharded = {
	.name = "sharded",
	.summary = "mimalloc: segments and pages, three free lists per page, atomic remote free, "
		   "per-thread heaps",
	.options = shd_options,
	.fidelity_family = "mimalloc",
	.whatif = shd_whatif,
	.variants = shd_variants,
	.cells = HL_CELLS_RUNS, /* a run of equal blocks of a page is one cell */
	.tls_empty = &shd_no_heap,
	.init = shd_init,
	.destroy = shd_destroy,
	.malloc = shd_malloc,
	.free = shd_free,
	.realloc_zero_allocates = true, /* mimalloc 2.0.9's mi_realloc(p, 0) */
	.malloc_quiet = shd_malloc_quiet,
	.free_quiet = shd_free_quiet,
	.realloc = shd_realloc,
	.memalign = shd_memalign,
	.usable_size = shd_usable_size,
	.owns = shd_owns,
	.trim = shd_trim,
	.reset = NULL,
	.stats = shd_stats,
	.snapshot = shd_snapshot,
	.check = shd_check,
	.walk = shd_walk,
	.thread_exit = shd_thread_exit,
	.fork_prepare = shd_fork_prepare,
	.fork_parent = shd_fork_parent,
	.fork_child = shd_fork_child,
};
