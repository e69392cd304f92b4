/**
 * @file sharded.h
 * @brief Policy `sharded`: a working model of mimalloc v2 — segments and
 *        pages, three free lists per page, atomic remote free, per-thread
 *        heaps, purge delay and a secure mode.
 *
 * Glossary
 * --------
 *   segment   32 MiB of address space aligned to 32 MiB (mimalloc 2.0.9
 *             and 2.1; 2.0.6 had 64 MiB).  Masking any pointer with
 *             ~(32 MiB - 1) gives its segment.  Its first slice (the
 *             "info" slice) holds the segment header and the page
 *             descriptors: no block of mimalloc 2.0.9 starts in the first
 *             64 KiB of a 32 MiB-aligned stretch (measured).
 *   slice     64 KiB, the unit a segment is cut into (512 per segment).
 *   page      a run of slices holding blocks of ONE size: small (1 slice,
 *             blocks <= 16 KiB), medium (8 slices = 512 KiB, blocks
 *             <= 128 KiB), large (one block of <= 16 MiB, as many slices
 *             as it needs).  "OS page" always means the kernel's 4 KiB.
 *   span      a run of free slices of a segment, as long as it goes:
 *             its first descriptor holds its length and links it on the
 *             owning heap's span queue of its length bin, its last one
 *             leads back to the first.  A new page takes the first span
 *             long enough, from the queue of its own length up (split,
 *             the rest a span again); a freed page merges with the spans
 *             beside it.  Queues are LIFO, as mimalloc 2.0.9's.
 *   huge      a block above 16 MiB: a segment of its own, one page.
 *   bin       a size class: 8 bytes (bin 1), 16-byte steps to 64, then
 *             4 classes per doubling, 12.5% apart; bin 73
 *             is the "huge" queue, bin 74 the queue of full pages (large
 *             and huge pages hold one block, so they start out full).
 *   wsize     a size in 8-byte words; sizes up to 1 KiB (wsize <= 128)
 *             are looked up in the heap's direct table.
 *   heap      per-thread state (t->policy_tls): a page queue per bin, the
 *             direct table, the full queue and the delayed-free list.
 *   free      page list malloc pops from (owner only, no atomics).
 *   local_free page list the owner's frees push to; swapped into `free`
 *             when `free` runs dry, so malloc never checks for frees.
 *   thread_free page list other threads push to with one CAS; its low two
 *             bits are the page's delayed-free state:
 *               NO_DELAYED ──to full──► USE_DELAYED ──a remote free──►
 *               DELAYED_FREEING (block goes to the heap's delayed list)
 *               ──► NO_DELAYED;  abandoned: NEVER_DELAYED until reclaimed.
 *   delayed   a remote free into a FULL page goes to the owning heap's
 *             delayed-free list instead, so the owner learns that the page
 *             has room again and moves it back from the full queue.
 *   abandon   a thread ends with live blocks: its segments go on the
 *             abandoned list; another thread reclaims one when its own
 *             segments have no free slices left for a page it needs.
 *   purge     MADV_DONTNEED of a free page's memory, purge_delay ms after
 *             it became free.
 *
 * Block diagram
 * -------------
 *
 * heap layer (sharded_heap.c)
 *   thread A: heap ──direct[wsize]──► page ◄──queues[bin]── (doubly linked)
 *        │        ──full queue──────► page (in_full)
 *        │  delayed_free ◄── remote frees into A's full pages
 *        ▼ owns                                   abandoned list ◄── ended
 * segment layer (sharded_segment.c, sharded_cache.c)     threads' segments
 *   ┌ segment (32 MiB, aligned) ─────────────────────────────────────────┐
 *   │ slice 0: header + pages[512]   │ small │ small │ medium (8 sl.) │ ..│
 *   └────────────────────────────────┴───┬───┴───────┴────────────────┴───┘
 *                                        ▼
 * page layer (sharded_page.c)
 *       page: [blk][blk][blk][blk][blk] ... [never used yet ........]
 *              free ──► blk ──► blk          (extended 4 KiB at a time)
 *              local_free ──► blk            (owner's frees)
 *              thread_free ──► blk ──► blk   (other threads' frees, CAS)
 *
 * Invariants (checked by sharded_check.c)
 * ----------
 *   for every page in use (live = blocks the program holds):
 *     live == used - |thread_free| - |delayed|
 *     (used - |thread_free|) + |free| + |local_free| + |thread_free| == capacity
 *       i.e. used + |free| + |local_free| == capacity: `used` counts a block
 *       from malloc until its owner collects it back, so blocks waiting on
 *       thread_free (or on a heap's delayed list) are still in `used`.
 *       mimalloc's comment writes the equation without the last term; that
 *       form holds exactly when thread_free is empty (right after the owner
 *       collected it), which the tests check too.
 *     capacity <= reserved;   reserved * block_size <= page span
 *     every list is acyclic, its blocks lie in [start, start + capacity *
 *     block_size) at a multiple of block_size, and no block is on two lists
 *     in_full  <=>  the page sits in its heap's full queue
 *     in_full   =>  free == NULL and local_free == NULL and
 *                   capacity == reserved
 *   for every segment:  used == number of pages in use;  a segment with
 *     used == 0 is parked in the segment cache (still resident until a
 *     later park finds it past segment_purge_delay) or released;
 *     owner == NULL <=> it is on the abandoned list (or the visited one).
 *     Every run of free slices is one span; queued => owner != NULL, and
 *     the spans on a heap's queues are those of its queued segments.
 *   next and prev of a descriptor link a page on its heap's page queue,
 *     or a free span on its heap's span queue.
 *   for every heap:  direct[w] is the first page of the bin of w, or the
 *     empty page; direct[0] is always the empty page (malloc's hit misses
 *     0 bytes by it).
 *   in a fork child, the heaps of the threads the fork left behind
 *     (st->orphans) and the segments they own are frozen as the fork found
 *     them, maybe halfway through a change: no invariant is asked of them.
 *
 * Layers (top to bottom: a file calls functions of its own layer and of
 * the layers below it, never above; tests/house/layers.sh checks this list)
 * ------
 *   sharded.c                            the policy: options, malloc and free
 *                                        entry points, memalign, trim, init, fork
 *   sharded_fast.h                       the hits of malloc and free (the shim
 *                                        inlines them too: shim/fast_paths.h)
 *   sharded_dot.c sharded_stats.c        snapshot, statistics
 *   sharded_check.c                      checker, walker, page marks
 *   sharded_heap.c sharded_heap.h        heap: life cycle, page queues, direct
 *                                        table, full pages, retired pages,
 *                                        remote and delayed frees, abandon
 *                                        and reclaim
 *   sharded_segment.c sharded_segment.h  segment: slices, commit, pages cut
 *                                        from slices, purge, the abandoned list
 *   sharded_cache.c                      the segment cache (parked segments)
 *   sharded_page.c sharded_page.h        page: the block lists free,
 *                                        local_free, thread_free and the
 *                                        delayed-free bits
 *   sharded.h                            types, constants, address arithmetic,
 *                                        size classes, the clock, the random
 *                                        sequence
 *
 *   One malloc: sharded.c pops the direct page; on a miss the heap finds a
 *   page in its queue (the page layer collects and extends its lists), or
 *   the segment layer cuts a fresh one.  One free: sharded.c pushes onto
 *   local_free; a remote free goes through the heap layer (thread_free by
 *   the page layer, or the owner's delayed list).
 */
