/**
 * @file fast_paths.h
 * @brief The policies' inline fast paths, compiled into the malloc shim.
 *
 * The shim's malloc and free reach a policy through its table: one
 * indirect call to the quiet copy (event.h, "Quiet copies").  The call, its
 * return and the callee's prologue are a good part of a free+malloc pair
 * on the shortest paths (HACKING.md, "The fast path").  A policy may
 * therefore offer its hit — the pop from a thread's (or CPU's) cache, the
 * push back onto it — as two inline functions in its header, and the shim
 * inlines them ahead of the call:
 *
 *     malloc(n): the copy for fast.path   free(p): the copy for fast.path
 *       t = hl_tls_fast                     t = hl_tls_fast
 *       (path a constant in each copy)      (path a constant in each copy)
 *         NAME_malloc_hit(st, t, n)           NAME_free_hit(st, t, p)
 *       ...NULL: 0 < n <= HL_MAX_REQUEST?   ...false: not NULL, not the
 *          fast.malloc_fn(st, t, n)             bootstrap area's?
 *                                               fast.free_fn(st, t, p)
 *
 * The contract of a policy's pair:
 *  - `void *NAME_malloc_hit(void *st, hl_thread_t *t, size_t n)` returns the
 *    block the quiet malloc's fast path would have returned, with the same
 *    changes to the policy's state and counters, or NULL having changed
 *    nothing (the shim then calls malloc_quiet, which serves every case);
 *    @p n is any size_t — the hit's own size test (written `n - 1 < MAX`)
 *    is the only one on a hit, so 0 and sizes past the hit's classes must
 *    be misses;
 *  - `bool NAME_free_hit(void *st, hl_thread_t *t, void *p)` frees p as the
 *    quiet free's fast path would, or returns false having changed nothing;
 *    a hit that finds @p p in the policy's own map first (a segment map,
 *    a radix tree) rejects NULL and every pointer not its own without
 *    reading them: such a path says so in hl_fast_free_hit_screens(), and
 *    the shim then runs the hit before its NULL and bootstrap-area test
 *    (bins' hit reads the chunk header first, so it does not screen);
 *  - the quiet copies' bodies are built on the same inline functions, so
 *    the hit is written once;
 *  - they call nothing that returns (hl_fatal, which does not, is fine):
 *    one call in any hit makes the compiler save callee-saved registers in
 *    the prologue of the shim's malloc or free, for every policy's path
 *    (bins' debug-mode check cost sharded 11 instructions a pair that way);
 *    such work stays in the quiet copy, which the shim calls on a miss;
 *  - they read only what the quiet copy reads, and run only while nobody
 *    listens: hl_heap_listening (core/heap.c) sets fast.path to 0 while a
 *    listener or kept events are set, and back when they are gone.
 *
 * A policy joins by adding its number below, its line in
 * HL_FAST_EACH_PATH, one case in each switch (inside
 * `#ifdef HL_HAVE_POLICY_NAME`) and one line in hl_fast_path_of(),
 * which may refuse the path for some states of the policy (sharded does
 * with checks on, so its hits need not test them).
 */
#ifndef HL_FAST_PATHS_H
#define HL_FAST_PATHS_H

#include "config.h"
#include <stdbool.h>
#include "policy.h"
#ifdef HL_HAVE_POLICY_BINS
#include "bins/bins_fast.h"
#endif
#ifdef HL_HAVE_POLICY_SHARDED
#include "sharded/sharded_fast.h"
#endif
#ifdef HL_HAVE_POLICY_POOLS
#include "pools/pools_fast.h"
#endif
#ifdef HL_HAVE_POLICY_SLAB
#include "slab/slab_fast.h"
#endif
#ifdef HL_HAVE_POLICY_PERCPU
#include "percpu/percpu_fast.h"
#endif

/** The inline fast paths the shim knows; 0 is "call through the table". */
enum hl_fast_path { HL_FAST_NONE, HL_FAST_SHARDED, HL_FAST_BINS, HL_FAST_POOLS, HL_FAST_SLAB, HL_FAST_PERCPU,
		    HL_FAST_NPATHS };

/* HL_FAST_EACH_PATH(X): X(path) for every compiled-in policy's path (the
 * shim builds its malloc and free once per path). */
