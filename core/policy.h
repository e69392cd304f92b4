/**
 * @file policy.h
 * @brief The contract between the core and a policy.
 *
 *   program ── hl_malloc(h, n) ──► core (heap.c): argument checks, counters,
 *                                    ledger, junk, debug checker
 *                                      │ h->policy->malloc(h->state, t, n)
 *                                      ▼
 *                                  policy (policies/NAME/)
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
 *     in debug mode the core's guard (guard.h) has already made sure p is a
 *     live block of this heap, with intact slack, and runs the checker
 *     around the call, so `check` must survive any damage the program can
 *     do: follow no pointer it has not range-checked first;
 *   - calloc's overflow check and zeroing; realloc(NULL, n) and
 *     realloc(p, 0) (as the table's realloc_zero_allocates says).
 * Every block a policy returns for a request of n bytes is aligned to
 * hl_block_align(n) (heaplab.h): 16 bytes, or 8 when n <= 8.  C asks malloc
 * only for an alignment that suits every type that fits in n bytes, and no
 * type of 8 bytes or less needs more than 8; jemalloc, mimalloc and
 * gperftools pack their 8-byte class 8 bytes apart, so half its blocks are
 * not 16-byte aligned.  A policy may align more (bins, pools: always 16).
 *
 * Per-thread state: the core keeps one hl_thread_t per (thread, heap); its
 * `policy_tls` word belongs to the policy.  On a thread's first call it
 * holds the policy's `tls_empty`: NULL, or a record of the policy's that
 * nobody writes, on which its inline hits miss by themselves (mimalloc's
 * empty heap: every list empty), so that they need not test for NULL.  A
 * policy hosted by another finds NULL there instead (the word starts as
 * the host's tls_empty), so it takes both for "none yet".
 * The core calls thread_exit(state, t) when that thread ends, and fork_*
 * around fork().
 *
 * A policy that hosts another one (pools sends big requests to a fallback
 * policy built in the same heap) calls the hosted policy with the record
 * it was given, unchanged, keeps no `policy_tls` of its own (the word is
 * the hosted policy's) and forwards thread_exit and fork_*.  The record is
 * then the one hl_thread_get() returns, so the hosted policy finds its
 * per-thread state again outside a call (its checker, its stats); a
 * private record made up by the host would be invisible there.
 */
#ifndef HL_POLICY_H
#define HL_POLICY_H

#include <pthread.h>
#include "heaplab.h"
#include "conf.h"
#include "stats.h"
#include "dot.h"
#include "report.h"
#include "error.h"
#include "event.h"
#include "clock.h"

/** The core's record of one thread in one heap (struct hl_thread). */
typedef struct hl_thread hl_thread_t;

/** Largest request any policy is asked to serve (keeps size math safe). */
#define HL_MAX_REQUEST (((size_t)1) << 46)
/** Every block of more than HL_MIN_ALIGN bytes is aligned to this. */
#define HL_ALIGN 16
/** Blocks of at most this many bytes need only be aligned to it. */
#define HL_MIN_ALIGN 8

/** Where Debian installs the real allocators' libraries: a what-if
 *  candidate's real setting names them (LD_PRELOAD=...). */
#define HL_SYSTEM_LIBDIR "/usr/lib/x86_64-linux-gnu/"

/** One what-if candidate of a policy (heaplab diagnose): options of the
 *  model, and the setting that makes the real allocator do the same. */
typedef struct hl_whatif {
	const char *conf; /**< the model's options ("" for its defaults) */
	const char *real; /**< what to type for the real allocator, or NULL
			       when the model has none (a textbook policy) */
} hl_whatif_t;

/** How a policy's snapshot draws its blocks: what the tests of the
 *  pictures (tests/unit/test_visualize.c) may expect to find in it. */