#ifndef HL_SHARDED_H
#define HL_SHARDED_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include "policy.h"
#include "os.h"
#include "meta.h"
#include "bits.h"

/** The policy table of `sharded`: its `.name` is what hl_fatal prints. */
extern const hl_policy_t hl_policy_sharded;

/* ---- tunable constants (mimalloc v2, 64-bit) ---------------------------- */
enum {
	SHD_SLICE_SHIFT = 16,                        /**< 64 KiB slices */
	SHD_SEGMENT_SHIFT = 9 + SHD_SLICE_SHIFT,     /**< 32 MiB segments */
	SHD_SLICES = 1 << (SHD_SEGMENT_SHIFT - SHD_SLICE_SHIFT), /**< 512 */
	SHD_INFO_SLICES = 1,                         /**< header + descriptors */
	SHD_MEDIUM_SLICES = 8,                       /**< 512 KiB medium page */
	SHD_BIN_HUGE = 73,                           /**< queue of large pages */
	SHD_BIN_FULL = 74,                           /**< queue of full pages */
	SHD_DIRECT = 129,                            /**< direct[0..128] words */
	SHD_MAX_EXTEND = 4096,                       /**< bytes per extension */
	SHD_MIN_EXTEND = 4,                          /**< blocks per extension */
	SHD_RETIRE_CYCLES = 8,                       /**< searches for a fresh
	                                                  page an empty only
	                                                  page is kept (2.0.9's
	                                                  MI_RETIRE_CYCLES; 16
	                                                  from 2.1) */
	SHD_LIST_WORDS = SHD_SLICES / 64,            /**< words of a slice mask */
	SHD_SPAN_BINS = 32,                          /**< span queues: the bins of
	                                                  runs of 1 to 512 slices
	                                                  (shd_span_bin) */
	SHD_PURGE_EXTEND = 1,                        /**< ms a further free page
	                                                  adds to a pending purge */
	SHD_CACHE_SLOTS = 1024,                      /**< parked segments at most */
	SHD_CACHE_PROBE = 16,                        /**< slots parking looks at */
	SHD_CACHE_PURGES = 4,                        /**< purges past which it stops */
	SHD_RECLAIM_TRIES = 8,                       /**< abandoned segments a slow
	                                                  path looks at, at most */
	SHD_COLLECT_TRIES = 1024,                    /**< ... that an ending thread
	                                                  looks at, at most */
};
/** Bytes in a slice (64 KiB). */
#define SHD_SLICE_SIZE ((size_t)1 << SHD_SLICE_SHIFT)
/** Bytes in a segment, which is also its alignment (32 MiB). */
#define SHD_SEGMENT_SIZE ((size_t)1 << SHD_SEGMENT_SHIFT)
/** Span of a small page: exactly one slice. */
#define SHD_SMALL_PAGE SHD_SLICE_SIZE
/** Span of a medium page: SHD_MEDIUM_SLICES slices (512 KiB). */
#define SHD_MEDIUM_PAGE (SHD_MEDIUM_SLICES * SHD_SLICE_SIZE)
/** Largest block a small page takes (16 KiB), so it holds at least four. */
#define SHD_SMALL_OBJ_MAX (SHD_SMALL_PAGE / 4)
/** Largest block a medium page takes (128 KiB), again at least four a page. */
#define SHD_MEDIUM_OBJ_MAX (SHD_MEDIUM_PAGE / 4)
/** Largest block a large page (inside a shared segment) takes (16 MiB);
 *  anything bigger is huge and gets a segment of its own. */
