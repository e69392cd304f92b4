/**
 * @file sharded.h
 * @brief Policy `sharded`: a working model of mimalloc v2 — segments and
 *        pages, three free lists per page, atomic remote free, per-thread
 *        heaps, purge delay and a secure mode.
 *
 * Glossary
 * --------
 *   segment   64 MiB of address space aligned to 64 MiB (mimalloc 2.0;
 *             2.1 has 32 MiB).  Masking any pointer with ~(64 MiB - 1)
 *             gives its segment.  Its first two slices (the "info"
 *             slices) hold the segment header and the page descriptors.
 *   slice     64 KiB, the unit a segment is cut into (1024 per segment).
 *   page      a run of slices holding blocks of ONE size: small (1 slice,
 *             blocks <= 16 KiB), medium (8 slices = 512 KiB, blocks
 *             <= 128 KiB), large (one block of <= 32 MiB, as many slices
 *             as it needs).  "OS page" always means the kernel's 4 KiB.
 *   huge      a block above 32 MiB: a segment of its own, one page.
 *   bin       a size class: 4 classes per doubling, 12.5% apart; bin 73
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
 *             abandoned list; another thread reclaims them on a slow path.
 *   purge     MADV_DONTNEED of a free page's memory, purge_delay ms after
 *             it became free.
 *
 * Block diagram
 * -------------
 *
 *   thread A: heap ──direct[wsize]──► page ◄──queues[bin]── (doubly linked)
 *        │        ──full queue──────► page (in_full)
 *        │  delayed_free ◄── remote frees into A's full pages
 *        ▼ owns
 *   ┌ segment (64 MiB, aligned) ─────────────────────────────────────────┐
 *   │ slices 0-1: header+pages[1024] │ small │ small │ medium (8 sl.) │ ..│
 *   └────────────────────────────────┴───┬───┴───────┴────────────────┴───┘
 *                                        ▼
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
 *     used == 0 does not exist (it was released);  owner == NULL <=> it is
 *     on the abandoned list.
 *   for every heap:  direct[w] is the first page of the bin of w, or the
 *     empty page.
 *
 * Files: sharded.c (options, malloc/free, life cycle), sharded_page.c
 * (queues, lists, remote and delayed frees), sharded_segment.c (segments,
 * commit, purge, abandon/reclaim), sharded_check.c (checker, walker),
 * sharded_stats.c, sharded_dot.c.
 */
#ifndef HL_SHARDED_H
#define HL_SHARDED_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include "policy.h"
#include "os.h"
#include "meta.h"
#include "bits.h"

/* ---- tunable constants (mimalloc v2, 64-bit) ---------------------------- */
enum {
	SHD_SLICE_SHIFT = 16,                        /**< 64 KiB slices */
	SHD_SEGMENT_SHIFT = 10 + SHD_SLICE_SHIFT,    /**< 64 MiB segments */
	SHD_SLICES = 1 << (SHD_SEGMENT_SHIFT - SHD_SLICE_SHIFT), /**< 1024 */
	SHD_INFO_SLICES = 2,                         /**< header + descriptors */
	SHD_MEDIUM_SLICES = 8,                       /**< 512 KiB medium page */
	SHD_BIN_HUGE = 73,                           /**< queue of large pages */
	SHD_BIN_FULL = 74,                           /**< queue of full pages */
	SHD_DIRECT = 129,                            /**< direct[0..128] words */
	SHD_MAX_EXTEND = 4096,                       /**< bytes per extension */
	SHD_MIN_EXTEND = 4,                          /**< blocks per extension */
	SHD_RETIRE_CYCLES = 16,                      /**< slow paths an empty
	                                                  only page is kept */
	SHD_LIST_WORDS = SHD_SLICES / 64,            /**< words of a slice mask */
	SHD_PURGE_EXTEND = 1,                        /**< ms a further free page
	                                                  adds to a pending purge */
};
#define SHD_SLICE_SIZE ((size_t)1 << SHD_SLICE_SHIFT)
#define SHD_SEGMENT_SIZE ((size_t)1 << SHD_SEGMENT_SHIFT)
#define SHD_SMALL_PAGE SHD_SLICE_SIZE
#define SHD_MEDIUM_PAGE (SHD_MEDIUM_SLICES * SHD_SLICE_SIZE)
#define SHD_SMALL_OBJ_MAX (SHD_SMALL_PAGE / 4)     /* 16 KiB */
#define SHD_MEDIUM_OBJ_MAX (SHD_MEDIUM_PAGE / 4)   /* 128 KiB */
#define SHD_LARGE_OBJ_MAX (SHD_SEGMENT_SIZE / 2)   /* 32 MiB */
#define SHD_SMALL_SIZE_MAX ((SHD_DIRECT - 1) * 8)  /* 1 KiB */

