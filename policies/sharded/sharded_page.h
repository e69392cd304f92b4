/**
 * @file sharded_page.h
 * @brief Policy `sharded`, page layer: the block lists of one page (free,
 *        local_free, thread_free), their encoding in secure mode and the
 *        delayed-free bits.  The lowest layer of the policy (see sharded.h,
 *        "Layers"): it calls nothing of the policy above it.
 */
#ifndef HL_SHARDED_PAGE_H
#define HL_SHARDED_PAGE_H

#include "sharded.h"

/* ---- page flags: the owner writes, any thread's free reads ---------- */

/** The page's shd_page_flag bits (relaxed load: any thread may ask). */
static inline unsigned shd_flags(const shd_page_t *pg)
{
	return atomic_load_explicit(&pg->flags, memory_order_relaxed);
}
/** Sets @p pg's fast_owner from its heap and flags: the heap's thread
 *  record when the page has a heap and no flag (free's hit may take it),
 *  else NULL.  Whoever changes the heap or the flags calls it. */
static inline void shd_page_fast_owner_update(shd_page_t *pg)
{
	shd_heap_t *hp = atomic_load_explicit(&pg->heap, memory_order_relaxed);
	hl_thread_t *t = hp && shd_flags(pg) == 0 ? hp->t : NULL;
	atomic_store_explicit(&pg->fast_owner, t, memory_order_relaxed);
}

/** Replaces @p pg's flags with @p f; only its owner calls this. */
static inline void shd_flags_set(shd_page_t *pg, unsigned f)
{
	atomic_store_explicit(&pg->flags, (uint8_t)f, memory_order_relaxed);
	shd_page_fast_owner_update(pg);
}

/** Names @p hp (NULL: none, abandoned) as @p pg's heap. */
static inline void shd_page_set_heap(shd_page_t *pg, shd_heap_t *hp)
{
	atomic_store_explicit(&pg->heap, hp, memory_order_release);
	shd_page_fast_owner_update(pg);
}

/* ---- encoded free lists ------------------------------------------------ */

/** @p x rotated left by @p r mod 64 bits (secure link encoding). */
static inline uintptr_t shd_rotl(uintptr_t x, unsigned r)
{
	r &= 63;
	return r ? (x << r) | (x >> (64 - r)) : x;
}
/** @p x rotated right by @p r mod 64 bits: undoes shd_rotl(). */
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
		hl_fatal(&hl_policy_sharded, "corrupted free list pointer", b);
	return n;
}

/** The list head of a thread_free word @p tf (delay bits masked off). */
static inline uintptr_t shd_tf_ptr(uintptr_t tf) { return tf & ~(uintptr_t)3; }
/** The enum shd_delay state in the low two bits of @p tf. */
static inline unsigned shd_tf_delay(uintptr_t tf) { return (unsigned)(tf & 3); }

/* ---- blocks in and out of a page (owner) ------------------------------- */

/** Pops the first block of @p pg's `free` list (not empty) and counts it
 *  used. */
static inline void *shd_page_pop(shd_page_t *pg)
{
	shd_block_t *b = pg->free;
	pg->free = shd_next(pg, b);
	pg->used++;
	return b;
}

/** shd_page_pop() for a page with no keys (checks off): the link is
 *  read plain. */
static inline void *shd_page_pop_plain(shd_page_t *pg)
{
	shd_block_t *b = pg->free;
	pg->free = (shd_block_t *)b->next;
	pg->used++;
	return b;
}

/** Owner's free: pushes block @p b onto @p pg's local_free.
 *  @return the blocks still used (0: the page is empty now). */
static inline uint32_t shd_page_push_local(shd_page_t *pg, shd_block_t *b)
{
	shd_set_next(pg, b, pg->local_free);
	pg->local_free = b;
	return --pg->used;
}

/* ---- sharded_page.c ------------------------------------------------------ */
/** Sets the delay bits of @p pg's thread_free to @p delay (an enum
 *  shd_delay) by CAS, yielding while a remote free is DELAYED_FREEING;
 *  a NEVER_DELAYED page keeps that state unless @p override_never. */
void shd_set_delay(shd_page_t *pg, unsigned delay, bool override_never);
/** Owner side: moves @p pg's remote frees onto local_free (one exchange
 *  of the thread_free head; used drops by their count), then hands
 *  local_free over as `free` if `free` is empty. */
void shd_page_collect(shd_page_t *pg);
/** Carves @p pg's next never-used blocks (4 KiB worth, at least 4) into
 *  its empty `free` list, in address order, or shuffled with numbers from
 *  @p rnd when the page is secure. */
void shd_page_extend(shd_page_t *pg, uint64_t *rnd);
/** Any thread, a page it does not own: one CAS pushes block @p b onto
 *  @p pg's thread_free.  When the page is in USE_DELAYED state it instead
 *  marks DELAYED_FREEING and returns false: the caller puts @p b on the
 *  owning heap's delayed list, then calls shd_page_delayed_done().
 *  @return true when @p b is on thread_free. */
bool shd_page_push_remote(shd_page_t *pg, shd_block_t *b);
/** Ends a delayed free that shd_page_push_remote() began: NO_DELAYED. */
void shd_page_delayed_done(shd_page_t *pg);
/** In a fork child: a page whose delayed free a thread left behind by the
 *  fork had begun (DELAYED_FREEING, which nobody will end) goes back to
 *  USE_DELAYED, so its owner does not wait for it forever.  The block of
 *  that free stays where it got to: on the delayed list, or nowhere. */
void shd_page_fork_child(shd_page_t *pg);
#endif