#define SHD_LARGE_OBJ_MAX (SHD_SEGMENT_SIZE / 2)
/** Bytes a small page leaves unused before its first block when its blocks
 *  hold 8 to SHD_PAGE_OFFSET_MAX bytes: mimalloc 2.0.9 starts such pages
 *  3 x MI_MAX_ALIGN_GUARANTEE (128) bytes in, so that pages do not all
 *  begin on an OS page (src/segment.c, _mi_segment_page_start_from_slice).
 *  A multiple of 128: blocks whose size is a multiple of an alignment of
 *  up to 128 stay aligned (sharded.c, memalign).  Fidelity row
 *  mimalloc.class8-blocks-per-page: 8,144 8-byte blocks to a page. */
#define SHD_PAGE_OFFSET 384
/** Largest block size whose pages start SHD_PAGE_OFFSET bytes in. */
#define SHD_PAGE_OFFSET_MAX 1024
/** The start offset of a page of @p bsize blocks (0 or SHD_PAGE_OFFSET). */
static inline size_t shd_page_offset(size_t bsize)
{
	return bsize <= SHD_PAGE_OFFSET_MAX ? SHD_PAGE_OFFSET : 0;
}
/** Largest request served through the heap's direct table (1 KiB). */
#define SHD_SMALL_SIZE_MAX ((SHD_DIRECT - 1) * 8)

/** @cond HL_COMPILE_CHECKS */
_Static_assert(SHD_SMALL_SIZE_MAX == 1024, "direct table covers 1 KiB");
_Static_assert(SHD_SMALL_OBJ_MAX * 4 == SHD_SMALL_PAGE, "4 blocks per small page");
/** @endcond */

/** Delayed-free state in the low two bits of page->thread_free. */
enum shd_delay {
	SHD_USE_DELAYED = 0,   /**< next remote free goes to the heap's list */
	SHD_DELAYED_FREEING = 1, /**< a remote thread is pushing there now */
	SHD_NO_DELAYED = 2,    /**< remote frees go to thread_free */
	SHD_NEVER_DELAYED = 3, /**< abandoned: no heap to tell (sticky) */
};

