/**
 * @file slab.h
 * @brief Policy `slab`: a working model of jemalloc 5.3.
 *
 * Glossary
 *   sc       size class: every request is rounded up to one (8, 16, 32 ...
 *            128, then four per doubling: 160 192 224 256 320 ...).
 *   szind    index of a size class in that ladder (0 = 8 bytes).
 *   small    a class below 4 pages (14 KiB with 4 KiB pages): lives in slabs.
 *   large    a bigger class: a page-multiple extent of its own.
 *   extent   a run of whole pages with one record (sl_extent_t) kept out
 *            of band, in its arena's metadata (a freed record waits there
 *            for the same arena); its state says what the pages are.
 *   slab     an active extent cut into equal regions of one small class;
 *            a bitmap says which regions are taken.  No header in memory.
 *   region   one block of a slab.
 *   bin      per arena and small class: the slabs with free regions.
 *   slabcur  the bin's current slab (regions are taken from it first).
 *   eset     a set of free extents of one state, bucketed by page size
 *            class (psz), with an LRU list for purging oldest first.
 *   dirty    freed pages still resident (reused first, but an extent only
 *            for requests of 1/64 of it and up: SL_LG_MAX_ACTIVE_FIT).  A
 *            freed extent under 16 KiB is filed without merging; it merges
 *            with its dirty neighbours when purged (delayed coalescing).
 *   muzzy    pages given to MADV_FREE: the kernel may take them.
 *   returned pages given to MADV_DONTNEED: address space only (jemalloc
 *            calls this "retained").
 *   decay    the schedule that moves dirty -> muzzy -> returned over
 *            dirty_decay_ms / muzzy_decay_ms, along a smoothstep curve
 *            split into SL_NSTEPS epochs.
 *   rtree    radix tree from page address to extent record: how free()
 *            finds the owner of a pointer that has no header.
 *   tcache   per thread (t->policy_tls): one bounded stack of free regions
 *            per small class (and of extents per large class up to
 *            tcache_max); filled and flushed in batches, without a lock.
 *            Its hits (slab_fast.h) are inlined into the malloc shim.
 *   chunk    one reservation from the page source; extents never span two.
 *   huge arena  the arena of large requests of oversize_threshold (8 MiB)
 *            and up, whoever asks; its decay times are 0 (made on first use).
 *   oversize purge  in any arena, a freed large-sized extent that merges
 *            into one of at least the arena's threshold is purged whole at
 *            once (MADV_DONTNEED), unless a decay time is -1.
 *   zeroed   an extent whose pages all read zero: fresh from the kernel,
 *            or purged with MADV_DONTNEED (to returned) since they were last
 *            written; split keeps the mark, merge keeps it only when both
 *            halves have it, a free (to dirty) or a lazy purge (to muzzy)
 *            clears it (jemalloc 5.3's edata_zeroed).  calloc of a large
 *            block from an arena writes nothing to a zeroed extent and
 *            zeroes any other with MADV_DONTNEED (its RSS drops); calloc of
 *            a small region, or of a large block the tcache held, memsets
 *            it (sl_fresh_zero in slab.c).
 *   tick     work that reaches an arena (a tcache fill, each pointer a
 *            flush gives back, an uncached or large malloc or free); about
 *            every 1000 ticks a thread checks the clock for decay.
 *
 *     thread ─► tcache (no lock) ──miss──► arena[i] (threads spread)
 *                 bins[sc] │                 │ bin lock        │ ext lock
 *                          ▼                 ▼                 ▼
 *               ┌ slab: [r0|r1|r2|...] ┐   bins[sc]: slabcur,   esets: dirty ──decay──► muzzy
 *               │ bitmap  1 1 0 ...    │   nonfull heap         (MADV_FREE)   ──decay──► returned
 *               └──────────────────────┘                        (MADV_DONTNEED) ──reuse── grow
 *        free(p) ─► rtree[p >> lg_page] ─► extent record ─► szind, bitmap
 *
 *   chunk (one reservation):
 *   [ slab sc=4 ][ large 20K ][ dirty 12K ][ slab sc=9 ][ returned 1.9M   ]
 *
 * Layers (top to bottom: a file calls functions of its own layer and of
 * the layers below it, never above; tests/house/layers.sh checks this list)
 *   slab.c                   the policy: options, entry points, thread
 *                            binding, fork
 *   slab_fast.h              the tcache hits of malloc and free (the shim
 *                            inlines them too: shim/fast_paths.h)
 *   slab_dot.c slab_stats.c  snapshot, statistics
 *   slab_check.c             checker, walker, the cached-region census
 *   slab_tcache.c            thread caches: fill, flush, GC, events
 *   slab_arena.c             arenas and bins: slabs, large extents, every
 *                            lock in order
 *   slab_decay.c slab_decay.h  decay epochs, the background thread
 *   slab_extent.c            extents: esets, split and merge, purging,
 *                            chunks from the page source
 *   slab_rtree.c             the radix tree from page to extent
 *   slab_sz.c slab.h         size classes; types and inline accessors
 *
 * Invariants (checked by slab_check.c)
 *   per slab:   nfree + |bits set| == nregs(sc)
 *   per bin:    curregs == sum over its slabs of (nregs - nfree);
 *               nslabs == |slabs of sc in the arena|
 *   per tcache: every cached region has its bit set in its slab (taken
 *               from the slab's point of view, so no bin hands it out
 *               again) and sits in no other cache;  full <= head <= empty;
 *               live regions of a class == curregs - |cached regions|
 *   per chunk:  extents tile it exactly: e[k].base + e[k].size == e[k+1].base;
 *               no two neighbours are free in the same state (merged)
 *   per arena:  pages(chunks) == active + dirty.npages + muzzy.npages
 *                               + returned.npages
 *   per eset:   npages == sum of its extents' pages; state(e) == eset's state
 *   per free extent: zeroed is NO or YES; NO when dirty or muzzy
 *   rtree:      map(first page of e) == e == map(last page of e); for a slab
 *               every page maps to it
 *
 * Fidelity (policies/slab/jemalloc.rows: `heaplab fidelity --family jemalloc`
 * runs each row on libjemalloc 5.3.0 and on this model)
 *   Equal: the size ladder 1..70,000; thread-cache reuse (LIFO, the order
 *   after a flush, large classes); the thread cache's GC steps (when they
 *   come and which bin each visits: test_slab's tcache_gc_steps_as_jemalloc);
 *   a large block's extent a page longer than the block (sz_large_pad),
 *   free extents filed and searched by jemalloc's quantized sizes
 *   (sl_eset_bucket); the tcache stacks' extent in arena 0 (SL_META); the
 *   placement of all 61 traces
 *   (tests/fidelity/placement.sh); decay 0 / -1 / 100 ms; that tcache hits
 *   tick nothing (an idle or cache-only program never decays without the
 *   background thread); the background thread; no background thread in a
 *   fork child (background_thread_postfork_child); the huge arena and the
 *   oversize purge (a freed 10 MiB block leaves at once, 6 MiB stays);
 *   narenas = 4 per CPU and how threads take arenas; extents and slabs
 *   picked oldest first (serial number, then address); a dirty extent cut
 *   only for a request of at least 1/64 of it (a freed 4 MiB block is no
 *   slab's: jemalloc.dirty-fit-*; small dirty extents merge late, when
 *   purged, as jemalloc's delayed coalescing); calloc of a large
 *   block (a fresh or returned extent untouched, a reused dirty one zeroed
 *   by MADV_DONTNEED: the RSS drops).  Within a
 *   tolerance: malloc-large (peak RSS, page faults), the half-gigabyte
 *   program, the RSS a thread on a new arena adds (the arena's
 *   metadata: SL_ARENA_FOOTPRINT), and a thread's end purging its arena
 *   whole when no thread is left on it and no background thread runs,
 *   whatever the decay time (tcache_destroy: jemalloc.thread-exit-*, 3
 *   and 4 % left, 100 and 100 % kept).  Named deviations, and why:
 *   - decay ticks count down from SL_DECAY_NTICKS; jemalloc flips a coin
 *     (1 in 1000) per tick: the same rate without a random source, so
 *     where ticks are few (only the tcache GC's flushes) jemalloc purges
 *     in some runs and the model in none;
 *   - extents never merge across two reservations (jemalloc merges
 *     neighbouring mappings), and decay purges exactly the pages its curve
 *     allows, splitting an extent (jemalloc purges whole extents):
 *     malloc-large with decay off stays within a few per cent;
 *   - the huge arena is made on first use; jemalloc reserves its index at
 *     start (arenas.narenas is then 9 on 2 CPUs: the model's statistics
 *     say narenas 8 plus oversize_threshold > 0);
 *   - one background thread per heap, not one per CPU; the 8-byte class
 *     sits 16 bytes apart (heaplab's alignment promise);
 *   - a thread cache is one metadata record, written whole when made and
 *     kept in its pool after the thread exits; jemalloc's pointer stacks
 *     are one allocation from arena 0 (tsd_tcache_data_init), freed when
 *     the thread exits, and only the slots used are written.  The model
 *     takes and gives back an extent of that size in arena 0 at the same
 *     moments (sl_tcache_t.stack, SL_META), so blocks lie where jemalloc's
 *     do, but keeps the stacks in the record and never writes the
 *     extent's pages; extent records are 152 bytes, jemalloc's edata_t 128.
 *   Arena 0 purging oversize extents from 8 MiB even with
 *   oversize_threshold:0 is no deviation: jemalloc creates arena 0 before
 *   it reads the option, and the model copies that.
 *
 * Locks, in the order they are taken
 *   1. sl_state.bg.lock      the background task (clock.h); a thread that
 *                            freed pages takes it (to wake the thread)
 *                            only while holding no other lock
 *   2. sl_state.arenas_lock  arena creation, thread binding, tcache list
 *   3. sl_bin.lock           one bin (slabs, bitmaps, nfree of its slabs);
 *                            all bins of an arena in index order at most
 *   4. sl_arena.ext_lock     esets, decay, chunks, extent records
 *   5. sl_rtree.lock         creation of rtree leaves
 *   (then the meta pools' own locks)
 *   Lock-free: the rtree lookups of free() and usable_size(), and each
 *   thread's own tcache.
 */
