/**
 * @file fast_paths.h
 * @brief The policies' inline fast paths, compiled into the malloc shim.
 *
 * The shim's malloc and free reach a policy through its table: one
 * indirect call to the quiet copy (event.h, "Quiet copies").  The call, its
 * return and the callee's prologue are a good part of a free+malloc pair
 * on the shortest paths (hacking/fast-path.md).  A policy may
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
 * A policy joins by writing its hits in policies/NAME/NAME_fast.h and, at
 * the end of that header, its row (or one per variant of its hits, each
 * with its own path name: percpu has one per front):
 *     #define HL_FAST_ROWS_NAME(X) \
 *         X(HL_FAST_NAME, policy table, prefix of its hits, may st take it?, screens?)
 * ./bootstrap (policies/gen-local-mk.sh) finds the header and adds the
 * rows of every compiled-in policy to HL_FAST_EACH_PATH, in the order of
 * policies.list.  Nothing here names a policy.
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

/* HL_FAST_EACH_PATH(X): every compiled-in policy's rows, written by
 * policies/gen-local-mk.sh from policies.list and the folders that hold a
 * NAME_fast.h (which defines HL_FAST_ROWS_NAME). */
#include "fast_rows.h"

/** The inline fast paths the shim knows; 0 is "call through the table". */
#define HL_FAST_ENUM_(path, table, pre, allowed, screens) path,
enum hl_fast_path { HL_FAST_NONE, HL_FAST_EACH_PATH(HL_FAST_ENUM_) HL_FAST_NPATHS };

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