/** How big a page is and what it holds (shd_page_t.kind, set at page init). */
enum shd_page_kind {
	SHD_PAGE_SMALL,        /**< one slice; blocks up to SHD_SMALL_OBJ_MAX */
	SHD_PAGE_MEDIUM,       /**< SHD_MEDIUM_SLICES slices; blocks up to SHD_MEDIUM_OBJ_MAX */
	SHD_PAGE_LARGE,        /**< one block up to SHD_LARGE_OBJ_MAX, as many slices
	                            as it needs, in a shared segment; queued on SHD_BIN_HUGE */
	SHD_PAGE_HUGE,         /**< one block above SHD_LARGE_OBJ_MAX: the only page
	                            of a segment made for it */
};

/** Bits of shd_page_t.flags: the owner sets and clears them, any thread's
 *  free reads them (relaxed; see shd_flags()). */
enum shd_page_flag {
	SHD_PF_FULL = 1,       /**< page is in its heap's full queue */
	SHD_PF_ALIGNED = 2,    /**< memalign handed out interior pointers */
};

/** A free block: the first word links the lists (encoded in secure mode). */
typedef struct shd_block {
	uintptr_t next;       /**< next block of the same list; written with
	                           shd_set_next(), read with shd_next() */
} shd_block_t;

/** Per-thread heap (struct shd_heap, below). */
typedef struct shd_heap shd_heap_t;
/** The policy instance (struct shd_state, below). */
typedef struct shd_state shd_state_t;

/**
 * A page descriptor, kept in its segment's header.  Unless said otherwise a
 * field is written only by the owning thread (the thread of `heap`), or by
 * a thread holding the segment while it is abandoned.
 */
typedef struct shd_page {
	shd_block_t *free;        /**< blocks malloc pops (owner) */
	shd_block_t *local_free;  /**< owner's frees, not yet in `free` */
	uint32_t used;            /**< blocks handed out, including those now
	                               on thread_free or delayed lists */
	uint32_t capacity;        /**< blocks carved so far (lazy extension) */
	uint32_t reserved;        /**< blocks that fit in the page */
	_Atomic uint8_t flags;    /**< enum shd_page_flag; written by the owner,
	                               read by any free (relaxed) */
	uint8_t kind;             /**< enum shd_page_kind */
	uint8_t bin;              /**< size class; 0 = slice not in a page */
	uint8_t retire;           /**< fresh-page searches left before an empty
	                               page is freed (0 = not retired) */
	_Atomic(hl_thread_t *) fast_owner; /**< the owning heap's thread record
	                               while the page has a heap and no flag,
	                               else NULL: free's hit tests this one
	                               word (shd_page_fast_owner_update) */
	size_t block_size;        /**< bytes from one block to the next (set at
	                               page init; shd_block_usable() for the
	                               usable size) */
	uint8_t *start;           /**< first block */
	uintptr_t keys[2];        /**< secure mode: free-list encoding keys */
	_Atomic uintptr_t thread_free; /**< remote frees | delay state (CAS) */
	_Atomic(shd_heap_t *) heap; /**< owning heap; NULL while abandoned.
	                               Written by owner / reclaimer only */
	struct shd_page *next;    /**< following page in its heap queue, or
	                               span in its span queue (owner) */
	struct shd_page *prev;    /**< preceding page, or span (owner) */
	uint32_t slice_count;     /**< slices this page spans (first slice);
	                               of a free span, its length */
	uint32_t slice_offset;    /**< bytes back from this descriptor to the
	                               page's first one (slices * sizeof(shd_page_t),
	                               as mimalloc keeps it: free subtracts it);
	                               of a free span's last slice, back to its
	                               first */
} shd_page_t;
/** @cond HL_COMPILE_CHECKS */
_Static_assert(sizeof(shd_page_t) % 16 == 0, "shd_page_of steps in 16-byte units");
/** @endcond */

/** A segment; its header and page descriptors fill its info slices.
 *  cookie, size and huge are set at creation and only read afterwards; the
 *  rest belongs to the owning heap's thread unless said otherwise. */