#ifndef HL_SLAB_H
#define HL_SLAB_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include "bits.h"
#include "meta.h"
#include "os.h"
#include "policy.h"

/** The policy table of `slab`: its `.name` is what hl_fatal prints. */
extern const hl_policy_t hl_policy_slab;

/* ---- tunable constants (jemalloc 5.3 values) ---------------------------- */
enum {
	SL_NBINS_MAX = 40,          /**< small classes (36 with 4 KiB pages) */
	SL_LG_NGROUP = 2,           /**< four classes per doubling */
	SL_NSTEPS = 200,            /**< smoothstep epochs per decay period */
	SL_SMOOTH_BFP = 24,         /**< fixed-point bits of the smoothstep table */
	SL_DECAY_NTICKS = 1000,     /**< operations between decay time checks */
	SL_LG_MAX_ACTIVE_FIT = 6,   /**< a dirty extent is cut for requests of 1/64 its size and up */
	SL_TCACHE_SMALL_MIN = 20,   /**< slots per small tcache bin, at least */
	SL_TCACHE_SMALL_MAX = 200,  /**< ... and at most */
	SL_TCACHE_LARGE = 20,       /**< slots per large tcache bin */
	SL_TCACHE_GC_BYTES = 65536, /**< bytes allocated between incremental GCs */
	SL_MAX_NHBINS = 80,         /**< small + large tcache bins, at most */
	SL_NPSZ = 140,              /**< page size classes up to 2^46 bytes */
	SL_BITMAP_WORDS = 8,        /**< 512 regions: an 8-byte class in a 4K page */
	SL_MAX_ARENAS = 256,        /**< narenas is clamped to this */
	SL_HUGE_ARENA = SL_MAX_ARENAS, /**< slot (and extents' arena index) of the huge arena */
	SL_RT_ROOT_BITS = 18,       /**< rtree root level: 2^18 slots */
	SL_RT_LEAF_SHIFT = 48 - SL_RT_ROOT_BITS, /**< a leaf maps 2^30 bytes of address space */
	SL_COMMIT_GRAIN = 64 << 10, /**< a chunk is made read/write this much at a time */
	SL_SCRATCH_FIXED = 16384,   /**< cached pointers a walk sorts without mapping memory */
};
#define SL_OVERSIZE_DEFAULT ((size_t)8 << 20) /**< oversize_threshold's default */
/** Bytes of metadata one arena occupies, all of them written when it is
 *  created: what jemalloc 5.3.0's arena_new() takes from the arena's own
 *  `base` (src/arena.c: base_alloc of sizeof(arena_t) + nbins * sizeof(bin_t)),
 *  plus what base_new() puts in front of it in the base's first block
 *  (src/base.c: the block header, then base_t rounded to a cache line).
 *  Sizes on x86-64 with 4 KiB pages, from the 5.3.0 headers: base_block_t
 *  144 B, base_t 3,912 B (3,968 rounded), arena_t 78,952 B, 36 bin_t of
 *  224 B: 91,128 B, what stats.arenas.N.base reads for a new arena
 *  before its first extent records (91,152 measured).  arena_t is that
 *  big because it embeds pa_shard_t (68,280 B): three ecache_t (dirty,
 *  muzzy, retained) of two eset_t each (the second for guarded extents),
 *  every eset_t 9,656 B of per-page-size-class heaps, summaries and
 *  statistics (200 classes); and arena_stats_t (10,368 B, per-large-class
 *  counters).  The initialisation writes every class's heap and
 *  statistics in all six esets (src/eset.c: eset_init), the mutexes and
 *  the bins, so every page ends up resident: 7 threads on 7 new arenas
 *  add 88 KiB of RSS each more than on one arena (bench/HISTORY.md,
 *  2026-12-02 12:00).  The model's sl_arena_t is the first part of it. */
