/**
 * @file pools.h
 * @brief Policy `pools`: a working model of CPython's pymalloc as in
 *        CPython 3.11 (Objects/obmalloc.c), the version heaplab fidelity
 *        measures here; 3.12 keeps the same constants and moves the
 *        structures into Include/internal/pycore_obmalloc.h.
 *
 * Glossary
 *   block      the unit handed to the program; every block of a pool has the
 *              size of that pool's class.
 *   class      a size class: request n (1..512) belongs to class
 *              (n - 1) >> align_shift; class i serves (i + 1) << align_shift
 *              bytes.  32 classes 16 bytes apart by default.
 *   pool       pool_size bytes (16 KiB) inside an arena, holding blocks of one
 *              class after a 48-byte header (pl_pool_t).
 *   arena      arena_size bytes (1 MiB) with a page-source mapping of its own,
 *              cut into pools from its first pool boundary on: 64 pools
 *              when the mapping is pool-aligned, 63 when not (the bytes
 *              before the first boundary and after the last pool are lost,
 *              CPython's "bytes lost to arena alignment"); described by a
 *              pl_arena_t in `allarenas`.
 *   usedpools  per class, the ring of pools that have both live and free
 *              blocks: the only place malloc looks first.
 *   freepools  per arena, the singly linked pools that are wholly free.
 *   usable_arenas  arenas with at least one free pool, sorted by nfreepools
 *              ascending: the most used arena is carved first.
 *   nfp2lasta  nfp2lasta[k] = the last arena on usable_arenas with k free
 *              pools (NULL when none), so re-sorting is O(1).
 *   arena map  a three-level radix tree over addresses saying in O(1) whether
 *              an address lies inside one of our arenas (free's routing test).
 *   bias       the lock's owner thread, which enters without an atomic
 *              operation (the GIL held across many calls); see pools_lock.c.
 *   fallback   the second policy instance serving requests above 512 bytes and
 *              memalign beyond 16 (glibc's malloc in CPython).  pools keeps
 *              no per-thread state, so each thread's policy_tls word is the
 *              fallback's own (its tcache, its thread heap ...).
 *
 *   program ──► pools_malloc(n)
 *                 │ n > 512 or memalign ──────────────────► fallback policy
 *                 ▼                                          (bins, ...)
 *   usedpools[class] ─► pool ⇄ pool ⇄ ...   (partly used; malloc pops
 *                 │                            pool->freeblock)
 *                 │ ring empty
 *                 ▼
 *   usable_arenas ─► arena(nfree 1) ⇄ arena(nfree 7) ⇄ arena(nfree 64)
 *                 │ head arena: take freepools, else carve at pool_address
 *                 ▼ none
 *   new arena ◄── page source (hl_os_reserve arena_size)
 *
 *   one arena (1 MiB = 64 pools when its mapping is pool-aligned, else
 *   63 between two lost stretches; arenas:mmap, the default, as CPython):
 *   ┌────────┬────────┬────────┬────────┬─────┬──────────────────────────┐
 *   │ pool 0 │ pool 1 │ pool 2 │ pool 3 │ ... │ never carved (pool_addr→)│
 *   │ c1 full│ c3 used│ free   │ c1 used│     │                          │
 *   └────────┴────────┴────────┴────────┴─────┴──────────────────────────┘
 *   headers:table (an option; not CPython's layout) keeps the headers in a
 *   table in the arena's first pool, one 64-byte slot per pool, and
 *   leaves the 48 bytes at each pool's start unused, so every block sits
 *   where CPython puts it (pool 0 is the table: 63 pools to carve):
 *   ┌──────────────────────┬────────┬────────┬─────┐
 *   │ hdr1 hdr2 ... hdr63  │ pool 1 │ pool 2 │ ... │   hdr i at arena + 64 i
 *   └──────────────────────┴────────┴────────┴─────┘
 *
 *   one pool (16 KiB, class of 32 bytes):
 *   ┌ header 48 ┬ blk ┬ blk ┬ blk ┬ ... ┬ blk ├ never used ┬ tail < 32 ┐
 *   │count,free │live │free │live │     │live │            │ (lost)    │
 *   └───────────┴─────┴──▲──┴─────┴─────┴─────┴▲───────────┴───────────┘
 *             freeblock ─┘        nextoffset ──┘
 *
 * Pool states (a state machine, as in CPython):
 *   used  ─(last block taken)→ full ─(one freed)→ used (front of usedpools)
 *   used  ─(last block freed)→ empty (front of its arena's freepools)
 *   empty ─(malloc of any class)→ used
 *
 * Layers (top to bottom: a file calls functions of its own layer and of
 * the layers below it, never above; tests/house/layers.sh checks this list)
 *   pools.c                  the policy: options, entry points, the
 *                            fallback for large requests, fork
 *   pools_dot.c pools_stats.c  snapshot, statistics
 *   pools_check.c            checker, walker, free-block bitmaps
 *   pools_fast.h             a pool's pop and push (the shim inlines them:
 *                            shim/fast_paths.h)
 *   pools_arena.c            arenas: carving pools, the usable list,
 *                            giving an empty arena back
 *   pools_map.c              the address map of arenas
 *   pools_lock.c pools.h     the biased lock; types and inline accessors
 *
 * Invariants (checked by pools_check):
 *   I1  for every carved pool P: P.count + |P.freeblock list|
 *         + untouched(P) = capacity(P.szidx)   (untouched = blocks at or
 *         after nextoffset), empty pools excepted (count == 0).
 *   I2  P on usedpools[c]  <=>  0 < P.count < capacity(c) and P.szidx = c;
 *       P full  <=>  P.count = capacity and P.freeblock = NULL and no
 *       untouched blocks.
 *   I3  A.nfreepools = |A.freepools| + (never-carved pools of A).
 *   I4  A on usable_arenas  <=>  A.nfreepools > 0;
 *       usable_arenas[i].nfreepools <= usable_arenas[i+1].nfreepools.
 *   I5  nfp2lasta[k] = last arena on usable_arenas with nfreepools = k.
 *   I6  arena map marks exactly the associated arenas' addresses.
 *   I7  narenas_currently_allocated = |{A : A.address != 0}|.
 *
 * Locking: one biased spinlock (pl_state_t.lock, see pools_lock.c) guards
 * everything below marked "lock"; it stands in for CPython's GIL (see
 * pools.c).  Geometry fields are
 * written once in init and read without the lock.  The arena map is read
 * without the lock (atomic loads), written under it.
 */
