/**
 * @file heap_internal.h
 * @brief The heap instance as the core sees it (not for policies).
 */
#ifndef HL_HEAP_INTERNAL_H
#define HL_HEAP_INTERNAL_H

#include <pthread.h>
#include "policy.h"
#include "os.h"
#include "ledger.h"
#include "meta.h"
#include "guard.h"
#include "bits.h"

/** Operation counters kept per thread record (hl_thread_t.ops). */
enum hl_op { HL_OP_MALLOC, HL_OP_FREE, HL_OP_CALLOC, HL_OP_REALLOC, HL_OP_MEMALIGN,
	     HL_OP_FAILED, HL_OP_TRIM, HL_OP_NOPS };

/** Most heaps alive at once in one process. */
#define HL_MAX_HEAPS 64

struct hl_heap {
	/* the fast path reads only this first cache line */
	void *call_st;            /**< first argument of malloc_fn: the policy's
				       state, or in debug mode the heap itself */
	void *(*malloc_fn)(void *st, hl_thread_t *t, size_t n);   /**< policy->malloc_quiet
				       while nobody listens, policy->malloc while
				       someone does (hl_heap_listening; read
				       relaxed), in debug mode hl_guard_malloc */
	void (*free_fn)(void *st, hl_thread_t *t, void *p);        /**< policy->free_quiet
				       or policy->free, as malloc_fn */
	bool plain;               /**< neither ledger nor debug: nothing to do around a call */
	void *state;              /**< the policy's */
	const hl_policy_t *policy;
	unsigned id;              /**< slot in the thread tables (0..HL_MAX_HEAPS-1) */
	unsigned gen;             /**< generation of that slot */
	bool debug;               /**< checker after every op, junk fill */
	hl_os_t os;               /**< this heap's page source */
	hl_ledger_t ledger;       /**< pointer -> requested size (when enabled) */
	hl_os_t ledger_os;        /**< the ledger's own page source: heaplab's
				       bookkeeping, so its mappings are neither
				       the heap's OS calls nor its metadata (their
				       number follows the pointers' hashes) */
	bool ledger_on;
	hl_conf_t conf;
	hl_meta_pool_t threads_pool;   /**< thread records */
	pthread_mutex_t threads_lock;  /**< guards the list below */
	hl_thread_t *threads;          /**< every thread record of this heap */
	unsigned nthreads;
	hl_guard_t guard;              /**< debug mode's misuse checks (guard.h) */
	uint64_t exited_ops[HL_OP_NOPS]; /**< counts folded from exited threads */
	bool clock_replay;             /**< option clock:replay (clock.h) */
	uint64_t clock_ns;             /**< a replay heap's time (atomic reads) */
	pthread_mutex_t clock_lock;    /**< a replay heap: clock moves, tasks */
	struct hl_background *tasks;   /**< a replay heap's background tasks */
};

/** This thread's record for each heap slot, with the generation it is for. */
typedef struct hl_tls_slot {
	hl_thread_t *rec;
	unsigned gen;
} hl_tls_slot_t;
extern __thread hl_tls_slot_t hl_tls[HL_MAX_HEAPS];

/** The one heap whose record every thread also keeps in hl_tls_fast: the
 *  preload library's default heap when it is plain and nothing records
 *  (shim.c sets it once, before any thread has a record in it; that heap
 *  is never destroyed).  NULL when there is none. */
extern hl_heap_t *hl_fast_heap;
/** hl_fast_heap's call_st, malloc_fn and free_fn, where the shim's fast
 *  path reads them without loading the heap: the shim fills it before it
 *  sets hl_fast_heap, hl_heap_listening keeps the two functions equal to
 *  the heap's (read relaxed). */
typedef struct hl_fast_calls {
	void *st;
	void *(*malloc_fn)(void *st, hl_thread_t *t, size_t n);
	void (*free_fn)(void *st, hl_thread_t *t, void *p);
	int path;        /**< which inline fast path the shim takes before the
			      call (shim/fast_paths.h), 0 for none: equal to
			      quiet_path while nobody listens, 0 while someone
			      does (hl_heap_listening; read relaxed) */
	int quiet_path;  /**< the heap's policy's inline fast path, set once by
			      the shim when it builds the heap */
	void (*repath)(void); /**< the shim's: points its malloc and free at
			      the copies for `path`; hl_heap_listening calls it
			      after each change of `path` */
} hl_fast_calls_t;
extern hl_fast_calls_t hl_fast_calls __attribute__((visibility("hidden"))); /* one RIP-relative load */
/** The record of a thread that has none in hl_fast_heap: policy_tls the
 *  policy's tls_empty (written once, when the shim builds hl_fast_heap),
 *  every counter 0, `exited` true, and never written otherwise.  The hits of the
 *  shim's fast path miss on it by themselves (shim/fast_paths.h), so
 *  the shim does not test for it before a hit, only before a call. */
