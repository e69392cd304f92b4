/*
 * pools: a model of CPython's pymalloc, the allocator under every Python
 * object, as in CPython 3.11 (Objects/obmalloc.c; measured here by
 * heaplab fidelity's pymalloc rows).
 *
 * What it models
 *   Requests of 1..512 bytes are rounded up to one of 32 size classes 16
 *   bytes apart and served from 16 KiB pools, each pool holding blocks of a
 *   single class behind a 48-byte header.  Pools are cut from 1 MiB arenas,
 *   each arena a mapping of its own from the page source.  malloc pops the
 *   first block of the first pool on usedpools[class]; free pushes the block
 *   back on its pool's list.  A pool that fills leaves usedpools, one that
 *   empties goes to its arena's freepools.  Arenas with free pools sit on
 *   usable_arenas sorted by free-pool count, fewest first, so new pools are
 *   carved from the busiest arena and lightly used arenas get a chance to
 *   drain; an arena is unmapped only when every pool in it is free (and,
 *   since bpo-37257, not when it is the last arena on usable_arenas, so a
 *   loop cannot make one arena come and go on every iteration).
 *   Larger requests and memalign beyond 16 go to the `fallback` policy, the
 *   stand-in for glibc's malloc that CPython calls (PyMem_RawMalloc).  free
 *   tells the two apart with a three-level radix tree over addresses.
 *
 * Overhead and alignment
 *   Blocks carry no header: a pool's 48-byte header serves all its blocks
 *   (0.3% of a 16 KiB pool), plus the tail of each pool too short for one
 *   more block ("quantization"), plus the radix tree: a 256 KiB root, 256
 *   KiB per mid node and 128 KiB per bottom node, reserved but touched only
 *   where used.  Every block is 16-byte aligned.
 *
 * Complexity
 *   malloc and free are O(1): a class index, a list pop or push, and on the
 *   slow paths a constant amount of list surgery (nfp2lasta keeps
 *   usable_arenas sorted without a search).  The routing test in free is
 *   three dependent loads.
 *
 * Options: described once, in the option table below (pl_options); `heaplab
 * options pools` prints them, the book's options appendix is made from it.
 * The fallback is any compiled-in policy core/host.h accepts, configured
 * by fallback_conf.  arenas:mmap puts an arena wherever the page source's
 * mmap puts a 1 MiB mapping (page-aligned), as CPython's new_arena: when
 * the base is not a pool boundary it is rounded up to one and the arena
 * has one pool fewer (63 of 16 KiB), reported as
 * bytes_lost_arena_alignment, CPython's "bytes lost to arena alignment"
 * (CPython 3.11 here: 4 arenas at start-up, 65,536 bytes lost, i.e. every
 * one).  arenas:aligned asks for arena-aligned mappings, so every pool
 * fits; headers:table implies it, as it finds the table by masking an
 * address down to its arena.
 *
 * headers:table, and why it exists
 *   CPython puts each pool's header in the pool's first 48 bytes, and its
 *   pools are aligned to their size.  So every header has the same address
 *   bits below 16 KiB, and an L1 data cache indexes its sets with exactly
 *   those bits (32 KiB, 8 ways: addresses 4 KiB apart share a set).  All
 *   headers therefore compete for one set of 8 lines: a program using
 *   more than 8 pools at once misses L1 on the header in almost every
 *   malloc and free.  Real pymalloc does (cachegrind on CPython 3.11 under
 *   bench/pyring), and so does this model by default.  headers:table moves
 *   the headers into a table in each arena's first pool, 64 bytes apart, the
 *   way mimalloc keeps page records at a segment's start: the headers then
 *   spread over 64 sets.  Each pool keeps its first 48 bytes unused, so
 *   block addresses and blocks per pool stay CPython's; an arena has one
 *   pool fewer to carve (as a CPython arena usually has, losing one to
 *   alignment).  The lists, the order of pools and arenas, and every
 *   block handed out are the same in both layouts.
 *
 * alignment:8
 *   CPython on 32-bit (and before 3.8 everywhere) spaced classes 8 bytes
 *   apart: 64 classes, 8, 16, 24, ... 512.  heaplab must return 16-byte
 *   aligned pointers, so here alignment:8 changes the class ladder and the
 *   rounding of requests (a 20-byte request is a 24-byte block, class 2)
 *   but the stride between blocks of an odd class is rounded up to 16:
 *   a 24-byte class packs blocks 32 bytes apart.  Classes whose size is a
 *   multiple of 16 have exactly CPython's blocks per pool; the padding of
 *   the others is reported as bytes lost to stride padding.
 *
 * Threads: why one lock is enough
 *   pymalloc has no lock at all: every PyObject_Malloc/Free runs with the
 *   GIL held, so one thread at a time touches usedpools and the arenas
 *   (the allocator domain that may run without the GIL, PyMem_RawMalloc,
 *   goes to libc, not to pymalloc; free-threaded builds swap pymalloc for
 *   mimalloc instead of locking it).  heaplab has no GIL, so one lock
 *   around the pool and arena structures plays its part (pools_lock.c): a
 *   spinlock biased to one thread, as the GIL stays with the running
 *   thread.  The bias holder enters with two plain stores and a load;
 *   another thread takes the bias over (one membarrier), and after 16 such
 *   hand-overs every call takes the spinlock (one atomic exchange and one
 *   store).  The fallback policy is called outside that
 *   lock, as libc is thread-safe on its own, and gets the core's thread
 *   record as it is: pools keeps no per-thread state, so policy_tls is the
 *   fallback's word.
 *
 * Named deviations
 *   Which arenas lose a pool is up to where the kernel places each mapping,
 *   so it differs between a CPython process and a heaplab one: under the
 *   preload library the arenas often land pool-aligned (below a large
 *   reservation whose start the kernel aligned to 2 MiB), where CPython's
 *   mostly do not (fidelity row pymalloc.arena-alignment-lost).
 *
 * What it leaves out
 *   No debug hooks (PYTHONMALLOC=debug), no Valgrind mode, no
 *   per-interpreter state.
 *
 * Misuse detected (debug:off)
 *   pymalloc checks nothing: a double free or an interior pointer passes,
 *   a written-over free list crashes it.  pools keeps cheap checks:
 *   a pointer outside the carved part of a pool, a second free of the
 *   block freed last or of a pool's only block, and a free-list link that
 *   leaves its pool (a write after free) abort; interior pointers,
 *   overflows and older double frees pass.  Pointers it does not know go
 *   to the fallback (bins), as pymalloc's go to the C library.  With
 *   debug:on the core's guard (core/guard.c) catches every misuse.
 */
