/**
 * @file percpu.h
 * @brief Policy `percpu`: a working model of TCMalloc — per-CPU caches on
 *        restartable sequences, a transfer cache and a central free list
 *        per size class, spans from a page heap of 8 KiB pages.
 *
 * Glossary
 * --------
 *   page      TCMalloc's page: 8 KiB (kPageShift 13), not the kernel's 4 KiB.
 *   span      a run of pages with one descriptor (pc_span_t): free in the
 *             page heap (normal or returned), cut into objects of one size
 *             class (small), or one large block (> 256 KiB).
 *   class     a size class: 1 .. nclasses-1 (0 = "large").  The table is
 *             TCMalloc's (front:percpu) or gperftools' (front:thread), see
 *             percpu_size.c; each class has its pages per span and its
 *             batch (objects moved at once between the tiers).
 *   object    one block of a small span; objects sit `stride` bytes apart
 *             (the class size: 8 for the 8-byte class, 1,024 to an 8 KiB
 *             span, as in gperftools and TCMalloc; a block of 8 bytes
 *             needs only 8-byte alignment, core/policy.h).
 *   pagemap   page number -> span, a two-level radix tree: every page of a
 *             small span, the first and the last page of any other span.
 *   front     the tier a malloc reaches first: per-CPU stacks (percpu) or
 *             per-thread lists (thread, gperftools).
 *   rseq      a Linux restartable sequence: the kernel sends a thread that
 *             was preempted, migrated or signalled inside the critical
 *             section to its abort handler, so a push or pop on "this
 *             CPU's" stack needs neither a lock nor an atomic instruction.
 *   fence     membarrier(PRIVATE_EXPEDITED_RSEQ, cpu): restarts whatever
 *             critical section runs on that CPU now, so a slow path may
 *             change a CPU's stacks from any CPU once it has stopped them
 *             (from the CPU itself, a restartable store stops them).
 *   transfer cache  per class, a stack of objects moved in batches between
 *             the fronts, never touching spans.
 *   central free list  per class, the spans that still have free objects,
 *             in lists by fullness; objects leave from the fullest span so
 *             the emptiest ones drain and go back to the page heap.
 *             front:thread keeps gperftools' one list instead: a span
 *             goes on its head when it is new or gets an object back
 *             while it had none, and objects leave from the head span.
 *   released  free pages given back with MADV_DONTNEED (TCMalloc's
 *             "returned" or "unmapped" pages): still mapped, no RSS.
 *   hugepage  2 MiB of a region, aligned (256 pages): what one kernel
 *             transparent huge page (one TLB entry) can back.  Counted
 *             per hugepage: `used` pages (in small or large spans) and
 *             `released` pages (in returned spans), percpu_hugepage.c.
 *   intact    a hugepage wholly committed with no page released: the
 *             kernel may back it whole.  `broken`: some of its pages
 *             released and some not.
 *   coverage  the share of pages in use that lie on intact hugepages
 *             (TCMalloc's hugepage_frac).
 *   realloc   hysteresis, as both TCMallocs: a block stays while the new
 *             size is from half its allocated size up to that size; one
 *             that grows moves to at least 1.25 times it (pc_realloc).
 *
 * Block diagram
 * -------------
 *
 *   malloc / free ─► front (percpu_cpu.c or percpu_thread.c)
 *     CPU 0 slab: [class 1 stack cur/cap][class 2 ...] ... ◄─ rseq push/pop
 *     CPU 1 slab: [class 1 stack cur/cap][class 2 ...] ...    (percpu_rseq.c)
 *        │ refill on underflow, drain on overflow: half a stack, at most
 *        │ 2^k batches for the k-th miss of a kind in a row; capacities
 *        ▼ grow, and steal from other classes of the CPU when over budget
 *   transfer cache[class] (percpu_transfer.c): [obj obj obj ... ] batches
 *        │ batch
 *        ▼
 *   central free list[class] (percpu_central.c)
 *     fullness 7 ─► span ─► span     (most allocated first)
 *     ...
 *     fullness 0 ─► span             (span empty again ─► page heap)
 *        │ span of class pages
 *        ▼
 *   page heap (percpu_pageheap.c): free spans by length 1..128 pages and
 *     a large list, normal and returned; merged with free neighbours;
 *     grown from regions of the page source (1 GiB reserved, committed as
 *     needed); large blocks (> 256 KiB) are spans of their own.
 *        │ counts, and with hugepage:on where to place and what to release
 *        ▼
 *   hugepages (percpu_hugepage.c): per 2 MiB of a region, pages used and
 *     released;  region:  |H0 used 256|H1 used 80 ...|H2 used 0|
 *     hugepage:on puts a span of up to 128 pages into the most used
 *     hugepage with room (H1 before H2), releases the emptiest first (H2)
 *        │ hl_os_reserve / commit / purge
 *        ▼
 *   page source (core/os.c)
 *
 * Invariants (checked by percpu_check.c)
 * ----------
 *   for every span that is not small: nobjs == 0 (free's hit needs no
 *     state test);
 *   for every small span:  nobjs == |free in span| + allocated, where
 *     allocated == |in front caches| + |in transfer cache| + |live|
 *     (front caches: the CPU stacks in rseq and lock mode, the thread
 *     lists in front:thread); an object counted in allocated that is in
 *     none of them is lost (a cache entry dropped, a batch short);
 *     no object is in two places (span bitmap, a CPU stack or thread list,
 *     the transfer cache);
 *     on the central list of its class  <=>  |free in span| > 0, in the
 *     fullness list allocated * PC_FULLNESS / nobjs (front:thread: 0).
 *   summed over the spans of a class (central[cls].spans of them):
 *     spans * nobjs == free + cached + live.
 *   live is what the heap's request ledger holds: the model counts no
 *     live objects itself (the hits would have to), and asking the
 *     ledger costs the fast path nothing, the checker a lookup per
 *     object neither free nor cached.  With ledger:off only the first
 *     line's counts are checked.  A fork child's objects that the parent's
 *     other threads held stay out for good: fork_orphans of them.
 *   front:thread, for every class: its transfer cache holds whole
 *     batches, no more than slots_now <= slots_max of them.
 *   for every CPU and class:  current <= capacity <= max_cap[class];
 *     for every CPU: capacity_bytes == sum(capacity * size).  The sum
 *     stays within cpu_cache_bytes except that a class whose capacity
 *     is 0 may always grow to one object (percpu_cpu.c), so a CPU may
 *     pass its budget by at most one object per class (not checked).
 *   for every free span: on the page-heap list of its length and kind
 *     (normal or returned), and the lists hold as many spans and pages as
 *     tile the regions and as the counters say; no free neighbour of the
 *     same kind after it in its region (merged); pagemap[first] ==
 *     pagemap[last] == span.
 *   for every class: the central lists hold the spans the counter says,
 *     each of that class on the list of its fullness (front:thread:
 *     list 0), and their free
 *     objects add up to free_objects.
 *   the spans of a region tile it from its base to its frontier.
 *   every page's pagemap entry: its span and class on a small span's
 *     pages, class 0 on every other page (free's hit trusts a nonzero
 *     class); on a quiet heap open_slab[cpu] == that CPU's slab for
 *     every CPU with one, NULL past them (no slab left stopped).
 *   for every hugepage k of a region:  hp_used[k] == pages of small and
 *     large spans inside it, hp_released[k] == pages of returned spans
 *     inside it (a span is counted piece by piece in each hugepage it
 *     covers); with hugepage:on a span of up to 128 pages lies inside
 *     one hugepage (not checked: the counts are).
 *
 * Hugepages (hugepage:on)
 * ---------
 * Google's TCMalloc, read at commit fce3f55d (huge_page_aware_allocator.h,
 * huge_page_filler.h), packs each span of at most half a hugepage inside
 * one hugepage, choosing the hugepage whose longest free range is
 * shortest, then the one with the most allocations; a hugepage that
 * empties goes whole to a cache, and release takes cached whole hugepages
 * before it breaks hugepages in use (emptiest first).  The model keeps
 * two rules: a span of up to 128 pages goes into the most used hugepage
 * with room, and release takes the least used hugepages' free pages
 * first.  It counts used and released pages per hugepage in both modes
 * (the checker recounts them), so the statistics compare the two:
 * intact, full, partial, empty, released, broken, coverage.  Left out:
 * the longest-free-range order, allocation counts, the hugepage cache,
 * regions and hugepage-aligned runs for longer spans.
 *
 * Layers (top to bottom: a file calls functions of its own layer and of
 * the layers below it, never above; tests/house/layers.sh checks this list)
 * ------
 *   percpu.c                          the policy: options, entry points,
 *                                     memalign, trim, init, fork
 *   percpu_dot.c percpu_stats.c percpu_libc.c  snapshot, statistics,
 *                                     the C library's mallinfo, mallopt,
 *                                     malloc_stats as gperftools answers
 *   percpu_check.c                    checker, walker, object marks
 *   percpu_cpu.c percpu_thread.c      the fronts: per-CPU slabs, per-thread
 *                                     lists (gperftools)
 *   percpu_fast.h                     the fronts' hits (pop, push, free's
 *                                     checks), which the shim inlines
 *   percpu_rseq.c percpu_rseq.h       rseq push/pop, CPU number, fence,
 *                                     the mode chosen at start-up
 *   percpu_transfer.c                 the transfer cache
 *   percpu_central.c                  the central free lists
 *   percpu_pageheap.c                 spans, free lists, growth, release
 *   percpu_hugepage.c                 per-hugepage counts, densest-first
 *                                     placement, emptiest-first release,
 *                                     census (hugepage:on, Temeraire)
 *   percpu_pagemap.c                  page -> span radix tree
 *   percpu_size.c                     size-class tables
 *   percpu.h                          types, constants, accessors
 */
