/**
 * @file heaplab.h
 * @brief The public API of heaplab: heap instances of any compiled-in policy.
 *
 * heaplab is a teaching allocator.  A heap is an instance of one *policy*
 * (an allocator model: bump, firstfit, bins, slab, sharded, pools ...).
 * Any number of heaps of any policies can live side by side in one process;
 * each owns its memory, which it takes from the kernel through heaplab's
 * page source, so every heap can say exactly how much it reserved,
 * committed and has resident.
 *
 * @code
 *   hl_heap_t *h = hl_heap_new("firstfit", "fit:best,order:address");
 *   if (!h) { fprintf(stderr, "%s\n", hl_last_error()); exit(1); }
 *   void *p = hl_malloc(h, 100);
 *   hl_free(h, p);
 *   hl_stats_json(h, stdout);
 *   hl_heap_destroy(h);
 * @endcode
 *
 * Linking libheaplab never replaces the program's own malloc: only the
 * separate libheaplab-preload.so does that (see `heaplab run`).
 */
#ifndef HEAPLAB_H
#define HEAPLAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define HL_API __attribute__((visibility("default")))
#else
#define HL_API
#endif

/** An allocator instance of one policy; opaque. */
typedef struct hl_heap hl_heap_t;

/** @name Heaps */
/**@{*/

/**
 * Creates a heap of the named policy.
 * @param policy a compiled-in policy name, or NULL for the default one.
 * @param conf   `key:value,key:value` options of that policy (and the
 *               core keys `debug` and `ledger`), or NULL / "" for defaults.
 * @return the heap, or NULL with the reason in hl_last_error().
 */
HL_API hl_heap_t *hl_heap_new(const char *policy, const char *conf);

/** Gives every byte of the heap back to the kernel and frees the instance. */
HL_API void hl_heap_destroy(hl_heap_t *h);

/** The policy name of a heap ("bins", ...). */
HL_API const char *hl_heap_policy(const hl_heap_t *h);

/** The same as hl_heap_new with the core option `clock:replay` in front of
 *  @p conf: a heap whose time (decay, purge delays, release rates,
 *  background threads) is the one hl_heap_set_time gives, starting at 0. */
HL_API hl_heap_t *hl_heap_new_replay(const char *policy, const char *conf);
/** True when @p h was made with `clock:replay`. */
HL_API bool hl_heap_replay_clock(const hl_heap_t *h);
/** Moves a replay heap's clock forward to @p ns (an earlier time leaves it
 *  where it is); a background task whose wake-up time it passes makes its
 *  pass at that time, on the calling thread.  0, or -1 with EINVAL on a
 *  heap that runs on the real clock. */
HL_API int hl_heap_set_time(hl_heap_t *h, uint64_t ns);
/** The heap's clock in nanoseconds (CLOCK_MONOTONIC on a real heap). */
HL_API uint64_t hl_heap_time(const hl_heap_t *h);

/** Why the last failing call of this thread failed (never NULL). */
HL_API const char *hl_last_error(void);
/**@}*/

/** @name Allocation
 * The C library's contracts, for one heap.  Every block of n bytes is
 * aligned to at least hl_block_align(n): 16 bytes, or 8 for n <= 8 (as C
 * allows, and as jemalloc, mimalloc and gperftools do; memalign with 16
 * gets 16 for any n); hl_malloc(h, 0) returns a unique pointer; on
 * failure NULL is returned with errno set (ENOMEM, or EINVAL for a bad
 * alignment).
 */
/**@{*/
/** The alignment every policy promises for a block of @p n bytes: 8 when
 *  n <= 8 (no type that fits needs more), else 16. */
static inline size_t hl_block_align(size_t n) { return n <= 8 ? 8 : 16; }
/** @p n usable bytes or more, or NULL with errno = ENOMEM. */
HL_API void *hl_malloc(hl_heap_t *h, size_t n);
/** @p count * @p size zeroed bytes; NULL with ENOMEM when the product overflows. */
HL_API void *hl_calloc(hl_heap_t *h, size_t count, size_t size);
/** realloc(NULL, n) is malloc(n); realloc(p, 0) frees p and returns NULL,
 *  except under a policy whose allocator returns a new block there (sharded,
 *  as mimalloc: p is freed once that block is had). */
