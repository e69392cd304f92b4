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
 *       ...NULL: a record of its own and    ...false: not NULL, not the
 *          0 < n <= HL_MAX_REQUEST?            bootstrap area's, a record?
 *          fast.malloc_fn(st, t, n)             fast.free_fn(st, t, p)
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
 *  - @p t may be the shim's hl_no_thread, the record of a thread that has
 *    none yet (policy_tls the policy's tls_empty, `exited` true, never
 *    written but once, when the shim builds its heap): a hit misses on it
 *    by itself and writes nothing to it.  A hit that finds its cache
 *    through policy_tls misses on the NULL, or on the policy's empty
 *    record (core/policy.h), already; one that compares @p t with an
 *    owner its structures name (sharded's free: a page's fast_owner)
 *    misses because none names hl_no_thread; one that does neither
 *    (pools' biased lock, percpu's rseq stacks) tests
 *    t->exited first.  The shim tests nothing before a hit;
 *  - they read only what the quiet copy reads, and run only while nobody
 *    listens: hl_heap_listening (core/heap.c) sets fast.path to 0 while a
 *    listener or kept events are set, and back when they are gone.
 *
 * A policy joins with its number in enum hl_fast_path and one row below
 * (or one per variant of its hits, each with its own number: percpu has
 * one per front), inside `#ifdef HL_HAVE_POLICY_NAME`:
 *     X(path, policy table, prefix of its hits, may st take it?, screens?)
 * where "may st take it" may refuse the path for some states of the
 * policy (sharded does with checks on, so its hits need not test them);
 * the first row whose table and test match is the heap's path.
 * Everything else — the shim's copies, hl_fast_path_of(), the switches —
 * is built from the rows.
 */
#ifndef HL_FAST_PATHS_H
#define HL_FAST_PATHS_H

#include "config.h"
#include <stdbool.h>
#include "policy.h"

/** The inline fast paths the shim knows; 0 is "call through the table". */
enum hl_fast_path { HL_FAST_NONE, HL_FAST_SHARDED, HL_FAST_BINS, HL_FAST_POOLS, HL_FAST_SLAB,
		    HL_FAST_PERCPU_RSEQ, HL_FAST_PERCPU_THREAD, HL_FAST_NPATHS };

/* One row per compiled-in policy with hits:
 * X(path, table, prefix, allowed(st), screens) */
#ifdef HL_HAVE_POLICY_SHARDED
#include "sharded/sharded_fast.h"
#define HL_FAST_ROW_SHARDED_(X) X(HL_FAST_SHARDED, hl_policy_sharded, shd, shd_fast_allowed(st), true)
#else
#define HL_FAST_ROW_SHARDED_(X)
#endif
#ifdef HL_HAVE_POLICY_BINS
#include "bins/bins_fast.h"
#define HL_FAST_ROW_BINS_(X) X(HL_FAST_BINS, hl_policy_bins, bn, true, false)
#else
#define HL_FAST_ROW_BINS_(X)
#endif
#ifdef HL_HAVE_POLICY_POOLS
#include "pools/pools_fast.h"
#define HL_FAST_ROW_POOLS_(X) X(HL_FAST_POOLS, hl_policy_pools, pl, true, true)
#else
#define HL_FAST_ROW_POOLS_(X)
#endif
#ifdef HL_HAVE_POLICY_SLAB
#include "slab/slab_fast.h"
#define HL_FAST_ROW_SLAB_(X) X(HL_FAST_SLAB, hl_policy_slab, sl, true, true)
#else
#define HL_FAST_ROW_SLAB_(X)
#endif
#ifdef HL_HAVE_POLICY_PERCPU
#include "percpu/percpu_fast.h"
/* one row per front: each copy holds one front's hits and tests no mode */
#define HL_FAST_ROW_PERCPU_(X)                                                                     \
	X(HL_FAST_PERCPU_RSEQ, hl_policy_percpu, pc_rseq, pc_rseq_fast_allowed(st), true)           \
	X(HL_FAST_PERCPU_THREAD, hl_policy_percpu, pc_thread, pc_thread_fast_allowed(st), true)
#else
#define HL_FAST_ROW_PERCPU_(X)
#endif
/** X(path, table, prefix, allowed, screens) for every compiled-in row
 *  (the shim builds its malloc and free once per path). */
#define HL_FAST_EACH_PATH(X) \
	HL_FAST_ROW_SHARDED_(X) HL_FAST_ROW_BINS_(X) HL_FAST_ROW_POOLS_(X) HL_FAST_ROW_SLAB_(X) HL_FAST_ROW_PERCPU_(X)

#define HL_FAST_TABLE_DECL_(path, table, pre, allowed, screens) extern const hl_policy_t table;
HL_FAST_EACH_PATH(HL_FAST_TABLE_DECL_)

/** Which inline fast path policy @p pol, with state @p st, may take
 *  (HL_FAST_NONE for none: a policy may leave it to the table in some
 *  configurations, e.g. with checks on). */
static inline int hl_fast_path_of(const hl_policy_t *pol, const void *st)
{
#define HL_FAST_PATH_OF_(path, table, pre, allowed, screens) \
	if (pol == &table && (allowed))                       \
		return path;
	HL_FAST_EACH_PATH(HL_FAST_PATH_OF_)
	(void)pol, (void)st;
	return HL_FAST_NONE;
}

/** The hit of inline fast path @p path for @p n bytes, or NULL. */
static inline __attribute__((always_inline)) void *hl_fast_malloc_hit(int path, void *st, hl_thread_t *t,
								      size_t n)
{
	switch (path) {
#define HL_FAST_MALLOC_CASE_(path, table, pre, allowed, screens) \
	case path:                                              \
		return pre##_malloc_hit(st, t, n);
	HL_FAST_EACH_PATH(HL_FAST_MALLOC_CASE_)
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
	switch (path) {
#define HL_FAST_SCREENS_CASE_(path, table, pre, allowed, screens) \
	case path:                                               \
		return screens;
	HL_FAST_EACH_PATH(HL_FAST_SCREENS_CASE_)
	default:
		return false;
	}
}

/** The push of inline fast path @p path for block @p p; false: not done. */
static inline __attribute__((always_inline)) bool hl_fast_free_hit(int path, void *st, hl_thread_t *t, void *p)
{
	switch (path) {
#define HL_FAST_FREE_CASE_(path, table, pre, allowed, screens) \
	case path:                                            \
		return pre##_free_hit(st, t, p);
	HL_FAST_EACH_PATH(HL_FAST_FREE_CASE_)
	default:
		(void)st, (void)t, (void)p;
		return false;
	}
}
#endif