#ifndef HL_PERCPU_H
#define HL_PERCPU_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include "policy.h"
#include "os.h"
#include "meta.h"
#include "bits.h"

/** The policy table of `percpu`: its `.name` is what hl_fatal prints. */
extern const hl_policy_t hl_policy_percpu;

/* ---- tunable constants --------------------------------------------------- */
enum {
	PC_PAGE_SHIFT = 13,            /**< TCMalloc's 8 KiB pages */
	PC_MAX_CLASSES = 96,           /**< room for either table (86, 88) */
	PC_MAX_OBJS = 1024,            /**< objects a span may hold (bitmap bits) */
	PC_BITMAP_WORDS = PC_MAX_OBJS / 64,
	PC_FULLNESS = 8,               /**< central lists by fullness */
	PC_PH_LISTS = 128,             /**< page-heap lists of 1..128 pages */
	PC_MAX_CPUS = 256,             /**< CPUs with a slab */
	PC_CPU_IDS = 1 << 16,          /**< entries of open_slab: the sections
					    index it by the low 16 bits of
					    rseq's cpu_id (Linux numbers
					    CPUs below NR_CPUS, at most 8192
					    on x86-64; the "not registered"
					    values -1 and -2 give 0xffff and
					    0xfffe, whose entries stay NULL) */
	PC_MAX_REGIONS = 256,          /**< reservations of the page heap */
	PC_LEAF_BITS = 18,             /**< pages per pagemap leaf: 2 GiB */
	PC_ROOT_BITS = 47 - PC_PAGE_SHIFT - PC_LEAF_BITS,
	PC_TC_BATCHES = 16,            /**< transfer cache: batches per class
					    (front:thread: slots at first) */
	PC_TC_MAX_SLOTS = 64,          /**< front:thread: most slots of a class
					    (kMaxNumTransferEntries) */
	PC_TC_STEAL = 64 << 10,        /**< a thread cache's max_size: first, and
					    each step (gperftools' kStealAmount) */
	PC_TC_MIN = 512 << 10,         /**< ... when the budget is spent
					    (kMinThreadCacheSize) */
	PC_CPU_MAX_SLOTS = 2048,       /**< largest per-CPU stack of a class */
	PC_MAX_MOVE = 128,             /**< objects a per-CPU miss moves at once
					    (TCMalloc's kMaxObjectsToMove) */
	PC_SLAB_SHIFT = 18,            /**< a CPU's slab is 256 KiB of address
					    space (140 KiB used with TCMalloc's
					    classes), found by shifting the CPU
					    number, as TCMalloc's (internal/
					    percpu_tcmalloc.h: slabs + (cpu <<
					    shift); cpu_cache.h: 18 is
					    kMaxBasePerCpuShift, where its dynamic
					    sizing starts at 14 and grows; google/
					    tcmalloc fce3f55, 2026-08) */
	PC_THREAD_MAX_LENGTH = 8192,   /**< gperftools' kMaxDynamicFreeListLength */
	PC_HUGE_SHIFT = 21,            /**< 2 MiB hugepages (TCMalloc's kHugePageShift) */
	PC_HUGE_PAGES = 1 << (PC_HUGE_SHIFT - PC_PAGE_SHIFT), /**< pages per hugepage: 256 */
};
/** Bytes in a hugepage (2 MiB). */
#define PC_HUGE ((size_t)1 << PC_HUGE_SHIFT)
/** Bytes in a page (8 KiB). */
#define PC_PAGE ((size_t)1 << PC_PAGE_SHIFT)
/** Largest small request: 256 KiB (TCMalloc's and gperftools' kMaxSize). */
#define PC_MAX_SMALL ((size_t)256 << 10)
/** Address space a region reserves at least (1 GiB). */
#define PC_REGION ((size_t)1 << 30)
/** Bytes a region commits at least when the page heap grows (1 MiB). */
#define PC_GROW ((size_t)1 << 20)