#define SL_ARENA_FOOTPRINT ((size_t)144 + 3968 + 78952 + 36 * 224)
#define SL_TICKS_DUE ((int64_t)1 << 62) /**< both gc_bytes are this much lower while ticks <= 0 */
#define SL_BG_MIN_INTERVAL_NS 100000000ull  /**< background thread sleeps >= 100 ms */
#define SL_BG_IDLE_NS 1000000000ull         /**< ... and at most 1 s when idle */
/** @cond HL_COMPILE_CHECKS */
_Static_assert(SL_NSTEPS > 1 && SL_TCACHE_SMALL_MIN <= SL_TCACHE_SMALL_MAX, "tcache bounds");
_Static_assert((SL_TCACHE_SMALL_MAX & 1) == 0, "tcache slots must be even");
/** @endcond */

/** What an extent's pages are. */
typedef enum sl_estate {
	SL_SLAB = 0,     /**< active, cut into regions of one small class */
	SL_LARGE,        /**< active, one large block */
	SL_META,         /**< active, a thread cache's pointer stacks (sl_tcache_t.stack) */
	SL_DIRTY,        /**< free, resident */
	SL_MUZZY,        /**< free, MADV_FREE given */
	SL_RETURNED,     /**< free, MADV_DONTNEED given (or never touched) */
	SL_NSTATES
} sl_estate_t;

/** What an extent's pages hold as far as calloc is concerned
 *  (sl_extent_t.zeroed): jemalloc 5.3's edata zeroed flag, plus the mark
 *  of a large block a thread cache holds. */
typedef enum sl_zeroed {
	SL_ZEROED_NO = 0, /**< written since the kernel supplied them (dirty,
	                       muzzy): a calloc served by an arena zeroes them
	                       with MADV_DONTNEED (jemalloc's ehooks_zero) */
	SL_ZEROED_YES,    /**< every page reads zero: fresh from the kernel or
	                       purged with MADV_DONTNEED since: calloc writes nothing */
	SL_ZEROED_CACHED  /**< a large block freed into a thread cache: a calloc
	                       served by the cache clears it with memset
	                       (tcache_alloc_large), whatever its pages hold */
} sl_zeroed_t;

/** Node of an intrusive pairing heap (min-heap by extent serial number,
 *  then address: jemalloc's edata_snad_comp). */
typedef struct sl_phn {
	struct sl_phn *child;   /**< leftmost child */
	struct sl_phn *next;    /**< right sibling */
	struct sl_phn *prev;    /**< left sibling, or parent when leftmost */
} sl_phn_t;

/** One reservation from the page source (struct sl_chunk, below). */
typedef struct sl_chunk sl_chunk_t;

/** One extent: out-of-band record of a run of pages. */
typedef struct sl_extent {
	uintptr_t base;          /**< first byte; page aligned (ext lock) */
	size_t size;             /**< bytes, page multiple (ext lock) */
	uint8_t state;           /**< sl_estate_t (ext lock) */
	uint8_t in_heap;         /**< on a pairing heap (owner's lock) */
	uint16_t arena;          /**< index of the owning arena (fixed) */
	uint16_t szind;          /**< size class (slab or large) (set at alloc) */
	uint16_t nfree;          /**< slab: regions not taken (bin lock) */
	uint8_t zeroed;          /**< sl_zeroed_t: free, of its pages now (ext lock);
	                              active, of its pages when it was handed out
	                              (its owner) */
	sl_chunk_t *chunk;       /**< reservation it lies in (fixed) */
	uint64_t sn;             /**< serial number of the reservation it came from
	                              (the lowest, after a merge): older first (ext lock) */
	sl_phn_t ph;             /**< bin nonfull heap or eset bucket (owner's lock) */
	struct sl_extent *lru_prev; /**< older neighbour on its eset's LRU (ext lock) */
	struct sl_extent *lru_next; /**< younger neighbour on its eset's LRU (ext lock) */
	uint64_t bitmap[SL_BITMAP_WORDS]; /**< slab: bit set = region taken (bin lock) */
} sl_extent_t;

/** One reservation of address space from the page source. */
struct sl_chunk {
	uintptr_t base;          /**< first byte (fixed) */
	size_t size;             /**< bytes (fixed) */
	size_t committed;        /**< bytes from base made read/write so far (ext lock) */
	sl_chunk_t *next;        /**< arena's list (ext lock) */
};

/** A set of free extents of one state. */
typedef struct sl_eset {
	sl_phn_t *bucket[SL_NPSZ];      /**< per page size class, oldest (serial number,
	                                     then address) first */
	uint64_t nonempty[(SL_NPSZ + 63) / 64]; /**< bit per non-empty bucket */
	sl_extent_t *lru_head;          /**< oldest extent: the next one sl_purge() takes */
	sl_extent_t *lru_tail;          /**< most recently freed extent */
	size_t npages;                  /**< pages in all its extents */
	size_t nextents;                /**< extents in it */
	uint8_t state;                  /**< sl_estate_t of its members (fixed) */
} sl_eset_t;

