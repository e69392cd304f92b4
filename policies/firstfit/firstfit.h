/**
 * @file firstfit.h
 * @brief The `firstfit` policy: a textbook free list over a program break.
 *
 * Glossary
 *   block    a run of heap bytes [b, b + size) that starts with a header;
 *            either live (handed to the program) or free (on the list)
 *   H        header bytes (option `header`: 8, 16 or 32)
 *   payload  what the program gets: b + H, always 16-byte aligned
 *   footer   the last 8 bytes of a FREE block, a copy of its size, so the
 *            block after it can find it ("boundary tag")
 *   PF bit   "previous block is free": tells free() the footer just below
 *            this header is valid, so live blocks need no footer at all
 *   lead     8 bytes left unused at each end of the break when H = 8, so
 *            that every payload lands on a multiple of 16 (0 otherwise)
 *   lo, hi   first byte of the first block, end of the last block
 *   list     the free list: doubly linked through the first 16 payload
 *            bytes of each free block, kept in the order of option `order`
 *   rover    where the next next-fit search starts (a list element)
 *   fit      which free block a request takes: first|next|best|worst
 *   asize    block size for a request n: max(MIN, round16(n + H))
 *   MIN      smallest block: round16(H + 16 links + 8 footer)
 *
 * One block, live and free (H = 16; with H = 8 the tag word is absent,
 * with H = 32 two more words follow it: the request and a spare):
 *
 *     b                b+8           b+16 = payload            b+size
 *     ├────────────────┼─────────────┼─────────────────────────┤
 *     │ size | PF | A=1│ tag(b)      │ program data ...        │  live
 *     ├────────────────┼─────────────┼──────┬──────┬──────┬────┤
 *     │ size | PF | A=0│ tag(b)      │ next │ prev │ .... │size│  free
 *     └────────────────┴─────────────┴──────┴──────┴──────┴────┘
 *                                      list links        footer
 *
 * The heap: one emulated program break, blocks side by side, no gaps.
 *
 *   base  lo                                                   hi  break
 *   ├lead─┼──────┬───────────┬──────┬───────────────┬──────────┼lead┤
 *   │     │ live │ free      │ live │ free (tail)   │ live     │    │
 *   └─────┴──────┴─────▲─────┴──────┴───────▲───────┴──────────┴────┘
 *       list head ─────┘ ──────next─────────┘    (order: address)
 *
 * Layers (top to bottom: a file calls functions of its own layer and of
 * the layers below it, never above; tests/house/layers.sh checks this list)
 *   firstfit.c               the policy: options, entry points
 *   firstfit_dot.c firstfit_stats.c  snapshot, statistics
 *   firstfit_check.c         checker, walker
 *   firstfit_blocks.c        splitting, coalescing, growing the heap
 *   firstfit_list.c          the free list: search, insert, unlink
 *   firstfit.h               types, block accessors
 *
 * Invariants (checked by ff_check, under the lock)
 *   lo = base + lead,  hi = (end == 0 ? lo : base + end - lead)
 *   Σ size(b) over every block            = hi - lo
 *   size(b) ≡ 0 (mod 16),  size(b) ≥ MIN,  (b + H) ≡ 0 (mod 16)
 *   PF(next(b))                           = !A(b)   (at hi: tail_free)
 *   footer(b)                             = size(b)  for every free b
 *   tag(b)                                = b ⊕ key  (H ≥ 16)
 *   |list| = nfree = #{b : !A(b)},  Σ_list size = free_bytes
 *   nlive = #{b : A(b)}
 *   each free block is on the list exactly once; prev(next(x)) = x
 *   order address:   addr(x) < addr(next(x))
 *   order size-asc:  size(x) ≤ size(next(x));  size-desc: ≥
 *   coalesce on:     A(b) ∨ A(next(b))   (no two free blocks touch)
 *   rover ∈ list ∪ {NULL}
 */
#ifndef HL_FIRSTFIT_H
#define HL_FIRSTFIT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include "policy.h"
#include "os.h"
#include "bits.h"

/** The policy table of `firstfit`: its `.name` is what hl_fatal prints. */
extern const hl_policy_t hl_policy_firstfit;

/** Opaque: a block is only ever reached through the accessors below. */
typedef struct ff_block ff_block_t;