/** @cond HL_COMPILE_CHECKS */
_Static_assert(PC_MAX_OBJS % 64 == 0, "bitmap in whole words");
_Static_assert(PC_REGION % PC_PAGE == 0 && PC_GROW % PC_PAGE == 0, "page multiples");
_Static_assert(PC_REGION % PC_HUGE == 0, "regions hold whole hugepages");
_Static_assert(PC_HUGE_PAGES <= UINT16_MAX, "a hugepage's counts fit 16 bits");
/** @endcond */

/* ---- size classes (percpu_size.c) --------------------------------------- */

/** One table of size classes: class 0 is "large". */
typedef struct pc_classes {
	const char *source;                 /**< where the table comes from */
	unsigned n;                         /**< classes including 0 */
	uint32_t size[PC_MAX_CLASSES];      /**< usable bytes */
	uint32_t stride[PC_MAX_CLASSES];    /**< bytes between objects (the size) */
	uint16_t pages[PC_MAX_CLASSES];     /**< pages per span */
	uint16_t batch[PC_MAX_CLASSES];     /**< objects moved at once */
	uint16_t nobjs[PC_MAX_CLASSES];     /**< objects per span */
	uint64_t inv[PC_MAX_CLASSES];       /**< hl_exact_div_init of the stride:
						 free's hit divides by a multiply */
	uint8_t tz[PC_MAX_CLASSES];         /**< its shift */
	uint8_t lookup[(PC_MAX_SMALL >> 7) + (1024 >> 3) + 1]; /**< see pc_class_of */
} pc_classes_t;

/** @p off / stride of class @p cls when the stride divides @p off, else
 *  a number no span's nobjs reaches (hl_exact_div). */
static inline uint64_t pc_exact_index(const pc_classes_t *c, unsigned cls, uint64_t off)
{
	return hl_exact_div(off, c->inv[cls], c->tz[cls]);
}

/** Fills @p c with TCMalloc's table (8 KiB pages, 16-byte alignment). */
void pc_classes_tcmalloc(pc_classes_t *c);
/** Fills @p c with the classes gperftools 2.10 computes at start-up. */
void pc_classes_gperftools(pc_classes_t *c);

/** The class of a request of @p n bytes, any @p n (the hits pass what
 *  the program asked): 8-byte steps to 1 KiB, 128-byte steps above, as
 *  TCMalloc's SizeMap::ClassIndexMaybe (tcmalloc/sizemap.h, google/tcmalloc
 *  fce3f55, 2026-08; gperftools 2.10's common.h the same), which also tests
 *  the range only after the likely small case, so a small request pays one
 *  comparison.  Above PC_MAX_SMALL: 0, which is no class (every front's
 *  stack and list of class 0 stays empty, so a hit misses).  n = 0 gets
 *  class 1, as the policy would give it (the core asks it for 1 byte). */
static inline unsigned pc_class_of(const pc_classes_t *c, size_t n)
{
	size_t i;
	if (HL_LIKELY(n <= 1024))
		i = (n + 7) >> 3;
	else if (n <= PC_MAX_SMALL)
		i = (n + 127 + (120 << 7)) >> 7;
	else
		return 0;
	return c->lookup[i];
}

/* ---- spans and the pagemap ------------------------------------------------ */

/** What a span is (pc_span_t.state). */
enum pc_span_state {
	PC_SPAN_FREE = 1,      /**< in the page heap, pages resident (normal) */
	PC_SPAN_RETURNED,      /**< in the page heap, purged (released) */
	PC_SPAN_SMALL,         /**< cut into objects of one class */
	PC_SPAN_LARGE,         /**< one large block */
};

/** A span's descriptor (from the span pool).  Fields change under the
 *  page-heap lock while the span is free or large, under its class's
 *  central lock while it is small (start, npages, cls set before).
 *  The page heap's fields come first and share no 8-byte word with the
 *  central list's: the page heap reads a small neighbour's state and
 *  region while that span's central lock is changing its cls or bucket,
 *  and a compiler may read two adjacent fields as one wider word (GCC
 *  did, and ThreadSanitizer reported it). */