HL_API void *hl_realloc(hl_heap_t *h, void *p, size_t n);
/** @p align must be a power of two (EINVAL otherwise). */
HL_API void *hl_memalign(hl_heap_t *h, size_t align, size_t n);
/** posix_memalign's contract: returns 0, EINVAL or ENOMEM; errno untouched. */
HL_API int hl_posix_memalign(hl_heap_t *h, void **out, size_t align, size_t n);
/** Frees @p p; NULL does nothing.  A pointer the heap does not own aborts. */
HL_API void hl_free(hl_heap_t *h, void *p);
/** Usable bytes of a live block (>= the size asked for). */
HL_API size_t hl_usable_size(hl_heap_t *h, const void *p);
/** True when @p p lies in memory this heap manages. */
HL_API bool hl_owns(hl_heap_t *h, const void *p);
/**@}*/

/** @name Giving memory back */
/**@{*/
/** malloc_trim: returns free memory beyond @p pad; answers bytes given back. */
HL_API size_t hl_trim(hl_heap_t *h, size_t pad);
/** Drops every block at once (region allocators); -1 with ENOTSUP elsewhere. */
HL_API int hl_reset(hl_heap_t *h);
/**@}*/

/** @name Looking inside */
/**@{*/

/** The heap behind malloc when the program runs under libheaplab-preload.so
 *  (the shim's default heap, once built); NULL from libheaplab, which never
 *  replaces malloc.  A program finds it with dlsym(RTLD_DEFAULT, ...) to read
 *  the model's own statistics (see fidelity/probes/probe.h). */
HL_API hl_heap_t *hl_default_heap(void);

/** Runs the policy's checker; writes each problem to @p report (may be NULL).
 *  @return 0 when the heap is consistent, else the number of problems. */
HL_API int hl_check(hl_heap_t *h, FILE *report);

/** Writes the heap's real structures as a Graphviz DOT graph. 0 on success. */
HL_API int hl_snapshot_dot(hl_heap_t *h, FILE *out, const char *title);

/** Writes every statistic as one JSON object (common keys + policy_stats). */
HL_API int hl_stats_json(hl_heap_t *h, FILE *out);

/** The same statistics as indented text, for people. */
HL_API int hl_stats_text(hl_heap_t *h, FILE *out);

/**
 * Reads one statistic by its JSON path, e.g. "resident_bytes",
 * "os.mmap_calls" or "policy_stats.tcache_hits".
 * @return 0 and the value in @p out, or -1 when there is no such number.
 */
HL_API int hl_stat(hl_heap_t *h, const char *path, double *out);

/**
 * Calls @p fn with every number whose path starts with @p prefix (""
 * or NULL: all of them), from one pass over the statistics: several
 * figures of a policy for the cost of one (bins' walk every chunk).
 * @return 0
 */
HL_API int hl_stat_each(hl_heap_t *h, const char *prefix, void (*fn)(const char *path, double v, void *arg),
			void *arg);

/** What a block is, as the walker reports it. */
typedef enum hl_block_state {
	HL_BLOCK_LIVE = 0,  /**< handed to the program */
	HL_BLOCK_FREE,      /**< free, on a policy list */
	HL_BLOCK_CACHED,    /**< free but held by a thread cache */
	HL_BLOCK_DIRTY,     /**< free pages still resident */
	HL_BLOCK_MUZZY,     /**< lazily purged (MADV_FREE) */
	HL_BLOCK_RETURNED,  /**< purged: address space only */
	HL_BLOCK_META,      /**< the policy's own metadata (headers, bitmaps) */
	HL_BLOCK_TOP,       /**< untouched space at the end (top chunk, bump tail) */
	HL_BLOCK_GUARD,     /**< inaccessible guard pages */
	HL_BLOCK_NSTATES
} hl_block_state_t;
/** Name of a block state ("live", "free", ...), as every picture's legend
 *  says it. */
HL_API const char *hl_block_state_name(hl_block_state_t st);
/** Fill colour of a block state: the one palette of every picture. */
HL_API const char *hl_block_state_color(hl_block_state_t st);