/** Choices of option `fit` (same order as the option's choices). */
enum ff_fit {
	FF_FIT_FIRST,  /**< the list's first block that is big enough */
	FF_FIT_NEXT,   /**< like first, but the scan starts at the rover and wraps */
	FF_FIT_BEST,   /**< the smallest block that is big enough */
	FF_FIT_WORST   /**< the largest block, if it is big enough */
};
/** Choices of option `order`. */
enum ff_order {
	FF_ORDER_ADDRESS,   /**< sorted by block address, lowest first */
	FF_ORDER_LIFO,      /**< a freed block goes to the head */
	FF_ORDER_FIFO,      /**< a freed block goes to the tail */
	FF_ORDER_SIZE_ASC,  /**< sorted by size, smallest first; a newcomer goes behind equals */
	FF_ORDER_SIZE_DESC  /**< sorted by size, largest first; a newcomer goes behind equals */
};

/** Flag bits kept in header word 0 below the size.  Sizes are multiples
 *  of 16, so the low four bits are free for these.  Written by the block
 *  surgery of firstfit_blocks.c (FF_MARK only by ff_check), always with
 *  ff_state_t.lock held. */
enum ff_flag {
	FF_ALLOC = 1,       /**< block is live */
	FF_PREV_FREE = 2,   /**< the block before this one is free */
	FF_MARK = 4,        /**< checker's scratch bit, clear outside it */
	FF_FLAGS = 15       /**< every bit that is not size */
};

/** Links of a free block, stored at its payload. */
typedef struct ff_links {
	ff_block_t *next;     /**< following element of the list, NULL at the tail */
	ff_block_t *prev;     /**< preceding element, NULL at the head */
} ff_links_t;

/** Counters shown under policy_stats (all under ff_state_t.lock). */
typedef struct ff_counters {
	uint64_t searches;    /**< fit searches run */
	uint64_t steps;       /**< list elements examined by fit searches */
	uint64_t insert_steps;/**< steps of sorted inserts (both ends walked at once) */
	uint64_t splits;      /**< blocks split in two */
	uint64_t coalesces;   /**< merges of two adjacent free blocks */
	uint64_t grows;       /**< times the break moved up */
	uint64_t trims;       /**< times the break moved down */
	uint64_t trimmed;     /**< bytes given back by moving the break down */
} ff_counters_t;

/** The policy's state: one per heap, in a metadata region.  Every field
 *  after `lock` is read and written only with `lock` held. */
typedef struct ff_state {
	pthread_mutex_t lock;  /**< the one lock: every operation takes it */
	hl_heap_t *heap;       /**< owning heap (fixed at init) */
	hl_os_t *os;           /**< its page source (fixed at init) */
	/* options, fixed at init */
	enum ff_fit fit;       /**< how a free block is chosen */
	enum ff_order order;   /**< where a freed block enters the list */
	bool coalesce;         /**< merge a freed block with free neighbours */
	size_t hdr;            /**< H: 8, 16 or 32 */
	size_t lead;           /**< 8 when H = 8, else 0 */
	size_t min;            /**< MIN block size */
	size_t grow;           /**< least bytes the break grows by */
	size_t trim_threshold; /**< free tail this big is trimmed at once; 0 = never */
	uint64_t key;          /**< per-heap secret mixed into header tags */
	/* the heap */
	hl_brk_t brk;          /**< the emulated break; moved up by ff_grow, down
	                            by ff_trim_tail */
	bool tail_free;        /**< PF bit of the imaginary block at hi: the last
	                            block is free (ff_set_pf_after, grow, trim) */
	/* the free list */
	ff_block_t *head;      /**< first element, NULL when empty (list code only) */
	ff_block_t *tail;      /**< last element, NULL when empty (list code only) */
	ff_block_t *rover;     /**< next fit starts here; NULL = at head.  Set by
	                            the next-fit scan, moved on by unlink, replace
	                            and merges */
	size_t nfree;          /**< elements on the list (ff_list_insert/unlink) */
	size_t free_bytes;     /**< sum of their sizes (every list function) */
	size_t nlive;          /**< live blocks: ff_take adds, free subtracts */
	ff_counters_t c;       /**< statistics, bumped where each event happens */
} ff_state_t;

/* --- Heap bounds --------------------------------------------------------- */
/** lo: address of the first block (the break's base plus the lead). */
static inline uintptr_t ff_lo(const ff_state_t *st) { return (uintptr_t)st->brk.base + st->lead; }
/** hi: one past the last block; equal to lo while the break has not moved. */
static inline uintptr_t ff_hi(const ff_state_t *st)
{
	return st->brk.end ? (uintptr_t)st->brk.base + st->brk.end - st->lead : ff_lo(st);
}