_Static_assert(SHD_SMALL_SIZE_MAX == 1024, "direct table covers 1 KiB");
_Static_assert(SHD_SMALL_OBJ_MAX * 4 == SHD_SMALL_PAGE, "4 blocks per small page");

/** Delayed-free state in the low two bits of page->thread_free. */
enum shd_delay {
	SHD_USE_DELAYED = 0,   /**< next remote free goes to the heap's list */
	SHD_DELAYED_FREEING = 1, /**< a remote thread is pushing there now */
	SHD_NO_DELAYED = 2,    /**< remote frees go to thread_free */
	SHD_NEVER_DELAYED = 3, /**< abandoned: no heap to tell (sticky) */
};

enum shd_page_kind { SHD_PAGE_SMALL, SHD_PAGE_MEDIUM, SHD_PAGE_LARGE, SHD_PAGE_HUGE };

enum shd_page_flag {
	SHD_PF_FULL = 1,       /**< page is in its heap's full queue */
	SHD_PF_ALIGNED = 2,    /**< memalign handed out interior pointers */
};

/** A free block: the first word links the lists (encoded in secure mode). */
typedef struct shd_block { uintptr_t next; } shd_block_t;

typedef struct shd_heap shd_heap_t;
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
	uint8_t retire;           /**< slow paths left before an empty page is
	                               freed (0 = not retired) */
	size_t block_size;        /**< bytes per block (set at page init) */
	uint8_t *start;           /**< first block */
	uintptr_t keys[2];        /**< secure mode: free-list encoding keys */
	_Atomic uintptr_t thread_free; /**< remote frees | delay state (CAS) */
	_Atomic(shd_heap_t *) heap; /**< owning heap; NULL while abandoned.
	                               Written by owner / reclaimer only */
	struct shd_page *next, *prev; /**< heap queue links (owner) */
	uint32_t slice_count;     /**< slices this page spans (first slice) */
	uint32_t slice_offset;    /**< slices back to the page's first slice */
} shd_page_t;

/** A segment; its header and page descriptors fill its info slices.
 *  cookie, size and huge are set at creation and only read afterwards; the
 *  rest belongs to the owning heap's thread unless said otherwise. */
typedef struct shd_segment {
	uintptr_t cookie;         /**< address ^ policy key: "this is ours" */
	size_t size;              /**< bytes reserved (64 MiB, or a huge block's) */
	bool huge;                /**< one huge page */
	_Atomic(shd_heap_t *) owner; /**< owning heap, NULL while abandoned;
	                               set by abandon, and by reclaim under
	                               st->lock */
	uint32_t used;            /**< pages in use */
	uint64_t slice_used[SHD_LIST_WORDS];   /**< slice belongs to a page */
	uint64_t committed[SHD_LIST_WORDS];    /**< slice is committed */
	uint64_t purge_mask[SHD_LIST_WORDS];   /**< free slice waiting to purge */
	uint64_t purged[SHD_LIST_WORDS];       /**< free slice already purged */
	int64_t purge_expire;     /**< ms when purge_mask is due (0 = none) */
	size_t committed_bytes;   /**< for hl_os_release */
	struct shd_segment *hnext, *hprev; /**< owner heap's list, or the
	                                       abandoned list (st->lock) */
	struct shd_segment *gnext, *gprev; /**< every segment (st->lock) */
	shd_page_t pages[SHD_SLICES]; /**< one descriptor per slice */
} shd_segment_t;

/** A queue of pages of one bin (or the full queue); owner thread only. */
typedef struct shd_queue {
	shd_page_t *first, *last;
	size_t block_size;        /**< size of the bin */
	size_t count;             /**< pages in the queue */
} shd_queue_t;

/** Counters a heap keeps without atomics (its thread only). */
typedef struct shd_counts {
	uint64_t remote_frees;    /**< frees of blocks owned by other heaps */
	uint64_t delayed_frees;   /**< blocks taken from the delayed list */
	uint64_t purges;          /**< purge calls */
	uint64_t purged_bytes;
	uint64_t pages_fresh;     /**< pages initialised */
	uint64_t pages_freed;     /**< pages returned to their segment */
	uint64_t reclaimed;       /**< abandoned segments taken over */
	uint64_t extends;         /**< free-list extensions */
} shd_counts_t;