typedef struct pc_span {
	uintptr_t start;               /**< first byte, page aligned */
	size_t npages;                 /**< length in pages */
	uint8_t state;                 /**< enum pc_span_state */
	uint8_t unused;                /**< (keeps region aligned) */
	uint16_t region;               /**< index in the page heap's regions */
	uint32_t nobjs;                /**< objects of a small span */
	uint32_t allocated;            /**< objects out of the span */
	uint16_t cls;                  /**< size class (small spans) */
	uint8_t bucket;                /**< central fullness list, PC_NO_LIST */
	struct pc_span *prev;          /**< previous on its page-heap or central list */
	struct pc_span *next;          /**< next on its page-heap or central list */
	void *objects;                 /**< front:thread: the span's free objects,
					    linked through their first word, as
					    gperftools 2.10 keeps them (span.h) */
	uint64_t free_bits[PC_BITMAP_WORDS]; /**< 1 = object free in the span */
	uint64_t mark[PC_BITMAP_WORDS];      /**< checker's and walker's scratch
						  (page-heap lock): found cached */
} pc_span_t;

/** pc_span_t.bucket of a span on no central list (no free object, or
 *  not small). */
enum { PC_NO_LIST = 0xff };

/** Page number -> span and class (percpu_pagemap.c).  An entry is the
 *  span's address with, in its top 16 bits, the size class of a small
 *  span's page (TCMalloc's PackedSpanAndSizeclass, tcmalloc/pagemap.h,
 *  google/tcmalloc fce3f55): free's hit gets both from one load, and the
 *  class table's load starts without waiting for the span's.  The class
 *  bits are 0 on every page that is not in a small span; a small span's
 *  pages lose theirs when it goes back to the page heap, so a nonzero
 *  class always names the live small span the page belongs to (the
 *  checker verifies it).  Leaves are made under the page-heap lock and
 *  published with a release store; reads take no lock. */
typedef struct pc_pagemap {
	/** 2^PC_ROOT_BITS leaf pointers (512 KiB), inside the policy's state
	 *  so that free reaches a leaf with one load from the state pointer it
	 *  holds anyway; the state is a metadata region, so only the entries
	 *  in use become resident */
	uintptr_t *_Atomic root[(size_t)1 << PC_ROOT_BITS];
	hl_os_t *os;                   /**< where the leaves come from */
} pc_pagemap_t;

/** Where an entry keeps its class: above the 47 bits of a user address. */
enum { PC_ENTRY_CLASS_SHIFT = 48 };
/** @cond HL_COMPILE_CHECKS */
_Static_assert(PC_MAX_CLASSES <= 1 << (64 - PC_ENTRY_CLASS_SHIFT), "a class fits an entry's top bits");
/** @endcond */

/** The span of a pagemap entry. */
static inline pc_span_t *pc_entry_span(uintptr_t e)
{
	return (pc_span_t *)(e & (((uintptr_t)1 << PC_ENTRY_CLASS_SHIFT) - 1));
}
/** The class of a pagemap entry: 0 unless its page is in a small span. */
static inline unsigned pc_entry_class(uintptr_t e)
{
	return (unsigned)(e >> PC_ENTRY_CLASS_SHIFT);
}

/** Readies @p m, whose root is still zero (leaves come later, from
 *  @p os's metadata pages). */
void pc_pagemap_init(pc_pagemap_t *m, hl_os_t *os);
/** The entry recorded for the page holding @p addr, or 0. */
static inline uintptr_t pc_pagemap_entry(const pc_pagemap_t *m, uintptr_t addr)
{
	uintptr_t page = addr >> PC_PAGE_SHIFT;
	uintptr_t hi = page >> PC_LEAF_BITS;
	if (hi >> PC_ROOT_BITS)
		return 0;
	uintptr_t *leaf = atomic_load_explicit(&m->root[hi], memory_order_acquire);
	return leaf ? leaf[page & (((uintptr_t)1 << PC_LEAF_BITS) - 1)] : 0;
}
/** The span recorded for the page holding @p addr, or NULL. */
static inline pc_span_t *pc_pagemap_get(const pc_pagemap_t *m, uintptr_t addr)
{
	return pc_entry_span(pc_pagemap_entry(m, addr));
}
/** pc_pagemap_entry for free's hit: the root index is masked, not
 *  tested, so an address beyond 47 bits gives some entry (or 0) that its
 *  caller must find does not hold it. */
static inline uintptr_t pc_pagemap_entry_masked(const pc_pagemap_t *m, uintptr_t addr)
{
	uintptr_t page = addr >> PC_PAGE_SHIFT;
	uintptr_t hi = (page >> PC_LEAF_BITS) & (((uintptr_t)1 << PC_ROOT_BITS) - 1);
	uintptr_t *leaf = atomic_load_explicit(&m->root[hi], memory_order_acquire);
	return leaf ? leaf[page & (((uintptr_t)1 << PC_LEAF_BITS) - 1)] : 0;
}
/** Records @p s, with class @p cls (0 unless the pages are a small
 *  span's), for @p npages pages from @p addr (page-heap lock held); -1
 *  when a leaf cannot be made. */
int pc_pagemap_set(pc_pagemap_t *m, uintptr_t addr, size_t npages, pc_span_t *s, unsigned cls);

/* ---- the page heap (percpu_pageheap.c) ------------------------------------ */

/** One reservation of the page heap: committed below `frontier`.  Its
 *  base is 2 MiB aligned and its size a multiple of 2 MiB, so hugepage k
 *  of the region is [base + k * 2 MiB, base + (k + 1) * 2 MiB). */
typedef struct pc_region {
	uintptr_t base;                /**< first byte (reserved PROT_NONE) */
	size_t size;                   /**< bytes reserved */
	size_t frontier;               /**< bytes committed from base */
	uint16_t *hp_used;             /**< per hugepage: pages in use (metadata) */
	uint16_t *hp_released;         /**< per hugepage: pages released */
} pc_region_t;

