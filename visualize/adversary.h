/**
 * @file adversary.h
 * @brief Traces built to defeat a policy: `heaplab adversary` searches a
 *        few families of access patterns for the trace whose peak
 *        committed memory is the largest multiple of its bound (bound.h).
 *
 * The families, each a known way to strand memory (the trace's comments
 * say which one won and why it hurts):
 *
 *   ladder   sizes grow by a factor k from one phase to the next and only
 *            every k-th block of a phase survives it: a hole between two
 *            survivors is too small for any later block, so a fit allocator
 *            cannot reuse it (Robson's construction for first fit and best
 *            fit), and a class allocator cannot reuse it either
 *   pin      one phase per size class; in each, one block in every
 *            `stride` bytes survives: every slab, page, span or pool of
 *            the class keeps a live block and none can be given back or
 *            used for another class
 *   strand   thread after thread allocates a wave of blocks and frees all
 *            but the last: what a thread frees stays in its own arena,
 *            heap or cache, where the next thread cannot use it
 *   waves    the same wave allocated and freed again and again: nothing
 *            is ever live beyond one wave, so only an allocator that does
 *            not reuse (a bump allocator) grows
 *
 *   budget ──▶ draw a family and its parameters (seeded) ──▶ trace text
 *          ──▶ heaplab bound's peak of live bytes, and the policy's peak
 *              committed bytes in a replay ──▶ keep the largest ratio
 */
#ifndef HL_ADVERSARY_H
#define HL_ADVERSARY_H

#include <stddef.h>
#include "heaplab.h"
#include "vis.h"

/** What to search. */
typedef struct vis_adversary_opts {
	const char *policy;   /**< the policy to defeat */
	const char *conf;     /**< its options (NULL: defaults) */
	int budget;           /**< candidate traces to try (>= 1) */
	unsigned seed;        /**< the search's random seed */
	size_t live;          /**< bytes a wave holds (the bound is about this) */
} vis_adversary_opts_t;

/** The worst trace found. */
typedef struct vis_adversary {
	char *text;            /**< the trace, comments first (free() it) */
	char family[16];       /**< which family won */
	double ratio;          /**< peak committed / bound */
	size_t bound;          /**< peak live bytes */
	size_t peak_committed; /**< the policy's */
	size_t peak_resident;  /**< the policy's, pages written as handed out */
	int tried;             /**< candidates replayed */
} vis_adversary_t;

/** Searches; 0 with @p out filled, or 2 after hl_set_error().  @p progress
 *  (may be NULL) hears of each candidate. */
int vis_adversary(const vis_adversary_opts_t *o, vis_progress_fn progress, vis_adversary_t *out);

#endif
