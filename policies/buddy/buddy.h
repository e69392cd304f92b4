/**
 * @file buddy.h
 * @brief The `buddy` policy: the binary buddy allocator of OSTEP's
 *        free-space chapter, of Knuth (TAOCP 2.5) and of Linux's page
 *        allocator, for bytes instead of pages.
 *
 * Glossary
 *   order k    a block of order k spans 2^k bytes; orders run from
 *              min_order (the smallest block, 32 B by default) to
 *              max_order (one whole region, 4 MiB by default)
 *   region     2^max_order bytes of address space from the page source
 *              (page-aligned); at first one free block of order max_order
 *   offset     a block's address minus its region's base
 *   buddy      the other half of the block a block was split from:
 *              offset(buddy of b, order k) = offset(b) XOR 2^k
 *   unit       2^min_order bytes: the side map has one byte per unit
 *   map        the side map of a region (metadata, not in the region):
 *              the byte of a block's first unit says HEAD, FREE and the
 *              order; every other unit's byte is 0
 *   req        per unit, the bytes the program asked for when a live
 *              block starts there (statistics: internal fragmentation)
 *   large      a request above 2^max_order: a mapping of its own
 *   committed  a region is reserved without access; a page is committed
 *              when a block that covers it is handed out, or when a free
 *              block starting on it is listed (its links live there), so
 *              the heap's committed bytes follow the blocks in use, not
 *              the regions (trim gives back the pages of free blocks)
 *
 * Why a side map and not a header: a block's payload is the block itself,
 * so a block of order k starts on a multiple of 2^k from the region's
 * base, and the region's base is on a page: a block is aligned to its
 * size in memory up to a page.  malloc(100) gets a 128-byte block
 * aligned to 128, and memalign(4096, n) is an ordinary request of order
 * 12.  A header in front of the payload would cost that alignment (and
 * push a 128-byte request into a 256-byte block).
 *
 * Why regions are not aligned to their size (as Linux's page blocks are,
 * in physical memory): the page source would map more and cut the
 * aligned part out, one unmap or two as the kernel's address falls, so
 * the same trace would make a different number of kernel calls from run
 * to run.  The buddy arithmetic needs only offsets from the base; a
 * region is found by a binary search of the bases, and memalign above a
 * page gets a mapping of its own, aligned by the page source.  The map also lets free tell a block start from an interior
 * pointer, and a free block from a live one, without reading the block.
 *
 *   region (max_order 8 drawn: 256 B, min_order 5: 32 B units)
 *   offset 0        64       128              256
 *          ├────┬───┼────────┼────────────────┤
 *          │L 32│F32│ F 64   │  L 128         │
 *          └────┴───┴────────┴────────────────┘
 *   map:    H|5  H|F|5 H|F|6 0  H|7  0  0  0      (one byte per 32 B unit)
 *   free[5] ──► 32      free[6] ──► 64      free[7], free[8]: empty
 *   buddy of 32 (order 5) = 32 XOR 32 = 0: live, so no merge
 *   buddy of 64 (order 6) = 64 XOR 64 = 0: split, so no merge
 *
 * Layers (top to bottom: a file calls functions of its own layer and of
 * the layers below it, never above; tests/house/layers.sh checks this list)
 *   buddy.c                 the policy: options, entry points, the table
 *   buddy_view.c            checker, walker, statistics, picture
 *   buddy_block.c           regions, free lists, split, coalesce, large
 *   buddy.h                 types, map accessors
 *
 * Invariants (checked by bd_check, under the lock)
 *   blocks tile each region: starting at offset 0, each block's order k
 *     is read at its head unit, offset ≡ 0 (mod 2^k), and the next block
 *     starts at offset + 2^k; the last one ends at 2^max_order
 *   every unit inside a block but its first has map byte 0
 *   every free block is on free[k] of its order exactly once, and every
 *     element of free[k] is a free block of order k; prev(next(x)) = x
 *   |free[k]| = nfree[k],  #{live blocks of order k} = nlive[k]
 *   k < max_order ⇒ a free block of order k and its buddy are not both
 *     free blocks of order k (they would have merged)
 *   requested_bytes = Σ req over live blocks ≤ rounded_bytes = Σ 2^k
 *     over live blocks
 */