/** Decay schedule of one eset (dirty or muzzy); ext lock. */
typedef struct sl_decay {
	int64_t ms;                /**< decay time; 0 = at once, -1 = never (fixed) */
	uint64_t interval_ns;      /**< ms / SL_NSTEPS */
	uint64_t epoch_ns;         /**< start of the current epoch */
	uint64_t deadline_ns;      /**< when the next epoch is due (with jitter) */
	uint64_t jitter_state;     /**< random source of the jitter */
	size_t nunpurged;          /**< pages left unpurged at the last epoch */
	size_t backlog[SL_NSTEPS]; /**< pages that became unused per epoch, oldest first */
} sl_decay_t;

/** Per small class, per arena: the slabs with free regions. */
typedef struct sl_bin {
	pthread_mutex_t lock;      /**< guards every field and its slabs' bitmaps */
	sl_extent_t *cur;          /**< slabcur: regions come from here first */
	sl_phn_t *nonfull;         /**< other slabs with free regions, oldest first */
	size_t nonfull_count;      /**< slabs on that heap */
	size_t nslabs;             /**< slabs of this class in this arena */
	size_t curregs;            /**< regions taken (live or cached) */
	uint64_t nfills;           /**< tcache fill batches this bin served */
	uint64_t nflushes;         /**< tcache flush batches it took back */
	char pad[8];               /**< keeps neighbouring bins' locks apart */
} sl_bin_t;

/** Counters of an arena (ext lock unless noted). */
typedef struct sl_astats {
	uint64_t purge_lazy_calls;   /**< MADV_FREE calls by decay */
	uint64_t purge_calls;        /**< MADV_DONTNEED calls by decay */
	uint64_t purged_lazy_pages;  /**< pages those MADV_FREE calls covered */
	uint64_t purged_pages;       /**< pages those MADV_DONTNEED calls covered */
	uint64_t decay_epochs;       /**< epochs advanced */
	uint64_t nlarge;             /**< active large extents */
	uint64_t large_bytes;        /**< bytes in them (also follows in-place resizes) */
	uint64_t grows;              /**< chunks reserved */
	/* An arena leaves the three below at 0: sl_stats() sums sl_astats_t
	 * word by word over the arenas, then fills these in from the live
	 * tcaches and sl_state.dead_hits/fills/flushes. */
	uint64_t tc_hits;            /**< tcache hits (only in the stats sum) */
	uint64_t tc_fills;           /**< tcache fills (only in the stats sum) */
	uint64_t tc_flushes;         /**< tcache flushes (only in the stats sum) */
} sl_astats_t;

/** An arena: its own bins and extents, its own locks. */
typedef struct sl_arena {
	unsigned index;              /**< position in sl_state.arenas (fixed) */
	unsigned nthreads;           /**< threads bound to it (arenas lock) */
	pthread_mutex_t ext_lock;    /**< esets, decay, chunks, extent split/merge */
	sl_eset_t esets[3];          /**< dirty, muzzy, returned */
	sl_decay_t decay[2];         /**< of dirty, of muzzy */
	sl_chunk_t *chunks;          /**< every reservation of this arena */
	unsigned next_grow;          /**< page size class of the next reservation */
	uint64_t next_sn;            /**< serial number of the next reservation */
	size_t oversize;             /**< a freed extent of a large size that merges into
	                                  one this big is purged at once; 0 = never (fixed) */
	sl_astats_t st;              /**< its counters (ext lock) */
	hl_meta_pool_t ext_pool;     /**< its sl_extent_t records: taken and given back
	                                  with the ext lock held, never to another arena
	                                  (jemalloc 5.3's edata_cache in pa_shard_t,
	                                  src/pa.c, src/edata_cache.c: edata_t come
	                                  from the arena's own base and freed ones wait
	                                  on its list) */
	sl_bin_t bins[SL_NBINS_MAX]; /**< one per small class (the first sc->nbins
	                                  are used), each under its own lock */
} sl_arena_t;

/** One tcache bin: a stack of cached pointers, laid out as jemalloc 5.3's
 *  cache_bin_t (include/jemalloc/internal/cache_bin.h at tag 5.3.0,
 *  54eaed1).  Fresh regions coming out in ascending order, side by side,
 *  is checked against the installed jemalloc (fidelity row
 *  jemalloc.fresh-stride); the flush order rests on that source only.  It grows down,
 *  and only its head is a whole pointer: the other marks keep the low 16
 *  bits of the head's value at that mark, which name a slot uniquely
 *  because one bin's slots span far less than 64 KiB.  So a hit compares
 *  16 bits and moves the head; counts are differences of low bits.
 *
 *     (low address)                                 (high address)
 *     |------ room ------|--------- cached ---------|
 *     ^ full_bits        ^ head      ^ low_water_bits ^ empty_bits
 *
 *  The malloc hit stops at the low water mark (head == low_water_bits),
 *  the free hit at the full mark; the slow path lowers the mark.
 *
 *  jemalloc keeps a bin's head and marks in one record; the model keeps
 *  its heads in one array and these 8-byte marks in another (sl_tcache_t),
 *  so that a hit reaches both by the class index scaled by 8, with no
 *  address to compute.  Unused bins (and sl_no_tcache's) are all zero:
 *  NULL head, every mark 0. */
typedef struct sl_cbin {
	uint16_t low_water_bits;     /**< low bits of the head at the fewest cached
	                                  since the last GC of the bin */
	uint16_t full_bits;          /**< low bits of the head when full: the bin's
	                                  first slot (fixed) */
	uint16_t empty_bits;         /**< low bits of the head when empty: one past the
	                                  bin's last slot (fixed) */
	uint8_t lg_fill_div;         /**< a fill brings ncached_max >> lg_fill_div */
	uint8_t refilled;            /**< filled since the last GC of it */
} sl_cbin_t;
_Static_assert(sizeof(sl_cbin_t) == 8, "a bin's marks are reached by index * 8");

/** Low 16 bits of a slot's address: what a bin's marks keep. */
static inline uint16_t sl_cbin_bits(void *const *slot)
{
	return (uint16_t)(uintptr_t)slot;
}

