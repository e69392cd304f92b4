/**
 * @file sharded_heap.h
 * @brief Policy `sharded`, heap layer: a thread's heap record, its page
 *        queues and direct table, full and retired pages, remote and
 *        delayed frees, abandoning a heap and reclaiming abandoned
 *        segments (see sharded.h, "Layers").  It calls the segment and
 *        page layers below it.
 *
 * Everything here runs on the heap's own thread, except shd_free_remote
 * (any thread) and the life-cycle functions, which take st->lock for the
 * list of heaps.
 */
#ifndef HL_SHARDED_HEAP_H
#define HL_SHARDED_HEAP_H

#include "sharded_segment.h"

/* ---- life cycle -------------------------------------------------------- */
/** A heap for thread record @p t of policy instance @p st, on st->heaps
 *  and in t->policy_tls; NULL when the metadata ran out. */
shd_heap_t *shd_heap_new(shd_state_t *st, hl_thread_t *t);
/** Heap @p hp's thread has ended: its pages stop taking delayed frees, the
 *  delayed list is drained, empty pages are freed, its remaining segments
 *  are abandoned; then every abandoned segment has its remote frees
 *  collected and its empty pages freed, and those left empty are
 *  released; its counters fold into st->gone and the record goes. */
void shd_heap_delete(shd_heap_t *hp);
/** In a fork child, where only the forking thread lives on: every heap
 *  of another thread moves from st->heaps to st->orphans, flagged, its
 *  queues and segments left exactly as the fork found them (they may be
 *  halfway through a change); nothing touches them again.  The survivor's
 *  full pages that a vanished thread was freeing into get their delay
 *  bits back (shd_page_fork_child).  Caller: the fork child handler,
 *  after st->lock was renewed. */
void shd_heaps_fork_child(shd_state_t *st);
/** Adds every counter of @p from to @p to (a heap's counters into
 *  st->gone when its thread ends; into a total for the statistics). */
void shd_counts_add(shd_counts_t *to, const shd_counts_t *from);

/* ---- queues -------------------------------------------------------------- */
/** The queue of heap @p hp that @p pg sits in: the full queue when
 *  SHD_PF_FULL is set, else its bin's. */
shd_queue_t *shd_queue_of(shd_heap_t *hp, const shd_page_t *pg);
/** Links @p pg into queue @p q of heap @p hp, at the tail when @p at_end
 *  (and the queue is not empty), else at the head; a new first page is
 *  written into the bin's direct table entries. */
void shd_queue_push(shd_heap_t *hp, shd_queue_t *q, shd_page_t *pg, bool at_end);

/* ---- malloc's slow path ------------------------------------------------- */
/** A page of heap @p hp with a free block for a request of @p n bytes:
 *  from the bin's queue (moving exhausted pages to full on the way), else
 *  a fresh page from hp's own free slices; only when those have no room
 *  does it look at up to SHD_RECLAIM_TRIES abandoned segments (reclaiming
 *  the first with room, or with a page of the bin that has a free block),
 *  and only then make a new segment.
 *  @return the page, or NULL when no memory is left. */
shd_page_t *shd_find_page(shd_heap_t *hp, size_t n);
/** One block of @p n bytes (above SHD_MEDIUM_OBJ_MAX) on a large page or a
 *  huge segment of its own, which waits in @p hp's full queue.
 *  @return the block, or NULL when no memory is left. */
void *shd_heap_alloc_large(shd_heap_t *hp, size_t n);
/** Empties heap @p hp's delayed list in one exchange and frees every block
 *  on it as a local free, so full pages return to their bin queues. */
void shd_delayed_drain(shd_heap_t *hp);
/** Counts down the retired pages of heap @p hp (before each search for a
 *  fresh page, as mimalloc 2.0.9's mi_page_queue_find_free_ex): a page in
 *  use again stops being retired, one still empty at zero (or at once,
 *  @p force) is freed. */
void shd_collect_retired(shd_heap_t *hp, bool force);

/* ---- free's slow paths -------------------------------------------------- */
/** The last block of @p pg came back: the only page of a small or medium
 *  bin is retired (kept for SHD_RETIRE_CYCLES fresh-page searches, a quarter of that
 *  for medium blocks) and its bin recorded in @p hp's retired range; any
 *  other page is freed at once. */
void shd_page_emptied(shd_heap_t *hp, shd_page_t *pg);
/** Slow end of an owner's free into @p pg of heap @p hp: an empty page
 *  goes to shd_page_emptied(), a full one leaves the full queue. */
void shd_free_local_slow(shd_heap_t *hp, shd_page_t *pg);
/** Any thread: frees block @p b of a page it does not own.  One CAS pushes
 *  it on @p pg's thread_free, or, when the page is in USE_DELAYED state,
 *  marks DELAYED_FREEING, pushes @p b on the owning heap's delayed list
 *  (if the page has an owner) and sets NO_DELAYED. */
void shd_free_remote(shd_page_t *pg, shd_block_t *b);

/* ---- collecting (trim) ---------------------------------------------------- */
/** mimalloc's mi_heap_collect(force): heap @p hp reclaims every abandoned
 *  segment, drains its delayed list, collects every page's remote frees
 *  and frees the pages found empty, retired ones included, and purges
 *  every pending slice. */
void shd_heap_collect(shd_heap_t *hp);
#endif