/** A list of spans (doubly linked through prev/next). */
typedef struct pc_list {
	pc_span_t *head;               /**< first span, NULL when empty */
	size_t count;                  /**< spans on it */
} pc_list_t;

/** The page heap: every field under `lock` (TCMalloc's pageheap_lock). */
typedef struct pc_pageheap {
	pthread_mutex_t lock;          /**< guards every other field */
	hl_heap_t *heap;               /**< the heap (its clock: release_rate) */
	hl_os_t *os;                   /**< the heap's page source */
	pc_pagemap_t map;              /**< page -> span (read without the lock) */
	hl_meta_pool_t spans;          /**< span descriptors */
	pc_list_t normal[PC_PH_LISTS + 1];   /**< free, resident; [0] = longer */
	pc_list_t returned[PC_PH_LISTS + 1]; /**< free, purged; [0] = longer */
	pc_region_t regions[PC_MAX_REGIONS]; /**< reservations, in order made */
	unsigned nregions;                   /**< regions in use */
	size_t free_pages;                   /**< pages on the normal lists */
	size_t returned_pages;               /**< pages on the returned lists */
	size_t small_spans;                  /**< small spans in use */
	size_t large_spans;                  /**< large spans in use */
	size_t large_pages;                  /**< pages of large spans */
	bool hugepage;                       /**< hugepage:on: densest-first
						  placement, emptiest-first release */
	bool sbrk;                           /**< the first region is a break
						  mapped as it grows (gperftools) */
	hl_brk_t brk;                        /**< that break, when in use */
	uint64_t released_bytes;             /**< ever purged by release */
	uint64_t reused_returned_bytes;      /**< returned pages handed out again */
	/* release_rate: bytes owed to the OS, paid from the free path */
	size_t release_rate;                 /**< bytes per second, 0 = never */
	uint64_t release_clock_ns;           /**< last time the debt grew */
	double release_debt;                 /**< bytes to release now */
	unsigned release_tick;               /**< frees until the next look */
} pc_pageheap_t;

/** Makes an empty page heap on @p os (in zeroed memory) releasing
 *  @p release_rate bytes per second (0: only on hl_trim), hugepage-aware
 *  when @p hugepage, its first region a break when @p sbrk. */
void pc_ph_init(pc_pageheap_t *ph, hl_heap_t *h, size_t release_rate, bool hugepage, bool sbrk);
/** A span of @p npages pages starting at a multiple of @p align_pages
 *  pages, in use as @p state (PC_SPAN_SMALL: every page is recorded in
 *  the pagemap with class @p cls; PC_SPAN_LARGE: the first and the last,
 *  @p cls 0); NULL when out of memory. */
pc_span_t *pc_ph_alloc(pc_pageheap_t *ph, size_t npages, size_t align_pages, enum pc_span_state state,
		       unsigned cls);
/** Gives span @p s back (lock not held by the caller). */
void pc_ph_free(pc_pageheap_t *ph, pc_span_t *s);
/** Same, with the lock already held. */
void pc_ph_free_locked(pc_pageheap_t *ph, pc_span_t *s);
/** Releases at least @p bytes of free pages (all with SIZE_MAX); returns
 *  the bytes released.  Lock held by the caller. */
size_t pc_ph_release_locked(pc_pageheap_t *ph, size_t bytes);
/** The span of the page holding @p p, or NULL (no lock). */
static inline pc_span_t *pc_ph_span_of(const pc_pageheap_t *ph, const void *p)
{
	return pc_pagemap_get(&ph->map, (uintptr_t)p);
}
/** Pushes @p s at the head of @p l. */
static inline void pc_list_push(pc_list_t *l, pc_span_t *s)
{
	s->prev = NULL;
	s->next = l->head;
	if (l->head)
		l->head->prev = s;
	l->head = s;
	l->count++;
}
/** Unlinks @p s from @p l. */
static inline void pc_list_remove(pc_list_t *l, pc_span_t *s)
{
	if (s->prev)
		s->prev->next = s->next;
	else
		l->head = s->next;
	if (s->next)
		s->next->prev = s->prev;
	s->prev = s->next = NULL;
	l->count--;
}
/** Index of the page-heap list of a free span of @p npages pages. */
static inline size_t pc_ph_list_index(size_t npages)
{
	return npages <= PC_PH_LISTS ? npages : 0;
}
/** In a fork child: makes the page heap's locks anew. */
void pc_ph_fork_child(pc_pageheap_t *ph);
/** Bytes of free resident pages (pages on the normal lists). */
static inline size_t pc_ph_free_bytes(const pc_pageheap_t *ph)
{
	return ph->free_pages * PC_PAGE;
}

/* ---- hugepages (percpu_hugepage.c), called by the page heap --------------- */

/** Which per-hugepage count pc_hp_add changes. */
enum pc_hp_count {
	PC_HP_USED,                    /**< pages in small or large spans */
	PC_HP_RELEASED,                /**< pages in returned spans */
};
/** The order pc_hp_consider ranks free runs in. */
enum pc_hp_order {
	PC_HP_DENSEST,                 /**< placement: most used hugepage first,
					    resident before released, then lowest
					    address */
	PC_HP_EMPTIEST,                /**< release: least used hugepage first,
					    then lowest address */
};
/** A free run chosen by pc_hp_consider: the pages of one free span that
 *  lie inside one hugepage. */