#ifndef HL_POOLS_H
#define HL_POOLS_H

#include <pthread.h>
#include <stdint.h>
#include "policy.h"
#include "os.h"
#include "bits.h"
#include "host.h"

/* ---- tunable settings and limits (CPython's values are the defaults) ---- */
enum {
	PL_THRESHOLD = 512,        /**< SMALL_REQUEST_THRESHOLD: largest pooled request */
	PL_MAX_CLASSES = 64,       /**< 512 / 8 with alignment:8 */
	PL_MAX_POOLS = 1024,       /**< most pools an arena may hold (option check) */
	PL_ARENA_OBJECTS0 = 16,    /**< INITIAL_ARENA_OBJECTS: first size of allarenas */
	PL_ADDRESS_BITS = 64,      /**< radix tree covers whole pointers (IGNORE_BITS 0) */
	PL_BIAS_MOVES = 16,        /**< lock-bias hand-overs before the plain spinlock */
	PL_SLOT_BITS = 6,          /**< log2 of a header's slot in headers:table */
};

/** Pool header: the first bytes of every carved pool (CPython's layout),
 *  or with headers:table a 64-byte slot of its arena's header table. */
typedef struct pl_pool {
	union {
		void *pad;                /**< keeps the header layout of CPython */
		uint32_t count;           /**< live blocks (lock) */
	} ref;                        /**< the live-block count, in a union that
					  pads it to a pointer as CPython's does */
	void *freeblock;             /**< first freed block, NULL when none (lock) */
	struct pl_pool *nextpool;    /**< usedpools ring / freepools list (lock) */
	struct pl_pool *prevpool;    /**< usedpools ring only (lock) */
	uint32_t arenaindex;         /**< index of its arena in allarenas (set once) */
	uint32_t szidx;              /**< class index; PL_NO_CLASS before first use (lock) */
	uint32_t nextoffset;         /**< byte offset of the next never-used block (lock) */
	uint32_t maxnextoffset;      /**< largest offset a block may start at (lock) */
} pl_pool_t;