typedef struct shd_segment {
	uintptr_t cookie;         /**< address ^ policy key: "this is ours" */
	size_t size;              /**< bytes reserved (32 MiB, or a huge block's) */
	bool huge;                /**< one huge page */
	_Atomic(shd_heap_t *) owner; /**< owning heap, NULL while abandoned;
	                               set by abandon, and by reclaim under
	                               st->lock */
	uint32_t used;            /**< pages in use */
	uint32_t visits;          /**< times a slow path looked at it while
	                               abandoned (reclaimed at the fourth) */
	bool queued;              /**< its free spans are on its owner's span
	                               queues: from creation, or once a reclaim
	                               adopts it, until it is abandoned, set
	                               aside or released */
	uint64_t slice_used[SHD_LIST_WORDS];   /**< slice belongs to a page */
	uint64_t committed[SHD_LIST_WORDS];    /**< slice is committed */
	uint64_t purge_mask[SHD_LIST_WORDS];   /**< free slice waiting to purge */
	uint64_t purged[SHD_LIST_WORDS];       /**< free slice already purged */
	int64_t purge_expire;     /**< ms when purge_mask is due (0 = none) */
	size_t committed_bytes;   /**< for hl_os_release */
	struct shd_segment *hnext; /**< next on the owner heap's list (owner
	                                thread), or on the abandoned list (st->lock) */
	struct shd_segment *hprev; /**< previous on the same list as hnext */
	struct shd_segment *gnext; /**< next in st->segs, every segment (st->lock) */
	struct shd_segment *gprev; /**< previous in st->segs (st->lock) */
	shd_page_t pages[SHD_SLICES]; /**< one descriptor per slice */
} shd_segment_t;

/** A queue of free spans (runs of free slices) of one length bin, across
 *  the segments of a heap: the first descriptor of each span, linked by
 *  its next and prev; owner thread only. */
typedef struct shd_span_queue {
	shd_page_t *first;        /**< newest span: searched first */
	shd_page_t *last;         /**< oldest span */
} shd_span_queue_t;

/** A queue of pages of one bin (or the full queue); owner thread only. */
typedef struct shd_queue {
	shd_page_t *first;        /**< page malloc tries first; direct[] points here */
	shd_page_t *last;         /**< tail: where pages coming back are appended */
	size_t block_size;        /**< size of the bin */
	size_t count;             /**< pages in the queue */
} shd_queue_t;

/** Counters a heap keeps without atomics (its thread only). */
typedef struct shd_counts {
	uint64_t remote_frees;    /**< frees of blocks owned by other heaps */
	uint64_t delayed_frees;   /**< blocks taken from the delayed list */
	uint64_t purges;          /**< purge calls */
	uint64_t purged_bytes;    /**< bytes those purge calls gave back */
	uint64_t pages_fresh;     /**< pages initialised */
	uint64_t pages_freed;     /**< pages returned to their segment */
	uint64_t reclaimed;       /**< abandoned segments taken over (their
	                               pages adopted, or the segment released
	                               when remote frees had emptied it) */
	uint64_t extends;         /**< free-list extensions */
} shd_counts_t;

/** Per-thread heap: t->policy_tls.  Owner thread only unless noted. */
struct shd_heap {
	shd_page_t *direct[SHD_DIRECT];        /**< wsize -> first page */
	shd_queue_t queues[SHD_BIN_FULL + 1];  /**< bins, huge, full */
	_Atomic(shd_block_t *) delayed;        /**< remote frees into full
	                                            pages (pushed by CAS) */
	shd_state_t *st;          /**< the policy instance it belongs to (fixed) */
	hl_thread_t *t;           /**< core thread record it hangs off (fixed) */
	unsigned tid;             /**< t->index, for colours */
	uint64_t rnd;             /**< random state (secure shuffles, keys) */
	shd_segment_t *segs;      /**< segments this heap owns (hnext) */
	shd_span_queue_t spans[SHD_SPAN_BINS]; /**< free spans of its queued
	                               segments by shd_span_bin of their length,
	                               newest first (sharded_segment.c) */
	uint8_t retired_min;      /**< lowest bin that may hold a retired page */
	uint8_t retired_max;      /**< highest such bin; shd_collect_retired()
	                               scans [retired_min, retired_max] */
	int64_t purge_next;       /**< earliest purge_expire of its segments
	                               (ms, 0 = nothing scheduled) */
	shd_counts_t c;           /**< this heap's counters; folded into st->gone
	                               when its thread ends */
	bool orphan;              /**< its thread did not survive a fork: the
	                               heap and its segments stay as they were,
	                               untouched (set in the fork child) */
	shd_heap_t *next;         /**< next in st->heaps, or st->orphans (st->lock) */
	shd_heap_t *prev;         /**< previous on the same list (st->lock) */
};