typedef struct pc_hp_pick {
	pc_span_t *span;               /**< the free span, NULL: none yet */
	uintptr_t at;                  /**< first byte of the run */
	size_t npages;                 /**< pages of the run */
	unsigned used;                 /**< pages in use in its hugepage */
} pc_hp_pick_t;
/** What the hugepages of the page heap look like (the statistics). */
typedef struct pc_hp_census {
	size_t hugepages;              /**< touched by committed space */
	size_t intact;                 /**< wholly committed, no page released */
	size_t full;                   /**< every page in use */
	size_t partial;                /**< some pages in use, not all */
	size_t empty;                  /**< no page in use */
	size_t released;               /**< every page released */
	size_t broken;                 /**< some pages released, some not */
	size_t used_pages;             /**< pages in use */
	size_t used_on_intact;         /**< of those, on intact hugepages */
} pc_hp_census_t;

/** Makes region @p r's counts (all zero) from @p os's metadata pages;
 *  -1 when out of memory. */
int pc_hp_region_init(pc_region_t *r, hl_os_t *os);
/** Hugepages of region @p r that its committed space touches. */
static inline size_t pc_hp_touched(const pc_region_t *r)
{
	return (r->frontier + PC_HUGE - 1) >> PC_HUGE_SHIFT;
}
/** Adds @p sign (+1 or -1) times the pages of [@p start, + @p npages
 *  pages) to count @p which of each hugepage of @p r they lie in. */
void pc_hp_add(pc_region_t *r, uintptr_t start, size_t npages, enum pc_hp_count which, int sign);
/** Offers free span @p s (state FREE or RETURNED) to @p pick: each of its
 *  runs inside one hugepage that has at least @p want pages replaces
 *  the pick when it ranks before it in @p order. */
void pc_hp_consider(const pc_pageheap_t *ph, pc_span_t *s, size_t want, enum pc_hp_order order,
		    pc_hp_pick_t *pick);
/** Counts the hugepages of @p ph by kind into @p c (lock held). */
void pc_hp_census(const pc_pageheap_t *ph, pc_hp_census_t *c);

/* ---- central free lists (percpu_central.c) -------------------------------- */

/** The central free list of one class: every field under `lock`. */
typedef struct pc_central {
	pthread_mutex_t lock;          /**< guards the fields and the spans' */
	pc_list_t lists[PC_FULLNESS];  /**< spans with free objects, by fullness
					    (front:thread: all on list 0) */
	size_t free_objects;           /**< free objects in those spans */
	size_t spans;                  /**< small spans of this class in use */
} pc_central_t;

/** The policy's state (struct pc_state, below). */
typedef struct pc_state pc_state_t;

/** Takes up to @p n objects of class @p cls into @p out; returns how
 *  many (0 when out of memory). */
unsigned pc_central_remove(pc_state_t *s, unsigned cls, void **out, unsigned n);
/** Puts @p n objects of class @p cls back into their spans (a span whose
 *  objects are all back goes to the page heap). */
void pc_central_insert(pc_state_t *s, unsigned cls, void *const *objs, unsigned n);
/** Central list of a span with free objects: by fullness, or under
 *  front:thread (@p one_list) list 0, gperftools' one nonempty_ list. */
static inline unsigned pc_fullness(const pc_span_t *sp, bool one_list)
{
	return one_list ? 0 : (unsigned)((uint64_t)sp->allocated * PC_FULLNESS / sp->nobjs);
}

/* ---- transfer cache (percpu_transfer.c) ----------------------------------- */

/** The transfer cache of one class: every field under `lock`. */
typedef struct pc_transfer {
	pthread_mutex_t lock;          /**< guards the other fields */
	unsigned count;                /**< objects held */
	unsigned capacity;             /**< objects it may hold */
	unsigned slots_now;            /**< front:thread: batches it may hold now
					    (gperftools' cache_size_) ... */
	unsigned slots_max;            /**< ... and at most (max_cache_size_) */
	void **slots;                  /**< capacity pointers (metadata) */
	uint64_t hits;                 /**< removes it served (some objects) */
	uint64_t misses;               /**< removes it could not serve at all */
} pc_transfer_t;

/** Takes up to @p n objects of class @p cls into @p out: what the
 *  transfer cache holds, the rest from the central list; returns how
 *  many (fewer only when out of memory). */
unsigned pc_transfer_remove(pc_state_t *s, unsigned cls, void **out, unsigned n);
/** Puts @p n objects of class @p cls into the transfer cache as far as
 *  it has room, the rest into their spans through the central list. */
void pc_transfer_insert(pc_state_t *s, unsigned cls, void *const *objs, unsigned n);
/** Moves everything the transfer caches hold back to the central lists. */
void pc_transfer_drain(pc_state_t *s);

/* ---- the per-CPU front (percpu_cpu.c, percpu_rseq.c) ---------------------- */

/** Header of one class's stack in a CPU's slab.  In rseq mode `current`
 *  is written only inside a critical section on that CPU, or by a slow
 *  path holding the CPU's lock with the slab stopped (from that CPU, or
 *  from another and fenced). */
typedef struct pc_stack {
	uint32_t current;              /**< objects on the stack */
	uint32_t capacity;             /**< objects it may hold now */
} pc_stack_t;

/** One CPU's slab: a header per class, then the slots (stack of class c
 *  at slots + slot_off[c]).  Whether it is stopped is not in the slab
 *  but in the state's open_slab table, which the sections read anyway. */
typedef struct pc_slab {
	pc_stack_t stacks[PC_MAX_CLASSES]; /**< one header per class; the
					     void *slots[] follow the struct */
} pc_slab_t;

/** Per-CPU bookkeeping outside the slab, under `lock`. */
typedef struct pc_cpu {
	pthread_mutex_t lock;          /**< taken by every slow path on the CPU */
	size_t capacity_bytes;         /**< sum of capacity * size */
	unsigned steal_next;           /**< round-robin victim class */
	uint8_t last_overflow[PC_MAX_CLASSES]; /**< the class's last miss was
					    an overflow (else an underflow) */
	uint16_t successive[PC_MAX_CLASSES]; /**< misses of that kind in a row
					    before this one (TCMalloc's
					    `successive`; a fresh class counts
					    as having underflowed once) */
	uint64_t underflows;           /**< mallocs that found the stack empty */
	uint64_t overflows;            /**< frees that found the stack full */
	uint64_t grows;                /**< misses that grew a capacity (by one
					    object up to a batch) */
	uint64_t steals;               /**< a batch of capacity taken from
					    another class to stay in budget */
} __attribute__((aligned(64))) pc_cpu_t;
/* (aligned: the records sit side by side in s->cpus, and at 88 bytes CPU
 * 0's counters shared a line with CPU 1's mutex, which lock mode takes on
 * every call.  bench/HISTORY.md, 2026-12-02 09:00: two threads in lock
 * mode, median of 5 runs, 1.57 s before and 1.28 s after, one thread
 * 1.23 s.) */