/** One block as the walker sees it. */
typedef struct hl_block {
	const void *addr;        /**< first byte of the block (its payload when live) */
	size_t size;             /**< bytes the block spans */
	hl_block_state_t state;  /**< what it is */
	int region;              /**< region number (see hl_addr_name) */
	unsigned size_class;     /**< size class or bin index, 0 when none */
} hl_block_t;

/** Visitor: return non-zero to stop the walk. */
typedef int (*hl_walk_fn)(const hl_block_t *b, void *arg);

/** Visits every block of the heap in address order within each region.
 *  The visitor must not call the heap's allocation functions (the walk may
 *  hold the policy's locks); hl_addr_name is fine. */
HL_API int hl_walk(hl_heap_t *h, hl_walk_fn fn, void *arg);

/** Names an address as "region#k+0xoff", stable from run to run. */
HL_API const char *hl_addr_name(hl_heap_t *h, const void *p, char *buf, size_t len);
/** A name for the block at @p p that can serve as an HTML/SVG id and
 *  stays the same from run to run: hl_addr_name with '#' and '+' turned
 *  into '_' and "blk_" in front ("blk_region_0_0x10").  Snapshot cells of
 *  single blocks carry it (the stepper highlights blocks by it). */
HL_API const char *hl_block_id(hl_heap_t *h, const void *p, char *buf, size_t len);
/**@}*/

/** @name Decision events
 * What the policy decided inside a call, step by step: "cache hit", "split",
 * "merge", "new page", a kernel call ...  Each event is one step, with a
 * kind from the shared vocabulary below and the policy's own word for the
 * place (@c what: "tcache bin", "small bin", "usedpools").  Nothing is
 * built when no heap has a listener: every emission point tests one flag.
 *
 * @code
 *   static void show(hl_heap_t *h, const hl_event_t *e, void *arg)
 *   {
 *       char line[200];
 *       puts(hl_event_text(h, e, line, sizeof line));
 *   }
 *   hl_set_listener(h, show, NULL);   // every step, as it happens
 *   hl_malloc(h, 100);                // prints e.g. "cache miss: tcache bin 5"
 *   hl_set_listener(h, NULL, NULL);   // stop
 * @endcode
 *
 * Events come from the thread that took the step (a background purge
 * thread included) and may be delivered from several threads at once.
 */
/**@{*/
/** The shared vocabulary of steps. */
typedef enum hl_event_kind {
	HL_EV_CACHE_HIT = 0, /**< served from a per-thread cache */
	HL_EV_CACHE_MISS,    /**< the cache had nothing for this size */
	HL_EV_CACHE_PUT,     /**< a freed block kept in a per-thread cache */
	HL_EV_CACHE_FILL,    /**< the cache refilled from a shared structure (@c before→@c after) */
	HL_EV_CACHE_FLUSH,   /**< the cache gave blocks back (@c before→@c after) */
	HL_EV_LIST_POP,      /**< a block taken from the head of a free list */
	HL_EV_LIST_PUSH,     /**< a freed block put on a free list */
	HL_EV_EXACT_FIT,     /**< a free block of exactly the size asked */
	HL_EV_BEST_FIT,      /**< the smallest free block big enough */
	HL_EV_FIRST_FIT,     /**< the first free block big enough */
	HL_EV_LOOK,          /**< a candidate looked at and taken or passed */
	HL_EV_REJECT,        /**< a candidate looked at and rejected (@c what says why) */
	HL_EV_SCAN,          /**< a list or map searched (@c before: entries looked at) */
	HL_EV_SORT,          /**< a free block moved into the bin of its size */
	HL_EV_SPLIT,         /**< a block cut in two: @c size the part used, @c size2 the remainder */
	HL_EV_MERGE,         /**< a free block joined with a neighbour: @c size2 the result */
	HL_EV_NEW,           /**< a new slab, page, pool, arena or segment carved */
	HL_EV_RETIRE,        /**< an emptied slab, page, pool or arena given up */
	HL_EV_MOVE,          /**< a container moved from one list to another */
	HL_EV_BUMP,          /**< a bump pointer moved (@c before→@c after offsets) */
	HL_EV_GROW,          /**< the heap grown (break, top, sub-heap) by @c size */
	HL_EV_SHRINK,        /**< the heap shrunk (trim) by @c size */
	HL_EV_MAP,           /**< a block of its own mapping (above a threshold) */
	HL_EV_UNMAP,         /**< such a block unmapped */
	HL_EV_PURGE,         /**< pages given back, lazily or at once */
	HL_EV_DECAY,         /**< a decay step moved pages dirty → muzzy → clean */
	HL_EV_REMOTE_FREE,   /**< a block freed by a thread that does not own it */
	HL_EV_COLLECT,       /**< blocks freed elsewhere collected back (@c before: how many) */
	HL_EV_HANDOFF,       /**< the request handed to another allocator (fallback) */
	HL_EV_FAIL,          /**< out of memory */
	HL_EV_OS,            /**< a kernel call (@c what: "mmap", "munmap", ...; @c index: the call) */
	HL_EV_NKINDS
} hl_event_kind_t;

