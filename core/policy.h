/**
 * @file policy.h
 * @brief The contract between the core and a policy.
 *
 *   program ── hl_malloc(h, n) ──► core (heap.c): argument checks, counters,
 *                                    ledger, junk, debug checker
 *                                      │ h->policy->malloc(h->state, t, n)
 *                                      ▼
 *                                  policy (policies/<name>/)
 *                                      │ hl_os_*  (os.h)
 *                                      ▼
 *                                  page source ──► kernel
 *
 * A policy is a constant table of functions (hl_policy_t) plus an option
 * table.  The core has already done what is the same for everyone before a
 * policy function is called:
 *   - malloc: n >= 1 (0 became 1) and n <= HL_MAX_REQUEST;
 *   - memalign: align is a power of two and > 16, n >= 1;
 *   - free / usable_size / realloc: p != NULL.  Whether p is the policy's is
 *     for the policy to decide (it aborts through hl_fatal when it can tell);
 *   - calloc's overflow check and zeroing; realloc(NULL, n) and
 *     realloc(p, 0).
 * Every pointer a policy returns must be 16-byte aligned.
 *
 * Per-thread state: the core keeps one hl_thread_t per (thread, heap); its
 * `policy_tls` word belongs to the policy (NULL on a thread's first call).
 * The core calls thread_exit(state, t) when that thread ends, and fork_*
 * around fork().
 */
#ifndef HL_POLICY_H
#define HL_POLICY_H

#include "heaplab.h"
#include "conf.h"
#include "stats.h"
#include "dot.h"
#include "report.h"

typedef struct hl_thread hl_thread_t;

/** Largest request any policy is asked to serve (keeps size math safe). */
#define HL_MAX_REQUEST (((size_t)1) << 46)
/** Every block is aligned to this. */
#define HL_ALIGN 16

typedef struct hl_policy {
	const char *name;           /**< "bins" */
	const char *summary;        /**< one line for `heaplab policies` */
	const hl_option_t *options; /**< terminated by an entry with key NULL */

	/** Builds the policy's state inside heap @p h from parsed options.
	 *  NULL on failure, after hl_set_error(). */
	void *(*init)(hl_heap_t *h, const hl_conf_t *conf);
	/** Releases what the page source does not own (threads, ...).  The
	 *  core unmaps every region of the heap afterwards. May be NULL. */
	void (*destroy)(void *st);

	void *(*malloc)(void *st, hl_thread_t *t, size_t n);
	void (*free)(void *st, hl_thread_t *t, void *p);
	/** May be NULL: the core then moves the block unless it still fits. */
	void *(*realloc)(void *st, hl_thread_t *t, void *p, size_t n);
	void *(*memalign)(void *st, hl_thread_t *t, size_t align, size_t n);
	size_t (*usable_size)(void *st, const void *p);
	bool (*owns)(void *st, const void *p);

	/** May be NULL (nothing to give back). */
	size_t (*trim)(void *st, size_t pad);
	/** May be NULL (not a region allocator). */
	int (*reset)(void *st);

	/** Emits policy_stats fields (the core wraps them in an object). */
	void (*stats)(void *st, hl_statw_t *w);
	/** Draws the heap inside the graph the core opened. */
	void (*snapshot)(void *st, hl_dot_t *d);
	/** Reports each broken invariant; returns how many. */
	int (*check)(void *st, hl_report_t *r);
	/** Visits every block (see hl_walk).  The visitor never calls back
	 *  into the heap, so a walker may hold its locks while it runs. */
	int (*walk)(void *st, hl_walk_fn fn, void *arg);

	/** Thread @p t is exiting: drain its caches.  May be NULL. */
	void (*thread_exit)(void *st, hl_thread_t *t);
	/** fork(): take every lock / release them / reinitialise.  May be NULL. */
	void (*fork_prepare)(void *st);
	void (*fork_parent)(void *st);
	void (*fork_child)(void *st);
} hl_policy_t;

/** Per (thread, heap) record kept by the core. */
struct hl_thread {
	void *policy_tls;      /**< the policy's per-thread state, NULL at first */
	unsigned index;        /**< small number of this thread in this heap (0..) */
	uint64_t ops[8];       /**< operation counters, see heap.c */
	int64_t live_usable;   /**< bytes this thread's calls added minus removed */
	struct hl_thread *next;/**< heap's list of thread records */
	bool exited;           /**< thread has gone; record is kept for its counts */
};

/** The policy table of a compiled-in policy, or NULL. */
const hl_policy_t *hl_policy_find(const char *name);

/** The heap's page source (for policies' hl_os_* calls). */
struct hl_os *hl_heap_os(hl_heap_t *h);
/** True when the heap runs its checker after every operation. */
bool hl_heap_debug(const hl_heap_t *h);
/** A stable small number for this heap instance (for keys and colours). */
unsigned hl_heap_id(const hl_heap_t *h);
/** The thread record of the calling thread for heap @p h. */
hl_thread_t *hl_thread_get(hl_heap_t *h);

/** Reports heap corruption as "heaplab: <policy>: <what> (<ptr>)" and aborts.
 *  Uses write(2) only; safe anywhere. */
__attribute__((noreturn)) void hl_fatal(const char *policy, const char *what, const void *p);
/** Sets this thread's hl_last_error() text (printf-style). */
void hl_set_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
