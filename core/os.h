/**
 * @file os.h
 * @brief The page source: the only way any heaplab code gets memory from
 *        the kernel.  os.c is the only file that calls mmap, munmap,
 *        madvise, mprotect or mincore.
 *
 * Every heap has one hl_os_t.  It remembers every region the heap has
 * reserved (so destroy gives all of them back, and resident bytes are
 * measured with mincore on exactly the heap's own memory) and counts every
 * call and byte.
 *
 *   reserve ──► [ PROT_NONE address space ]        reserved_bytes += n
 *   commit  ──► [ read/write pages        ]        committed_bytes += n
 *   purge   ──► MADV_DONTNEED: RSS gone, pages stay read/write (read as 0)
 *   purge_lazy ─► MADV_FREE: kernel may take them when it needs memory
 *   decommit ─► MADV_DONTNEED + PROT_NONE           committed_bytes -= n
 *   release ──► munmap of a whole region             reserved_bytes -= n
 *
 * Preconditions (not checked on the fast path): addresses and lengths
 * given to commit/decommit/purge/protect are page-aligned and lie inside
 * one region this page source reserved; commit is not called twice on the
 * same page without a decommit between; release names a whole region by
 * its base.
 *
 * The emulated program break (hl_brk_t) is a region whose committed
 * prefix grows and shrinks only at its end, like sbrk(); like the kernel's
 * brk it maps address space only as far as the break has gone.
 */
#ifndef HL_OS_H
#define HL_OS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "stats.h"

/** Counted calls. */
enum hl_os_call {
	HL_OS_MMAP, HL_OS_MUNMAP, HL_OS_MADVISE_DONTNEED, HL_OS_MADVISE_FREE,
	HL_OS_MPROTECT, HL_OS_MINCORE, HL_OS_BRK, HL_OS_MREMAP, HL_OS_NCALLS
};

/** Region kinds, for statistics and pictures. */
enum hl_region_kind { HL_REGION_MAP = 0, HL_REGION_BRK, HL_REGION_META };

/** One region in the page source's table: a mapping this heap reserved.
 *  Written under hl_os_t.lock. */
typedef struct hl_region_rec {
	uintptr_t base;        /**< 0 = empty slot */
	size_t size;           /**< bytes mapped, a page multiple (set once, but
	                            a break's follows it) */
	unsigned seq;          /**< k in "region#k": order of reservation */
	unsigned kind;         /**< enum hl_region_kind */
	size_t *brk_end;       /**< for BRK regions: bytes below the break */
	void *data;            /**< the policy's record of it (hl_os_set_data) */
} hl_region_rec_t;

/** The page source of one heap: its region table and its counters.
 *  Lives inside the heap; the core sets it up with hl_os_init() and gives
 *  every region back with hl_os_release_all() when the heap is destroyed. */