extern hl_thread_t hl_no_thread __attribute__((visibility("hidden")));
/** The calling thread's record in hl_fast_heap, or &hl_no_thread (no
 *  record yet, or the thread is exiting): the shim's fast path is this one
 *  thread-local load, with no slot or generation to compare.  Set by
 *  hl_thread_attach, set back to &hl_no_thread at thread exit. */
extern __thread hl_thread_t *hl_tls_fast;

/** Makes (or reuses) the calling thread's record for @p h; NULL (ENOMEM)
 *  when there is no memory for one: an allocation then returns NULL. */
hl_thread_t *hl_thread_attach(hl_heap_t *h);
/** A free needs a record and cannot fail: ends the program with one line. */
__attribute__((noreturn)) void hl_thread_none(hl_heap_t *h);

/** The calling thread's record for @p h: one thread-local load. */
static inline hl_thread_t *hl_thread_fast(hl_heap_t *h)
{
	hl_tls_slot_t *s = &hl_tls[h->id];
	/* a slot's gen is 0 whenever its rec is NULL, and no heap's is 0 */
	if (__builtin_expect(s->gen == h->gen, 1))
		return s->rec;
	return hl_thread_attach(h);
}

/** Counts one operation of this thread (only this thread writes it,
 *  hl_stat reads it relaxed). */
static inline void count(hl_thread_t *t, enum hl_op op)
{
	hl_counter_add(&t->ops[op], 1);
}

/** The careful paths (ledger, junk, checker, failures), out of line. */
void *hl_malloc_careful(hl_heap_t *h, hl_thread_t *t, void *p, size_t n);
void hl_free_careful(hl_heap_t *h, hl_thread_t *t, void *p);

/** hl_malloc, inlined into the shim: on a plain heap, the thread lookup,
 *  one counter and the call through the policy table are all it adds. */
static inline void *hl_malloc_inline(hl_heap_t *h, size_t n)
{
	hl_thread_t *t = hl_thread_fast(h);
	if (__builtin_expect(!t, 0))
		return NULL;    /* no memory for this thread's record: ENOMEM */
	if (__builtin_expect(n > HL_MAX_REQUEST, 0))
		return hl_malloc_careful(h, t, NULL, n);
	void *p = __atomic_load_n(&h->malloc_fn, __ATOMIC_RELAXED)(h->call_st, t, n ? n : 1);
	if (__builtin_expect(p != NULL && h->plain, 1)) {
		count(t, HL_OP_MALLOC);
		return p;
	}
	return hl_malloc_careful(h, t, p, n);
}

/** hl_free, inlined into the shim (p != NULL checked by the caller or here). */
static inline void hl_free_inline(hl_heap_t *h, void *p)
{
	if (!p)
		return;
	hl_thread_t *t = hl_thread_fast(h);
	if (__builtin_expect(!t, 0))
		hl_thread_none(h);
	if (__builtin_expect(h->plain, 1)) {
		count(t, HL_OP_FREE);
		__atomic_load_n(&h->free_fn, __ATOMIC_RELAXED)(h->call_st, t, p);
		return;
	}
	hl_free_careful(h, t, p);
}

/** Heap @p h has a listener or keeps its events (@p on), or no longer:
 *  its malloc_fn and free_fn become the policy's malloc and free, or its
 *  quiet copies when it has them (event.h, "Quiet copies"); event.c calls
 *  it with its table lock held. */
void hl_heap_listening(hl_heap_t *h, bool on);

/** Called by the thread machinery (thread.c). */
void hl_thread_exit_all(void *unused);
int hl_heap_slot_acquire(hl_heap_t *h);
void hl_heap_slot_release(hl_heap_t *h);
/** Every live heap, for fork handlers (registry lock held by caller). */
void hl_heaps_foreach(void (*fn)(hl_heap_t *h));
#endif