/** One step.  Numbers that do not apply are -1 (@c index, @c before,
 *  @c after) or 0 (@c size, @c size2, @c addr). */
typedef struct hl_event {
	hl_event_kind_t kind;  /**< the step */
	const char *what;      /**< the policy's word for the place or reason
				    ("tcache bin", "top", "too small"); never NULL */
	long index;            /**< bin, class, list or arena number */
	size_t size;           /**< bytes the step is about */
	size_t size2;          /**< second size: a split's remainder, a merge's result */
	long before;           /**< a count or figure before the step */
	long after;            /**< the same count or figure after the step */
	const void *addr;      /**< the block, chunk, page or region */
	char where[40];        /**< @c addr named as hl_addr_name names it when
				    the step was taken ("region#1+0x2a0"); "" when
				    there is no address or it lies in no region of
				    the heap (any more) */
} hl_event_t;

/** A listener: called for each event of heap @p h, from the thread that
 *  took the step, while the policy may hold its locks: it must not call
 *  the heap's allocation functions (hl_event_text and hl_addr_name are
 *  fine). */
typedef void (*hl_listener_fn)(hl_heap_t *h, const hl_event_t *e, void *arg);

/** Sets the listener of @p h (NULL @p fn: none); replaces the previous one.
 *  Not to be called while another thread is inside a call on @p h.
 *  @return 0, or -1 when too many heaps listen at once. */
HL_API int hl_set_listener(hl_heap_t *h, hl_listener_fn fn, void *arg);

/** Keeps the events of @p h (on) so that hl_events_take reads them after a
 *  call; works with or without a listener.  @return 0 or -1 as above. */
HL_API int hl_events_keep(hl_heap_t *h, bool on);

/** Copies up to @p max events kept since the previous take into @p out and
 *  forgets them all: called after each call, the events of that call.
 *  @return how many were kept (may exceed @p max: the rest are lost). */
HL_API size_t hl_events_take(hl_heap_t *h, hl_event_t *out, size_t max);

/** Short name of a kind ("cache_hit", "split", "os"), as JSON gives it. */
HL_API const char *hl_event_kind_name(hl_event_kind_t k);

/** The event in plain English ("cache hit: tcache bin 5 (3→2)"), addresses
 *  named as hl_addr_name does. @return @p buf. */
HL_API const char *hl_event_text(hl_heap_t *h, const hl_event_t *e, char *buf, size_t len);
/**@}*/

/** @name Policies */
/**@{*/
/** Number of compiled-in policies. */
HL_API size_t hl_policy_count(void);
/** Name of the i-th compiled-in policy (NULL past the end). */
HL_API const char *hl_policy_name(size_t i);
/** One-line summary of a policy (NULL when not compiled in). */
HL_API const char *hl_policy_summary(const char *name);
/** The @p i-th what-if candidate of policy @p name (heaplab diagnose):
 *  its options ("" for the defaults), and in *real (may be NULL) what
 *  makes the real allocator do the same, or NULL when it has none.
 *  @return NULL past the last, or when the policy is not compiled in. */
HL_API const char *hl_policy_whatif(const char *name, size_t i, const char **real);
/** The compiled-in policy that models the real allocators of @p family
 *  (heaplab fidelity's names: glibc, jemalloc, ...), or NULL. */
