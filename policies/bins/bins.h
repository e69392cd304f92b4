/**
 * @file bins.h
 * @brief Policy `bins`: a model of dlmalloc / glibc ptmalloc (2.35 to 2.43,
 *        by default the running glibc's release: option `version`).
 *
 * Glossary
 *   chunk      a block with two header words: prev_size and size.  The size
 *              word's low three bits are flags (P, M, A below).
 *   P          PREV_INUSE: the chunk just below this one is in use.
 *   M          IS_MMAPPED: the chunk has a mapping of its own.
 *   A          NON_MAIN_ARENA: the chunk lives in a secondary arena.
 *   mem        the payload address, chunk + 16; what malloc returns.
 *   nb         a request turned into a chunk size: (n + 8) rounded up to
 *              16, at least 32 (bn_request2size).
 *   bin        a circular doubly linked list of free chunks headed by a
 *              dummy chunk in the arena.  Bin 1 is the unsorted bin, bins
 *              2..63 are small bins (one size each, 32..1008), 64..126 are
 *              large bins (size ranges, sorted largest first).
 *   skip list  in a large bin, the first chunk of each distinct size is
 *              also linked through fd_nextsize / bk_nextsize.
 *   binmap     one bit per bin, set when a chunk is placed into the bin,
 *              cleared lazily when a search finds the bin empty.
 *   top        the free chunk that borders the end of the arena's memory;
 *              never in a bin; grown from the break (main arena) or by
 *              committing more of a sub-heap (secondary arenas).
 *   arena      a lock plus bins plus top.  The main arena lives on the
 *              heap's emulated program break; a secondary arena lives in a
 *              chain of sub-heaps, each 64 MiB of address space aligned to
 *              64 MiB, so a chunk's sub-heap is its address masked.
 *   tcache     per-thread cache: 64 LIFO singly linked lists of exact sizes
 *              (chunks 32..1040, i.e. up to 1032 usable bytes), each holding
 *              at most `tcache_count` chunks; used without any lock.  As in
 *              glibc, the record holding the counts and list heads is a
 *              chunk of the thread's arena (the version's struct: 640
 *              bytes asked up to 2.41, a 656-byte chunk; 760 from 2.42, a
 *              768-byte chunk), taken on the thread's first call and freed
 *              at its exit; what bins keeps beside them (arena, hit
 *              counts, registry links) lives in heaplab's metadata.  From
 *              2.42, option tcache_max opens 12 more, logarithmic, lists
 *              (chunks 1041 up to 4 MiB, kept sorted by size, in the
 *              metadata): the slow path's business (bins_tcache.c).
 *   key        per-heap random word stored in the second payload word of a
 *              cached chunk; finding it there again on free means a
 *              probable double free.
 *   fastbin    (fastbins on: glibc up to 2.42, the default there) LIFO lists of
 *              small chunks that stay marked in use, merged later by
 *              bn_consolidate.
 *   mapped     a chunk with its own mapping (M bit) for a request at or
 *              above mmap_threshold; the chunk starts the mapping, as
 *              glibc's does (prev_size holds its offset: 0, more after
 *              memalign), and its record (bn_mmap_t) is metadata, kept
 *              with the mapping's region by the page source.
 *
 * Block diagram
 *
 *   thread ── t->policy_tls ──► bn_tcache_t  (metadata) ─► its record:
 *      │ miss                        │   counts[64], entries[64] (LIFO, no
 *      │                             │   lock; bins_tcache.c), a 656-byte
 *      ▼                             ▼   chunk of the bound arena (768 from 2.42)
 *   bn_arena_t (mutex) ── main: [chunk|chunk|free|chunk|....|  top  ]◄─ break
 *     bins[1]  unsorted ─┐        secondary: sub-heap (64 MiB aligned)
 *     bins[2..63] small  ├─► free chunks   [hdr|chunk|...|top ....|reserved]
 *     bins[64..126] large┘                    ▲ heap->ar: found by masking
 *     binmap, top, fastbins
 *   big requests ──► own mapping [chunk (M bit) ...]   bn_mmap_t record
 *                                  (the page source's region keeps it: metadata)
 *
 *   A chunk in memory (sizes include the header; 8 bytes of overhead since
 *   a live chunk's payload runs into the next chunk's prev_size word):
 *
 *     chunk ─► ┌───────────────────────────────┐
 *              │ prev_size (payload of prev    │ only meaningful when the
 *              │   chunk unless it is free)    │ chunk below is free
 *              ├───────────────────────────┬─┬─┤
 *              │ size                      │A│M│P
 *     mem   ─► ├───────────────────────────┴─┴─┤
 *              │ live: payload                 │
 *              │ free: fd, bk [, fd_nextsize,  │
 *              │       bk_nextsize]            │
 *              │ cached: next, key             │
 *   next   ─►  ├───────────────────────────────┤
 *              │ prev_size = size when free    │
 *
 * Invariants (checked by bn_check, with "free" read from the tags)
 *   chunk size % 16 == 0, size >= 32                     (fenceposts aside)
 *   P(next(c)) == 1  <=>  c is live, cached or in a fastbin
 *   P(next(c)) == 0  =>   prev_size(next(c)) == size(c)
 *   free(c) && free(next(c)) == false                    (coalesced at once)
 *   free chunks by tags == sum over bins of |bin|        (each on one list)
 *   small bin i holds only size 16*i; large bins sorted by size, descending
 *   bins[i] non-empty => binmap bit i set
 *   P(top) == 1, top ends at the arena's committed end
 *   tcache: counts[i] == |entries[i]| <= tcache_count, key in each entry
 *   A bit == (arena is not the main one)
 *   mapped: offset == prev_size >= 32, offset + size == map_size
 *
 * Locking
 *   bn_arena_t.lock guards everything inside the arena and every chunk in
 *   it (tags, bins).  bn_state_t.list_lock guards the arena ring's tail,
 *   the parked list, attached counts and the tcache registry.
 *   bn_state_t.mmap_lock guards the list of mapped chunks.  A tcache is
 *   touched only by its own thread (and by readers that accept a racy
 *   count: stats).  Lock order: list_lock, then an arena lock, then
 *   mmap_lock.
 *
 * Layers (top to bottom: a file calls functions of its own layer and of
 * the layers below it, never above; tests/house/layers.sh checks this list)
 *   bins.c                   the policy: options, malloc / free / realloc /
 *                            memalign entry points, binding a thread to an
 *                            arena, trim, thread exit, fork
 *   bins_fast.h              the tcache hit of malloc and free (the shim
 *                            inlines it too: shim/fast_paths.h)
 *   bins_dot.c bins_stats.c bins_libc.c  snapshot, statistics, and the
 *                            C library's mallinfo, mallopt, malloc_stats,
 *                            malloc_info as glibc answers them
 *   bins_check.c             checker, walker, chunk states
 *   bins_arena.c             the arena algorithm: arena lock, _int_malloc,
 *                            _int_free, filing into bins, consolidation,
 *                            sysmalloc's choice, memalign, realloc
 *   bins_sys.c               memory from the page source: the break, sub-
 *                            heaps, mapped chunks, systrim, purging
 *   bins_list.c              unlinking a free chunk from its bin
 *   bins_tcache.c bins_tcache.h  the per-thread cache (no lock)
 *   bins.h                   constants, chunk, arena and state types, chunk
 *                            and bin accessors
 *
 *   One malloc: bins.c pops the tcache; on a miss it locks the arena and
 *   bins_arena.c runs the rungs, stashing spare fits into the tcache and,
 *   at the end, growing the top through bins_sys.c.
 */