typedef struct hl_os {
	pthread_mutex_t lock;          /**< guards the region table */
	hl_region_rec_t *table;        /**< open addressing on base, capacity cap */
	/** @var hl_os::cap
	 *  Slots in @c table: 0 until the first reservation, then 256,
	 *  doubled when three quarters are taken (lock).
	 *  @var hl_os::used
	 *  Slots holding a region still reserved; the slot of a released
	 *  region is kept as a tombstone (base 1) and not counted (lock). */
	size_t cap, used;
	size_t last_hit;               /**< slot region_containing found last: tried first (lock) */
	unsigned next_seq;             /**< region numbers handed out */
	size_t page;                   /**< the kernel's page size */
	/* counters: updated with relaxed atomics */
	/** How many times each kernel call (enum hl_os_call) was made; the
	 *  growth of the region table is counted too. */
	uint64_t calls[HL_OS_NCALLS];
	/** @var hl_os::reserved_bytes
	 *  Address space of the heap's regions reserved now (metadata regions
	 *  excluded).
	 *  @var hl_os::committed_bytes
	 *  Bytes of those regions readable and writable now: grows on a
	 *  committed reserve and hl_os_commit, shrinks on hl_os_decommit and
	 *  by the committed bytes a caller declares to hl_os_release.
	 *  @var hl_os::meta_bytes
	 *  Bytes of metadata regions (hl_os_reserve_meta) and of the region
	 *  table itself. */
	uint64_t reserved_bytes, committed_bytes, meta_bytes;
	/** @var hl_os::peak_reserved
	 *  Highest value reserved_bytes has reached.
	 *  @var hl_os::peak_committed
	 *  Highest value committed_bytes has reached. */
	uint64_t peak_reserved, peak_committed;
	/** @var hl_os::purged_bytes
	 *  Bytes ever passed to hl_os_purge (running total).
	 *  @var hl_os::purged_lazy_bytes
	 *  Bytes ever passed to hl_os_purge_lazy (running total).
	 *  @var hl_os::decommitted_bytes
	 *  Bytes ever decommitted (running total).
	 *  @var hl_os::released_bytes
	 *  Bytes of non-metadata regions ever released (running total). */
	uint64_t purged_bytes, purged_lazy_bytes, decommitted_bytes, released_bytes;
	/** @var hl_os::fail_at
	 *  The fault seam (hl_os_fail_plan): the fail_at-th call that can
	 *  fail (mmap, mprotect to read/write, mremap, munmap of a region,
	 *  counted in @c fallible_calls) fails with ENOMEM, once; 0 = never.
	 *  @var hl_os::fail_every
	 *  Every fail_every-th such call fails; 0 = never.
	 *  @var hl_os::fallible_calls
	 *  Those calls made while a plan is set.
	 *  @var hl_os::faults_injected
	 *  Calls the plan made fail. */
	uint64_t fail_at, fail_every, fallible_calls, faults_injected;
} hl_os_t;

/** Sets up an empty page source: no regions, zero counters, the kernel's
 *  page size read once. */
void hl_os_init(hl_os_t *os);
/** Unmaps every region still reserved. */
void hl_os_release_all(hl_os_t *os);
/** The fault seam: from now on the @p at-th call of this page source that
 *  the kernel could refuse (mmap, mprotect to read/write, mremap, munmap of
 *  a region) fails as the kernel fails it (ENOMEM, nothing changed), and
 *  so does every @p every-th; 0 turns either off.  Set once, before the
 *  heap is used (the core's options os_fail_at and os_fail_every). */
void hl_os_fail_plan(hl_os_t *os, uint64_t at, uint64_t every);

/**
 * Reserves @p size bytes of address space aligned to @p align (a power of
 * two, at least a page).  With @p commit the pages are readable and
 * writable at once (one mmap); without, they are PROT_NONE.
 * @return the base, or NULL (errno = ENOMEM).
 */
void *hl_os_reserve(hl_os_t *os, size_t size, size_t align, bool commit);
/** Same as hl_os_reserve(commit) but counted as metadata, not heap. */
void *hl_os_reserve_meta(hl_os_t *os, size_t size);
/** Unmaps the whole region at @p base; @p committed of it were committed.
 *  Keeps errno.  When munmap fails (at the process's mapping limit) the
 *  region keeps its record and its bytes stay counted, so that
 *  hl_os_release_all still gives it back.
 *  @return 0, or -1 when the region is still mapped. */
int hl_os_release(hl_os_t *os, void *base, size_t committed);
/** Resizes the committed region at @p base (from hl_os_reserve with
 *  commit, never partly decommitted) to @p size bytes with mremap, which
 *  may move it: pages move, they are not copied, so committed bytes change
 *  by the difference only.  Shrinking never moves; a move keeps page
 *  alignment only (reserve's @p align is not kept).
 *  @return the new base, or NULL (errno = ENOMEM) with the region intact. */
void *hl_os_remap(hl_os_t *os, void *base, size_t size);