/** Pointers between the mark @p from and the empty position of @p b. */
static inline unsigned sl_cbin_count_from(const sl_cbin_t *b, uint16_t from)
{
	return (uint16_t)(b->empty_bits - from) / sizeof(void *);
}

/** Capacity of @p b. */
static inline unsigned sl_cbin_capacity(const sl_cbin_t *b)
{
	return (uint16_t)(b->empty_bits - b->full_bits) / sizeof(void *);
}

/** The fewest pointers @p b held since its last GC. */
static inline unsigned sl_cbin_low_water(const sl_cbin_t *b)
{
	return sl_cbin_count_from(b, b->low_water_bits);
}

/** The two byte counters of a tcache that each bring a GC step every
 *  SL_TCACHE_GC_BYTES (sl_tcache_t.gc_bytes): jemalloc 5.3 counts the
 *  bytes a thread allocates and the bytes it frees apart, and runs the
 *  same tcache_event when either reaches opt_tcache_gc_incr_bytes (its
 *  thread events tcache_gc and tcache_gc_dalloc, src/tcache.c), after the
 *  call that reached it (thread_alloc_event, thread_dalloc_event). */
typedef enum sl_gc_dir {
	SL_GC_ALLOC = 0,  /**< usable bytes of each malloc, and of realloc's new block */
	SL_GC_DALLOC = 1  /**< usable bytes of each free, and of realloc's old block */
} sl_gc_dir_t;

/** Per thread and heap: the thread cache (t->policy_tls). */
typedef struct sl_tcache {
	sl_arena_t *arena;           /**< arena this thread is bound to */
	bool enabled;                /**< tcache:on */
	bool linked;                 /**< on the state's list (arenas lock) */
	int32_t ticks;               /**< operations left before a decay check */
	int64_t gc_bytes[2];         /**< bytes left before the next GC step, counted
	                                  apart for allocations (SL_GC_ALLOC) and frees
	                                  (SL_GC_DALLOC), each less SL_TICKS_DUE while
	                                  ticks <= 0 */
	unsigned next_gc;            /**< bin the next GC step looks at (0 first) */
	pthread_t owner;             /**< creating thread (for fork) */
	uint64_t hits;               /**< allocations served from the cache (owner
	                                  writes with hl_counter_add(), stats read relaxed) */
	uint64_t fills;              /**< batches taken from a bin (same) */
	uint64_t flushes;            /**< batches given back (same) */
	struct sl_tcache *next;      /**< next on sl_state.tcaches (arenas lock) */
	struct sl_tcache *prev;      /**< previous on sl_state.tcaches (arenas lock) */
	sl_extent_t *stack;          /**< the extent jemalloc 5.3 keeps this cache's
	                                  pointer stacks in (SL_META, sl_stack_alloc):
	                                  taken from arena 0 when the cache is made,
	                                  given back at thread exit; the model's stacks
	                                  stay in slot_area, the extent holds the
	                                  place (owner thread) */
	void **head[SL_MAX_NHBINS];  /**< each bin's head (sl_cbin_t): small classes,
	                                  then large classes up to tcache_max; the
	                                  first nhbins are used (owner thread) */
	sl_cbin_t bins[SL_MAX_NHBINS]; /**< each bin's marks, by the same index */
	void *slot_area[];           /**< all bins' slots */
} sl_tcache_t;

/** What a thread's policy_tls holds before its tcache is made
 *  (hl_policy_t.tls_empty): a tcache nobody writes, every bin empty
 *  (its head is at its low water mark, so the malloc hit misses) and full
 *  (at its full mark, so the free hit refuses), so that the hits test no
 *  NULL (slab_tcache.c). */
extern const sl_tcache_t sl_no_tcache;

/** Pointers cached in bin @p i of @p tc, its head read once (relaxed:
 *  stats and the walker read other threads' bins). */
static inline unsigned sl_cbin_ncached(const sl_tcache_t *tc, unsigned i)
{
	return sl_cbin_count_from(&tc->bins[i], sl_cbin_bits(__atomic_load_n(&tc->head[i], __ATOMIC_RELAXED)));
}

/** @p t's tcache, or NULL when it has none yet (policy_tls sl_no_tcache,
 *  or NULL on a record a host made, core/policy.h). */
static inline sl_tcache_t *sl_tcache_of(const hl_thread_t *t)
{
	return hl_policy_tls_made(t, &sl_no_tcache);
}

/** The page -> extent radix tree (two levels). */
typedef struct sl_rtree {
	pthread_mutex_t lock;        /**< serialises leaf creation */
	unsigned lg_page;            /**< key = address >> lg_page */
	unsigned leaf_bits;          /**< bits resolved by a leaf */
	sl_extent_t **root[1u << SL_RT_ROOT_BITS]; /**< leaves, atomic pointers */
} sl_rtree_t;

/** Size class facts, shared by every slab heap. */
typedef struct sl_sc {
	size_t page;                 /**< page size */
	unsigned lg_page;            /**< log2 of it */
	unsigned nbins;              /**< small classes */
	size_t small_max;            /**< largest small class */
	size_t large_min;            /**< smallest large class */
	uint32_t size[SL_NBINS_MAX]; /**< usable bytes of a region (the class size) */
	uint32_t stride[SL_NBINS_MAX];/**< distance between regions: the class size */
	uint32_t nregs[SL_NBINS_MAX];/**< regions per slab */
	uint32_t slab_size[SL_NBINS_MAX]; /**< bytes per slab */
	uint64_t region_inv[SL_NBINS_MAX]; /**< hl_exact_div_init of the stride:
					  region index by one multiply (sl_region_index) */
	uint8_t region_shift[SL_NBINS_MAX];/**< log2 of the stride's power-of-two factor */
	uint8_t lookup[4096 / 8 + 1];/**< szind of sizes <= 4096, by (n + 7) >> 3 */
} sl_sc_t;