#ifndef HL_BINS_H
#define HL_BINS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "../../core/policy.h"
#include "../../core/os.h"
#include "../../core/meta.h"
#include "../../core/bits.h"
#include "../../core/lock.h"

/** The policy table of `bins`: its `.name` is what hl_fatal prints. */
extern const hl_policy_t hl_policy_bins;
/** The table bins' hl_fatal calls pass (short: they are many). */
#define BN (&hl_policy_bins)

/* --- the model's constants (glibc 2.43, 64-bit) ------------------------ */
enum {
	BN_SIZE_SZ = 8,            /**< one header word */
	BN_HDR = 16,               /**< chunk start to payload */
	BN_MINSIZE = 32,           /**< smallest chunk */
	BN_NBINS = 128,            /**< bins 1..126 used */
	BN_UNSORTED = 1,
	BN_NSMALL = 64,            /**< bins below 64 are small */
	BN_MIN_LARGE = 1024,       /**< smallest chunk of a large bin */
	BN_TC_BINS = 64,           /**< tcache bins */
	BN_TC_MAX_CHUNK = 1040,    /**< largest cached chunk (1032 usable) */
	BN_NFAST = 10,             /**< fastbin lists (32..176) */
	BN_MAX_FAST = 128,         /**< default largest fastbin chunk */
	BN_MAX_ITERS = 10000,      /**< unsorted chunks sorted per malloc */
	BN_HEAP_MIN = 32 * 1024,   /**< smallest first commit of a sub-heap */
	BN_GLIBC_FIRST = 35,       /**< option version: first release modelled, 2.35 */
	BN_GLIBC_LAST = 43,        /**< and the last, 2.43 */
	BN_TC_STRUCT = 640,        /**< bytes asked for a tcache record up to
				        glibc 2.41: 64 x 2 counts + 64 x 8 heads */
	BN_TC_STRUCT_242 = 760,    /**< and from 2.42 on: 76 x 2 + 76 x 8 (12
				        large bins added, kept in bn_tcache_t) */
	BN_TC_LARGE = 12,          /**< glibc 2.42's TCACHE_LARGE_BINS */
};
/** Largest value of option tcache_max glibc 2.42+ accepts: the chunk of
 *  request2size(4194281) is 4 MiB, large index 76 = TCACHE_MAX_BINS, which
 *  do_set_tcache_max refuses (the setting is then ignored). */
