/**
 * @file sharded_fast.h
 * @brief Policy `sharded`, the hits of malloc and free: a pop from the
 *        direct page's `free` list, a push onto a page's `local_free`.
 *        The quiet and listening copies in sharded.c are built on them,
 *        and the malloc shim inlines them (shim/fast_paths.h).  They
 *        call the page layer only.
 */
#ifndef HL_SHARDED_FAST_H
#define HL_SHARDED_FAST_H

#include "sharded_page.h"

/** The direct page for @p n bytes of heap @p hp when its `free` list has
 *  a block (mimalloc's direct table), else NULL; NULL for 0 bytes too
 *  (the shim's hit takes any size): direct[0] is always the empty page.
 *  @p hp may be shd_no_heap, whose pages are all empty, never NULL. */
static inline shd_page_t *shd_direct_page(const shd_heap_t *hp, size_t n)
{
	if (HL_LIKELY(n <= SHD_SMALL_SIZE_MAX)) {
		shd_page_t *pg = hp->direct[(n + 7) >> 3];
		if (HL_LIKELY(pg->free != NULL))
			return pg;
	}
	return NULL;
}

/** Whether the shim may take the hits below: checks off (neither secure
 *  nor debug), so no page has keys and no free is validated beyond the
 *  segment map. */
static inline bool shd_fast_allowed(const shd_state_t *st)
{
	return !st->checks;
}

/** malloc's hit (shd_fast_allowed): a block of the direct page, or NULL
 *  (nothing changed). */
static inline void *shd_malloc_hit(void *vst, hl_thread_t *t, size_t n)
{
	(void)vst;
	/* the heap's own records: policy_tls is shd_no_heap, never NULL */
	shd_page_t *pg = shd_direct_page(t->policy_tls, n);
	return pg ? shd_page_pop_plain(pg) : NULL;
}

/** The page of @p p when free's hit may take it, checks aside: a segment
 *  of this instance, a page the thread's own heap owns, no flag (not full,
 *  no interior pointers), and not its last used block (emptying a page is
 *  the heap layer's business); else NULL.  Owner and flags are one test:
 *  the page's fast_owner is its heap's thread record only while it has no
 *  flag, and NULL on a freed page (zeroed), so it equals @p t — never
 *  hl_no_thread, never NULL — only on a page in use that this thread's
 *  heap owns and free's hit may take. */
static inline shd_page_t *shd_own_page(const shd_state_t *st, hl_thread_t *t, const void *p)
{
	shd_segment_t *s = shd_segment_of(p);
	if (HL_LIKELY(shd_segmap_has_freed(st, s))) {
		shd_page_t *pg = shd_page_of(s, p);
		if (HL_LIKELY(atomic_load_explicit(&pg->fast_owner, memory_order_relaxed) == t &&
			      pg->used > 1))
			return pg;
	}
	return NULL;
}

/** The page of @p p when free's fast path may take it: shd_own_page()
 *  with checks off. */
static inline shd_page_t *shd_free_page(const shd_state_t *st, hl_thread_t *t, const void *p)
{
	return st->checks ? NULL : shd_own_page(st, t, p);
}

/** Pushes @p p onto @p pg's local_free, as free's hit does (checks off:
 *  the link is written plain; not the page's last used block). */
static inline void shd_free_push(shd_page_t *pg, void *p)
{
	shd_block_t *b = p;
	/* Code only, no ordering: without this empty barrier GCC keeps the
	 * `used` that shd_own_page() compared in a register and spends a
	 * load, a compare, a subtraction and a store on it; with it, the test
	 * compares in memory and the decrement is one subl (2 instructions a
	 * free fewer). */
	__asm__("" ::: "memory");
	b->next = (uintptr_t)pg->local_free;
	pg->local_free = b;
	pg->used--;
}

/** free's hit (shd_fast_allowed): @p p onto its page's local_free, or
 *  false when it is not a hit (nothing changed). */
static inline bool shd_free_hit(void *vst, hl_thread_t *t, void *p)
{
	shd_page_t *pg = shd_own_page(vst, t, p);
	if (!pg)
		return false;
	shd_free_push(pg, p);
	return true;
}

/* The shim's row for this policy (shim/fast_paths.h): path, table, prefix
 * of the hits, whether a state may take the path (not with checks on, so
 * the hits need not test them), whether free's hit screens foreign
 * pointers by the segment map. */
#define HL_FAST_ROWS_SHARDED(X) X(HL_FAST_SHARDED, hl_policy_sharded, shd, shd_fast_allowed(st), true)
#endif