/** What a thread's policy_tls holds before its heap is made
 *  (hl_policy_t.tls_empty): mimalloc's empty heap (mimalloc 2.0.9,
 *  src/init.c: the thread-local default heap starts as `_mi_heap_empty`,
 *  whose pages are all `_mi_page_empty`), a
 *  heap nobody writes whose direct[] entries all name an empty page, so
 *  malloc's hit misses on it with no NULL test (sharded_heap.c). */
extern const shd_heap_t shd_no_heap;

/** @p t's heap, or NULL when it has none yet (policy_tls shd_no_heap, or
 *  NULL on a record a host made, core/policy.h). */
static inline shd_heap_t *shd_heap_of(const hl_thread_t *t)
{
	return hl_policy_tls_made(t, &shd_no_heap);
}

/** The policy instance. */
struct shd_state {
	hl_heap_t *h;             /**< the core heap this instance serves (fixed) */
	hl_os_t *os;              /**< its page source (fixed) */
	bool secure;              /**< secure:on */
	bool checks;              /**< validate every free (secure or debug) */
	bool debug;               /**< debug:on — the core junk-fills freed
	                               blocks and checks after every call */
	int64_t purge_delay;      /**< ms; 0 at once, -1 never */
	uintptr_t key;            /**< segment cookies */
	size_t ospage;            /**< kernel page size */
	hl_meta_pool_t heap_pool; /**< shd_heap_t records */
	pthread_mutex_t lock;     /**< guards segs, abandoned, heaps, totals */
	shd_segment_t *segs;      /**< every segment (gnext) */
	shd_segment_t *abandoned; /**< abandoned segments (hnext) */
	shd_segment_t *visited;   /**< abandoned segments a slow path looked
	                               at and set aside (hnext); they move to
	                               `abandoned` when that runs empty */
	_Atomic size_t nabandoned;/**< length of `abandoned` and `visited`
	                               (read unlocked) */
	shd_heap_t *heaps;        /**< live thread heaps */
	shd_heap_t *orphans;      /**< heaps of threads a fork left behind
	                               (fork child only; never changed again) */
	_Atomic uint8_t *segmap;  /**< one byte per 32 MiB of the 47-bit address
	                               space (4 MiB reserved, touched where
	                               segments are): 1 for a segment of ours */
	shd_counts_t gone;        /**< counters of heaps of exited threads */
	uint64_t segments_made;   /**< segments reserved so far (lock) */
	uint64_t segments_released; /**< segments given back to the page source (lock) */
	uint64_t segments_abandoned; /**< times a segment went onto `abandoned` (lock) */
	shd_page_t empty;         /**< page with no free blocks: direct[] filler */
	bool cache_on;            /**< segment_cache:on — park empty segments */
	int64_t segment_purge_delay; /**< ms before a parked segment may be
	                               purged; 0 at once, -1 never */
	size_t cached;            /**< parked segments (lock) */
	uint64_t cache_purges;    /**< parked segments purged (lock) */
	uint64_t cache_purged_bytes; /**< bytes those purges gave back (lock) */
	shd_segment_t *cache[SHD_CACHE_SLOTS]; /**< parked segments (lock) */
	int64_t cache_expire[SHD_CACHE_SLOTS]; /**< ms when a slot may be purged;
	                               0 = purged already, or never (lock) */
};

/* ---- address arithmetic --------------------------------------------- */

/** The segment @p p would lie in: p rounded down to SHD_SEGMENT_SIZE (the
 *  caller checks with shd_segmap_has() that it really is one). */
static inline shd_segment_t *shd_segment_of(const void *p)
{
	return (shd_segment_t *)((uintptr_t)p & ~(uintptr_t)(SHD_SEGMENT_SIZE - 1));
}

/** Descriptor of the page holding @p p in segment @p s =
 *  shd_segment_of(p): the slice's descriptor, stepped back by its
 *  slice_offset bytes to the page's first slice. */