#define BN_TC_MAX_TUNABLE ((size_t)4 << 20)
#define BN_HEAP_MAX ((size_t)64 << 20)          /**< sub-heap reservation */
#define BN_MMAP_THRESHOLD_MAX ((size_t)32 << 20)/**< self-tuning ceiling */
#define BN_TRIM_ATTEMPT ((size_t)64 << 10)      /**< frees this big try trim */

/** @cond HL_COMPILE_CHECKS */
_Static_assert(BN_MIN_LARGE == BN_NSMALL * 16, "small bins end where large bins start");
_Static_assert(BN_TC_MAX_CHUNK == BN_MINSIZE + (BN_TC_BINS - 1) * 16, "64 tcache bins");
/** @endcond */

/** The flag bits in the low bits of a chunk's size word (see glossary). */
enum { BN_P = 1, BN_M = 2, BN_A = 4, BN_FLAGS = 7 };

/** A chunk header as it lies in memory (fields past size only when free). */
typedef struct bn_chunk {
	size_t prev_size;               /**< size of the chunk below, if free */
	size_t size;                    /**< size | A | M | P.  The P bit of a
	                                     chunk in use belongs to the chunk
	                                     below it: another thread flips it
	                                     under the arena lock while the
	                                     owner reads the size without one
	                                     (free, usable_size), as in glibc;
	                                     so the word is read with
	                                     bn_size_word() and P flipped with
	                                     relaxed atomics (plain moves on
	                                     x86) */
	struct bn_chunk *fd;            /**< next chunk in its bin (free chunks) */
	struct bn_chunk *bk;            /**< previous chunk in its bin (free chunks) */
	struct bn_chunk *fd_nextsize;   /**< large bins: next smaller size */
	struct bn_chunk *bk_nextsize;   /**< large bins: next larger size */
} bn_chunk_t;