/** The heap's policy state. */
typedef struct sl_state {
	hl_heap_t *heap;             /**< the heap this state serves (fixed) */
	hl_os_t *os;                 /**< its page source (fixed) */
	sl_sc_t sc;                  /**< size class facts: a copy of sl_sc_get()'s, so that
	                                  the hits reach them at a fixed offset (fixed) */
	bool debug;                  /**< hl_heap_debug: extra double-free scans */
	bool tcache_on;              /**< tcache option */
	bool bg_on;                  /**< background_thread option */
	unsigned narenas;            /**< arenas allowed */
	size_t oversize;             /**< large classes from this size go to the huge
	                                  arena; 0 = no huge arena (fixed) */
	size_t tcache_max;           /**< largest cached class */
	unsigned nhbins;             /**< tcache bins: small + large */
	unsigned tc_slots;           /**< slots of one tcache */
	uint16_t ncached_max[SL_MAX_NHBINS]; /**< capacity of each tcache bin (0: tcache off) */
	int64_t dirty_ms;            /**< dirty_decay_ms option (fixed) */
	int64_t muzzy_ms;            /**< muzzy_decay_ms option (fixed) */
	hl_meta_pool_t chunk_pool;   /**< sl_chunk_t records */
	hl_meta_pool_t tc_pool;      /**< sl_tcache_t records */
	pthread_mutex_t arenas_lock; /**< arenas[], nthreads, tcache list */
	sl_arena_t *arenas[SL_MAX_ARENAS + 1]; /**< created lazily; atomic reads; the
	                                  last slot is the huge arena */
	unsigned ninit;              /**< arenas created, not counting the huge one */
	sl_tcache_t *tcaches;        /**< every live tcache */
	uint64_t dead_hits;          /**< hits of destroyed tcaches (arenas lock) */
	uint64_t dead_fills;         /**< fills of destroyed tcaches (arenas lock) */
	uint64_t dead_flushes;       /**< flushes of destroyed tcaches (arenas lock) */
	void **scratch;              /**< walker's sorted copy of cached pointers (arenas lock) */
	size_t scratch_cap;          /**< pointers it holds */
	void *scratch_fixed[SL_SCRATCH_FIXED]; /**< the first scratch: inside the state, so a
						    walk maps nothing (pages touched on use) */
	/* background thread */
	hl_background_t bg;          /**< the core's task (clock.h): a thread, or
	                                  passes at a replay's times */
	int bg_idle;                 /**< may sleep long: kick when pages appear (atomic) */
	sl_rtree_t rtree;            /**< last: it is big */
} sl_state_t;

/* ---- size classes (slab_sz.c) ------------------------------------------ */
/** The size class table, built on first use (pthread_once) and then
 *  shared read-only by every slab heap. */
const sl_sc_t *sl_sc_get(void);
/** Class index of a request of @p n bytes (any n <= HL_MAX_REQUEST). */
unsigned sl_size2index(const sl_sc_t *sc, size_t n);
/** Bytes of class @p ind. */
size_t sl_index2size(const sl_sc_t *sc, unsigned ind);
/** Page size class index of @p pages pages: smallest class >= pages. */
unsigned sl_psz_ceil(size_t pages);
/** The bucket of an eset that a free extent of @p pages pages is filed in:
 *  jemalloc 5.3's sz_psz2ind(sz_psz_quantize_floor(size)) (src/eset.c,
 *  eset_insert), whose quantization takes sz_large_pad (a page) off the
 *  size, rounds down to a page size class and adds the pad back: up to
 *  8 pages the size's own class, above it the class just over the
 *  largest one a large block of that extent could be (a 9-page extent,
 *  the 32 KiB class and its pad, is filed with the 10-page ones). */
unsigned sl_eset_bucket(size_t pages);
/** The first bucket a search for @p pages pages looks in (eset_first_fit:
 *  sz_psz2ind(sz_psz_quantize_ceil(size))): every extent filed there or
 *  above is at least that big. */
unsigned sl_eset_first_bucket(size_t pages);
/** Pages of page size class @p i. */
size_t sl_psz_pages(unsigned i);

/** Bytes of the extent of a large block of @p usize bytes: one page more
 *  (jemalloc 5.3's sz_large_pad, a page while cache_oblivious is on, its
 *  default: arena_extent_alloc_large asks for usize + sz_large_pad, so that
 *  the block may start at a random cache line of the first page).  The
 *  model starts the block at the extent's first byte; the page is still
 *  taken, so large extents lie where jemalloc's lie (two malloc(16384)
 *  in a row are 20 KiB apart). */
static inline size_t sl_large_extent_size(const sl_sc_t *sc, size_t usize)
{
	return usize + sc->page;
}

/** sl_size2index() through the lookup table for @p n <= 4096 bytes, the
 *  computed way above that; @p sc from sl_sc_get(). */
static inline unsigned sl_size2index_fast(const sl_sc_t *sc, size_t n)
{
	return n <= 4096 ? sc->lookup[(n + 7) >> 3] : sl_size2index(sc, n);
}

/* ---- pairing heap (slab_extent.c) --------------------------------------- */
/** Clears node @p n's links and melds it into the heap whose root is
 *  @p *root (the owning bin's or ext lock held). */
void sl_ph_insert(sl_phn_t **root, sl_phn_t *n);
/** True when extent @p a comes before @p b: lower serial number, then
 *  lower address (jemalloc prefers old extents and slabs, low ones). */
static inline bool sl_extent_older(const sl_extent_t *a, const sl_extent_t *b)
{
	return a->sn != b->sn ? a->sn < b->sn : a->base < b->base;
}
/** Takes node @p n, anywhere in the heap rooted at @p *root, out of it;
 *  its children are paired and melded back in. */
void sl_ph_remove(sl_phn_t **root, sl_phn_t *n);
/** The extent whose ph member is @p n; NULL for a NULL node. */
static inline sl_extent_t *sl_ph_extent(sl_phn_t *n)
{
	return n ? (sl_extent_t *)((char *)n - __builtin_offsetof(sl_extent_t, ph)) : NULL;
}

/* ---- rtree (slab_rtree.c) ----------------------------------------------- */
/** Sets up @p rt's lock and how a 48-bit address splits into root and
 *  leaf index for pages of 2^@p lg_page bytes (the root comes zeroed). */
void sl_rtree_init(sl_rtree_t *rt, unsigned lg_page);
/** Maps the page holding @p addr to @p e; false when out of metadata. */
bool sl_rtree_set(sl_state_t *s, uintptr_t addr, sl_extent_t *e);
/** Lock-free lookup of the extent mapped at the page of @p addr in @p rt;
 *  NULL when the address is beyond the tree, its leaf does not exist yet,
 *  or the page was never mapped.  The root splits the 48-bit address space
 *  into 2^SL_RT_ROOT_BITS leaves of 2^SL_RT_LEAF_SHIFT bytes whatever the
 *  page size, so the root index is a constant shift. */