/* --- Block accessors ----------------------------------------------------- */
/** Header of @p b as an array of 64-bit words: [0] size and flags, [1] tag
 *  (H >= 16), [2] request and [3] spare (H = 32). */
static inline uint64_t *ff_word(ff_block_t *b) { return (uint64_t *)(void *)b; }
/** Bytes of @p b, header included (word 0 without its flag bits). */
static inline size_t ff_size(ff_block_t *b) { return (size_t)(ff_word(b)[0] & ~(uint64_t)FF_FLAGS); }
/** True when @p b is handed out to the program (its A bit). */
static inline bool ff_is_live(ff_block_t *b) { return ff_word(b)[0] & FF_ALLOC; }
/** True when the block just below @p b is free, so a footer ends it (PF). */
static inline bool ff_prev_is_free(ff_block_t *b) { return ff_word(b)[0] & FF_PREV_FREE; }
/** The block whose header starts at address @p a (no check made). */
static inline ff_block_t *ff_at(uintptr_t a) { return (ff_block_t *)a; }
/** Address of the header of @p b. */
static inline uintptr_t ff_addr(ff_block_t *b) { return (uintptr_t)b; }
/** The block right above @p b in memory; its address is hi when @p b is
 *  the last block, so callers compare with ff_hi() before reading it. */
static inline ff_block_t *ff_next_blk(ff_block_t *b) { return ff_at(ff_addr(b) + ff_size(b)); }
/** List links of @p b, in its first payload bytes: meaningful only while
 *  @p b is free (a live block holds program data there). */
static inline ff_links_t *ff_links(const ff_state_t *st, ff_block_t *b)
{
	return (ff_links_t *)(void *)(ff_addr(b) + st->hdr);
}
/** The pointer the program gets for @p b: H bytes past its header. */
static inline void *ff_payload(const ff_state_t *st, ff_block_t *b) { return (void *)(ff_addr(b) + st->hdr); }
/** The block a payload pointer @p p belongs to, if it is one (inverse of
 *  ff_payload(); nothing is validated here). */
static inline ff_block_t *ff_block_of(const ff_state_t *st, const void *p)
{
	return ff_at((uintptr_t)p - st->hdr);
}
/** The value header word 1 must hold for @p b when H >= 16: its address
 *  mixed with the heap's key, so a stray pointer rarely matches it. */
static inline uint64_t ff_tag(const ff_state_t *st, ff_block_t *b) { return ff_addr(b) ^ st->key; }
/** Last word of @p b, where a free block keeps a copy of its size. */
static inline uint64_t *ff_footer(ff_block_t *b) { return (uint64_t *)(void *)(ff_addr(b) + ff_size(b) - 8); }
/** The free block ending just below @p b (valid only when PF(b)). */
static inline ff_block_t *ff_prev_blk(ff_block_t *b)
{
	return ff_at(ff_addr(b) - (size_t)((uint64_t *)(void *)b)[-1]);
}
/** Block size serving a request of @p n bytes. */
static inline size_t ff_asize(const ff_state_t *st, size_t n)
{
	size_t s = hl_align_up(n + st->hdr, HL_ALIGN);
	return s < st->min ? st->min : s;
}

/* The block and list functions below expect ff_state_t.lock held;
 * ff_check, ff_walk, ff_snapshot and ff_stats take it themselves. */

/* firstfit_blocks.c: block surgery (headers, split, merge, grow, trim) */
/** Formats @p b as a free block of @p size bytes: header word with PF set
 *  from @p prev_free, tag (H >= 16), zeroed extra words (H = 32), footer.
 *  Does not list it nor touch the PF bit of the block above. */
void ff_write_free(ff_state_t *st, ff_block_t *b, size_t size, bool prev_free);
/** Formats @p b as a live block of @p size bytes serving a request of
 *  @p req bytes (kept in word 2 when H = 32); PF set from @p prev_free. */
void ff_write_live(ff_state_t *st, ff_block_t *b, size_t size, bool prev_free, size_t req);
/** Sets (@p free) or clears the PF bit of the block above @p b, or
 *  ff_state_t.tail_free when @p b is the last block. */