/** An arena (struct bn_arena below). */
typedef struct bn_arena bn_arena_t;
/** A thread's tcache record (struct bn_tcache, bins_tcache.h). */
typedef struct bn_tcache bn_tcache_t;

/** Header at the start of each sub-heap of a secondary arena. */
typedef struct bn_heap {
	bn_arena_t *ar;        /**< owning arena (set once) */
	struct bn_heap *prev;  /**< older sub-heap of the same arena (set once) */
	size_t size;           /**< bytes committed from the base, a page
				    multiple; the top ends here (arena lock) */
	size_t pad;            /**< keeps the first chunk 16-byte aligned */
} bn_heap_t;

/** An arena.  Main arena: inside bn_state_t; others: from arena_pool. */
struct bn_arena {
	hl_lock_t lock;                /**< guards every field below not marked
					    (a futex lock, as glibc's arena mutex) */
	unsigned index;                /**< 0 = main (set once) */
	size_t aflag;                  /**< BN_A for secondary arenas (set once) */
	bn_chunk_t *top;               /**< top chunk; NULL before first growth */
	bn_chunk_t *last_remainder;    /**< last split remainder (small requests) */
	bn_chunk_t *fast[BN_NFAST];    /**< fastbins (fastbins:on only) */
	bool have_fast;                /**< some fastbin is non-empty */
	uint32_t binmap[BN_NBINS / 32];/**< bit per bin, see glossary */
	bn_chunk_t bins[BN_NBINS];     /**< list heads (fd, bk used) */
	bn_heap_t *heap;               /**< newest sub-heap (secondary) */
	size_t system;                 /**< bytes committed for this arena */
	size_t peak_system;            /**< highest value of system */
	uint64_t contention;           /**< lock found busy (relaxed atomic) */
	bn_tcache_t *records;          /**< threads whose tcache record is a
					    chunk of this arena (linked by rec_next) */
	bn_arena_t *next;              /**< ring of arenas (release store, list_lock) */
	bn_arena_t *next_free;         /**< parked list (list_lock) */
	unsigned attached;             /**< threads bound to it (list_lock) */
	hl_heap_t *owner;              /**< the heap, for decision events (set once) */
};

/** A mapped chunk's record, in metadata (its mapping holds the chunk
 *  alone, as glibc's does); all of them under mmap_lock. */
typedef struct bn_mmap {
	struct bn_mmap *next;          /**< next mapping on the list */
	struct bn_mmap *prev;          /**< previous mapping on the list */
	char *base;                    /**< the mapping */
	size_t map_size;               /**< bytes mapped */
	size_t offset;                 /**< chunk start - mapping start (0;
					    larger after memalign) */
} bn_mmap_t;
/** @cond HL_COMPILE_CHECKS */
_Static_assert(sizeof(bn_heap_t) % 16 == 0, "sub-heap header keeps chunks aligned");
/** @endcond */