static inline sl_extent_t *sl_rtree_get(const sl_rtree_t *rt, uintptr_t addr)
{
	uintptr_t hi = addr >> SL_RT_LEAF_SHIFT;
	if (HL_UNLIKELY(hi >= (1u << SL_RT_ROOT_BITS)))
		return NULL;
	sl_extent_t **leaf = __atomic_load_n(&rt->root[hi], __ATOMIC_ACQUIRE);
	if (HL_UNLIKELY(!leaf))
		return NULL;
	uintptr_t in_leaf = (addr & (((uintptr_t)1 << SL_RT_LEAF_SHIFT) - 1)) >> rt->lg_page;
	return __atomic_load_n(&leaf[in_leaf], __ATOMIC_ACQUIRE);
}

/* ---- extents (slab_extent.c), ext lock held ----------------------------- */
/** An active extent of @p size bytes aligned to @p align, or NULL. */
sl_extent_t *sl_extent_alloc(sl_state_t *s, sl_arena_t *a, size_t size, size_t align,
			     sl_estate_t as);
/** Gives an active extent back: it becomes dirty (and may merge). */
void sl_extent_dalloc(sl_state_t *s, sl_arena_t *a, sl_extent_t *e);
/** Gives the pages of large extent @p e beyond @p size back as dirty. */
bool sl_extent_shrink(sl_state_t *s, sl_arena_t *a, sl_extent_t *e, size_t size);
/** Grows large extent @p e to @p size with the free extent after it, if any. */
bool sl_extent_expand(sl_state_t *s, sl_arena_t *a, sl_extent_t *e, size_t size);
/** Registers every page of a slab in the rtree. */
bool sl_extent_map_slab(sl_state_t *s, sl_extent_t *e);
/** Makes @p es an empty set for extents of state @p st. */
void sl_eset_init(sl_eset_t *es, sl_estate_t st);
/** Takes free extent @p e out of @p es: off its page size bucket and the
 *  LRU, with npages and nextents lowered. */
void sl_eset_remove(sl_state_t *s, sl_eset_t *es, sl_extent_t *e);
/** Moves @p npages of the oldest extents of eset @p from to the next state;
 *  @p fully (a purge of everything) sends dirty ones past muzzy. */
size_t sl_purge(sl_state_t *s, sl_arena_t *a, sl_estate_t from, size_t npages, bool fully);
/** Purges what a decay of 0 ms demands right away (ext lock held). */
void sl_decay_immediate(sl_state_t *s, sl_arena_t *a);
/** Pages in @p bytes (a page multiple) for heap state @p s. */
static inline size_t sl_npages(const sl_state_t *s, size_t bytes) { return bytes >> s->sc.lg_page; }

/* ---- decay and background thread (slab_decay.c) ------------------------- */
/** Resets @p d to a decay time of @p ms (0: at once, -1: never) whose
 *  first epoch starts at @p now; @p seed starts the jitter of deadlines. */
void sl_decay_init(sl_decay_t *d, int64_t ms, uint64_t now, uint64_t seed);
/** Nanoseconds of the heap's clock (hl_clock_now_ns): the clock decay runs on. */
static inline uint64_t sl_now_ns(const sl_state_t *s) { return hl_clock_now_ns(s->heap); }
/** Runs both decays of @p a (ext lock held); returns ns until the next epoch, or 0 when idle. */
uint64_t sl_decay_run(sl_state_t *s, sl_arena_t *a, uint64_t now);
/** A thread's ticker ran out: try a decay step of its arena. */
void sl_decay_tick(sl_state_t *s, sl_arena_t *a);
/** A thread bound to @p a has ended (its cache flushed, its arena
 *  unbound): a decay step of arena 0 and of @p a, or, when @p a has no
 *  thread left and no background thread runs, a purge of all of it. */
void sl_decay_thread_ended(sl_state_t *s, sl_arena_t *a);
/** Starts the background purging thread of @p s.
 *  @return 0, or -1 when the thread could not be created. */
int sl_bg_start(sl_state_t *s);
/** Asks the background thread of @p s to end and joins it (no-op when it
 *  is not running). */
void sl_bg_stop(sl_state_t *s);
/* sl_bg_maybe_kick(): slab_decay.h. */

/* ---- arenas, bins, tcache (slab.c, slab_tcache.c) ----------------------- */
/** Region index of @p p in slab @p e when p is a region start, else a
 *  number >= nregs of its class (hl_exact_div; an offset below the base
 *  is huge too). */
static inline uint64_t sl_region_of(const sl_sc_t *sc, const sl_extent_t *e, uintptr_t p)
{
	return hl_exact_div((uint64_t)(p - e->base), sc->region_inv[e->szind], sc->region_shift[e->szind]);
}
/** Region index of @p p in slab @p e, or -1 when p is not a region start. */
static inline int sl_region_index(const sl_sc_t *sc, const sl_extent_t *e, uintptr_t p)
{
	uint64_t q = sl_region_of(sc, e, p);
	return q < sc->nregs[e->szind] ? (int)q : -1;
}

/** Usable bytes of live extent @p e: its class size (a large extent holds
 *  a page more, sl_large_extent_size). */
static inline size_t sl_extent_usize(const sl_sc_t *sc, const sl_extent_t *e)
{
	return e->state == SL_SLAB ? sc->size[e->szind] : sl_index2size(sc, e->szind);
}

/** Counts @p n decay ticks on @p tc: work that reached an arena (a fill,
 *  a flushed pointer, an uncached small or a large allocation or free).
 *  As in jemalloc 5.3, thread-cache hits tick nothing, so a thread that only
 *  hits its cache never drives decay; the check runs at its next operation:
 *  when the ticks run out, both gc_bytes are lowered by SL_TICKS_DUE, so
 *  the one test of a hit (its gc_bytes <= 0, sl_tick) sees both counters,
 *  and sl_tcache_event() adds it back. */
static inline void sl_decay_ticks(sl_tcache_t *tc, unsigned n)
{
	if (tc->ticks > 0 && (tc->ticks -= (int32_t)n) <= 0) {
		tc->gc_bytes[SL_GC_ALLOC] -= SL_TICKS_DUE;
		tc->gc_bytes[SL_GC_DALLOC] -= SL_TICKS_DUE;
	}
}