/** POOL_OVERHEAD: the header rounded up to the block alignment (48). */
#define PL_POOL_OVERHEAD ((uint32_t)((sizeof(pl_pool_t) + 15) & ~(size_t)15))
/** szidx of a pool just carved, before its first class is set: matches no
 *  class, so the pool's blocks are laid out afresh on first use. */
#define PL_NO_CLASS 0xffffu
/** @cond HL_COMPILE_CHECKS */
_Static_assert(sizeof(pl_pool_t) == 48, "pool header is CPython's 48 bytes");
/** @endcond */

/** One arena's descriptor (CPython's arena_object). */
typedef struct pl_arena {
	uintptr_t address;           /**< base of the mapping; 0 = unassociated (lock) */
	char *pool_address;          /**< next never-carved pool (lock) */
	uint32_t nfreepools;         /**< free + never-carved pools (lock) */
	uint32_t ntotalpools;        /**< pools that fit after pool alignment (lock) */
	pl_pool_t *freepools;        /**< wholly free pools, via nextpool (lock) */
	struct pl_arena *nextarena;  /**< usable_arenas or unused list (lock) */
	struct pl_arena *prevarena;  /**< usable_arenas only (lock) */
} pl_arena_t;

/** Radix-tree leaf entry: which part of an arena-sized slot is ours.  For
 *  an arena-aligned arena tail_hi = -1 and tail_lo = 0 (whole slot). */
typedef struct pl_cover {
	int32_t tail_hi;             /**< offset where an arena starting here begins */
	int32_t tail_lo;             /**< offset where an arena from below ends */
} pl_cover_t;

/** Counters of the fallback's traffic, kept outside the lock (relaxed
 *  atomics: the fallback is called without it). */
typedef struct pl_counts {
	uint64_t fallback_mallocs;   /**< requests (and memaligns) sent to the fallback */
	uint64_t fallback_frees;     /**< frees of fallback blocks sent back to it */
} pl_counts_t;

/** The policy state of one heap (pools_init): the lock, the geometry, the
 *  arena map, the pool and arena lists, and the fallback instance.  It
 *  lives in a metadata region of the heap's page source. */