static inline shd_page_t *shd_page_of(shd_segment_t *s, const void *p)
{
	/* slice index times 16 in one shift and one mask, then times the
	 * descriptor's size in 16-byte units (7: one lea and one sub); GCC
	 * made the index first and multiplied by 112 after, one more */
	size_t i16 = ((uintptr_t)p >> (SHD_SLICE_SHIFT - 4)) & ((size_t)(SHD_SLICES - 1) << 4);
	shd_page_t *pg = (shd_page_t *)((uint8_t *)s->pages + i16 * (sizeof(shd_page_t) / 16));
	return (shd_page_t *)((uintptr_t)pg - pg->slice_offset);
}

/** Address of slice @p i of segment @p s. */
static inline uint8_t *shd_slice_addr(shd_segment_t *s, size_t i)
{
	return (uint8_t *)s + (i << SHD_SLICE_SHIFT);
}

/** Slice index of descriptor @p pg inside segment @p s. */
static inline size_t shd_page_index(shd_segment_t *s, const shd_page_t *pg)
{
	return (size_t)(pg - s->pages);
}

/** True when slice @p i of @p s belongs to a page. */
static inline bool shd_slice_used(const shd_segment_t *s, size_t i)
{
	return (s->slice_used[i >> 6] >> (i & 63)) & 1;
}

/** First slice at or after @p i that belongs to a page (SHD_SLICES when
 *  none).  Reads only the slice bitmap, so walking a segment does not
 *  touch (and make resident) the descriptors of free slices. */
static inline size_t shd_next_used(const shd_segment_t *s, size_t i)
{
	while (i < SHD_SLICES) {
		uint64_t w = s->slice_used[i >> 6] >> (i & 63);
		if (w)
			return i + (size_t)__builtin_ctzll(w);
		i = (i | 63) + 1;
	}
	return SHD_SLICES;
}

/** First slice of the page after the one starting at slice @p i (a
 *  smashed slice_count of 0 still moves on). */
static inline size_t shd_next_page(const shd_segment_t *s, size_t i)
{
	uint32_t n = s->pages[i].slice_count;
	return shd_next_used(s, i + (n ? n : 1));
}

/** Index of @p seg's byte in the segment map, or SIZE_MAX past the
 *  47-bit address space (no segment there). */
static inline size_t shd_segmap_index(const void *seg)
{
	uintptr_t i = (uintptr_t)seg >> SHD_SEGMENT_SHIFT;
	return HL_LIKELY(i < ((uintptr_t)1 << (47 - SHD_SEGMENT_SHIFT))) ? i : SIZE_MAX;
}

/** True when @p seg is the start of one of this policy's segments (one
 *  byte per 32 MiB of the 47-bit address space: a load, not a bit test). */
static inline bool shd_segmap_has(const shd_state_t *st, const void *seg)
{
	size_t i = shd_segmap_index(seg);
	return i != SIZE_MAX && atomic_load_explicit(&st->segmap[i], memory_order_relaxed) != 0;
}

/** shd_segmap_has() for a pointer being freed, with a plain load, which
 *  GCC compares in place (cmpb: one instruction fewer than the atomic
 *  load on free's fast path).  No race with the atomic stores of
 *  shd_segmap_set: a block's byte is set before the block is handed out
 *  and cleared only after it came back, and a pointer to mapped memory
 *  that is not ours lies in a 32 MiB window no segment can take. */
static inline bool shd_segmap_has_freed(const shd_state_t *st, const void *seg)
{
	size_t i = shd_segmap_index(seg);
	return i != SIZE_MAX && ((const uint8_t *)st->segmap)[i] != 0;
}

/* ---- size classes ------------------------------------------------------ */

/** Bin 1: blocks of 8 usable bytes (mimalloc's smallest class). */
enum { SHD_BIN_TINY = 1 };

/** Bin of a size in words: one word (8 bytes) is bin 1, then even word
 *  counts to 8 words (16-byte steps, as the Debian build of mimalloc
 *  2.0.9 measures), then four bins per doubling. */
static inline unsigned shd_bin_of_wsize(size_t w)
{
	if (w <= 1)
		return SHD_BIN_TINY;
	if (w <= 8)
		return (unsigned)((w + 1) & ~(size_t)1);
	w--;
	unsigned b = hl_log2(w);
	return (b << 2) + (unsigned)((w >> (b - 2)) & 3) - 3;
}