HL_API const char *hl_policy_of_family(const char *family);
/** Up to three configurations of policy @p name that reach paths its
 *  defaults do not (its table's variants: the fuzzers and the event tests
 *  run them), ended by NULL; NULL when it has none or is not compiled in. */
HL_API const char *const *hl_policy_variants(const char *name);
/** The family of real allocators policy @p name models (heaplab
 *  fidelity's name), or NULL. */
HL_API const char *hl_policy_family(const char *name);
/** The options under which policy @p name follows the installed allocator
 *  of its family (percpu: "front:thread", gperftools), or NULL for its
 *  defaults or when it models none. */
HL_API const char *hl_policy_family_conf(const char *name);
/** The shim's default policy. */
HL_API const char *hl_default_policy(void);
/** Writes a policy's option table (key, type, default, range, help). */
HL_API int hl_policy_options(const char *name, FILE *out);
/** The options' documentation, generated from the option tables (the one
 *  place options are described): @p name's table, or with @p name NULL the
 *  options every heap accepts.  @p markdown: a Markdown table (the book's
 *  appendix), else the text of `heaplab options`.  -1 for an unknown
 *  policy. */
HL_API int hl_options_doc(const char *name, bool markdown, FILE *out);
/**@}*/

/** @name Traces
 * The CMU malloc-lab `.rep` format and heaplab's extensions.
 */
/**@{*/
/** A loaded trace: its operations in file order; opaque. */
typedef struct hl_trace hl_trace_t;

/** Reads a trace; NULL with "file:line: message" in hl_last_error().  A
 *  trace that looks cut short (fewer ops than its header announces, a last
 *  line cut mid-field, no header and no final newline) is refused too. */
HL_API hl_trace_t *hl_trace_load(const char *path);
/** Like hl_trace_load, but a trace cut short is read as far as it goes,
 *  with a warning (a last line cut mid-field is dropped). */
HL_API hl_trace_t *hl_trace_load_lenient(const char *path);
/** Hears how far a load is in its file: bytes read, of its size (the end
 *  once: @p done == @p total). */
typedef void (*hl_trace_progress_fn)(const char *what, size_t done, size_t total);
/** Sets this thread's listener of the loads that follow (NULL: none). */
HL_API void hl_trace_load_progress(hl_trace_progress_fn fn);
/** Frees a trace from hl_trace_load (NULL does nothing). */
HL_API void hl_trace_free(hl_trace_t *t);
/** Warnings the reader gave while loading (may be ""). */
HL_API const char *hl_trace_warnings(const hl_trace_t *t);
/** Number of operations in the trace (snapshot and thread ops included). */
HL_API size_t hl_trace_ops(const hl_trace_t *t);
/** The four numbers of the trace's header into @p header; false (and -1s)
 *  when the file has no header. */
HL_API bool hl_trace_header(const hl_trace_t *t, long header[4]);

/** A replay under way, as an after_op callback sees it; opaque, valid only
 *  during the callback. */
typedef struct hl_replay hl_replay_t;

/** Result of replaying a trace on a heap. */
typedef struct hl_replay_result {
	bool ok;                    /**< every check held */
	size_t ops;                 /**< operations performed */
	size_t failed_op;           /**< index of the failing op when !ok */
	unsigned failed_line;       /**< its line in the file */
	char message[256];          /**< what went wrong */
	double utilization;         /**< peak live requested / peak committed */
	double seconds;             /**< wall time of the operations alone */
	size_t peak_requested;      /**< bytes */
	size_t peak_committed;      /**< bytes */
} hl_replay_result_t;