#include "config.h"
#include <errno.h>
#include <string.h>
#include "pools_fast.h"
#include "../../core/malloc_api.h"

static const hl_option_t pl_options[] = {
	{ "arena_size", HL_OPT_SIZE, "1M", 64 << 10, 64 << 20, NULL,
	  "bytes per arena mapping, a power of two (256K = CPython < 3.10)" },
	{ "pool_size", HL_OPT_SIZE, "16K", 4 << 10, 256 << 10, NULL,
	  "bytes per pool, a power of two (4K = CPython < 3.10)" },
	{ "alignment", HL_OPT_ENUM, "16", 0, 0, "16|8",
	  "size-class spacing: 16 (32 classes) or 8 (64 classes, stride kept 16)" },
	{ "fallback", HL_OPT_TEXT, "bins", 0, 32, NULL,
	  "policy serving requests above 512 bytes and memalign: any compiled-in policy "
	  "but pools and region allocators (bump); bins when compiled in, else the first that may" },
	{ "fallback_conf", HL_OPT_TEXT, "", 0, 200, NULL,
	  "the fallback's own options, ';' between them (fallback_conf:tcache_count=0;arena_max=1)" },
	{ "headers", HL_OPT_ENUM, "inline", 0, 0, "inline|table",
	  "pool headers at each pool's start (CPython) or in a table in the arena's first pool" },
	{ "arenas", HL_OPT_ENUM, "mmap", 0, 0, "mmap|aligned",
	  "arenas where mmap puts them, losing a pool when not pool-aligned (CPython), "
	  "or aligned to arena_size (every pool usable; headers:table implies it)" },
	{ NULL, 0, NULL, 0, 0, NULL, NULL },
};