/** How the per-CPU stacks are reached (chosen at start-up). */
enum pc_mode {
	PC_MODE_RSEQ = 0,              /**< per-CPU stacks in rseq critical sections */
	PC_MODE_LOCK,                  /**< per-CPU stacks under the CPU's mutex */
	PC_MODE_THREAD,                /**< front:thread, gperftools' thread caches */
};

/* ---- the per-thread front (percpu_thread.c) ------------------------------- */

/** A free object in a thread cache list: its first word links it. */
typedef struct pc_link {
	struct pc_link *next;          /**< next free object of the list */
} pc_link_t;

/** A thread's cache (t->policy_tls): one free list per class, each
 *  gperftools' FreeList (head, length, max_length, low water, overages).
 *  The lists are kept as one array per field, so that every field of
 *  class cls is one load or store with cls as a scaled index and no
 *  address to compute first (fewer instructions on the hits).  Written
 *  by its thread only; the list of caches under pc_state_t.threads_lock. */
typedef struct pc_tcache {
	pc_link_t *head[PC_MAX_CLASSES];    /**< first free object, NULL when empty */
	uint32_t length[PC_MAX_CLASSES];    /**< objects on the list */
	uint32_t max_length[PC_MAX_CLASSES]; /**< grows with use (slow start) */
	uint32_t low_water[PC_MAX_CLASSES]; /**< fewest objects since the last scavenge */
	uint32_t overages[PC_MAX_CLASSES];  /**< times length passed max_length */
	size_t size;                   /**< bytes cached */
	size_t max_size;               /**< bytes allowed before a scavenge */
	pthread_t owner;               /**< the thread it belongs to */
	struct pc_tcache *prev;        /**< previous live cache */
	struct pc_tcache *next;        /**< next live cache */
	uint64_t hits;                 /**< mallocs served by a list */
	uint64_t misses;               /**< mallocs that found their list empty */
	uint64_t scavenges;            /**< times size passed max_size */
} pc_tcache_t;

/* ---- the fronts' entry points (percpu_cpu.c, percpu_thread.c) ------------ */

/** An object of class @p cls from this CPU's stack (NULL: out of memory). */
void *pc_cpu_alloc(pc_state_t *s, unsigned cls);
/** Object @p p of class @p cls onto this CPU's stack. */
void pc_cpu_free(pc_state_t *s, unsigned cls, void *p);
/** pc_cpu_alloc without the event of a hit (event.h, "Quiet copies"):
 *  for a heap nobody listens to. */
void *pc_cpu_alloc_quiet(pc_state_t *s, unsigned cls);
/** pc_cpu_free without the event of a push (event.h, "Quiet copies"):
 *  for a heap nobody listens to. */
void pc_cpu_free_quiet(pc_state_t *s, unsigned cls, void *p);
/** Empties every CPU's stacks into the transfer caches (capacities 0). */
void pc_cpu_drain_all(pc_state_t *s);
/** Bytes of objects on CPU @p cpu's stacks (no lock: a quiet heap). */
size_t pc_cpu_cached_bytes(const pc_state_t *s, unsigned cpu);
/** Takes every CPU's mutex, in CPU order (fork_prepare). */
void pc_cpu_lock_all(pc_state_t *s);
/** Releases every CPU's mutex (fork_parent). */
void pc_cpu_unlock_all(pc_state_t *s);
/** In a fork child: every CPU's mutex anew, no slab stopped. */
void pc_cpu_fork_child(pc_state_t *s);

/** What a thread's policy_tls holds before its cache is made
 *  (hl_policy_t.tls_empty): a cache nobody writes, every list empty (the
 *  malloc hit misses) with max_length 0 (the free hit refuses), so that
 *  the hits of front:thread need no NULL test, as mimalloc's empty heap
 *  (mimalloc 2.0.9, src/init.c: `_mi_heap_empty`). */
extern const pc_tcache_t pc_no_cache;
/** @p t's cache, or NULL when it has none yet (policy_tls pc_no_cache,
 *  or NULL when a host's record, core/policy.h). */
static inline pc_tcache_t *pc_thread_cache_made(const hl_thread_t *t)
{
	return hl_policy_tls_made(t, &pc_no_cache);
}
/** The calling thread's cache, made on its first use (NULL: no memory). */
pc_tcache_t *pc_thread_cache(pc_state_t *s, hl_thread_t *t);
/** An object of class @p cls from thread cache @p tc, fetching a batch
 *  from the transfer cache when the list is empty (NULL: no memory). */
void *pc_thread_alloc(pc_state_t *s, pc_tcache_t *tc, unsigned cls);
/** Object @p p of class @p cls onto @p tc's list; a list past its
 *  max_length gives a batch back, a cache past max_size scavenges. */
void pc_thread_free(pc_state_t *s, pc_tcache_t *tc, unsigned cls, void *p);
/** Thread @p t ends: its cache gives every object back and is freed. */
void pc_thread_exit(pc_state_t *s, hl_thread_t *t);
/** Gives every object of @p tc back to the transfer caches (hl_trim). */
void pc_thread_flush(pc_state_t *s, pc_tcache_t *tc);
/** In a fork child: makes the lock anew and unlinks every other
 *  thread's cache (those threads do not exist in the child; their
 *  objects stay out of their spans for good). */