#ifndef HL_BUDDY_H
#define HL_BUDDY_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include "policy.h"
#include "os.h"
#include "bits.h"

/** The policy table of `buddy`: its `.name` is what hl_fatal prints. */
extern const hl_policy_t hl_policy_buddy;

enum {
	BD_ORDERS = 27,          /**< orders 0..26: max_order is at most 26 */
	BD_MAX_SPREAD = 20,      /**< max_order - min_order at most: 1 Mi units a region */
	BD_MAX_REGIONS = 8192,   /**< regions a heap may have */
	BD_MAX_LARGE = 4096,     /**< large mappings live at once */
};

/** Bits of a map byte. */
enum bd_map_bit {
	BD_ORDER_MASK = 0x1f,    /**< the block's order, at its head unit */
	BD_MARK = 0x20,          /**< the checker's scratch bit, clear outside it */
	BD_HEAD = 0x40,          /**< a block starts at this unit */
	BD_FREE = 0x80,          /**< ... and it is free (on free[order]) */
};

/** Links of a free block, in its first 16 bytes. */
typedef struct bd_links {
	char *next;              /**< following block of the same order, or NULL */
	char *prev;              /**< preceding one, or NULL at the head */
} bd_links_t;

/** One region: 2^max_order bytes and their side map.  Written under
 *  bd_state_t.lock. */
typedef struct bd_region {
	char *base;              /**< page-aligned (page source) */
	uint8_t *map;            /**< one byte per unit (metadata region) */
	uint32_t *req;           /**< request of the live block at each head unit */
	uint64_t *pages;         /**< one bit per page of the region: committed */
	int seq;                 /**< the page source's region number */
} bd_region_t;

/** One large block: a mapping of its own. */
typedef struct bd_large {
	char *base;              /**< NULL while the slot is unused */
	size_t size;             /**< bytes mapped (pages) */
	size_t req;              /**< bytes asked for */
	int seq;                 /**< the page source's region number */
} bd_large_t;

/** Counters shown under policy_stats (all under the lock). */
typedef struct bd_counters {
	uint64_t splits;         /**< blocks cut into two buddies */
	uint64_t merges;         /**< buddies joined into their parent */
	uint64_t refused;        /**< frees whose buddy was not free, or split */
	uint64_t maps;           /**< large mappings made */
	uint64_t unmaps;         /**< large mappings given back */
	uint64_t decommitted;    /**< bytes trim gave back inside free blocks */
} bd_counters_t;

/** The policy's state: one per heap, in a metadata region.  Every field
 *  after `lock` is read and written only with `lock` held. */
typedef struct bd_state {
	pthread_mutex_t lock;    /**< the one lock: every operation takes it */
	hl_heap_t *heap;         /**< owning heap (fixed at init) */
	hl_os_t *os;             /**< its page source (fixed at init) */
	unsigned min_order;      /**< option min_order */
	unsigned max_order;      /**< option max_order */
	char *free[BD_ORDERS];   /**< free[k]: first free block of order k */
	size_t nfree[BD_ORDERS]; /**< blocks on free[k] */
	size_t nlive[BD_ORDERS]; /**< live blocks of order k */
	size_t requested;        /**< bytes asked for by the live blocks in regions */
	size_t rounded;          /**< bytes of those blocks: Σ 2^k */
	size_t large_live;       /**< live large blocks */
	size_t large_bytes;      /**< their mapped bytes */
	size_t large_requested;  /**< their requests */
	size_t large_high;       /**< slots of large[] ever used (a high-water mark) */
	bd_counters_t c;         /**< statistics */
	size_t nregions;         /**< regions[0 .. nregions) in use, oldest first */
	bd_region_t regions[BD_MAX_REGIONS];   /**< the regions, oldest first */
	uint32_t by_base[BD_MAX_REGIONS]; /**< region indices, by base address */
	bd_large_t large[BD_MAX_LARGE];        /**< the large blocks, each its own mapping */
} bd_state_t;