/** The policy state of one heap. */
typedef struct bn_state {
	hl_heap_t *heap;           /**< owning heap (set once) */
	hl_os_t *os;               /**< its page source (set once) */
	/* options (set at init, read without a lock; mallopt changes the knobs
	 * glibc's mallopt changes, with relaxed stores: bins_libc.c) */
	unsigned glibc_minor;      /**< the release modelled: the N of glibc 2.N */
	unsigned tcache_count;     /**< per-bin cache depth, 0 = off */
	size_t tc_large_limit;     /**< glibc 2.42's mp_.tcache_max_bytes when
				        it opens the large bins: chunks above
				        BN_TC_MAX_CHUNK and below this are
				        cached there; 0 = no large bins */
	unsigned arena_max;        /**< 0 = derive from arena_test and cores */
	unsigned arena_test;       /**< arenas made before counting cores */
	unsigned per_core;         /**< arenas per core once counted */
	unsigned ncores;           /**< online CPUs at init */
	size_t trim_threshold;     /**< auto-trim when top reaches it (relaxed
				        atomic: self-tuning raises it) */
	size_t top_pad;            /**< extra grown / kept at the top */
	size_t mmap_max;           /**< most mappings at once; relaxed atomic */
	size_t max_fast;           /**< largest fastbin chunk, 0 = fastbins off */
	bool dyn_threshold;        /**< self-tuning allowed (nothing set) */
	uint64_t key;              /**< tcache double-free key */
	uint64_t fast_key;         /**< marks fastbin chunks for the walker */
	bool debug;                /**< hl_heap_debug: extra checks on free */
	size_t page;               /**< kernel page size (set once) */
	/* shared, changed at run time */
	size_t mmap_threshold;     /**< relaxed atomic */
	hl_brk_t brk;              /**< main arena's break (main arena lock) */
	bn_arena_t main;           /**< the main arena */
	pthread_mutex_t list_lock; /**< see "Locking" */
	bn_arena_t *tail;          /**< last arena of the ring (list_lock) */
	bn_arena_t *parked;        /**< arenas with no thread (list_lock) */
	bn_arena_t *next_to_use;   /**< round-robin cursor (list_lock) */
	unsigned narenas;          /**< arenas made, main included (list_lock) */
	bool main_bound;           /**< main arena handed out once (list_lock) */
	unsigned arena_limit;      /**< computed cap, 0 = not yet (list_lock) */
	bn_tcache_t *tcaches;      /**< registry (list_lock) */
	uint64_t old_hits;         /**< tcache hits of exited threads (list_lock) */
	uint64_t old_misses;       /**< tcache misses of exited threads (list_lock) */
	hl_meta_pool_t arena_pool; /**< secondary arena records (own lock) */
	hl_meta_pool_t tcache_pool;/**< per-thread records (own lock) */
	hl_meta_pool_t mmap_pool;  /**< mapped chunks' records (own lock) */
	pthread_mutex_t mmap_lock; /**< guards the fields below */
	bn_mmap_t *mmaps;          /**< every mapped chunk */
	size_t n_mmaps;            /**< how many; relaxed atomic (sysmalloc reads it unlocked) */
	size_t mmapped_bytes;      /**< bytes they map */
	size_t peak_mmapped;       /**< highest mmapped_bytes */
	size_t peak_n_mmaps;       /**< highest n_mmaps (malloc_stats) */
} bn_state_t;

/* --- chunk accessors --------------------------------------------------- */
/** The chunk size for a request of @p n bytes: n + 8 rounded up to 16, at
 *  least BN_MINSIZE (glibc's request2size). */
static inline size_t bn_request2size(size_t n)
{
	size_t s = (n + BN_SIZE_SZ + 15) & ~(size_t)15;
	return s < BN_MINSIZE ? BN_MINSIZE : s;
}
/** The size word of @p c, flags included (a relaxed load: see size). */
static inline size_t bn_size_word(const bn_chunk_t *c) { return __atomic_load_n(&c->size, __ATOMIC_RELAXED); }
/** Size of chunk @p c in bytes, header included, flags masked off. */
static inline size_t bn_csize(const bn_chunk_t *c) { return bn_size_word(c) & ~(size_t)BN_FLAGS; }
/** The P flag of @p c: the chunk just below it is in use. */
static inline bool bn_prev_inuse(const bn_chunk_t *c) { return bn_size_word(c) & BN_P; }
/** The M flag of @p c: it has a mapping of its own. */
static inline bool bn_mmapped(const bn_chunk_t *c) { return bn_size_word(c) & BN_M; }
/** Sets or clears the P flag of @p c, whose size its owner may be reading
 *  (arena lock held: no other writer). */