typedef enum hl_cells {
	/** Blocks grouped into slabs, pools or pages, drawn with their
	 *  counts; a block an operation made live, free or cached still has
	 *  a cell of its own, by its id (the stepper outlines it). */
	HL_CELLS_GROUPED = 0,
	/** As grouped, and every block has a cell (a run of equal blocks
	 *  drawn once as "label x N" counts N): its live cells are the
	 *  walker's live blocks. */
	HL_CELLS_EVERY_BLOCK,
	/** Equal neighbours share a cell (mimalloc's runs of equal blocks,
	 *  tcmalloc's small spans): a changed block need not have a cell of
	 *  its own. */
	HL_CELLS_RUNS,
} hl_cells_t;

/** A policy: its name, its options and the functions the core calls.
 *  Each compiled-in policy defines one constant table (hl_policy_find);
 *  the first argument of every function is the state its init returned. */
typedef struct hl_policy {
	const char *name;           /**< "bins" */
	const char *summary;        /**< one line for `heaplab policies` */
	const hl_option_t *options; /**< terminated by an entry with key NULL */
	/** What hl_thread_t.policy_tls holds until the policy sets it on a
	 *  thread (see "Per-thread state" above); NULL for most policies. */
	const void *tls_empty;

	/** Builds the policy's state inside heap @p h from parsed options.
	 *  NULL on failure, after hl_set_error(). */
	void *(*init)(hl_heap_t *h, const hl_conf_t *conf);
	/** Releases what the page source does not own (threads, ...).  The
	 *  core unmaps every region of the heap afterwards. May be NULL. */
	void (*destroy)(void *st);

	/** Serves @p n bytes (1 <= n <= HL_MAX_REQUEST) for the thread of
	 *  record @p t: a block aligned to hl_block_align(n), or NULL when
	 *  out of memory. */
	void *(*malloc)(void *st, hl_thread_t *t, size_t n);
	/** Takes back block @p p (never NULL), possibly handed out to another
	 *  thread; aborts through hl_fatal when it can tell p is no live block
	 *  of this heap. */
	void (*free)(void *st, hl_thread_t *t, void *p);
	/** May be NULL: malloc built with the emission points of its fast
	 *  path compiled out (event.h, "Quiet copies"), which the core calls
	 *  instead of malloc while nobody listens to the heap. */
	void *(*malloc_quiet)(void *st, hl_thread_t *t, size_t n);
	/** May be NULL: the same for free. */
	void (*free_quiet)(void *st, hl_thread_t *t, void *p);
	/** May be NULL: the core then moves the block unless it still fits. */
	void *(*realloc)(void *st, hl_thread_t *t, void *p, size_t n);
	/** What realloc(p, 0) does: false (glibc, jemalloc, tcmalloc) frees p
	 *  and returns NULL; true (mimalloc) returns a new block as malloc(0)
	 *  would and frees p, keeping p when that allocation fails.  The core
	 *  does either. */
	bool realloc_zero_allocates;
	/** May be NULL: the family of real allocators the policy models, as
	 *  heaplab fidelity names it (its rows: FAMILY.rows in its folder): a row that names
	 *  no model runs on the policy that models its family.  A family
	 *  other than heaplab's five says its real side in its rows file's
	 *  family stanza (`real_preload`, fidelity/README.md). */
	const char *fidelity_family;
	/** May be NULL: the options under which the policy follows the
	 *  installed allocator of its family, where they are not its
	 *  defaults (heaplab fidelity --placement runs the model so). */
	const char *fidelity_conf;
	/** May be NULL: the knobs heaplab diagnose replays a recording under
	 *  (a few that change how memory comes back), ended by {NULL}.  A
	 *  policy with none (bump: free does nothing) is never a candidate. */
	const hl_whatif_t *whatif;
	/** May be NULL: up to three configurations that reach paths the
	 *  defaults do not (other fronts, caches off, small thresholds), ended
	 *  by NULL.  The fuzzers (tests/fuzz) run each policy under its
	 *  defaults and under these. */
	const char *const *variants;
	/** May be NULL: configurations that lay blocks and their metadata out
	 *  differently from the defaults (other headers, another front),
	 *  ended by NULL.  The conformance suite (tests/unit/test_conformance.c)
	 *  runs every contract under the defaults and under each of these,
	 *  a full run each: list only what changes the layout. */
	const char *const *layouts;
	/** True when free gives nothing back (a bump allocator): a freed
	 *  block stays where it was, and the walker reports it live, until a
	 *  reset.  The walker's live blocks then never fall below the
	 *  program's, rather than equal them. */
	bool frees_nothing;
	/** How the snapshot draws blocks (HL_CELLS_GROUPED when left 0). */
	hl_cells_t cells;
	/** Serves @p n bytes at an address that is a multiple of @p align (a
	 *  power of two above 16); NULL when out of memory. */
	void *(*memalign)(void *st, hl_thread_t *t, size_t align, size_t n);
	/** Bytes the program may use at live block @p p (at least the size it
	 *  asked for). */
	size_t (*usable_size)(void *st, const void *p);
	/** True when @p p lies in memory this policy instance manages (behind
	 *  hl_owns); p need not be the start of a live block. */
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
	/** Before fork(): takes every lock of the policy, so that no structure
	 *  is caught half-changed in the child.  May be NULL. */
	void (*fork_prepare)(void *st);
	/** After fork(), in the parent: releases what fork_prepare took.  May
	 *  be NULL. */
	void (*fork_parent)(void *st);
	/** After fork(), in the child, where only the forking thread lives on:
	 *  re-initialises those locks (the core has already marked the other
	 *  threads' records exited).  May be NULL. */
	void (*fork_child)(void *st);

	/** May be NULL (calloc always clears): true when live block @p p,
	 *  just handed out by calloc's malloc, reads zero without calloc
	 *  writing it (and so touching none of its pages), as the real
	 *  allocator then writes nothing: its memory is the kernel's zero
	 *  pages, never written since (glibc: an mmapped chunk; jemalloc: a
	 *  zeroed extent), or the hook has just zeroed it by giving its pages
	 *  back to the kernel, as the real allocator does (jemalloc: a reused
	 *  large extent, MADV_DONTNEED).  Asked only by calloc, right after
	 *  the malloc; not in debug mode, which fills new blocks. */
	bool (*fresh_zero)(void *st, const void *p);
	/** How the preload library's mallinfo, mallinfo2, mallopt,
	 *  malloc_stats, malloc_info and malloc_trim answer under this policy
	 *  (malloc_api.h); NULL: as under an allocator that exports none. */
	const struct hl_libc_api *libc_api;
} hl_policy_t;