/** Largest word size of bin @p bin (its block size / 8). */
static inline size_t shd_bin_wsize(unsigned bin)
{
	if (bin <= 8)
		return bin;
	unsigned b = (bin + 3) >> 2, k = (bin + 3) & 3;
	return (size_t)(5 + k) << (b - 2);
}

/** Bin of a request of @p n bytes (rounded up to whole words). */
static inline unsigned shd_bin_of(size_t n) { return shd_bin_of_wsize((n + 7) >> 3); }

/** Usable bytes of a block of page @p pg: the distance between its blocks,
 *  the bin's size (8 bytes apart in bin 1, as mimalloc packs them: a block
 *  of 8 bytes needs only 8-byte alignment, core/policy.h). */
static inline size_t shd_block_usable(const shd_page_t *pg)
{
	return pg->block_size;
}

/** The span queue of a run of @p n free slices (mimalloc 2.0.9's
 *  mi_slice_bin): 1 to 8 slices a queue each, then four queues per
 *  doubling; 512 slices is queue 31, the last. */
static inline unsigned shd_span_bin(size_t n)
{
	if (n <= 8)
		return (unsigned)n;
	n--;
	unsigned b = hl_log2(n);
	return ((b << 2) | (unsigned)((n >> (b - 2)) & 3)) - 4;
}

/** @cond HL_COMPILE_CHECKS */
_Static_assert(SHD_SLICES == 512 && SHD_SPAN_BINS == 32, "a span of 512 slices is queue 31, the last");
/** @endcond */

/* ---- the clock and the random sequence --------------------------------- */

/** Milliseconds of the heap's clock (hl_clock_now_ms: the real clock, or a
 *  replay's): the clock of the purge delays (pages and parked segments). */
#define shd_now_ms(st) hl_clock_now_ms((st)->h)

/** Next value of the pseudo-random sequence kept in @p state (hl_mix64;
 *  a heap's rnd: secure keys and shuffles). */
static inline uint64_t shd_random(uint64_t *state)
{
	*state = hl_mix64(*state);
	return *state;
}

/* ---- sharded_check.c, sharded_dot.c ------------------------------------ */
/** The policy's check hook: verifies the invariants above for the state
 *  @p vst, reporting each problem to @p r.  In debug mode (a check after
 *  every call, other threads still running) only the caller's heap and the
 *  abandoned segments are checked; otherwise everything.
 *  @return the number of problems found. */
int shd_check(void *vst, hl_report_t *r);
/** The walk hook: calls @p fn with @p arg for every stretch of every
 *  segment of @p vst, slice by slice (header, guard, blocks, free runs).
 *  @return nonzero when @p fn asked to stop. */
int shd_walk(void *vst, hl_walk_fn fn, void *arg);
/** The snapshot hook: draws the thread heaps and every segment with its
 *  pages of @p vst into DOT writer @p d. */
void shd_snapshot(void *vst, hl_dot_t *d);
/** The stats hook: writes segment, page, size-class and counter totals of
 *  @p vst (live heaps plus exited ones) to @p w. */
void shd_stats(void *vst, hl_statw_t *w);

/** Most blocks a page can hold (a small page of 8-byte blocks). */
#define SHD_MAX_BLOCKS (SHD_SMALL_PAGE / 8)

/** Which list each carved block of a page is on (for checker, walker,
 *  snapshot and stats). */
enum shd_on { SHD_ON_NONE, SHD_ON_FREE, SHD_ON_LOCAL, SHD_ON_THREAD, SHD_ON_DELAYED, SHD_ON_KINDS };
/** Result of shd_page_mark(): the list of every carved block of a page. */
typedef struct shd_marks {
	uint8_t on[SHD_MAX_BLOCKS]; /**< enum shd_on, by block index */
	long n[SHD_ON_KINDS];       /**< blocks per list (n[0]: live) */
} shd_marks_t;

/** Marks the blocks of @p pg's lists (and of every heap's delayed list);
 *  reports cycles, strays and blocks on two lists to @p r (may be NULL).
 *  Returns the number of problems.  Caller holds st->lock. */
int shd_page_mark(shd_state_t *st, const shd_page_t *pg, shd_marks_t *m, hl_report_t *r);
#endif