static inline void pl_count(uint64_t *c)
{
	__atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------------ */
/* set-up                                                              */

/* Checks the geometry options; 0 or -1 after hl_set_error. */
static int pl_geometry(pl_state_t *s, const hl_conf_t *conf)
{
	s->arena_size = hl_conf_size(conf, "arena_size");
	s->pool_size = hl_conf_size(conf, "pool_size");
	s->align_shift = hl_conf_enum(conf, "alignment") == 0 ? 4 : 3;
	if (!hl_is_pow2(s->arena_size) || !hl_is_pow2(s->pool_size)) {
		hl_set_error("pools: arena_size and pool_size must be powers of two");
		return -1;
	}
	if (s->pool_size > s->arena_size || s->arena_size / s->pool_size > PL_MAX_POOLS) {
		hl_set_error("pools: an arena must hold 1..%d pools", PL_MAX_POOLS);
		return -1;
	}
	s->arena_bits = hl_log2(s->arena_size);
	s->pool_bits = hl_log2(s->pool_size);
	s->pool_mask = s->pool_size - 1;
	s->max_pools = (unsigned)(s->arena_size / s->pool_size);
	s->header_table = hl_conf_enum(conf, "headers") == 1;
	/* the header table is found by masking an address down to its arena */
	bool aligned = s->header_table || hl_conf_enum(conf, "arenas") == 1;
	s->arena_align = aligned ? s->arena_size : 0; /* 0: the page source's page */
	s->header_bits = s->header_table ? PL_SLOT_BITS : s->pool_bits;
	s->table_pools = 0;
	if (s->header_table) {
		size_t table = (size_t)s->max_pools << PL_SLOT_BITS;
		s->table_pools = (unsigned)((table + s->pool_size - 1) / s->pool_size);
		if (s->table_pools >= s->max_pools) {
			hl_set_error("pools: headers:table needs arenas of at least 2 pools");
			return -1;
		}
	}
	s->nclasses = PL_THRESHOLD >> s->align_shift;
	for (unsigned c = 0; c < s->nclasses; c++) {
		s->stride[c] = (uint32_t)hl_align_up(pl_class_size(s, c), HL_ALIGN);
		s->capacity[c] = (uint32_t)(s->pool_size - PL_POOL_OVERHEAD) / s->stride[c];
	}
	return 0;
}

/* Empty usedpools rings: each sentinel points at itself. */
static void pl_init_lists(pl_state_t *s)
{
	for (unsigned c = 0; c < PL_MAX_CLASSES; c++) {
		pl_pool_t *head = pl_used_head(s, c);
		head->nextpool = head->prevpool = head;
		head->szidx = c;
	}
}

static void *pools_init(hl_heap_t *h, const hl_conf_t *conf)
{
	hl_os_t *os = hl_heap_os(h);
	pl_state_t *s = hl_policy_state_new(h, sizeof *s);
	if (!s)
		return NULL;
	s->heap = h;
	s->os = os;
	s->debug = hl_heap_debug(h);
	if (pl_geometry(s, conf) != 0 || pl_map_init(s) != 0)
		return NULL;
	if (pl_view_init(s) != 0) {
		hl_set_error("pools: out of memory for the snapshot scratch");
		return NULL;
	}
	pl_init_lists(s);
	pl_lock_init(s);
	if (hl_guest_init(&s->fallback, h, &hl_policy_pools, conf, "fallback", "fallback_conf") != 0)
		return NULL;
	return s;
}

static void pools_destroy(void *st)
{
	pl_state_t *s = st;
	hl_guest_destroy(&s->fallback);
}

/* ------------------------------------------------------------------ */
/* the fallback                                                        */

/* pools needs no per-thread word (one lock, no caches), so the thread
 * record is handed to the fallback as it is: t->policy_tls is the
 * fallback's, and a fallback that finds its record with hl_thread_get()
 * (its checker, its stats) sees the same word. */
static void *pl_fb_malloc(pl_state_t *s, hl_thread_t *t, size_t n)
{
	pl_count(&s->counts.fallback_mallocs);
	HL_EV(s->heap, HL_EV_HANDOFF, n > PL_THRESHOLD ? "the fallback allocator (above 512 bytes)"
			: "the fallback allocator (a call made past pymalloc: the C library's, the loader's)", -1, n, NULL);
	return hl_guest_malloc(&s->fallback, t, n);
}

static void pl_fb_free(pl_state_t *s, hl_thread_t *t, void *p)
{
	pl_count(&s->counts.fallback_frees);
	HL_EV(s->heap, HL_EV_HANDOFF, "the fallback allocator (not in any arena)", -1, 0, p);
	hl_guest_free(&s->fallback, t, p);
}

static void pools_thread_exit(void *st, hl_thread_t *t)
{
	pl_state_t *s = st;
	hl_guest_thread_exit(&s->fallback, t);
}

/* ------------------------------------------------------------------ */
/* malloc and free                                                     */

/* The rare ends of pymalloc_alloc, out of line (pl_malloc_in reaches them
 * by a tail call): usedpools[c] is empty, so a pool comes from
 * usable_arenas (or a new arena); or the first pool's freed block links
 * out of the pool (a write after free), which pymalloc would follow and
 * crash on.  Counts and leaves what the caller (thread @p t) entered
 * (@p bias as pl_leave). */
static __attribute__((noinline)) void *pl_malloc_rare(pl_state_t *s, hl_thread_t *t, unsigned c, bool bias)
{
	pl_pool_t *head = pl_used_head(s, c);
	if (head->nextpool != head)
		hl_fatal(&hl_policy_pools, "free list smashed", head->nextpool->freeblock);
	void *bp = pl_alloc_from_new_pool(s, c);
	s->small_mallocs += bp != NULL;
	pl_leave(s, t, bias);
	if (HL_UNLIKELY(!bp))
		errno = ENOMEM;
	return bp;
}

/* pymalloc_alloc for a request of @p n bytes, entered by thread @p t as
 * @p bias says: the pop of pools_fast.h, else pl_malloc_rare.  Leaves.  Its events only when
 * @p listening (event.h, "Quiet copies"). */
HL_EV_BODY void *pl_malloc_in(pl_state_t *s, hl_thread_t *t, size_t n, bool bias, bool listening)
{
	size_t c = pl_class_of(s, n);
	void *bp = pl_pool_alloc(s, c, listening);
	if (HL_UNLIKELY(!bp))
		return pl_malloc_rare(s, t, (unsigned)c, bias);
	pl_leave(s, t, bias);
	return bp;
}

/* A caller without the bias: the spinlock (which may claim the bias). */
static __attribute__((noinline)) void *pl_malloc_locked(pl_state_t *s, hl_thread_t *t, size_t n)
{
	return pl_malloc_in(s, t, n, pl_enter(s, t), true);
}

/* Built twice (event.h, "Quiet copies"): pools_malloc with its events,
 * pools_malloc_quiet without those of the biased fast path. */
HL_EV_BODY void *pools_malloc_body(void *st, hl_thread_t *t, size_t n, bool listening)
{
	pl_state_t *s = st;
	if (HL_UNLIKELY(n > PL_THRESHOLD || t->past_front))
		return pl_fb_malloc(s, t, n);
	if (HL_UNLIKELY(!pl_enter_by_bias(s, t)))
		return pl_malloc_locked(s, t, n);
	return pl_malloc_in(s, t, n, true, listening);
}
HL_EV_MALLOC_TWICE(pools_malloc)

/* Slow, thorough validation of a block about to be freed (debug heaps). */
static void pl_free_deep_check(pl_state_t *s, pl_pool_t *pool, void *p)
{
	uintptr_t off = (uintptr_t)p - (uintptr_t)pl_pool_base(s, pool) - PL_POOL_OVERHEAD;
	if (pool->szidx >= s->nclasses || off % s->stride[pool->szidx])
		hl_fatal(&hl_policy_pools, "free of a pointer inside a block", p);
	size_t hops = 0;
	for (void *b = pool->freeblock; b; b = *(void **)b)
		if (b == p || ++hops > s->capacity[pool->szidx])
			hl_fatal(&hl_policy_pools, b == p ? "double free" : "free list smashed", p);
}

/* Cheap checks kept on every free: the block lies in a carved pool
 * between the header and the never-used part, the pool is not empty, and
 * the block is not the one freed last. */
static inline void pl_free_check(pl_state_t *s, pl_pool_t *pool, void *p)
{
	uintptr_t off = (uintptr_t)p - (uintptr_t)pl_pool_base(s, pool);
	if (HL_UNLIKELY(off < PL_POOL_OVERHEAD || off >= pool->nextoffset))
		hl_fatal(&hl_policy_pools, "free of a pointer pymalloc did not hand out", p);
	if (HL_UNLIKELY(pool->ref.count == 0))
		hl_fatal(&hl_policy_pools, "double free (its pool is already empty)", p);
	if (HL_UNLIKELY(p == pool->freeblock))
		hl_fatal(&hl_policy_pools, "double free", p);
}

/* The rare end of pymalloc_free, reached by a tail call from pl_free_in:
 * a check failed, the pool empties, or the heap is a debug one.  Every
 * check again (reporting what failed), the push, the pool's moves; leaves
 * what the caller entered. */
static __attribute__((noinline)) void pl_free_rare(pl_state_t *s, hl_thread_t *t, void *p, bool bias)
{
	pl_pool_t *pool = pl_pool_of(s, p);
	pl_free_check(s, pool, p);
	if (HL_UNLIKELY(s->debug))
		pl_free_deep_check(s, pool, p);
	void *lastfree = pool->freeblock;
	HL_EV(s->heap, HL_EV_LIST_PUSH, "pool freeblock, class", pool->szidx, s->stride[pool->szidx], p);
	*(void **)p = lastfree;
	pool->freeblock = p;
	pool->ref.count--;
	if (HL_UNLIKELY(lastfree == NULL)) {         /* it was full */
		HL_EV(s->heap, HL_EV_MOVE, "pool was full: first on usedpools[class] again", pool->szidx, 0, pl_pool_base(s, pool));
		pl_used_push(s, pool, pool->szidx);
	} else if (HL_UNLIKELY(pool->ref.count == 0)) {
		pl_insert_to_freepool(s, pool);      /* it is empty now */
	}
	pl_leave(s, t, bias);
}

/* pymalloc_free of pool block @p p, entered by thread @p t as @p bias
 * says (debug heaps never hold the bias): the push of pools_fast.h, else
 * pl_free_rare.  Leaves.  Its events only when @p listening, as pl_malloc_in. */
HL_EV_BODY void pl_free_in(pl_state_t *s, hl_thread_t *t, void *p, bool bias, bool listening)
{
	if (HL_UNLIKELY((!bias && s->debug) || !pl_pool_free(s, p, listening))) {
		pl_free_rare(s, t, p, bias);
		return;
	}
	pl_leave(s, t, bias);
}

/* A caller without the bias: the spinlock (which may claim the bias). */
static __attribute__((noinline)) void pl_free_locked(pl_state_t *s, hl_thread_t *t, void *p)
{
	pl_free_in(s, t, p, pl_enter(s, t), true);
}

/* Built twice as malloc is. */
HL_EV_BODY void pools_free_body(void *st, hl_thread_t *t, void *p, bool listening)
{
	pl_state_t *s = st;
	if (HL_UNLIKELY(!pl_map_is_used(s, p))) {
		pl_fb_free(s, t, p);
		return;
	}
	if (HL_UNLIKELY(!pl_enter_by_bias(s, t))) {
		pl_free_locked(s, t, p);
		return;
	}
	pl_free_in(s, t, p, true, listening);
}
HL_EV_FREE_TWICE(pools_free)

/* ------------------------------------------------------------------ */
/* realloc, memalign, sizes                                            */

/* A fallback block stays with the fallback whatever its new size (CPython
 * cannot know how many bytes of a libc block are valid, so it never adopts
 * one). */
static void *pl_fb_realloc(pl_state_t *s, hl_thread_t *t, void *p, size_t n)
{
	void *q = hl_guest_realloc(&s->fallback, t, p, n);
	if (q && !s->fallback.policy->realloc) {  /* moved: a malloc and a free */
		pl_count(&s->counts.fallback_mallocs);
		pl_count(&s->counts.fallback_frees);
	}
	return q;
}

/* pymalloc_realloc: a pool block stays put when it grows within its class
 * or shrinks by less than a quarter; otherwise it moves. */
static void *pools_realloc(void *st, hl_thread_t *t, void *p, size_t n)
{
	pl_state_t *s = st;
	if (!pl_map_is_used(s, p))
		return pl_fb_realloc(s, t, p, n);
	size_t size = pl_class_size(s, pl_pool_of(s, p)->szidx);
	if (n <= size && 4 * n > 3 * size)
		return p;
	return hl_realloc_move(s, t, p, size, n, pools_malloc, pools_free);
}

static void *pools_memalign(void *st, hl_thread_t *t, size_t align, size_t n)
{
	pl_state_t *s = st;
	pl_count(&s->counts.fallback_mallocs);
	return hl_guest_memalign(&s->fallback, t, align, n);
}

static size_t pools_usable_size(void *st, const void *p)
{
	pl_state_t *s = st;
	if (!pl_map_is_used(s, p))
		return hl_guest_usable_size(&s->fallback, p);
	return pl_class_size(s, pl_pool_of(s, p)->szidx);
}

/* A pool block is cleared by calloc, as pymalloc's calloc does; a block of
 * the fallback is what the fallback says (CPython hands a calloc above
 * 512 bytes to the C library's calloc: CPython 3.11, Objects/obmalloc.c,
 * _PyObject_Calloc memsets a pool block and calls PyMem_RawCalloc above). */
static bool pools_fresh_zero(void *st, const void *p)
{
	pl_state_t *s = st;
	return !pl_map_is_used(s, p) && hl_guest_fresh_zero(&s->fallback, p);
}

static bool pools_owns(void *st, const void *p)
{
	pl_state_t *s = st;
	return pl_map_is_used(s, p) || hl_guest_owns(&s->fallback, p);
}

/* pymalloc gives arenas back as they empty; only the fallback can trim. */
static size_t pools_trim(void *st, size_t pad)
{
	pl_state_t *s = st;
	return hl_guest_trim(&s->fallback, pad);
}

/* CPython leaves the C library's mallinfo, mallopt, malloc_stats,
 * malloc_info and malloc_trim alone: a program calling them reaches the
 * allocator under pymalloc, which here is the fallback. */
static const hl_policy_t *pools_libc_delegate(void *st, void **guest_st)
{
	pl_state_t *s = st;
	*guest_st = s->fallback.state;
	return s->fallback.policy;
}

static const hl_libc_api_t pools_libc_api = { .delegate = pools_libc_delegate };

/* ------------------------------------------------------------------ */
/* fork                                                                */

static void pools_fork_prepare(void *st)
{
	pl_state_t *s = st;
	pl_lock(s);
	pl_revoke_bias(s);        /* the forking thread may not be the owner */
	hl_guest_fork_prepare(&s->fallback);
}

static void pools_fork_parent(void *st)
{
	pl_state_t *s = st;
	hl_guest_fork_parent(&s->fallback);
	pl_unlock(s);
}

static void pools_fork_child(void *st)
{
	pl_state_t *s = st;
	hl_guest_fork_child(&s->fallback);
	__atomic_store_n(&s->lock, 0, __ATOMIC_RELEASE);
}

/* heaplab diagnose's candidates: knobs that change how memory comes back,
 * each with what the real allocator needs to do the same. */
static const hl_whatif_t pl_whatif[] = {
	{ "", NULL },
	{ NULL, NULL },
};

/* Configurations the fuzzers run beside the defaults (core/policy.h). */
static const char *const pl_variants[] = {
	"alignment:8,headers:table,arenas:aligned,fallback:firstfit",
	"arena_size:64K,pool_size:4K,fallback:slab",
	"fallback:sharded,headers:table",
	NULL,
};

/* The layout the conformance suite runs every contract under beside the
 * defaults (core/policy.h): the pool headers in a table in each arena's
 * first pool, not at each pool's start. */
static const char *const pl_layouts[] = {
	"headers:table",
	NULL,
};

const hl_policy_t hl_policy_pools = {
	.name = "pools",
	.summary = "CPython's pymalloc: 512-byte threshold, pools in arenas, most-used arena first",
	.options = pl_options,
	.fidelity_family = "pymalloc",
	.whatif = pl_whatif,
	.variants = pl_variants,
	.layouts = pl_layouts,
	.init = pools_init,
	.destroy = pools_destroy,
	.malloc = pools_malloc,
	.free = pools_free,
	.malloc_quiet = pools_malloc_quiet,
	.free_quiet = pools_free_quiet,
	.realloc = pools_realloc,
	.memalign = pools_memalign,
	.usable_size = pools_usable_size,
	.owns = pools_owns,
	.fresh_zero = pools_fresh_zero,
	.trim = pools_trim,
	.reset = NULL,
	.stats = pools_stats,
	.snapshot = pools_snapshot,
	.check = pools_check,
	.walk = pools_walk,
	.thread_exit = pools_thread_exit,
	.fork_prepare = pools_fork_prepare,
	.fork_parent = pools_fork_parent,
	.fork_child = pools_fork_child,
	.libc_api = &pools_libc_api,
};