/** Defines the three fork handlers (fork_prepare, fork_parent and
 *  fork_child above) of a policy whose state, of type @p type, has one
 *  pthread mutex, member @p lock, that every operation takes:
 *  PREFIX_fork_prepare takes it, PREFIX_fork_parent releases it and
 *  PREFIX_fork_child makes it anew, as the child's copy is still held by
 *  the thread that forked, the only one that lives on there.  The policy's
 *  table then names them:
 *
 *      HL_FORK_ONE_MUTEX(bump, bump_state_t, lock)
 *      ... .fork_prepare = bump_fork_prepare, .fork_parent = bump_fork_parent,
 *          .fork_child = bump_fork_child, ...
 */
#define HL_FORK_ONE_MUTEX(prefix, type, lock)                                                     \
	static void prefix##_fork_prepare(void *st) { pthread_mutex_lock(&((type *)st)->lock); }   \
	static void prefix##_fork_parent(void *st) { pthread_mutex_unlock(&((type *)st)->lock); }   \
	static void prefix##_fork_child(void *st) { pthread_mutex_init(&((type *)st)->lock, NULL); }

/** Per (thread, heap) record kept by the core. */
struct hl_thread {
	void *policy_tls;      /**< the policy's per-thread state, its
				    tls_empty at first; set by the policy on
				    this thread, set back by the core when the
				    thread exits */
	unsigned index;        /**< small number of this thread in this heap (0..),
				    set once */
	uint64_t ops[8];       /**< operation counters, see heap.c; written by
				    this thread only, read by stats (relaxed) */
	int64_t live_usable;   /**< bytes this thread's calls added minus removed
				    (ledger on; same rule as ops) */
	int lock_busy;         /**< for a policy whose lock lets one thread in
				    without an atomic read-modify-write (pools'
				    biased lock): 1 while this thread is inside
				    by that route.  Stored by this thread only,
				    read by a thread revoking the bias; zeroed
				    when the record is reused */
	struct hl_thread *next;/**< heap's list of thread records (set once,
				    under the heap's threads lock) */
	bool exited;           /**< thread has gone; record is kept for its counts
				    and reused by the next new thread (threads lock) */
	bool past_front;       /**< set by a replay for a call the recorded
				    program made past its front allocator (in
				    a CPython program, the C library's and the
				    loader's own mallocs, which never reach
				    pymalloc): a host hands it to its guest
				    whatever its size.  Never set in a live run */
};