/** Arena @p i of @p s (acquire load, no lock), or NULL when it was not
 *  created or @p i is out of range. */
static inline sl_arena_t *sl_arena_get(sl_state_t *s, unsigned i)
{
	return i <= SL_HUGE_ARENA ? __atomic_load_n(&s->arenas[i], __ATOMIC_ACQUIRE) : NULL;
}
/** Creates and publishes arena @p i of @p s in metadata memory: its locks,
 *  empty esets, both decays and first chunk size (arenas lock held, or
 *  during init).  @p i == SL_HUGE_ARENA makes the huge arena, whose decay
 *  times are 0 where the heap's are positive.  @return the arena, or NULL
 *  when out of metadata. */
sl_arena_t *sl_arena_create(sl_state_t *s, unsigned i);
/** The @p i-th arena to visit in a walk over all of them: arenas 0 to
 *  ninit - 1, then the huge arena if it exists; NULL past the last.  Reads
 *  ninit and the slots plainly: arenas lock held. */
static inline sl_arena_t *sl_arena_nth(const sl_state_t *s, unsigned i)
{
	return i < s->ninit ? s->arenas[i] : i == s->ninit ? s->arenas[SL_HUGE_ARENA] : NULL;
}
/** The arena a large extent of @p usize bytes comes from for a thread bound
 *  to @p a: the huge arena (made on first use) from oversize up, else @p a. */
sl_arena_t *sl_large_arena(sl_state_t *s, sl_arena_t *a, size_t usize);
/** The arena a new thread of @p s is bound to: a new one while fewer than
 *  narenas exist and every existing one has a thread, else the one with the
 *  fewest threads (arenas lock held).  NULL only when none can be made. */
sl_arena_t *sl_arena_choose(sl_state_t *s);
/** A large extent of class @p ind aligned to @p align; its address or NULL. */
void *sl_large_alloc(sl_state_t *s, sl_arena_t *a, unsigned ind, size_t align);
/** Takes up to @p n regions of class @p ind into @p out; returns how many. */
unsigned sl_bin_take(sl_state_t *s, sl_arena_t *a, unsigned ind, void **out, unsigned n);
/** Gives back @p n regions (any arenas) of class @p ind. */
void sl_bin_give(sl_state_t *s, unsigned ind, void *const *ptrs, unsigned n);
/** Frees a large extent to its arena. */
void sl_large_free(sl_state_t *s, sl_extent_t *e);
/** The extent of a thread cache's pointer stacks, as jemalloc 5.3's
 *  tsd_tcache_data_init takes it: one allocation of 16 bytes plus a
 *  pointer per slot of every bin (cache_bin_info_compute_alloc), page
 *  aligned, from arena 0 whatever the thread's arena, a large extent with
 *  its page of pad (28 KiB and a page with 4 KiB pages), in state SL_META:
 *  no block of the program's.  NULL when out of memory. */
sl_extent_t *sl_stack_alloc(sl_state_t *s);
/** Gives back what sl_stack_alloc() took (jemalloc's tcache_destroy). */
void sl_stack_free(sl_state_t *s, sl_extent_t *e);
/** Makes the tcache of thread @p t: carves its bins' slots, binds it to an
 *  arena (sl_arena_choose()), links it on s->tcaches and stores it in
 *  t->policy_tls.  @return the tcache, or NULL when out of memory. */
sl_tcache_t *sl_tcache_create(sl_state_t *s, hl_thread_t *t);
/** Gives back all but @p keep pointers of tcache bin @p bin of @p tc,
 *  the bottom (least recently cached) ones: small regions to their bins,
 *  large extents to their arenas.  Lowers the low water to @p keep if
 *  needed. */
void sl_tcache_flush(sl_state_t *s, sl_tcache_t *tc, unsigned bin, unsigned keep);
/** Refills small class @p ind of @p tc with ncached_max >> lg_fill_div
 *  regions (at least one) from its arena's bin, lowest address on top.
 *  The bin is empty. */
void sl_tcache_fill(sl_state_t *s, sl_tcache_t *tc, unsigned ind);
/** Slow path of @p tc's counters: a decay tick of its arena when ticks ran
 *  out, an incremental GC step when the counter @p dir reached zero. */
void sl_tcache_event(sl_state_t *s, sl_tcache_t *tc, sl_gc_dir_t dir);
/** Thread exit: flushes every bin of @p tc, unlinks it, unbinds it from its
 *  arena and adds its counters to s->dead_*. */
void sl_tcache_destroy(sl_state_t *s, sl_tcache_t *tc);
/** Takes @p tc off the list without flushing: its blocks stay cached for
 *  good (a fork child's copy of another thread's cache). */
void sl_tcache_unlink(sl_state_t *s, sl_tcache_t *tc);
/** Takes the arenas lock, then for each arena every bin lock in index
 *  order and its ext lock (checker, walker, snapshot, fork). */
void sl_lock_all(sl_state_t *s);
/** Releases what sl_lock_all() took, in reverse order. */
void sl_unlock_all(sl_state_t *s);

/* ---- looking inside (slab_check.c, slab_dot.c, slab_stats.c) ------------ */
/** The check hook: verifies the invariants above over every arena of
 *  state @p st (all locks held) and the calling thread's tcache, reporting
 *  to @p r.  @return the number of problems it added. */
int sl_check(void *st, hl_report_t *r);
/** The walk hook: calls @p fn with @p arg for every extent of every chunk
 *  of @p st in address order, region by region for slabs (free, cached or
 *  live).  @return the first nonzero value @p fn returned, else 0. */
int sl_walk(void *st, hl_walk_fn fn, void *arg);
/** The snapshot hook: draws each arena of @p st (its bins' slabs and its
 *  chunks' extents, cached regions marked) into DOT writer @p d. */
void sl_snapshot(void *st, hl_dot_t *d);
/** The stats hook: writes totals over the arenas and tcaches of @p st, and
 *  per-arena and per-class figures, to @p w. */
void sl_stats(void *st, hl_statw_t *w);
/** Sorted pointers held by every tcache, in the scratch buffer (arenas
 *  lock held, as by sl_lock_all); count in *n.  NULL when out of memory. */
void **sl_cached_collect(sl_state_t *s, size_t *n);
/** True when @p p is among the @p n sorted pointers @p v (binary search). */
bool sl_cached_has(void *const *v, size_t n, const void *p);

#endif