/* --- Sizes and the map ---------------------------------------------------- */
/** Bytes of a block of order @p k. */
static inline size_t bd_bytes(unsigned k) { return (size_t)1 << k; }
/** Bytes of a region. */
static inline size_t bd_region_bytes(const bd_state_t *s) { return bd_bytes(s->max_order); }
/** Units of a region. */
static inline size_t bd_units(const bd_state_t *s) { return (size_t)1 << (s->max_order - s->min_order); }
/** The order that serves @p n bytes: the least k >= min_order with 2^k >= n. */
static inline unsigned bd_order_for(const bd_state_t *s, size_t n)
{
	unsigned k = n <= 1 ? 0 : 64 - (unsigned)__builtin_clzll((unsigned long long)(n - 1));
	return k < s->min_order ? s->min_order : k;
}
/** The unit of region @p r where address @p p lies. */
static inline size_t bd_unit(const bd_state_t *s, const bd_region_t *r, const void *p)
{
	return (size_t)((const char *)p - r->base) >> s->min_order;
}
/** The map byte of the unit at @p p. */
static inline uint8_t *bd_map_at(const bd_state_t *s, const bd_region_t *r, const void *p)
{
	return &r->map[bd_unit(s, r, p)];
}
/** The buddy of block @p b of order @p k: its offset XOR 2^k. */
static inline char *bd_buddy(const bd_region_t *r, const char *b, unsigned k)
{
	return r->base + (((size_t)(b - r->base)) ^ bd_bytes(k));
}
/** The links a free block keeps in its first bytes. */
static inline bd_links_t *bd_links(char *b) { return (bd_links_t *)(void *)b; }

/* The functions below expect bd_state_t.lock held. */

/* buddy_block.c */
/** The region holding @p p, or NULL (a binary search of the bases, no
 *  page source call). */
bd_region_t *bd_region_of(bd_state_t *s, const void *p);
/** A live block of order @p k for a request of @p n bytes: taken from
 *  free[k], or split from the smallest larger free block, or from a new
 *  region.  NULL when the page source refuses. */
void *bd_alloc(bd_state_t *s, unsigned k, size_t n);
/** Frees live block @p b of region @p r: merges it with its buddy while
 *  the buddy is a free block of the same order, then lists the result. */
void bd_release(bd_state_t *s, bd_region_t *r, char *b);
/** The order of @p p when it starts a live block of region @p r, or
 *  abort through hl_fatal saying what it is (@p freeing: by free). */
unsigned bd_validate(bd_state_t *s, bd_region_t *r, const void *p, bool freeing);
/** Live block @p b of order @p k made order @p want in place: a smaller
 *  order frees the upper halves; a larger one takes free buddies above
 *  it.  False (nothing changed) when they are not free. */
bool bd_resize(bd_state_t *s, bd_region_t *r, char *b, unsigned k, unsigned want, size_t n);
/** A large block of @p n bytes aligned to @p align: a mapping of its own. */
void *bd_large_alloc(bd_state_t *s, size_t n, size_t align);
/** The large block starting at @p p, or NULL. */
bd_large_t *bd_large_of(bd_state_t *s, const void *p);
/** Unmaps large block @p l. */
void bd_large_free(bd_state_t *s, bd_large_t *l);
/** Decommits the committed pages inside free blocks of more than a page
 *  (their first page keeps the links).  Returns the bytes. */
size_t bd_decommit_free(bd_state_t *s);

/* buddy_view.c */
/** policy_check: the invariants above. */
int bd_check(void *state, hl_report_t *r);
/** policy_walk: every block of every region in address order (regions
 *  oldest first), then the large blocks. */
int bd_walk(void *state, hl_walk_fn fn, void *arg);
/** policy_stats: options, the free lists by order (as /proc/buddyinfo),
 *  internal fragmentation, counters. */
void bd_stats(void *state, hl_statw_t *w);
/** policy_snapshot: each region's blocks in address order, the free list
 *  of each order as marks. */
void bd_snapshot(void *state, hl_dot_t *d);

#endif