static inline void bn_set_prev_inuse(bn_chunk_t *c, bool inuse)
{
	size_t w = bn_size_word(c);
	__atomic_store_n(&c->size, inuse ? w | BN_P : w & ~(size_t)BN_P, __ATOMIC_RELAXED);
}
/** The chunk header @p off bytes above @p c. */
static inline bn_chunk_t *bn_at(const void *c, size_t off) { return (bn_chunk_t *)((char *)c + off); }
/** The chunk header @p off bytes below @p c. */
static inline bn_chunk_t *bn_before(const void *c, size_t off) { return (bn_chunk_t *)((char *)c - off); }
/** The chunk right above @p c in memory. */
static inline bn_chunk_t *bn_next(const bn_chunk_t *c) { return bn_at(c, bn_csize(c)); }
/** The chunk of payload address @p m (16 bytes below it). */
static inline bn_chunk_t *bn_mem2chunk(const void *m) { return (bn_chunk_t *)((char *)m - BN_HDR); }
/** The payload address of chunk @p c: what malloc returns. */
static inline void *bn_chunk2mem(const bn_chunk_t *c) { return (char *)c + BN_HDR; }
/** In use as far as the tags tell: the next chunk's P bit. */
static inline bool bn_inuse(const bn_chunk_t *c) { return bn_prev_inuse(bn_next(c)); }
/** Marks @p c in use: sets P in the chunk @p off (its size) bytes above. */
static inline void bn_set_inuse_at(bn_chunk_t *c, size_t off) { bn_set_prev_inuse(bn_at(c, off), true); }
/** Marks @p c free: clears P in the chunk @p off (its size) bytes above. */
static inline void bn_clear_inuse_at(bn_chunk_t *c, size_t off) { bn_set_prev_inuse(bn_at(c, off), false); }
/** Writes the footer of a free chunk @p c of size @p s: the prev_size word
 *  of the chunk above. */
static inline void bn_set_foot(bn_chunk_t *c, size_t s) { bn_at(c, s)->prev_size = s; }
/** Bytes the program may use in live chunk @p c: its size less the size
 *  word (less both header words when mapped, as nothing lies above it). */
static inline size_t bn_usable(const bn_chunk_t *c)
{
	return bn_csize(c) - (bn_mmapped(c) ? BN_HDR : BN_SIZE_SZ);
}

/* --- bins -------------------------------------------------------------- */
/** True when chunk size @p sz belongs to a small bin (below 1024). */
static inline bool bn_is_small(size_t sz) { return sz < BN_MIN_LARGE; }
/** Small bin of chunk size @p sz: sz / 16 (2..63). */
static inline unsigned bn_small_index(size_t sz) { return (unsigned)(sz >> 4); }
/** Large bin of chunk size @p sz (64..126), glibc's largebin_index_64:
 *  bins 64 bytes wide up to about 3 KiB, then 512, 4096, 32 KiB and
 *  256 KiB wide, the last bin taking everything larger. */
static inline unsigned bn_large_index(size_t sz)
{
	if ((sz >> 6) <= 48)  return 48 + (unsigned)(sz >> 6);
	if ((sz >> 9) <= 20)  return 91 + (unsigned)(sz >> 9);
	if ((sz >> 12) <= 10) return 110 + (unsigned)(sz >> 12);
	if ((sz >> 15) <= 4)  return 119 + (unsigned)(sz >> 15);
	if ((sz >> 18) <= 2)  return 124 + (unsigned)(sz >> 18);
	return 126;
}
/** The bin, small or large, where a free chunk of size @p sz is filed. */
static inline unsigned bn_bin_index(size_t sz)
{
	return bn_is_small(sz) ? bn_small_index(sz) : bn_large_index(sz);
}
/** The dummy head chunk of bin @p i of arena @p a. */
static inline bn_chunk_t *bn_bin(bn_arena_t *a, unsigned i) { return &a->bins[i]; }
/** Sets bin @p i's binmap bit (a chunk was filed there; arena lock). */
static inline void bn_mark_bin(bn_arena_t *a, unsigned i) { a->binmap[i >> 5] |= 1u << (i & 31); }
/** True when bin @p i's binmap bit is set (the bin may hold chunks). */
static inline bool bn_bin_marked(const bn_arena_t *a, unsigned i) { return a->binmap[i >> 5] >> (i & 31) & 1; }
/** Fastbin of chunk size @p sz: 0 for 32 bytes, one per 16 bytes. */
static inline unsigned bn_fast_index(size_t sz) { return (unsigned)(sz >> 4) - 2; }