typedef struct pl_state {
	int lock;                    /**< the spinlock standing in for the GIL */
	hl_thread_t *bias_owner;     /**< the thread holding the bias, which
				      enters without the lock, or NULL (written
				      under the lock, read by its holder
				      without it) */
	bool bias_ok;                /**< bias may still be claimed (lock) */
	uint32_t bias_moves;         /**< times the bias changed threads (lock) */
	bool debug;                  /**< full checks on free (hl_heap_debug) */
	hl_heap_t *heap;             /**< owner (set once) */
	hl_os_t *os;                 /**< page source (set once) */

	/* geometry (set once in init) */
	size_t arena_size;           /**< bytes per arena mapping, a power of two */
	size_t pool_size;            /**< bytes per pool, a power of two */
	unsigned arena_bits;         /**< log2(arena_size) */
	unsigned pool_bits;          /**< log2(pool_size) */
	uintptr_t pool_mask;         /**< pool_size - 1: a block's offset in its
				      pool is its address & pool_mask */
	unsigned align_shift;        /**< 4 (16-byte classes) or 3 (alignment:8) */
	unsigned nclasses;           /**< 512 >> align_shift */
	unsigned max_pools;          /**< arena_size / pool_size */
	bool header_table;           /**< headers:table: headers in the arena's first pools */
	size_t arena_align;          /**< alignment asked of the page source for an
				      arena: 0, its page (arenas:mmap, CPython),
				      or arena_size (arenas:aligned) */
	unsigned header_bits;        /**< log2 of the distance between two pools'
				      headers: pool_bits inline, PL_SLOT_BITS
				      in a table */
	unsigned table_pools;        /**< pools at an arena's start that hold the
				      header table (0 inline) */
	uint32_t stride[PL_MAX_CLASSES];   /**< bytes between blocks of a class */
	uint32_t capacity[PL_MAX_CLASSES]; /**< blocks per pool of a class */

	/* radix tree (root set once; nodes added under lock, read lock-free) */
	unsigned map_top_bits;       /**< address bits indexing the root node */
	unsigned map_mid_bits;       /**< address bits indexing a mid node */
	unsigned map_bot_bits;       /**< address bits indexing a bottom node */
	unsigned map_shift[3];       /**< address shift for the root, mid, bottom index */
	uintptr_t map_mask[3];       /**< and the mask after it */
	void **map_root;             /**< [1 << top] -> mid node [1 << mid] -> bot */
	size_t map_mid_nodes;        /**< mid nodes made so far, never freed (lock) */
	size_t map_bot_nodes;        /**< bottom nodes made so far, never freed (lock) */

	/* pools and arenas (lock) */
	pl_pool_t usedpools[PL_MAX_CLASSES]; /**< ring sentinels, one per class */
	pl_arena_t *allarenas;       /**< maxarenas descriptors (meta region) */
	uint32_t maxarenas;          /**< descriptors in allarenas: 16, doubled
				      when none is left unused */
	pl_arena_t *unused_arena_objects; /**< descriptors without an arena,
				      linked through nextarena */
	pl_arena_t *usable_arenas;   /**< arenas with a free pool, fewest free
				      pools first (nextarena / prevarena) */
	pl_arena_t *nfp2lasta[PL_MAX_POOLS + 1]; /**< [k]: last arena on
				      usable_arenas with k free pools, or NULL */
	uint64_t narenas_currently_allocated; /**< arenas mapped now */
	uint64_t ntimes_arena_allocated;      /**< arenas ever mapped */
	uint64_t narenas_highwater;  /**< most arenas mapped at once */
	uint64_t small_mallocs;      /**< requests served by pools (lock); the
				      blocks given back to them are not
				      counted: small_mallocs less the live
				      blocks (pools_stats) */

	pl_counts_t counts;          /**< relaxed atomics */

	hl_guest_t fallback;         /**< the fallback policy instance (core/host.h;
				      set once); t->policy_tls is its word */

	/* snapshot scratch (pools_dot.c) */
	struct pl_view *view;        /**< summary of the structures being drawn (lock) */
} pl_state_t;

/** The policy table of `pools` (found by name through hl_policy_find). */
extern const hl_policy_t hl_policy_pools;

/* ---- accessors ---- */
/** Bytes served by class @p c: (c + 1) << align_shift. */
static inline uint32_t pl_class_size(const pl_state_t *s, unsigned c)
{
	return (uint32_t)(c + 1) << s->align_shift;
}
/** Class of a request of @p n bytes (1..512): (n - 1) >> align_shift. */
static inline size_t pl_class_of(const pl_state_t *s, size_t n)
{
	return (n - 1) >> s->align_shift;
}
/** The header of the pool holding block @p p.  Pools are pool-aligned
 *  (an arena's first pool is its base rounded up to a pool boundary), so
 *  with inline headers this is @p p rounded down to a pool boundary,
 *  wherever the arena lies: POOL_ADDR in CPython 3.11's Objects/obmalloc.c
 *  (_Py_ALIGN_DOWN of the address to POOL_SIZE).  With headers:table the
 *  arenas are arena-aligned, the pool number is an address field, and
 *  header i sits in slot i of the table at the arena's start. */
static inline pl_pool_t *pl_pool_of(const pl_state_t *s, const void *p)
{
	uintptr_t a = (uintptr_t)p;
	if (HL_LIKELY(!s->header_table))
		return (pl_pool_t *)(a - (a & s->pool_mask));
	uintptr_t in = a & (s->arena_size - 1);
	return (pl_pool_t *)(a - in + (in >> s->pool_bits << s->header_bits));
}
/** The first byte of the pool whose header is @p pool (the pool itself
 *  with inline headers). */
static inline char *pl_pool_base(const pl_state_t *s, const pl_pool_t *pool)
{
	uintptr_t a = (uintptr_t)pool;
	if (HL_LIKELY(!s->header_table))
		return (char *)a;
	uintptr_t in = a & (s->arena_size - 1);
	return (char *)(a - in + (in >> s->header_bits << s->pool_bits));
}
/** Where arena @p a's pools begin: its base rounded up to a pool boundary
 *  (CPython's new_arena; the base itself when the mapping is aligned). */