#ifdef HL_HAVE_POLICY_SHARDED
#define HL_FAST_X_SHARDED_(X) X(HL_FAST_SHARDED)
#else
#define HL_FAST_X_SHARDED_(X)
#endif
#ifdef HL_HAVE_POLICY_BINS
#define HL_FAST_X_BINS_(X) X(HL_FAST_BINS)
#else
#define HL_FAST_X_BINS_(X)
#endif
#ifdef HL_HAVE_POLICY_POOLS
#define HL_FAST_X_POOLS_(X) X(HL_FAST_POOLS)
#else
#define HL_FAST_X_POOLS_(X)
#endif
#ifdef HL_HAVE_POLICY_SLAB
#define HL_FAST_X_SLAB_(X) X(HL_FAST_SLAB)
#else
#define HL_FAST_X_SLAB_(X)
#endif
#ifdef HL_HAVE_POLICY_PERCPU
#define HL_FAST_X_PERCPU_(X) X(HL_FAST_PERCPU)
#else
#define HL_FAST_X_PERCPU_(X)
#endif
#define HL_FAST_EACH_PATH(X) \
	HL_FAST_X_SHARDED_(X) HL_FAST_X_BINS_(X) HL_FAST_X_POOLS_(X) HL_FAST_X_SLAB_(X) HL_FAST_X_PERCPU_(X)

/** Which inline fast path policy @p pol, with state @p st, may take
 *  (HL_FAST_NONE for none: a policy may leave it to the table in some
 *  configurations, e.g. with checks on). */
static inline int hl_fast_path_of(const hl_policy_t *pol, const void *st)
{
#ifdef HL_HAVE_POLICY_SHARDED
	extern const hl_policy_t hl_policy_sharded;
	if (pol == &hl_policy_sharded)
		return shd_fast_allowed(st) ? HL_FAST_SHARDED : HL_FAST_NONE;
#endif
#ifdef HL_HAVE_POLICY_BINS
	extern const hl_policy_t hl_policy_bins;
	if (pol == &hl_policy_bins)
		return HL_FAST_BINS;
#endif
#ifdef HL_HAVE_POLICY_POOLS
	extern const hl_policy_t hl_policy_pools;
	if (pol == &hl_policy_pools)
		return HL_FAST_POOLS;
#endif
#ifdef HL_HAVE_POLICY_SLAB
	extern const hl_policy_t hl_policy_slab;
	if (pol == &hl_policy_slab)
		return HL_FAST_SLAB;
#endif
#ifdef HL_HAVE_POLICY_PERCPU
	extern const hl_policy_t hl_policy_percpu;
	if (pol == &hl_policy_percpu)
		return HL_FAST_PERCPU;
#endif
	(void)pol, (void)st;
	return HL_FAST_NONE;
}

/** The hit of inline fast path @p path for @p n bytes, or NULL. */
static inline __attribute__((always_inline)) void *hl_fast_malloc_hit(int path, void *st, hl_thread_t *t,
								      size_t n)
{
	switch (path) {
#ifdef HL_HAVE_POLICY_SHARDED
	case HL_FAST_SHARDED:
		return shd_malloc_hit(st, t, n);
#endif
#ifdef HL_HAVE_POLICY_BINS
	case HL_FAST_BINS:
		return bn_malloc_hit(st, t, n);
#endif
#ifdef HL_HAVE_POLICY_POOLS
	case HL_FAST_POOLS:
		return pl_malloc_hit(st, t, n);
#endif
#ifdef HL_HAVE_POLICY_SLAB
	case HL_FAST_SLAB:
		return sl_malloc_hit(st, t, n);
#endif
#ifdef HL_HAVE_POLICY_PERCPU
	case HL_FAST_PERCPU:
		return pc_malloc_hit(st, t, n);
#endif
	default:
		(void)st, (void)t, (void)n;
		return NULL;
	}
}

/** Whether free's hit of inline fast path @p path rejects NULL and
 *  foreign pointers by its own map before reading them (a constant for a
 *  constant @p path). */
static inline __attribute__((always_inline)) bool hl_fast_free_hit_screens(int path)
{
	return path == HL_FAST_SHARDED || path == HL_FAST_POOLS || path == HL_FAST_SLAB || path == HL_FAST_PERCPU;
}

/** The push of inline fast path @p path for block @p p; false: not done. */
static inline __attribute__((always_inline)) bool hl_fast_free_hit(int path, void *st, hl_thread_t *t, void *p)
{
	switch (path) {
#ifdef HL_HAVE_POLICY_SHARDED
	case HL_FAST_SHARDED:
		return shd_free_hit(st, t, p);
#endif
#ifdef HL_HAVE_POLICY_BINS
	case HL_FAST_BINS:
		return bn_free_hit(st, t, p);
#endif
#ifdef HL_HAVE_POLICY_POOLS
	case HL_FAST_POOLS:
		return pl_free_hit(st, t, p);
#endif
#ifdef HL_HAVE_POLICY_SLAB
	case HL_FAST_SLAB:
		return sl_free_hit(st, t, p);
#endif
#ifdef HL_HAVE_POLICY_PERCPU
	case HL_FAST_PERCPU:
		return pc_free_hit(st, t, p);
#endif
	default:
		(void)st, (void)t, (void)p;
		return false;
	}
}
#endif