/** Options of a replay. */
typedef struct hl_replay_opts {
	bool verify;        /**< fill payloads, check overlap and contents */
	bool check_heap;    /**< run hl_check during the checked pass */
	size_t check_every; /**< ... every N ops (1 = after each; 0 = at the end only) */
	int repeat;         /**< timed passes without checks after the checked one (0 = none) */
	/** called after each op (progress, stepping); return non-zero to stop */
	int (*after_op)(const hl_replay_t *rp, void *arg);
	void *arg;          /**< passed to after_op unchanged */
	/** run each stretch of one recorded thread's ops on its replay thread
	 *  in one hand-off, the checks and after_op included (they then run on
	 *  that thread, never two at once): far faster on a multi-threaded
	 *  trace, whose ops otherwise cost two thread switches each */
	bool by_stretch;
	/** in a pass without checks, write one byte (its own value) in every
	 *  page of each block handed out, as the recorded program wrote its
	 *  blocks: the heap's resident bytes then count the pages a program
	 *  touches, not only those the allocator's own metadata did (a
	 *  checked pass fills every payload anyway) */
	bool touch;
	/** on a replay heap (hl_heap_new_replay): nanoseconds of the clock per
	 *  op for a trace without "#@t" lines (0: no time passes); a trace with
	 *  them sets the clock from them, and the clock reaches the trace's
	 *  last time once its ops are done */
	uint64_t op_ns;
	/** indexed by allocation site (1..hl_trace_sites), or NULL: true for a
	 *  site whose calls the recorded program made past its front allocator
	 *  (policy.h: hl_thread_t.past_front); the replay marks each allocating
	 *  call so on the thread that makes it.  NULL for a recording with
	 *  "#@front pymalloc" replayed on the model of pymalloc: the replay
	 *  makes the table itself (hl_trace_past_pymalloc) */
	const bool *past_front;
} hl_replay_opts_t;

/** Replays @p t on @p h (which should be fresh). 0 when ok. */
HL_API int hl_replay(hl_heap_t *h, const hl_trace_t *t, const hl_replay_opts_t *o,
		     hl_replay_result_t *r);

/** Describes op @p i of a trace in trace syntax ("a 3 100"). */
HL_API const char *hl_trace_op_text(const hl_trace_t *t, size_t i, char *buf, size_t len);
/** Line number of op @p i in its file. */
HL_API unsigned hl_trace_op_line(const hl_trace_t *t, size_t i);
/** Label of op @p i when it is an `s label` snapshot op, else NULL. */
HL_API const char *hl_trace_op_label(const hl_trace_t *t, size_t i);
/** Kind of op @p i: one of 'a','f','r','c','m','t','s', or 'x' for a
 *  thread's exit (a recorded trace's "#@exit N" line). */
HL_API char hl_trace_op_kind(const hl_trace_t *t, size_t i);
/** Size requested by op @p i (0 for free, thread switch, snapshot, exit). */
HL_API size_t hl_trace_op_size(const hl_trace_t *t, size_t i);
/** The most bytes the trace's blocks hold at once (their sizes as asked
 *  for) into @p peak, and the op that reached it into @p at (may be
 *  NULL).  0, or -1 with hl_set_error when out of memory. */
HL_API int hl_trace_live_peak(const hl_trace_t *t, size_t *peak, size_t *at);
/** Block id of op @p i (-1 when none). */
HL_API long hl_trace_op_id(const hl_trace_t *t, size_t i);
/** Largest block id the trace uses, plus one (0 when it uses none). */
HL_API long hl_trace_max_id(const hl_trace_t *t);
/** Allocation site of op @p i (a trace recorded with sites: "a 3 100 @7"):
 *  1..hl_trace_sites(t), or 0 when the op names none. */
HL_API unsigned hl_trace_op_site(const hl_trace_t *t, size_t i);
/** Number of allocation sites the trace declares ("#@site N 0xADDR"). */
HL_API unsigned hl_trace_sites(const hl_trace_t *t);
/** Number of threads the trace's ops run on (its largest thread number
 *  plus one). */
HL_API unsigned hl_trace_threads(const hl_trace_t *t);
/** Site @p s's return address in the recorded process; @p module and
 *  @p offset (either may be NULL) get the file of the executable segment
 *  that held it ("#@module LO HI BASE PATH") and the address relative to
 *  that file's load base (what `addr2line -e MODULE` takes), or NULL and 0
 *  when no module covers it.  0 for a site that does not exist. */
HL_API uintptr_t hl_trace_site(const hl_trace_t *t, unsigned s, const char **module, uintptr_t *offset);
/** What the recorded program has in front of malloc as it runs, which the
 *  recording went past ("#@front NAME": "pymalloc" for CPython recorded
 *  with PYTHONMALLOC=malloc), or NULL. */
HL_API const char *hl_trace_front(const hl_trace_t *t);
/** Is the file at @p path part of CPython: the interpreter (its name
 *  python..., or libpython...) or one of its extension modules
 *  ("*.cpython-*.so")?  (trace/pymalloc_sites.c) */