static inline uintptr_t pl_arena_first(const pl_state_t *s, const pl_arena_t *a)
{
	return hl_align_up(a->address, s->pool_size);
}
/** True when arena @p a's mapping is not pool-aligned, so it lost a pool. */
static inline bool pl_arena_lost_pool(const pl_state_t *s, const pl_arena_t *a)
{
	return (a->address & (s->pool_size - 1)) != 0;
}
/** The header of pool number @p i of arena @p a (counted from its first
 *  pool-aligned pool). */
static inline pl_pool_t *pl_pool_at(const pl_state_t *s, const pl_arena_t *a, size_t i)
{
	return (pl_pool_t *)(pl_arena_first(s, a) + (i << s->header_bits));
}
/** Pools of arena @p a up to its never-carved part (the header table's
 *  pools included: the first carved pool is number table_pools). */
static inline size_t pl_carved_end(const pl_state_t *s, const pl_arena_t *a)
{
	return (size_t)((uintptr_t)a->pool_address - pl_arena_first(s, a)) >> s->pool_bits;
}
/** Pool numbers arena @p a has: the header table's and the carvable ones
 *  (max_pools, or one fewer when the mapping was not pool-aligned). */
static inline size_t pl_arena_slots(const pl_state_t *s, const pl_arena_t *a)
{
	return s->table_pools + a->ntotalpools;
}
/** The descriptor of the arena @p pool was carved from. */
static inline pl_arena_t *pl_arena_of_pool(const pl_state_t *s, const pl_pool_t *pool)
{
	return &s->allarenas[pool->arenaindex];
}
/** The sentinel of usedpools[@p c]: the ring is empty when it points at
 *  itself. */
static inline pl_pool_t *pl_used_head(pl_state_t *s, size_t c)
{
	return &s->usedpools[c];
}
/** Blocks never handed out yet at the end of a carved pool. */
static inline uint32_t pl_untouched(const pl_state_t *s, const pl_pool_t *pool)
{
	if (pool->nextoffset > pool->maxnextoffset)
		return 0;
	return (pool->maxnextoffset - pool->nextoffset) / s->stride[pool->szidx] + 1;
}

/* ---- the lock (pools_lock.c) ----
 * A spinlock biased towards one thread, the way the GIL stays with the
 * running thread across many allocations: bias_owner enters by marking its
 * own thread record busy (hl_thread_t.lock_busy) and then reading
 * bias_owner, no atomic read-modify-write.  Another thread arriving takes
 * the spinlock, revokes the bias (bias_owner = NULL, a membarrier(2) so the
 * owner's plain stores are ordered, then waits until the owner's record is
 * not busy) and takes the bias over; after PL_BIAS_MOVES hand-overs all
 * take the spinlock.  Readers (stats, checker ...) revoke, never claim.
 * Entry returns whether it went by bias, for pl_leave. */
/** Entry without the bias: takes the spinlock, then (unless @p reader)
 *  claims the bias for @p t or moves it here from its holder, until
 *  PL_BIAS_MOVES moves have been made. */
void pl_enter_locked(pl_state_t *s, hl_thread_t *t, bool reader);
/** Takes the spinlock (no bias). */
void pl_lock_slow(pl_state_t *s);
/** Takes the spinlock: one atomic exchange when it is free, else
 *  pl_lock_slow. */
static inline void pl_lock(pl_state_t *s)
{
	if (HL_UNLIKELY(__atomic_exchange_n(&s->lock, 1, __ATOMIC_ACQUIRE)))
		pl_lock_slow(s);
}
/** Releases the spinlock (a release store). */
static inline void pl_unlock(pl_state_t *s)
{
	__atomic_store_n(&s->lock, 0, __ATOMIC_RELEASE);
}
/** The bias holder's entry: true when @p t holds the bias (a plain store
 *  and a load, no atomic read-modify-write); false, with nothing held,
 *  otherwise.  The owner is read after the busy mark is published, never
 *  before: a thread that read "owner == me", was preempted, and then
 *  marked itself busy could find the bias revoked meanwhile (its record
 *  was not busy) and claimed by the revoker, now inside under the
 *  spinlock.  A thread that is not the owner marks its own record for a
 *  moment, which no revoker waits on (it waits on the owner's). */