/* --- sub-heaps ----------------------------------------------------------- */
/** The sub-heap holding address @p c: its address rounded down to 64 MiB
 *  (meaningful only for chunks of secondary arenas). */
static inline bn_heap_t *bn_heap_of(const void *c)
{
	return (bn_heap_t *)((uintptr_t)c & ~(uintptr_t)(BN_HEAP_MAX - 1));
}
/** The first chunk of sub-heap @p hp, right after its header. */
static inline bn_chunk_t *bn_heap_first(const bn_heap_t *hp) { return (bn_chunk_t *)(hp + 1); }
/** The arena of chunk @p c: the main one unless its A bit sends us to the
 *  header of its sub-heap. */
static inline bn_arena_t *bn_arena_of(bn_state_t *st, const bn_chunk_t *c)
{
	return (bn_size_word(c) & BN_A) ? bn_heap_of(c)->ar : &st->main;
}
/** First chunk of the main arena. */
static inline bn_chunk_t *bn_main_first(const bn_state_t *st) { return (bn_chunk_t *)st->brk.base; }
/** The arena after @p a on the ring (acquire load: the ring only grows,
 *  so it may be walked without list_lock). */
static inline bn_arena_t *bn_ring_next(bn_arena_t *a) { return __atomic_load_n(&a->next, __ATOMIC_ACQUIRE); }
/** The current mmap threshold (self-tuning may raise it at any time). */
static inline size_t bn_mmap_threshold(bn_state_t *st) { return __atomic_load_n(&st->mmap_threshold, __ATOMIC_RELAXED); }

/* --- bins_arena.c: the arena algorithm (arena lock held) ---------------- */
/** Locks arena @p a, counting in its contention when the lock was busy. */
void bn_lock(bn_arena_t *a);
/** Unlocks arena @p a. */
static inline void bn_unlock(bn_arena_t *a) { hl_unlock(&a->lock); }
/** Sets up arena @p a with empty bins; @p index 0 is the main arena. */
void bn_arena_init(bn_arena_t *a, unsigned index);
/** A new secondary arena in a sub-heap of its own (not yet on the ring). */
bn_arena_t *bn_arena_new(bn_state_t *st);
/** glibc's _int_malloc: a chunk of size @p nb from arena @p a (fastbins,
 *  small bin, unsorted scan, large bins, binmap, top, then sysmalloc),
 *  moving spare exact fits into @p tc (may be NULL).  The payload, or NULL. */
void *bn_int_malloc(bn_state_t *st, bn_arena_t *a, bn_tcache_t *tc, size_t nb);
/** Frees chunk @p c of arena @p a (not mapped, not cached); @p may_fast
 *  lets a small chunk go to its fastbin when fastbins are on. */
void bn_int_free(bn_state_t *st, bn_arena_t *a, bn_chunk_t *c, bool may_fast);
/** Empties every fastbin, merging each chunk with its free neighbours
 *  (the pre-2.43 malloc_consolidate). */
void bn_consolidate(bn_state_t *st, bn_arena_t *a);
/** A chunk of size @p nb whose payload is a multiple of @p align: takes
 *  nb + align + BN_MINSIZE, frees the misaligned head (a mapped chunk
 *  keeps it inside its mapping) and any tail of BN_MINSIZE or more. */
void *bn_int_memalign(bn_state_t *st, bn_arena_t *a, bn_tcache_t *tc, size_t align, size_t nb);
/** realloc of a chunk of arena @p a: shrink in place, grow into the top
 *  or a free chunk above, else move.  NULL when memory ran out. */