/** @p t's policy_tls, or NULL while it still holds @p empty, the calling
 *  policy's tls_empty (or NULL, on a record a host made): whether the
 *  thread's state was made yet, for a policy with an empty record. */
static inline void *hl_policy_tls_made(const hl_thread_t *t, const void *empty)
{
	return t->policy_tls == empty ? NULL : t->policy_tls;
}
/* The records come from a pool with whole cache lines per record
 * (hl_meta_init_private): each thread writes its own ops[] on every call
 * while its hits read other fields of its record.  Packed at 112 bytes,
 * thread A's `exited` shared a line with thread B's ops[0..1]; percpu's
 * rseq hit reads `exited` first, and two threads on the fixed 32-byte
 * ring took 3.6 times one thread's time (bench/HISTORY.md). */

/** The policy table of a compiled-in policy, or NULL. */
const hl_policy_t *hl_policy_find(const char *name);

/** The heap's page source (for policies' hl_os_* calls). */
struct hl_os *hl_heap_os(hl_heap_t *h);
/** A policy's state for heap @p h: @p size zeroed bytes of metadata from
 *  the heap's page source, page-rounded.  NULL after hl_set_error("<policy>:
 *  out of memory for the policy state") — an init may return it as is. */
void *hl_policy_state_new(hl_heap_t *h, size_t size);
/** True when the heap runs its checker after every operation. */
bool hl_heap_debug(const hl_heap_t *h);
/** A stable small number for this heap instance (for keys and colours). */
unsigned hl_heap_id(const hl_heap_t *h);
/** The thread record of the calling thread for heap @p h, made on its first
 *  use: the record every policy function of this heap, a hosted policy's
 *  included, is called with on this thread. */
hl_thread_t *hl_thread_get(hl_heap_t *h);
/** The calling thread leaves heap @p h as it would by exiting (the policy's
 *  thread_exit runs, its record goes to the next new thread); its next call
 *  on @p h attaches it again, as a new thread.  For replays of thread exit. */
void hl_thread_detach(hl_heap_t *h);

/** For a checker that must tell a block the program holds from one its
 *  policy lost: 1 when @p p is a block of heap @p h handed out and not
 *  given back, by the request ledger, 0 when not (NULL: never), -1 when
 *  the heap keeps no ledger (ledger:off), whatever @p p.  Exact while no
 *  call of the heap is under way (debug mode: between two calls).  Takes
 *  a ledger lock, which comes after every policy lock (fork takes them in
 *  that order), so a checker may hold its own. */
int hl_heap_block_live(hl_heap_t *h, const void *p);

/** The move of a realloc that does not keep the block: a block of @p n
 *  bytes from @p alloc, the first min(@p old, @p n) bytes of @p p copied
 *  into it, then @p p given to @p release; NULL (and @p p kept) when the
 *  allocation fails.  The core's own realloc and the policies' call it. */
void *hl_realloc_move(void *st, hl_thread_t *t, void *p, size_t old, size_t n,
		      void *(*alloc)(void *st, hl_thread_t *t, size_t n),
		      void (*release)(void *st, hl_thread_t *t, void *p));

#endif