static inline bool pl_enter_by_bias(pl_state_t *s, hl_thread_t *t)
{
	__atomic_store_n(&t->lock_busy, 1, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (HL_LIKELY(__atomic_load_n(&s->bias_owner, __ATOMIC_ACQUIRE) == t))
		return true;
	__atomic_store_n(&t->lock_busy, 0, __ATOMIC_RELEASE);
	return false;
}
/** Leaves what pl_enter_by_bias entered for @p t: unmarks its record. */
static inline void pl_leave_bias(hl_thread_t *t)
{
	__atomic_store_n(&t->lock_busy, 0, __ATOMIC_RELEASE);
}
/** Enters for thread @p t: by bias when t holds it, else through
 *  pl_enter_locked.  Returns whether it went by bias, for pl_leave. */
static inline bool pl_enter_as(pl_state_t *s, hl_thread_t *t, bool reader)
{
	if (pl_enter_by_bias(s, t))
		return true;
	pl_enter_locked(s, t, reader);
	return false;
}
/** Enters for an allocating call of thread @p t (may claim the bias). */
static inline bool pl_enter(pl_state_t *s, hl_thread_t *t)
{
	return pl_enter_as(s, t, false);
}
/** Leaves what pl_enter_as entered for @p t; @p by_bias is what it
 *  returned. */
static inline void pl_leave(pl_state_t *s, hl_thread_t *t, bool by_bias)
{
	if (by_bias)
		pl_leave_bias(t);
	else
		pl_unlock(s);
}
/** Enters from a thread that is not necessarily allocating (checker,
 *  walker, stats, snapshot): returns the thread's record when it went in
 *  by the bias, else NULL, for pl_leave_here. */
static inline hl_thread_t *pl_enter_here(pl_state_t *s)
{
	hl_thread_t *t = hl_thread_get(s->heap);
	return pl_enter_as(s, t, true) ? t : NULL;
}
/** Leaves what pl_enter_here entered; @p by is what it returned. */
static inline void pl_leave_here(pl_state_t *s, hl_thread_t *by)
{
	pl_leave(s, by, by != NULL);
}
/** Sets up the bias (membarrier registration); without it, plain spinlock. */
void pl_lock_init(pl_state_t *s);
/** Ends the current bias (the next entry may claim it); spinlock held. */
void pl_revoke_bias(pl_state_t *s);

/* ---- arena map (pools_map.c) ---- */
/** Splits the address bits above an arena among the three levels and
 *  reserves the root node; 0, or -1 after hl_set_error. */
int pl_map_init(pl_state_t *s);
/** Marks [base, base + arena_size) as ours (used) or not; -1 without memory. */
int pl_map_mark(pl_state_t *s, uintptr_t base, bool used);
/** Root-node index of address @p a. */
static inline uintptr_t pl_i1(const pl_state_t *s, uintptr_t a)
{
	return (a >> s->map_shift[0]);
}
/** Mid-node index of address @p a. */
static inline uintptr_t pl_i2(const pl_state_t *s, uintptr_t a)
{
	return ((a >> s->map_shift[1]) & s->map_mask[1]);
}
/** Bottom-node index of address @p a: its arena-sized slot. */
static inline uintptr_t pl_i3(const pl_state_t *s, uintptr_t a)
{
	return ((a >> s->map_shift[2]) & s->map_mask[2]);
}
/** True when @p p lies in one of our arenas (CPython's address_in_range):
 *  three dependent loads, no lock. */
static inline bool pl_map_is_used(const pl_state_t *s, const void *p)
{
	uintptr_t a = (uintptr_t)p;
	void **mid = __atomic_load_n(&s->map_root[pl_i1(s, a)], __ATOMIC_ACQUIRE);
	if (HL_UNLIKELY(!mid))
		return false;
	const pl_cover_t *bot = __atomic_load_n(&mid[pl_i2(s, a)], __ATOMIC_ACQUIRE);
	if (HL_UNLIKELY(!bot))
		return false;
	const pl_cover_t *c = &bot[pl_i3(s, a)];
	int32_t hi = __atomic_load_n(&c->tail_hi, __ATOMIC_RELAXED);
	int32_t lo = __atomic_load_n(&c->tail_lo, __ATOMIC_RELAXED);
	int32_t tail = (int32_t)(a & s->map_mask[0]);
	return tail < lo || (tail >= hi && hi != 0);
}
/** Bytes of the map's root node. */
size_t pl_map_root_bytes(const pl_state_t *s);
/** Bytes of all the map's mid nodes made so far. */
size_t pl_map_mid_bytes(const pl_state_t *s);
/** Bytes of all the map's bottom nodes made so far. */
size_t pl_map_bot_bytes(const pl_state_t *s);

/* ---- arenas and pools (pools_arena.c), all under the lock ---- */
/** usedpools[@p c] is empty: takes a pool from the head of usable_arenas
 *  (mapping a new arena when there is none), puts it on the ring and
 *  returns its first block; NULL when out of memory. */
__attribute__((noinline)) void *pl_alloc_from_new_pool(pl_state_t *s, unsigned c);
/** Puts @p pool first on usedpools[@p c] (CPython's insert_to_usedpool
 *  for a full pool that got a block back; a pool newly started). */
static inline void pl_used_push(pl_state_t *s, pl_pool_t *pool, unsigned c)
{
	pl_pool_t *head = pl_used_head(s, c), *next = head->nextpool;
	pool->nextpool = next;
	pool->prevpool = head;
	next->prevpool = pool;
	head->nextpool = pool;
}
/** Takes @p pool off its usedpools ring (it filled or emptied). */
static inline void pl_used_unlink(pl_pool_t *pool)
{
	pool->prevpool->nextpool = pool->nextpool;
	pool->nextpool->prevpool = pool->prevpool;
}
/** pymalloc_pool_extend: @p pool's free list ran dry (freeblock NULL), so
 *  its next never-used block becomes freeblock, or, when none is left,
 *  the now full pool leaves usedpools (returns true then: the caller
 *  tells it, as its event is in the copy of malloc that a listened-to heap
 *  runs). */
static inline bool pl_pool_extend(pl_state_t *s, pl_pool_t *pool)
{
	if (pool->nextoffset <= pool->maxnextoffset) {
		void **bp = (void **)(pl_pool_base(s, pool) + pool->nextoffset);
		pool->nextoffset += s->stride[pool->szidx];
		*bp = NULL;
		pool->freeblock = bp;
		return false;
	}
	pl_used_unlink(pool);
	return true;
}
/** The last block of @p pool came back: the pool moves from usedpools to
 *  its arena's freepools, and the arena moves along usable_arenas to stay
 *  sorted, or is unmapped when wholly free and not the last arena there. */
__attribute__((noinline)) void pl_insert_to_freepool(pl_state_t *s, pl_pool_t *pool);
/** True when @p pool of arena @p a has been carved (has a header). */
static inline bool pl_pool_is_carved(const pl_state_t *s, const pl_arena_t *a,
				     const pl_pool_t *pool)
{
	return pl_pool_base(s, pool) < a->pool_address;
}

/* ---- looking inside (pools_check.c, pools_dot.c, pools_stats.c) ---- */
/** The policy's checker: I1..I7 under the lock, then the fallback's own
 *  checker. */
int pools_check(void *st, hl_report_t *r);
/** The policy's walker: the blocks of every carved pool, each wholly free
 *  pool and each arena's never-carved tail as one block, then the
 *  fallback's blocks. */
int pools_walk(void *st, hl_walk_fn fn, void *arg);
/** Draws arenas, pools, block maps and the lists, then the fallback's own
 *  picture (pools_dot.c). */
void pools_snapshot(void *st, hl_dot_t *d);
/** Reserves the snapshot scratch; 0 or -1. */
int pl_view_init(pl_state_t *s);
/** Emits per-class pool and block counts, arena counts, the bytes lost to
 *  pool headers, quantization, stride padding and the arena map, and the
 *  fallback's own stats. */
void pools_stats(void *st, hl_statw_t *w);
/** Marks the free blocks of @p pool in @p bits (one bit per block index);
 *  returns how many, or -1 when the list leaves the pool or loops. */
int pl_free_bitmap(const pl_state_t *s, const pl_pool_t *pool, uint64_t *bits, size_t nwords);
/** Marks each pool of @p a that is on its freepools list. */
int pl_freepool_bitmap(const pl_state_t *s, const pl_arena_t *a, uint64_t *bits, size_t nwords);
#endif
