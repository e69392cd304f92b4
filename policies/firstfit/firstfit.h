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

/** Opaque: a block is only ever reached through the accessors below. */
typedef struct ff_block ff_block_t;

/** Choices of option `fit` (same order as the option's choices). */
enum ff_fit { FF_FIT_FIRST, FF_FIT_NEXT, FF_FIT_BEST, FF_FIT_WORST };
/** Choices of option `order`. */
enum ff_order { FF_ORDER_ADDRESS, FF_ORDER_LIFO, FF_ORDER_FIFO, FF_ORDER_SIZE_ASC,
		FF_ORDER_SIZE_DESC };

/* --- Header word 0: size with flag bits below 16 ----------------------- */
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
	hl_brk_t brk;          /**< the emulated break (moved by grow and trim) */
	bool tail_free;        /**< PF bit of the imaginary block at hi */
	/* the free list */
	ff_block_t *head;      /**< first element, NULL when empty */
	ff_block_t *tail;      /**< last element, NULL when empty */
	ff_block_t *rover;     /**< next fit starts here; NULL = at head */
	size_t nfree;          /**< elements on the list */
	size_t free_bytes;     /**< sum of their sizes */
	size_t nlive;          /**< live blocks */
	ff_counters_t c;       /**< statistics */
} ff_state_t;

/* --- Heap bounds --------------------------------------------------------- */
static inline uintptr_t ff_lo(const ff_state_t *st) { return (uintptr_t)st->brk.base + st->lead; }
static inline uintptr_t ff_hi(const ff_state_t *st)
{
	return st->brk.end ? (uintptr_t)st->brk.base + st->brk.end - st->lead : ff_lo(st);
}

/* --- Block accessors ----------------------------------------------------- */
static inline uint64_t *ff_word(ff_block_t *b) { return (uint64_t *)(void *)b; }
static inline size_t ff_size(ff_block_t *b) { return (size_t)(ff_word(b)[0] & ~(uint64_t)FF_FLAGS); }
static inline bool ff_is_live(ff_block_t *b) { return ff_word(b)[0] & FF_ALLOC; }
static inline bool ff_prev_is_free(ff_block_t *b) { return ff_word(b)[0] & FF_PREV_FREE; }
static inline ff_block_t *ff_at(uintptr_t a) { return (ff_block_t *)a; }
static inline uintptr_t ff_addr(ff_block_t *b) { return (uintptr_t)b; }
static inline ff_block_t *ff_next_blk(ff_block_t *b) { return ff_at(ff_addr(b) + ff_size(b)); }
static inline ff_links_t *ff_links(const ff_state_t *st, ff_block_t *b)
{
	return (ff_links_t *)(void *)(ff_addr(b) + st->hdr);
}
static inline void *ff_payload(const ff_state_t *st, ff_block_t *b) { return (void *)(ff_addr(b) + st->hdr); }
static inline ff_block_t *ff_block_of(const ff_state_t *st, const void *p)
{
	return ff_at((uintptr_t)p - st->hdr);
}
static inline uint64_t ff_tag(const ff_state_t *st, ff_block_t *b) { return ff_addr(b) ^ st->key; }
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

/* firstfit_blocks.c: block surgery (headers, split, merge, grow, trim) */
void ff_write_free(ff_state_t *st, ff_block_t *b, size_t size, bool prev_free);
void ff_write_live(ff_state_t *st, ff_block_t *b, size_t size, bool prev_free, size_t req);
void ff_set_pf_after(ff_state_t *st, ff_block_t *b, bool free);
void *ff_take(ff_state_t *st, ff_block_t *b, size_t asize, size_t req);
void ff_release(ff_state_t *st, ff_block_t *b);
void ff_shrink(ff_state_t *st, ff_block_t *b, size_t asize);
ff_block_t *ff_grow(ff_state_t *st, size_t asize);
size_t ff_trim_tail(ff_state_t *st, size_t pad);

/* firstfit_list.c: the free list and the four fits */
void ff_list_insert(ff_state_t *st, ff_block_t *b);
void ff_list_unlink(ff_state_t *st, ff_block_t *b);
void ff_list_replace(ff_state_t *st, ff_block_t *old, ff_block_t *b);
void ff_list_resized(ff_state_t *st, ff_block_t *b, size_t old_size, bool requeue);
ff_block_t *ff_search(ff_state_t *st, size_t asize);
bool ff_list_in_order(const ff_state_t *st, ff_block_t *a, ff_block_t *b);
const char *ff_fit_name(enum ff_fit f);
const char *ff_order_name(enum ff_order o);

/* firstfit_check.c, firstfit_dot.c */
int ff_check(void *state, hl_report_t *r);
int ff_walk(void *state, hl_walk_fn fn, void *arg);
void ff_snapshot(void *state, hl_dot_t *d);
void ff_stats(void *state, hl_statw_t *w);

#endif