/** Per-thread heap: t->policy_tls.  Owner thread only unless noted. */
struct shd_heap {
	shd_page_t *direct[SHD_DIRECT];        /**< wsize -> first page */
	shd_queue_t queues[SHD_BIN_FULL + 1];  /**< bins, huge, full */
	_Atomic(shd_block_t *) delayed;        /**< remote frees into full
	                                            pages (pushed by CAS) */
	shd_state_t *st;
	hl_thread_t *t;
	unsigned tid;             /**< t->index, for colours */
	uint64_t rnd;             /**< random state (secure shuffles, keys) */
	shd_segment_t *segs;      /**< segments this heap owns (hnext) */
	uint8_t retired_min, retired_max; /**< bins that may hold retired pages */
	int64_t purge_next;       /**< earliest purge_expire of its segments
	                               (ms, 0 = nothing scheduled) */
	shd_counts_t c;
	shd_heap_t *next, *prev;  /**< st->heaps (st->lock) */
};

/** The policy instance. */
struct shd_state {
	hl_heap_t *h;
	hl_os_t *os;
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
	_Atomic size_t nabandoned;/**< length of `abandoned` (read unlocked) */
	shd_heap_t *heaps;        /**< live thread heaps */
	_Atomic uint8_t *segmap;  /**< one bit per 64 MiB of address space */
	shd_counts_t gone;        /**< counters of heaps of exited threads */
	uint64_t segments_made, segments_released, segments_abandoned;
	shd_page_t empty;         /**< page with no free blocks: direct[] filler */
};

/* ---- page flags: the owner writes, any thread's free reads ---------- */

static inline unsigned shd_flags(const shd_page_t *pg)
{
	return atomic_load_explicit(&pg->flags, memory_order_relaxed);
}
static inline void shd_flags_set(shd_page_t *pg, unsigned f)
{
	atomic_store_explicit(&pg->flags, (uint8_t)f, memory_order_relaxed);
}

/* ---- address arithmetic --------------------------------------------- */

static inline shd_segment_t *shd_segment_of(const void *p)
{
	return (shd_segment_t *)((uintptr_t)p & ~(uintptr_t)(SHD_SEGMENT_SIZE - 1));
}

static inline shd_page_t *shd_page_of(shd_segment_t *s, const void *p)
{
	size_t i = ((uintptr_t)p - (uintptr_t)s) >> SHD_SLICE_SHIFT;
	shd_page_t *pg = &s->pages[i < SHD_SLICES ? i : SHD_SLICES - 1];
	return pg - pg->slice_offset;
}

static inline uint8_t *shd_slice_addr(shd_segment_t *s, size_t i)
{
	return (uint8_t *)s + (i << SHD_SLICE_SHIFT);
}