void pc_thread_fork_child(pc_state_t *s);

/* ---- checker, walker, stats, snapshot ------------------------------------- */

/** The checker (hl_policy_t.check): every invariant above; returns the
 *  number of broken ones, each reported in @p r. */
int pc_check(void *st, hl_report_t *r);
/** The walker (hl_policy_t.walk): every object of every small span
 *  (live, cached or free) and every large or free span, region by
 *  region, in address order within a region. */
int pc_walk(void *st, hl_walk_fn fn, void *arg);
/** The statistics (hl_policy_t.stats), see percpu_stats.c. */
void pc_stats(void *st, hl_statw_t *w);
/** mallinfo, mallopt and malloc_stats as gperftools 2.10 answers them
 *  (percpu_libc.c). */
extern const struct hl_libc_api pc_libc_api;
/** The picture (hl_policy_t.snapshot), see percpu_dot.c. */
void pc_snapshot(void *st, hl_dot_t *d);
/** Marks every cached object in its span's `mark` bits (checker's and
 *  walker's first pass); reports objects found twice or in no span. */
int pc_mark_cached(pc_state_t *s, hl_report_t *r);
/** Objects handed out of their spans that are in no cache and not live
 *  (by the heap's ledger; 0 with ledger:off): a fork child's orphans.
 *  Quiet heap, page-heap lock not held. */
size_t pc_count_lost(pc_state_t *s);

/* ---- the policy state ---------------------------------------------------- */

/** The state of one `percpu` heap: the three tiers and both fronts. */
struct pc_state {
	hl_heap_t *heap;               /**< the heap this state belongs to */
	hl_os_t *os;                   /**< the heap's page source */
	bool debug;                    /**< debug:on (the core's guard runs) */
	enum pc_mode mode;             /**< set once at init */
	bool rseq_usable;              /**< rseq + fence work here */
	pc_classes_t cl;               /**< the table in use */
	pc_pageheap_t ph;              /**< the back end */
	pc_central_t central[PC_MAX_CLASSES];   /**< central list per class */
	pc_transfer_t transfer[PC_MAX_CLASSES]; /**< transfer cache per class */
	/* per-CPU front */
	unsigned ncpus;                /**< CPUs with a slab */
	size_t slab_stride;            /**< bytes per CPU slab: 1 << PC_SLAB_SHIFT */
	uint32_t slot_off[PC_MAX_CLASSES];   /**< byte offset of class c's slots */
	uint32_t max_cap[PC_MAX_CLASSES];    /**< largest capacity of class c */
	size_t cpu_cache_bytes;        /**< capacity budget of one CPU */
	char *slabs;                   /**< ncpus * slab_stride, metadata */
	pc_cpu_t *cpus;                /**< ncpus records, metadata */
	long rseq_offset;              /**< glibc's __rseq_offset, read once
					    (the sections load it from here:
					    one load, where the variable's
					    own address is one more) */
	_Atomic uint64_t restarts;     /**< rseq critical sections aborted */
	_Atomic uint64_t fences;       /**< slow paths that fenced a CPU (stopped its
					    slab from another CPU) */
	/* per-thread front */
	pthread_mutex_t threads_lock;  /**< guards the list of thread caches */
	pc_tcache_t *tcaches;          /**< live thread caches */
	hl_meta_pool_t tc_pool;        /**< where thread caches come from */
	size_t thread_cache_bytes;     /**< what all thread caches' max_size may add up to */
	ptrdiff_t tc_unclaimed;        /**< thread_cache_bytes less every cache's
					    max_size (under threads_lock; below 0
					    when a cache started at PC_TC_MIN) */
	_Atomic unsigned evict_next;   /**< front:thread: the class whose transfer
					    cache a full one asks for a slot next
					    (gperftools' race_counter) */
	size_t fork_orphans;           /**< objects a fork left out of their
					    spans for good (the parent's other
					    threads held them): set in the child */
	/** CPU number -> its slab while no slow path has it stopped; NULL
	 *  while one has, and for every number without a slab.  A section
	 *  reaches its slab and learns that it may use it with one load and
	 *  one test.  TCMalloc caches the current CPU's slab address in the
	 *  thread instead (tcmalloc_slabs, internal/percpu.h, google/tcmalloc
	 *  fce3f55), tagged so that the kernel's write of cpu_id_start on
	 *  every preemption invalidates it; that overlaps the rseq area, which
	 *  here is glibc's, so the model keeps the pointer per CPU, where a
	 *  stop clears it for every thread at once.  Written under the CPU's
	 *  lock; 512 KiB of address space, of which the first page is used. */
	pc_slab_t *_Atomic open_slab[PC_CPU_IDS];
};

/** The slab of CPU @p cpu. */
static inline pc_slab_t *pc_slab(const pc_state_t *s, unsigned cpu)
{
	return (pc_slab_t *)(s->slabs + (size_t)cpu * s->slab_stride);
}
/** The slots of class @p cls in slab @p sl. */
static inline void **pc_slots(const pc_state_t *s, pc_slab_t *sl, unsigned cls)
{
	return (void **)((char *)sl + s->slot_off[cls]);
}
/** Index of object @p p in small span @p sp, or -1 when p is not the
 *  start of one of its objects. */
static inline long pc_obj_index(const pc_state_t *s, const pc_span_t *sp, const void *p)
{
	uint64_t i = pc_exact_index(&s->cl, sp->cls, (uintptr_t)p - sp->start);
	return i < sp->nobjs ? (long)i : -1;
}

/** Aborts with "heaplab: percpu: <what> (<p>)". */
static inline __attribute__((noreturn, cold)) void pc_fatal(const char *what, const void *p)
{
	hl_fatal(&hl_policy_percpu, what, p);
}
/** Nanoseconds of the page heap's heap's clock (hl_clock_now_ns: the real
 *  clock, or a replay's). */
#define pc_now_ns(ph) hl_clock_now_ns((ph)->heap)
#endif