void ff_set_pf_after(ff_state_t *st, ff_block_t *b, bool free);
/** Turns listed free block @p b (at least @p asize bytes) into a live
 *  one for a request of @p req bytes, splitting off a free remainder of
 *  at least MIN bytes; counts it in nlive.
 *  @return the payload pointer. */
void *ff_take(ff_state_t *st, ff_block_t *b, size_t asize, size_t req);
/** Frees @p b, whose header still says live: coalesces it with free
 *  neighbours (option `coalesce`), lists the result per `order`, and
 *  trims the break when the free tail reaches trim_threshold.  The
 *  caller adjusts nlive. */
void ff_release(ff_state_t *st, ff_block_t *b);
/** Cuts live block @p b down to @p asize bytes when the rest would make a
 *  block of at least MIN, and frees that rest; otherwise leaves @p b. */
void ff_shrink(ff_state_t *st, ff_block_t *b, size_t asize);
/** Makes room for a block of @p asize bytes by moving the break up (by
 *  whole pages, and by at least option `grow` bytes).
 *  With coalescing a free tail block is extended instead (or returned as
 *  it is when it already fits).
 *  @return a listed free block of at least @p asize bytes, or NULL when
 *  the page source refuses. */
ff_block_t *ff_grow(ff_state_t *st, size_t asize);
/** Moves the break down over the free block(s) ending the heap, keeping
 *  about @p pad bytes of the last one (rounded so the break stays on a
 *  page and a kept piece is at least MIN).
 *  @return bytes given back to the page source. */
size_t ff_trim_tail(ff_state_t *st, size_t pad);

/* firstfit_list.c: the free list and the four fits */
/** Lists free block @p b where option `order` puts it; adds it to
 *  nfree and free_bytes. */
void ff_list_insert(ff_state_t *st, ff_block_t *b);
/** Takes @p b off the list and out of nfree and free_bytes; a rover
 *  resting on it moves on to its successor. */
void ff_list_unlink(ff_state_t *st, ff_block_t *b);
/** Puts free block @p b in listed block @p old's place (a split remainder
 *  or a merge keeps the position); fixes free_bytes and the rover.  @p old
 *  counts as gone, nfree is unchanged. */
void ff_list_replace(ff_state_t *st, ff_block_t *old, ff_block_t *b);
/** Accounts for listed block @p b having grown or shrunk from
 *  @p old_size bytes: fixes free_bytes and moves @p b when the order is
 *  by size, or when @p requeue asks (a merge under LIFO/FIFO is listed
 *  as a fresh free). */
void ff_list_resized(ff_state_t *st, ff_block_t *b, size_t old_size, bool requeue);
/** Runs the search option `fit` names for a block of @p asize bytes,
 *  counting searches and steps; next fit moves the rover to the pick.
 *  @return a listed block of at least @p asize bytes, or NULL. */
ff_block_t *ff_search(ff_state_t *st, size_t asize);
/** True when @p a may come before @p b on a list of this order (always
 *  for LIFO and FIFO); the checker and the sorted insert use it. */
bool ff_list_in_order(const ff_state_t *st, ff_block_t *a, ff_block_t *b);
/** Option spelling of fit @p f ("first", "next", "best", "worst"). */
const char *ff_fit_name(enum ff_fit f);
/** Option spelling of order @p o ("address", "lifo", ...). */
const char *ff_order_name(enum ff_order o);

/* firstfit_check.c, firstfit_dot.c */
/** policy_check: proves the invariants above with a list walk and a
 *  heap walk under the lock, adding each violation to @p r.
 *  @return the number of problems found. */
int ff_check(void *state, hl_report_t *r);
/** policy_walk: calls @p fn for each block in address order (live ones
 *  by payload and usable size, free ones whole), copying them out in
 *  batches under the lock and calling @p fn without it.
 *  @return the first nonzero value @p fn returned, or 0. */
int ff_walk(void *state, hl_walk_fn fn, void *arg);
/** policy_snapshot: draws into @p d, under the lock, the blocks in address
 *  order (up to HL_DOT_MAX_CELLS, the rest as one "not drawn" cell), the
 *  free list and, under next fit, the rover. */
void ff_snapshot(void *state, hl_dot_t *d);
/** policy_stats: writes the options in force, the heap and list sizes
 *  and the counters of ff_counters_t to @p w, under the lock. */
void ff_stats(void *state, hl_statw_t *w);

#endif