static inline size_t shd_page_index(shd_segment_t *s, const shd_page_t *pg)
{
	return (size_t)(pg - s->pages);
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

/** True when @p seg is the start of one of this policy's segments (one
 *  bit per 64 MiB of the 47-bit address space). */
static inline bool shd_segmap_has(const shd_state_t *st, const void *seg)
{
	uintptr_t i = (uintptr_t)seg >> SHD_SEGMENT_SHIFT;
	if (HL_UNLIKELY(i >> 3 >= ((uintptr_t)1 << (47 - SHD_SEGMENT_SHIFT - 3))))
		return false;
	return (atomic_load_explicit(&st->segmap[i >> 3], memory_order_relaxed) >> (i & 7)) & 1;
}

/* ---- size classes ------------------------------------------------------ */

/** Bin of a size in words: exact to 8 words (even only: blocks are 16-byte
 *  aligned), then four bins per doubling. */
static inline unsigned shd_bin_of_wsize(size_t w)
{
	if (w <= 2)
		return 2;
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

static inline unsigned shd_bin_of(size_t n) { return shd_bin_of_wsize((n + 7) >> 3); }

/* ---- encoded free lists ------------------------------------------------ */

static inline uintptr_t shd_rotl(uintptr_t x, unsigned r)
{
	r &= 63;
	return r ? (x << r) | (x >> (64 - r)) : x;
}
static inline uintptr_t shd_rotr(uintptr_t x, unsigned r)
{
	r &= 63;
	return r ? (x >> r) | (x << (64 - r)) : x;
}

/** Stores @p next as @p b's link.  Secure pages xor, rotate and add their
 *  keys, writing NULL as the page's own address so a zeroed word is no
 *  valid link either. */
static inline void shd_set_next(const shd_page_t *pg, shd_block_t *b, const shd_block_t *next)
{
	uintptr_t v = (uintptr_t)next;
	if (pg->keys[0]) {
		if (!v)
			v = (uintptr_t)pg;
		v = shd_rotl(v ^ pg->keys[1], (unsigned)pg->keys[0]) + pg->keys[0];
	}
	b->next = v;
}

/** Decodes a link without checking it. */
static inline shd_block_t *shd_next_raw(const shd_page_t *pg, const shd_block_t *b)
{
	uintptr_t v = b->next;
	if (pg->keys[0]) {
		v = shd_rotr(v - pg->keys[0], (unsigned)pg->keys[0]) ^ pg->keys[1];
		if (v == (uintptr_t)pg)
			v = 0;
	}
	return (shd_block_t *)v;
}

/** True when @p q is a block boundary among the page's carved blocks. */
static inline bool shd_in_page(const shd_page_t *pg, const void *q)
{
	uintptr_t off = (uintptr_t)q - (uintptr_t)pg->start;
	return (uintptr_t)q >= (uintptr_t)pg->start && off < (size_t)pg->capacity * pg->block_size &&
	       off % pg->block_size == 0;
}

/** Decodes a link; in secure mode a link leaving its page is fatal. */
static inline shd_block_t *shd_next(const shd_page_t *pg, const shd_block_t *b)
{
	shd_block_t *n = shd_next_raw(pg, b);
	if (pg->keys[0] && HL_UNLIKELY(n && !shd_in_page(pg, n)))
		hl_fatal("sharded", "corrupted free list pointer", b);
	return n;
}

static inline uintptr_t shd_tf_ptr(uintptr_t tf) { return tf & ~(uintptr_t)3; }
static inline unsigned shd_tf_delay(uintptr_t tf) { return (unsigned)(tf & 3); }

/* ---- time -------------------------------------------------------------- */
int64_t shd_now_ms(void);

/* ---- sharded_page.c: pages and queues ---------------------------------- */
void shd_queue_remove(shd_heap_t *hp, shd_queue_t *q, shd_page_t *pg);
void shd_queue_push(shd_heap_t *hp, shd_queue_t *q, shd_page_t *pg, bool at_end);
void shd_set_delay(shd_page_t *pg, unsigned delay, bool override_never);
void shd_page_collect(shd_page_t *pg);
void shd_page_to_full(shd_heap_t *hp, shd_page_t *pg);
void shd_page_unfull(shd_heap_t *hp, shd_page_t *pg);
void shd_page_free_empty(shd_heap_t *hp, shd_page_t *pg);
void shd_page_emptied(shd_heap_t *hp, shd_page_t *pg);
shd_page_t *shd_find_page(shd_heap_t *hp, size_t n);
void shd_delayed_drain(shd_heap_t *hp);
void shd_collect_retired(shd_heap_t *hp, bool force);
void shd_free_local_slow(shd_heap_t *hp, shd_page_t *pg);
void shd_free_remote(shd_page_t *pg, shd_block_t *b);
void shd_heap_adopt_page(shd_heap_t *hp, shd_page_t *pg);
uint64_t shd_random(shd_heap_t *hp);
shd_queue_t *shd_queue_of(shd_heap_t *hp, const shd_page_t *pg);

/* ---- sharded_segment.c: segments, purging, abandon / reclaim ---------- */
shd_page_t *shd_segment_page_alloc(shd_heap_t *hp, size_t block_size, unsigned kind);
void shd_segment_page_free(shd_heap_t *hp, shd_page_t *pg);
void shd_segment_purge_due(shd_heap_t *hp, bool force);
void shd_heap_abandon(shd_heap_t *hp, bool orphan);
bool shd_reclaim_one(shd_heap_t *hp);

/* ---- sharded_check.c, sharded_dot.c ------------------------------------ */
int shd_check(void *vst, hl_report_t *r);
int shd_walk(void *vst, hl_walk_fn fn, void *arg);
void shd_snapshot(void *vst, hl_dot_t *d);
void shd_stats(void *vst, hl_statw_t *w);

/** Most blocks a page can hold (a small page of 16-byte blocks). */
#define SHD_MAX_BLOCKS (SHD_SMALL_PAGE / 16)

/** Which list each carved block of a page is on (for checker, walker,
 *  snapshot and stats). */
enum shd_on { SHD_ON_NONE, SHD_ON_FREE, SHD_ON_LOCAL, SHD_ON_THREAD, SHD_ON_DELAYED, SHD_ON_KINDS };
typedef struct shd_marks {
	uint8_t on[SHD_MAX_BLOCKS]; /**< enum shd_on, by block index */
	long n[SHD_ON_KINDS];       /**< blocks per list (n[0]: live) */
} shd_marks_t;

/** Marks the blocks of @p pg's lists (and of every heap's delayed list);
 *  reports cycles, strays and blocks on two lists to @p r (may be NULL).
 *  Returns the number of problems.  Caller holds st->lock. */
int shd_page_mark(shd_state_t *st, const shd_page_t *pg, shd_marks_t *m, hl_report_t *r);
#endif