void *bn_int_realloc(bn_state_t *st, bn_arena_t *a, bn_tcache_t *tc, bn_chunk_t *c, size_t nb);
/* --- bins_sys.c: memory from the page source ---------------------------- */
/** A chunk of size @p nb in a mapping of its own (M bit, at the mapping's
 *  start, its record on the mmap_lock list); its payload, or NULL. */
void *bn_mmap_chunk(bn_state_t *st, size_t nb);
/** Unmaps mapped chunk @p c after checking it against its record (aborts
 *  when there is none or they disagree); may raise the self-tuning
 *  thresholds. */
void bn_munmap_chunk(bn_state_t *st, bn_chunk_t *c);
/** Mapped chunk @p c moved up its mapping (memalign): its record follows. */
void bn_mmap_note_offset(bn_state_t *st, bn_chunk_t *c);
/** glibc resizes a mapped chunk with mremap; here an emulation that never
 *  holds two committed copies (see bins_sys.c).  The payload, or NULL. */
void *bn_mremap_chunk(bn_state_t *st, bn_chunk_t *c, size_t n);
/** Grows arena @p a's top for a chunk of @p nb: the break moves up (main
 *  arena), or more of the newest sub-heap is committed, or a new sub-heap
 *  is made; then the old top is fenced off and, when a free chunk is left
 *  of it, that chunk is stored in @p *to_free for the caller to free into
 *  the bins.  False when the page source refused. */
bool bn_sys_grow(bn_state_t *st, bn_arena_t *a, size_t nb, bn_chunk_t **to_free);
/** The first sub-heap of fresh secondary arena @p a, its top the whole of
 *  it.  False when the page source refused. */
bool bn_sys_first_heap(bn_state_t *st, bn_arena_t *a);
/** Gives back the top beyond @p pad: the break moves down (main arena) or
 *  the sub-heap's tail is decommitted.  Unless @p forced (malloc_trim), the
 *  top must first have reached trim_threshold.  Returns the bytes given. */
size_t bn_systrim(bn_state_t *st, bn_arena_t *a, size_t pad, bool forced);
/** Purges every whole page inside the free chunks of arena @p a (arena
 *  lock held).  Returns the bytes purged. */
size_t bn_purge_free(bn_state_t *st, bn_arena_t *a);
/* --- bins_list.c: out of a bin (arena lock held) -------------------------- */
/** Removes free chunk @p c from whatever bin holds it (skip list included). */
void bn_unlink(bn_chunk_t *c);
/* --- bins_check.c / bins_dot.c ------------------------------------------ */
/** The policy's checker: reports every broken invariant listed above for
 *  each arena, the calling thread's tcache and the mapped chunks. */
int bn_check(void *st, hl_report_t *r);
/** The policy's walker: every chunk of every arena by address, then every
 *  mapped chunk. */
int bn_walk(void *st, hl_walk_fn fn, void *arg);
/** Draws arenas, bins, tcaches and mappings (bins_dot.c). */
void bn_snapshot(void *st, hl_dot_t *d);
/** Emits the policy's statistics (bins_stats.c). */
void bn_stats(void *st, hl_statw_t *w);
/** mallinfo, mallopt, malloc_stats, malloc_info as glibc 2.36 answers
 *  them, from the model's arenas (bins_libc.c). */
extern const struct hl_libc_api bn_libc_api;
/** Visits each chunk of arena @p a in address order (lock held). */
typedef int (*bn_chunk_fn)(bn_state_t *st, bn_arena_t *a, bn_chunk_t *c, hl_block_state_t s, void *arg);
/** Calls @p fn on every chunk of arena @p a in address order (sub-heaps
 *  oldest first); stops at the first non-zero return and returns it, or
 *  -1 when a size runs out of the arena. */
int bn_arena_chunks(bn_state_t *st, bn_arena_t *a, bn_chunk_fn fn, void *arg);
/** State of chunk @p c as the tags (and keys) tell; a tcache record's
 *  chunk is HL_BLOCK_META. */
hl_block_state_t bn_chunk_state(bn_state_t *st, bn_arena_t *a, bn_chunk_t *c);
#endif
