/**
 * @file sharded_segment.h
 * @brief Policy `sharded`, segment layer: segments cut into pages of
 *        slices, committing and purging slices, the abandoned list, and
 *        the segment cache below them (see sharded.h, "Layers").
 *
 * A segment is changed by the thread of its owning heap only; the heap
 * record keeps the segment layer's per-thread part (segs, purge_next, and
 * the page and purge counters).  The lists of every segment, of the
 * abandoned ones and the segment map are behind st->lock or atomics.
 */
#ifndef HL_SHARDED_SEGMENT_H
#define HL_SHARDED_SEGMENT_H

#include "sharded_page.h"

/* ---- sharded_segment.c ----------------------------------------------- */
/** A new page of @p kind (enum shd_page_kind) for blocks of @p block_size
 *  bytes, owned by heap @p hp: a huge page gets a segment of its own, other
 *  kinds take a span of free slices from hp's span queues, as mimalloc
 *  2.0.9 does (sharded_segment.c, "free spans").  Runs
 *  the purges that are due first.  The page's lists are empty (no block
 *  carved yet).
 *  @return the page descriptor, or NULL when none of hp's segments has a
 *  run that long (or, for a huge page, the page source is exhausted). */
shd_page_t *shd_segment_page_alloc(shd_heap_t *hp, size_t block_size, unsigned kind);
/** As shd_segment_page_alloc(), for a kind other than huge, in a new
 *  segment (a parked one, or reserved).  NULL when memory ran out. */
shd_page_t *shd_segment_page_new(shd_heap_t *hp, size_t block_size, unsigned kind);
/** Slices a page of @p kind for blocks of @p block_size spans (huge
 *  aside). */
size_t shd_page_slices(const shd_state_t *st, size_t block_size, unsigned kind);
/** True when segment @p s (not huge) has a run of @p n free slices. */
bool shd_segment_has_run(const shd_segment_t *s, size_t n);
/** Puts the free spans of segment @p s, just reclaimed by heap @p hp, on
 *  hp's span queues (mimalloc's reclaim does it span by span, in address
 *  order); until then the pages it frees are kept off them. */
void shd_segment_spans_enqueue(shd_heap_t *hp, shd_segment_t *s);
/** Gives the slices of empty page @p pg back to its segment (owned by heap
 *  @p hp) and schedules their purge; the segment is released when it was
 *  huge or this was its last page.  Secure mode renews the guard page. */
void shd_segment_page_free(shd_heap_t *hp, shd_page_t *pg);
/** Purges the slices of heap @p hp's segments whose purge_expire has passed
 *  (every pending one when @p force) and recomputes hp->purge_next. */
void shd_segment_purge_due(shd_heap_t *hp, bool force);
/** Every segment heap @p hp still owns goes on st->abandoned without an
 *  owner (the heap layer has already taken their pages off its queues);
 *  its due purges run first. */
void shd_segments_abandon(shd_heap_t *hp);
/** In a fork child (st->lock re-initialised, st->segs as the fork found
 *  it): no page's fast_owner names a thread record the fork left behind,
 *  which the core marked exited and may give to a new thread, whose frees
 *  into those pages must stay remote ones. */
void shd_segments_fork_child(shd_state_t *st);
/** Takes one segment off the abandoned list for heap @p hp: named hp's
 *  while the list is locked, then linked into hp's segments.  When the
 *  list is empty and @p revisit, the visited list becomes the abandoned
 *  one first.  Its pages still name no heap: the caller adopts them, or
 *  sets the segment aside again.
 *  @return the segment, or NULL when none was waiting. */
shd_segment_t *shd_segment_reclaim(shd_heap_t *hp, bool revisit);
/** Gives segment @p s, taken by shd_segment_reclaim() and none of its pages
 *  adopted, back without an owner, on the visited list; its pending purges
 *  run first when due, or all of them when @p force_purge. */
void shd_segment_set_aside(shd_heap_t *hp, shd_segment_t *s, bool force_purge);

/* ---- sharded_cache.c: the segment cache ---------------------------------- */
/** Parks segment @p s, whose last page was freed and which has left every
 *  list, in the first free cache slot, first purging the expired slots a
 *  probe of SHD_CACHE_PROBE finds.  Takes st->lock.
 *  @return false when it was not parked (cache off, secure mode, a huge
 *  segment, or no free slot): the caller releases it. */
bool shd_cache_park(shd_state_t *st, shd_segment_t *s);
/** Takes the parked segment of the lowest slot, its header cleared but its
 *  committed slices still committed; NULL when none.  Takes st->lock. */
shd_segment_t *shd_cache_take(shd_state_t *st);
/** Gives every parked segment back to the page source (trim).
 *  @return the committed bytes released.  Takes st->lock. */
size_t shd_cache_release_all(shd_state_t *st);
#endif