HL_API bool hl_cpython_file(const char *path);
/** For a recording of a CPython program (PYTHONMALLOC=malloc), one flag
 *  per site (index 1..hl_trace_sites): true for a site outside CPython (the
 *  loader, the C library, other libraries), whose calls never reach
 *  pymalloc in the real process (hl_replay_opts_t.past_front).  NULL when
 *  no site lies in CPython (the program is not CPython, or the recording
 *  has no modules), or out of memory; free() it.  hl_replay uses it by
 *  itself for a recording with "#@front pymalloc" replayed under the model
 *  of pymalloc.  (trace/pymalloc_sites.c) */
HL_API bool *hl_trace_past_pymalloc(const hl_trace_t *t);
/** Number of resident-set samples in the trace ("#@rss MS BYTES"). */
HL_API size_t hl_trace_samples(const hl_trace_t *t);
/** Sample @p k: how many ops of the trace came before it, its time in
 *  milliseconds since the recording started and the process's resident
 *  bytes then.  false when there is no such sample. */
HL_API bool hl_trace_sample(const hl_trace_t *t, size_t k, size_t *ops_before, unsigned long *ms, size_t *bytes);
/** @name A sampled recording (trace/sample.c)
 *  A recording made with HEAPLAB_RECORD_SAMPLE or HEAPLAB_RECORD_MAX keeps
 *  one new block of the program's in K, with every op of it ("#@sample
 *  1/K" lines say from which op on; the rate only ever halves). */
/**@{*/
/** Number of "#@sample" lines: 0 for a recording of every op. */
HL_API size_t hl_trace_rates(const hl_trace_t *t);
/** Line @p k: the ops of the trace before it and its K; false when there
 *  is no such line. */
HL_API bool hl_trace_rate(const hl_trace_t *t, size_t k, size_t *ops_before, unsigned long *rate);
/** The K the heap after the first @p n ops stands for (1 when not
 *  sampled; the first line's for @p n 0). */
HL_API unsigned long hl_trace_rate_at(const hl_trace_t *t, size_t n);
/** The program's ops, kept or not ("#@sampled N"); 0 when not said. */
HL_API unsigned long long hl_trace_program_ops(const hl_trace_t *t);
/** The one rate the reader made the recording (its last when it halved,
 *  or HEAPLAB_TRACE_SAMPLE=K's when that is lower), its ops in the file
 *  before into @p ops_read (may be NULL); 0 when read as recorded. */
HL_API unsigned long hl_trace_thinned(const hl_trace_t *t, size_t *ops_read);
/**@}*/
/** How many bytes of the block op @p i makes the program wrote, as far as
 *  the recording knows: the pages resident when the block was freed or the
 *  recording ended ("#@touched ID PAGES", written for large blocks), at
 *  most @p size; @p size when the trace does not say. */
HL_API size_t hl_trace_op_touched(const hl_trace_t *t, size_t i, size_t size);
/** True when the trace carries time ("#@t US" lines: a recording). */
HL_API bool hl_trace_timed(const hl_trace_t *t);
/** Nanoseconds since the recording started at which op @p i ran: from the
 *  last "#@t" line before it, or, in a trace without them, @p i times
 *  @p op_ns. */
HL_API uint64_t hl_trace_op_ns(const hl_trace_t *t, size_t i, uint64_t op_ns);
/** The trace's last time: its last "#@t" (the recording's end), or the
 *  number of ops times @p op_ns. */
HL_API uint64_t hl_trace_end_ns(const hl_trace_t *t, uint64_t op_ns);
/** The heap a replay runs on. */
HL_API hl_heap_t *hl_replay_heap(const hl_replay_t *rp);
/** The trace a replay runs. */
HL_API const hl_trace_t *hl_replay_trace(const hl_replay_t *rp);
/** Index of the op just performed (the one after_op is called for). */
HL_API size_t hl_replay_op(const hl_replay_t *rp);
/** Address block @p id of the trace holds now (NULL if not live). */
HL_API void *hl_replay_block(const hl_replay_t *rp, long id);
/**@}*/

#ifdef __cplusplus
}
#endif
#endif /* HEAPLAB_H */