/** Makes reserved pages readable and writable (mprotect).
 *  @return 0, or -1 with errno = ENOMEM. */
int hl_os_commit(hl_os_t *os, void *addr, size_t size);
/** Gives committed pages back: their contents are dropped (MADV_DONTNEED)
 *  and they become PROT_NONE again, reserved but not committed.
 *  @return 0, or -1 when mprotect failed. */
int hl_os_decommit(hl_os_t *os, void *addr, size_t size);
/** MADV_DONTNEED: resident pages dropped, still mapped read/write. */
int hl_os_purge(hl_os_t *os, void *addr, size_t size);
/** MADV_FREE (falls back to DONTNEED where the kernel lacks it). */
int hl_os_purge_lazy(hl_os_t *os, void *addr, size_t size);
/** Makes pages inaccessible (guard pages); not counted as decommit. */
int hl_os_guard(hl_os_t *os, void *addr, size_t size);

/** Resident bytes of all the heap's (non-metadata) regions, by mincore. */
size_t hl_os_resident(hl_os_t *os);
/** Resident bytes of the heap's metadata regions, by mincore (statistics:
 *  os.metadata_resident_bytes).  A real process's RSS counts the
 *  allocator's metadata too. */
size_t hl_os_resident_meta(hl_os_t *os);
/** Resident bytes of one range, by mincore (of any memory of the process:
 *  @p os NULL counts no call, as the trace recorder measures the
 *  program's blocks). */
size_t hl_os_resident_range(hl_os_t *os, const void *addr, size_t size);

/** Region number and offset of @p p; -1 when not in any region. */
int hl_os_locate(hl_os_t *os, const void *p, size_t *offset);
/** Keeps @p data (the policy's record of it) with the region that starts
 *  at @p base; it follows the region when hl_os_remap moves it.  -1 when
 *  no region starts there. */
int hl_os_set_data(hl_os_t *os, const void *base, void *data);
/** What hl_os_set_data kept with the region starting at @p base; NULL when
 *  none, or no region starts there (any address may be asked about). */
void *hl_os_data(hl_os_t *os, const void *base);
/** True when @p p lies in a region of this page source (not metadata). */
bool hl_os_contains(hl_os_t *os, const void *p);

/** Emits the page source's counters as an "os" object. */
void hl_os_stats(hl_os_t *os, hl_statw_t *w);

/** The kernel's page size, as read by hl_os_init. */
static inline size_t hl_os_page(const hl_os_t *os) { return os->page; }

/** Zeroed memory for the core's own records (heap instances, snapshot
 *  buffers), outside any heap and not counted. */
void *hl_os_boot_alloc(size_t size);
/** Unmaps what hl_os_boot_alloc(@p size) returned; NULL is ignored. */
void hl_os_boot_free(void *p, size_t size);

/** An emulated program break. */
typedef struct hl_brk {
	char *base;     /**< start of the break's region */
	size_t max;     /**< bytes the break may grow to */
	size_t end;     /**< bytes below the break (committed, page multiple) */
	size_t mapped;  /**< bytes mapped at base (at least end) */
	bool grows;     /**< mapped as it grows (else mapped whole at start) */
} hl_brk_t;

/** Starts a break of zero length that may grow to @p max bytes.  The
 *  break is mapped as it grows, in a slot of address space of its own;
 *  when no slot is free it is mapped whole now, and then under a finite
 *  RLIMIT_AS at most half of it (the break refuses to grow past that, as
 *  brk does at the limit). */
int hl_brk_init(hl_os_t *os, hl_brk_t *b, size_t max);
/** Moves the break by @p delta bytes (page multiples).  Returns the old
 *  break, or NULL when it cannot grow (ENOMEM) or would go below base. */
void *hl_brk_move(hl_os_t *os, hl_brk_t *b, intptr_t delta);
/** The current break: the first byte above the committed prefix. */
static inline char *hl_brk_current(const hl_brk_t *b) { return b->base + b->end; }
#endif
