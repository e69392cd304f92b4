/**
 * @file bound.h
 * @brief The best layout a trace allows: a lower bound on the memory any
 *        allocator needs for it, and the best layout found knowing the
 *        whole trace.  `heaplab bound` prints both beside every policy.
 *
 * Glossary
 *   live     bytes the program holds: the sizes it asked for, summed over
 *            the blocks it has not freed
 *   bound    the peak of live bytes.  No allocator can do with less: at
 *            that moment the live blocks must all exist and cannot overlap.
 *   layout   an offset for every block such that two blocks alive at the
 *            same moment never overlap, and every block starts at a
 *            multiple of its alignment (16 bytes; a memalign's own)
 *   span     the highest offset a layout reaches: the memory it needs
 *   found    the smallest span among the layouts this module builds; a
 *            layout that exists, so the optimum lies in [bound, found]
 *
 *   trace ──▶ peak live bytes ───────────────▶ bound   (lower)
 *        └──▶ place every block, three ways ──▶ found   (upper)
 *             first fit and best fit in address order, with the sizes
 *             rounded to 16 bytes, no headers, immediate coalescing, and
 *             realloc in place when the neighbouring space is free; and
 *             offline, every block placed knowing its whole lifetime,
 *             largest first, at the lowest offset free for that lifetime
 *
 * Invariants (tests/programs/bound.sh checks them on traces built with a known
 * optimum, and against every policy's peak on the shipped traces)
 *   bound <= optimum <= found <= each layout's span
 *   bound <= every policy's peak committed bytes
 *
 * What the found layout is not: an optimum.  Placing blocks of known
 * lifetimes in the least memory is NP-hard (dynamic storage allocation;
 * Garey and Johnson list it, SR2).  The module promises only that its
 * layouts are real (checked block by block when asked) and says which
 * of the three found the smallest.
 */
#ifndef HL_BOUND_H
#define HL_BOUND_H

#include <stdbool.h>
#include <stddef.h>
#include "heaplab.h"

/** The layouts this module builds. */
typedef enum vis_layout_kind {
	VIS_LAYOUT_FIRST_FIT, /**< online, address-ordered first fit */
	VIS_LAYOUT_BEST_FIT,  /**< online, address-ordered best fit */
	VIS_LAYOUT_OFFLINE,   /**< every lifetime known, largest block first */
	VIS_LAYOUTS
} vis_layout_kind_t;

/** What a trace allows. */
typedef struct vis_bound {
	size_t bound;              /**< peak live requested bytes */
	size_t bound_op;           /**< index of the op after which live bytes peak */
	size_t blocks;             /**< blocks the trace creates (a moving realloc counts again) */
	size_t span[VIS_LAYOUTS];  /**< bytes each layout needs; 0 when not built */
	size_t found;              /**< the smallest span */
	vis_layout_kind_t found_by;
} vis_bound_t;

/** Name of a layout, for tables ("first fit", "best fit", "offline"). */
const char *vis_layout_name(vis_layout_kind_t k);

/** Computes @p b for @p t.  The offline layout is built for traces of at
 *  most @p offline_max blocks (its cost grows with blocks x overlapping
 *  blocks; 0 = never).  With @p verify, every layout is checked block by
 *  block for overlaps and alignment.  0, or 2 after hl_set_error(). */
int vis_bound(const hl_trace_t *t, size_t offline_max, bool verify, vis_bound_t *b);

/** A policy's peaks on a trace, beside the bound. */
typedef struct vis_bound_policy {
	size_t peak_committed; /**< the page source's peak committed bytes */
	size_t peak_resident;  /**< the largest resident bytes sampled (every
	                            op up to 2,000 ops, else 1,000 times), the
	                            program's writes counted (a touching pass) */
	size_t peak_resident_meta; /**< the largest sampled resident bytes plus
	                            the growth of the policy's resident metadata
	                            since the heap was made: what a real
	                            allocator's RSS growth counts */
} vis_bound_policy_t;

/** Replays @p t once on a fresh heap of @p policy with @p conf (NULL for
 *  the defaults), unchecked and touching every page it hands out, and
 *  measures its peaks.  0, or 2 after hl_set_error(). */
int vis_bound_policy(const hl_trace_t *t, const char *policy, const char *conf, vis_bound_policy_t *p);

#endif
