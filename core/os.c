/*
 * The page source: the one file in heaplab that asks the kernel for memory.
 *
 * Every call is counted per heap, and every region is remembered in a small
 * open-addressing table keyed by base address, so that
 *   - destroying a heap unmaps exactly what it reserved,
 *   - resident bytes are measured with mincore() on the heap's own regions,
 *   - addresses can be named "region#k+off" the same way on every run.
 * The table itself lives in memory mapped here (never from malloc).
 */
#include "config.h"
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>
#include "bits.h"
#include "os.h"
#include "event.h"

#ifndef MADV_FREE
#define MADV_FREE 8
#endif
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

static const char *const call_names[HL_OS_NCALLS] = {
	"mmap", "munmap", "madvise(DONTNEED)", "madvise(FREE)", "mprotect", "mincore", "brk", "mremap",
};

/* Counts a kernel call, and tells a listener (event.h) about it: @p size
 * bytes at @p addr.  mincore is how heaplab measures, not a decision of the
 * heap's, and is only counted.  The listener names @p addr, which takes
 * the table's lock: a call made under that lock passes NULL. */
static inline void count_call(hl_os_t *os, enum hl_os_call c, const void *addr, size_t size)
{
	__atomic_fetch_add(&os->calls[c], 1, __ATOMIC_RELAXED);
	if (c != HL_OS_MINCORE)
		HL_EV_OS(os, c, call_names[c], size, addr);
}

static inline void add_bytes(uint64_t *counter, uint64_t *peak, int64_t delta)
{
	uint64_t now = __atomic_add_fetch(counter, (uint64_t)delta, __ATOMIC_RELAXED);
	if (peak) {
		uint64_t old = __atomic_load_n(peak, __ATOMIC_RELAXED);
		while (now > old && !__atomic_compare_exchange_n(peak, &old, now, true,
								 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			;
	}
}

void hl_os_init(hl_os_t *os)
{
	memset(os, 0, sizeof *os);
	pthread_mutex_init(&os->lock, NULL);
	long pg = sysconf(_SC_PAGESIZE);
	os->page = pg > 0 ? (size_t)pg : 4096;
}

/* ---- the fault seam ------------------------------------------------------ */

void hl_os_fail_plan(hl_os_t *os, uint64_t at, uint64_t every)
{
	os->fail_at = at;
	os->fail_every = every;
}

/* True when the plan makes this call fail: the caller then fails it as the
 * kernel would, ENOMEM with nothing changed.  Only calls the kernel can
 * refuse for want of memory or of mappings go through here. */
static inline bool injected_fault(hl_os_t *os)
{
	if (HL_LIKELY(!os->fail_at && !os->fail_every))
		return false;
	uint64_t n = __atomic_add_fetch(&os->fallible_calls, 1, __ATOMIC_RELAXED);
	if (n != os->fail_at && (!os->fail_every || n % os->fail_every))
		return false;
	__atomic_fetch_add(&os->faults_injected, 1, __ATOMIC_RELAXED);
	errno = ENOMEM;
	return true;
}

static void *os_mmap(hl_os_t *os, size_t size, int prot, int flags)
{
	return injected_fault(os) ? MAP_FAILED : mmap(NULL, size, prot, flags, -1, 0);
}

/* ---- the region table -------------------------------------------------- */

static size_t slot_of(uintptr_t base, size_t cap)
{
	return (size_t)(hl_mix64(base) & (cap - 1));
}

static void table_put(hl_region_rec_t *tab, size_t cap, const hl_region_rec_t *r)
{
	size_t i = slot_of(r->base, cap);
	while (tab[i].base > 1)
		i = (i + 1) & (cap - 1);
	tab[i] = *r;
}

/* Grows the table (lock held).  Tombstones (base == 1) are dropped. */
static int table_grow(hl_os_t *os)
{
	size_t ncap = os->cap ? os->cap * 2 : 256;
	size_t bytes = hl_align_up(ncap * sizeof(hl_region_rec_t), os->page);
	void *m = os_mmap(os, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS);
	count_call(os, HL_OS_MMAP, NULL, bytes);   /* the table: no region, and the lock is held */
	if (m == MAP_FAILED)
		return -1;
	hl_region_rec_t *ntab = m;
	size_t used = 0;
	for (size_t i = 0; i < os->cap; i++)
		if (os->table[i].base > 1) {
			table_put(ntab, ncap, &os->table[i]);
			used++;
		}
	if (os->table) {
		munmap(os->table, hl_align_up(os->cap * sizeof(hl_region_rec_t), os->page));
		count_call(os, HL_OS_MUNMAP, NULL, hl_align_up(os->cap * sizeof(hl_region_rec_t), os->page));
		add_bytes(&os->meta_bytes, NULL, -(int64_t)hl_align_up(os->cap * sizeof(hl_region_rec_t), os->page));
	}
	add_bytes(&os->meta_bytes, NULL, (int64_t)bytes);
	os->table = ntab;
	os->cap = ncap;
	os->used = used;
	return 0;
}

static int region_add(hl_os_t *os, void *base, size_t size, unsigned kind)
{
	pthread_mutex_lock(&os->lock);
	if ((os->used + 1) * 4 >= os->cap * 3 && table_grow(os) < 0) {
		pthread_mutex_unlock(&os->lock);
		return -1;
	}
	hl_region_rec_t r = { .base = (uintptr_t)base, .size = size, .seq = os->next_seq++, .kind = kind };
	table_put(os->table, os->cap, &r);
	os->used++;
	pthread_mutex_unlock(&os->lock);
	return 0;
}

/* Finds the record of the region starting at base (lock held). */
static hl_region_rec_t *region_at(hl_os_t *os, uintptr_t base)
{
	if (!os->cap)
		return NULL;
	size_t i = slot_of(base, os->cap);
	for (size_t n = 0; n < os->cap && os->table[i].base; n++, i = (i + 1) & (os->cap - 1))
		if (os->table[i].base == base)
			return &os->table[i];
	return NULL;
}

/* Finds the region containing p by scanning (lock held).  Regions are few
 * and this serves naming, statistics and ownership questions, not the
 * allocation path. */
/* The region holding @p p: the one found last first (a heap walk asks for
 * one region's chunks in a row), then every slot. */
static hl_region_rec_t *region_containing(hl_os_t *os, uintptr_t p)
{
	if (os->last_hit < os->cap) {
		hl_region_rec_t *r = &os->table[os->last_hit];
		if (r->base > 1 && p >= r->base && p < r->base + r->size)
			return r;
	}
	for (size_t i = 0; i < os->cap; i++) {
		hl_region_rec_t *r = &os->table[i];
		if (r->base > 1 && p >= r->base && p < r->base + r->size) {
			os->last_hit = i;
			return r;
		}
	}
	return NULL;
}

/* ---- reserve / release ------------------------------------------------- */

static void *map_aligned(hl_os_t *os, size_t size, size_t align, int prot)
{
	int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
	if (align <= os->page) {
		void *p = os_mmap(os, size, prot, flags);
		count_call(os, HL_OS_MMAP, p, size);
		return p == MAP_FAILED ? NULL : p;
	}
	/* Over-reserve, then cut off the misaligned head and the tail. */
	size_t span = size + align;
	if (span < size)
		return NULL;
	char *raw = os_mmap(os, span, prot, flags);
	count_call(os, HL_OS_MMAP, raw, span);
	if (raw == MAP_FAILED)
		return NULL;
	char *base = (char *)hl_ptr_align_up((uintptr_t)raw, align);
	size_t head = (size_t)(base - raw), tail = span - head - size;
	if (head) {
		munmap(raw, head);
		count_call(os, HL_OS_MUNMAP, raw, head);
	}
	if (tail) {
		munmap(base + size, tail);
		count_call(os, HL_OS_MUNMAP, base + size, tail);
	}
	return base;
}

static void *reserve(hl_os_t *os, size_t size, size_t align, bool commit, unsigned kind)
{
	if (align < os->page)
		align = os->page;
	size = hl_align_up(size, os->page);
	if (!size || size > ((size_t)1 << 47)) {
		errno = ENOMEM;
		return NULL;
	}
	void *p = map_aligned(os, size, align, commit ? PROT_READ | PROT_WRITE : PROT_NONE);
	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	if (region_add(os, p, size, kind) < 0) {
		munmap(p, size);
		count_call(os, HL_OS_MUNMAP, p, size);
		errno = ENOMEM;
		return NULL;
	}
	if (kind == HL_REGION_META) {
		add_bytes(&os->meta_bytes, NULL, (int64_t)size);
		return p;
	}
	add_bytes(&os->reserved_bytes, &os->peak_reserved, (int64_t)size);
	if (commit)
		add_bytes(&os->committed_bytes, &os->peak_committed, (int64_t)size);
	return p;
}

void *hl_os_reserve(hl_os_t *os, size_t size, size_t align, bool commit)
{
	return reserve(os, size, align, commit, HL_REGION_MAP);
}

void *hl_os_reserve_meta(hl_os_t *os, size_t size)
{
	return reserve(os, size, os->page, true, HL_REGION_META);
}

int hl_os_release(hl_os_t *os, void *base, size_t committed)
{
	int saved = errno;     /* free keeps errno, as glibc's does since 2.33 */
	pthread_mutex_lock(&os->lock);
	hl_region_rec_t *r = region_at(os, (uintptr_t)base);
	if (!r) {
		pthread_mutex_unlock(&os->lock);
		return 0;
	}
	size_t size = r->size;
	unsigned kind = r->kind;
	/* unmapped first, under the lock: a failed munmap (the middle of a
	 * mapping at the process's mapping limit) keeps its record, and no
	 * other thread is given the address before its record is gone */
	int rc = injected_fault(os) ? -1 : munmap(base, size);
	if (rc == 0) {
		r->base = 1; /* tombstone */
		os->used--;
	}
	pthread_mutex_unlock(&os->lock);
	count_call(os, HL_OS_MUNMAP, base, size);
	errno = saved;
	if (rc != 0)
		return -1;
	if (kind == HL_REGION_META) {
		add_bytes(&os->meta_bytes, NULL, -(int64_t)size);
		return 0;
	}
	add_bytes(&os->reserved_bytes, NULL, -(int64_t)size);
	add_bytes(&os->committed_bytes, NULL, -(int64_t)committed);
	add_bytes(&os->released_bytes, NULL, (int64_t)size);
	return 0;
}

void *hl_os_remap(hl_os_t *os, void *base, size_t size)
{
	size = hl_align_up(size, os->page);
	pthread_mutex_lock(&os->lock);
	hl_region_rec_t *r = region_at(os, (uintptr_t)base);
	/* a move needs a free slot: grow the table first, as region_add does */
	if (!r || r->kind != HL_REGION_MAP || !size ||
	    ((os->used + 1) * 4 >= os->cap * 3 && table_grow(os) < 0)) {
		pthread_mutex_unlock(&os->lock);
		errno = ENOMEM;
		return NULL;
	}
	r = region_at(os, (uintptr_t)base);    /* the table may have moved */
	size_t old = r->size;
	void *p = injected_fault(os) ? MAP_FAILED : mremap(base, old, size, MREMAP_MAYMOVE);
	count_call(os, HL_OS_MREMAP, NULL, size);   /* lock held: no name looked up */
	if (p == MAP_FAILED) {
		pthread_mutex_unlock(&os->lock);
		errno = ENOMEM;
		return NULL;
	}
	hl_region_rec_t moved = *r;
	moved.size = size;
	if (p == base) {
		*r = moved;
	} else {
		r->base = 1;            /* tombstone; the record moves to its new key */
		moved.base = (uintptr_t)p;
		table_put(os->table, os->cap, &moved);
	}
	pthread_mutex_unlock(&os->lock);
	int64_t delta = (int64_t)size - (int64_t)old;
	add_bytes(&os->reserved_bytes, &os->peak_reserved, delta);
	add_bytes(&os->committed_bytes, &os->peak_committed, delta);
	return p;
}

void hl_os_release_all(hl_os_t *os)
{
	for (size_t i = 0; i < os->cap; i++) {
		hl_region_rec_t *r = &os->table[i];
		if (r->base > 1) {
			munmap((void *)r->base, r->size);
			count_call(os, HL_OS_MUNMAP, (void *)r->base, r->size);
			r->base = 1;
		}
	}
	if (os->table)
		munmap(os->table, hl_align_up(os->cap * sizeof(hl_region_rec_t), os->page));
	os->table = NULL;
	os->cap = os->used = 0;
	os->reserved_bytes = os->committed_bytes = os->meta_bytes = 0;
	pthread_mutex_destroy(&os->lock);
}

/* ---- commit, decommit, purge ------------------------------------------- */

int hl_os_commit(hl_os_t *os, void *addr, size_t size)
{
	if (!size)
		return 0;
	count_call(os, HL_OS_MPROTECT, addr, size);
	if (injected_fault(os) || mprotect(addr, size, PROT_READ | PROT_WRITE) != 0) {
		errno = ENOMEM;
		return -1;
	}
	add_bytes(&os->committed_bytes, &os->peak_committed, (int64_t)size);
	return 0;
}

/* The calls that give memory back run inside free: they keep errno, as
 * glibc's free does (since 2.33); their result says what happened. */
int hl_os_decommit(hl_os_t *os, void *addr, size_t size)
{
	if (!size)
		return 0;
	int saved = errno;
	count_call(os, HL_OS_MADVISE_DONTNEED, addr, size);
	madvise(addr, size, MADV_DONTNEED);
	count_call(os, HL_OS_MPROTECT, addr, size);
	int rc = mprotect(addr, size, PROT_NONE);
	add_bytes(&os->committed_bytes, NULL, -(int64_t)size);
	add_bytes(&os->decommitted_bytes, NULL, (int64_t)size);
	errno = saved;
	return rc;
}

int hl_os_purge(hl_os_t *os, void *addr, size_t size)
{
	if (!size)
		return 0;
	int saved = errno;
	count_call(os, HL_OS_MADVISE_DONTNEED, addr, size);
	int rc = madvise(addr, size, MADV_DONTNEED);
	add_bytes(&os->purged_bytes, NULL, (int64_t)size);
	errno = saved;
	return rc;
}

int hl_os_purge_lazy(hl_os_t *os, void *addr, size_t size)
{
	if (!size)
		return 0;
	int saved = errno;
	count_call(os, HL_OS_MADVISE_FREE, addr, size);
	int rc = madvise(addr, size, MADV_FREE);
	if (rc != 0) {
		count_call(os, HL_OS_MADVISE_DONTNEED, addr, size);
		rc = madvise(addr, size, MADV_DONTNEED);
	}
	add_bytes(&os->purged_lazy_bytes, NULL, (int64_t)size);
	errno = saved;
	return rc;
}

int hl_os_guard(hl_os_t *os, void *addr, size_t size)
{
	if (!size)
		return 0;
	int saved = errno;
	count_call(os, HL_OS_MPROTECT, addr, size);
	int rc = mprotect(addr, size, PROT_NONE);
	errno = saved;
	return rc;
}

/* ---- the emulated program break ---------------------------------------- */

/* The break is mapped as it grows, as the kernel's brk grows its mapping:
 * a process's address space (VmSize, and RLIMIT_AS) holds only what the
 * break has reached, so a program that lowers `ulimit -v` after start-up
 * keeps room for its threads' stacks.  Growing in place needs free address
 * space above the break, so each break starts in a slot of its own in the
 * wide gap above the process's real break (the one glibc's malloc would
 * use), a slot as wide as the break may grow; the kernel places other
 * mappings from the top of the address space down, far from there.  A
 * break that finds no free slot is mapped whole at once (PROT_NONE), as
 * heaplab did before, sized to fit the address limit. */
enum { BRK_SLOTS = 256 };

/* ThreadSanitizer keeps the address space for its shadow and takes a hint
 * outside its application ranges for no hint at all (it maps then at 0 and
 * stops the program): under it, every break is mapped whole. */
#if defined(__SANITIZE_THREAD__)
#define HL_BRK_SLOTS_OK 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define HL_BRK_SLOTS_OK 0
#endif
#endif
#ifndef HL_BRK_SLOTS_OK
#define HL_BRK_SLOTS_OK 1
#endif
static unsigned next_brk_slot;

/* Half the address space the process may have (RLIMIT_AS), or
 * @p want when that is more: a break reserved whole at start-up must leave
 * room under `ulimit -v` or a container's limit for everything else. */
static size_t fit_address_limit(hl_os_t *os, size_t want)
{
	struct rlimit as;
	if (getrlimit(RLIMIT_AS, &as) != 0 || as.rlim_cur == RLIM_INFINITY || as.rlim_cur / 2 >= want)
		return want;
	size_t fit = hl_align_down((size_t)as.rlim_cur / 2, os->page);
	return fit > os->page ? fit : os->page;
}

/* Maps @p size bytes at exactly @p at, or fails without touching what is
 * mapped there (EEXIST), or at the address limit (ENOMEM). */
static bool map_exactly(char *at, size_t size, int prot)
{
	void *p = mmap(at, size, prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p == MAP_FAILED)
		return false;
	if (p != at) {         /* a kernel older than 4.17 took it as a hint */
		munmap(p, size);
		errno = EEXIST;
		return false;
	}
	return true;
}

/* Maps the first page of a break in a free slot; NULL when none is. */
static char *map_brk_slot(hl_os_t *os, size_t max)
{
	const uintptr_t gib = (uintptr_t)1 << 30;
	uintptr_t real = (uintptr_t)sbrk(0);
	uintptr_t first = real == (uintptr_t)-1 ? (uintptr_t)1 << 40 : hl_ptr_align_up(real, gib) + gib;
	uintptr_t stride = hl_ptr_align_up(max, gib) + gib;
	if (!HL_BRK_SLOTS_OK || stride > ((uintptr_t)1 << 46) / BRK_SLOTS)
		return NULL;
	unsigned slot = __atomic_fetch_add(&next_brk_slot, 1, __ATOMIC_RELAXED);
	for (unsigned tries = 0; tries < BRK_SLOTS; tries++, slot++) {
		char *at = (char *)(first + (slot % BRK_SLOTS) * stride);
		if (map_exactly(at, os->page, PROT_NONE))
			return at;
		if (errno == ENOMEM)
			return NULL;
	}
	return NULL;
}

/* The break's mapping is now @p mapped bytes long (lock taken here). */
static void brk_mapped(hl_os_t *os, hl_brk_t *b, size_t mapped)
{
	pthread_mutex_lock(&os->lock);
	hl_region_rec_t *r = region_at(os, (uintptr_t)b->base);
	if (r)
		r->size = mapped;
	pthread_mutex_unlock(&os->lock);
	add_bytes(&os->reserved_bytes, &os->peak_reserved, (int64_t)mapped - (int64_t)b->mapped);
	b->mapped = mapped;
}

int hl_brk_init(hl_os_t *os, hl_brk_t *b, size_t max)
{
	b->end = 0;
	b->max = hl_align_up(max, os->page);
	b->base = map_brk_slot(os, b->max);
	if (b->base) {
		count_call(os, HL_OS_MMAP, b->base, os->page);
		b->grows = true;
		b->mapped = 0;
		if (region_add(os, b->base, os->page, HL_REGION_BRK) < 0) {
			munmap(b->base, os->page);
			errno = ENOMEM;
			return -1;
		}
		brk_mapped(os, b, os->page);
	} else {
		b->grows = false;
		b->max = hl_align_up(fit_address_limit(os, b->max), os->page);
		b->mapped = b->max;
		b->base = reserve(os, b->max, os->page, false, HL_REGION_BRK);
		if (!b->base)
			return -1;
	}
	pthread_mutex_lock(&os->lock);
	hl_region_rec_t *r = region_at(os, (uintptr_t)b->base);
	if (r)
		r->brk_end = &b->end;
	pthread_mutex_unlock(&os->lock);
	return 0;
}

void *hl_brk_move(hl_os_t *os, hl_brk_t *b, intptr_t delta)
{
	char *old = b->base + b->end;
	count_call(os, HL_OS_BRK, old, delta < 0 ? (size_t)-delta : (size_t)delta);
	if (delta > 0) {
		size_t grow = hl_align_up((size_t)delta, os->page);
		if (grow > b->max - b->end)
			goto no_room;
		if (b->end + grow > b->mapped) {
			size_t more = b->end + grow - b->mapped;
			if (injected_fault(os) || !map_exactly(b->base + b->mapped, more, PROT_NONE))
				goto no_room;    /* a mapping above, or the address limit */
			brk_mapped(os, b, b->mapped + more);
		}
		if (hl_os_commit(os, old, grow) < 0)
			goto no_room;
		b->end += grow;
	} else if (delta < 0) {
		size_t shrink = hl_align_down((size_t)-delta, os->page);
		if (shrink > b->end) {
			errno = EINVAL;
			return NULL;
		}
		b->end -= shrink;
		hl_os_decommit(os, b->base + b->end, shrink);
		size_t keep = b->end > os->page ? b->end : os->page;
		if (b->grows && keep < b->mapped) {
			int saved = errno;
			if (munmap(b->base + keep, b->mapped - keep) == 0)   /* else it stays mapped */
				brk_mapped(os, b, keep);
			errno = saved;
		}
	}
	return old;
no_room:
	errno = ENOMEM;
	return NULL;
}

/* ---- measuring --------------------------------------------------------- */

size_t hl_os_resident_range(hl_os_t *os, const void *addr, size_t size)
{
	enum { CHUNK_PAGES = 4096 };
	unsigned char vec[CHUNK_PAGES];
	size_t page = os ? os->page : (size_t)sysconf(_SC_PAGESIZE);
	uintptr_t start = hl_align_down((uintptr_t)addr, page);
	uintptr_t end = hl_ptr_align_up((uintptr_t)addr + size, page);
	size_t resident = 0;
	for (uintptr_t p = start; p < end;) {
		size_t pages = (end - p) / page;
		if (pages > CHUNK_PAGES)
			pages = CHUNK_PAGES;
		if (os)
			count_call(os, HL_OS_MINCORE, (void *)p, pages * page);
		if (mincore((void *)p, pages * page, vec) == 0)
			for (size_t i = 0; i < pages; i++)
				resident += (vec[i] & 1) ? page : 0;
		p += pages * page;
	}
	return resident;
}

/* Resident bytes of the heap's regions (@p meta false) or of its
 * metadata regions (true). */
static size_t resident_of(hl_os_t *os, bool meta)
{
	size_t total = 0;
	pthread_mutex_lock(&os->lock);
	for (size_t i = 0; i < os->cap; i++) {
		hl_region_rec_t *r = &os->table[i];
		if (r->base <= 1 || (r->kind == HL_REGION_META) != meta)
			continue;
		size_t len = r->brk_end ? *r->brk_end : r->size;
		total += hl_os_resident_range(os, (void *)r->base, len);
	}
	pthread_mutex_unlock(&os->lock);
	return total;
}

size_t hl_os_resident(hl_os_t *os) { return resident_of(os, false); }
size_t hl_os_resident_meta(hl_os_t *os) { return resident_of(os, true); }

int hl_os_set_data(hl_os_t *os, const void *base, void *data)
{
	pthread_mutex_lock(&os->lock);
	hl_region_rec_t *r = region_at(os, (uintptr_t)base);
	if (r)
		r->data = data;
	pthread_mutex_unlock(&os->lock);
	return r ? 0 : -1;
}

void *hl_os_data(hl_os_t *os, const void *base)
{
	pthread_mutex_lock(&os->lock);
	hl_region_rec_t *r = region_at(os, (uintptr_t)base);
	void *data = r ? r->data : NULL;
	pthread_mutex_unlock(&os->lock);
	return data;
}

int hl_os_locate(hl_os_t *os, const void *p, size_t *offset)
{
	pthread_mutex_lock(&os->lock);
	hl_region_rec_t *r = region_containing(os, (uintptr_t)p);
	int seq = -1;
	if (r && r->kind != HL_REGION_META) {
		seq = (int)r->seq;
		if (offset)
			*offset = (uintptr_t)p - r->base;
	}
	pthread_mutex_unlock(&os->lock);
	return seq;
}

bool hl_os_contains(hl_os_t *os, const void *p)
{
	return hl_os_locate(os, p, NULL) >= 0;
}

void hl_os_stats(hl_os_t *os, hl_statw_t *w)
{
	static const char *const names[HL_OS_NCALLS] = {
		"mmap_calls", "munmap_calls", "madvise_dontneed_calls", "madvise_free_calls",
		"mprotect_calls", "mincore_calls", "brk_calls", "mremap_calls",
	};
	hl_statw_object(w, "os");
	for (int i = 0; i < HL_OS_NCALLS; i++)
		hl_statw_u64(w, names[i], __atomic_load_n(&os->calls[i], __ATOMIC_RELAXED));
	/* the counters move under other threads' locks (a background purge):
	 * read them as they are written, atomically; the region count under
	 * the table's lock */
#define HL_OS_READ(field) __atomic_load_n(&os->field, __ATOMIC_RELAXED)
	pthread_mutex_lock(&os->lock);
	size_t regions = os->used;
	pthread_mutex_unlock(&os->lock);
	hl_statw_u64(w, "regions", regions);
	hl_statw_u64(w, "metadata_bytes", HL_OS_READ(meta_bytes));
	hl_statw_u64(w, "metadata_resident_bytes", hl_os_resident_meta(os));
	hl_statw_u64(w, "peak_reserved_bytes", HL_OS_READ(peak_reserved));
	hl_statw_u64(w, "peak_committed_bytes", HL_OS_READ(peak_committed));
	hl_statw_u64(w, "purged_bytes", HL_OS_READ(purged_bytes));
	hl_statw_u64(w, "purged_lazy_bytes", HL_OS_READ(purged_lazy_bytes));
	hl_statw_u64(w, "decommitted_bytes", HL_OS_READ(decommitted_bytes));
	hl_statw_u64(w, "released_bytes", HL_OS_READ(released_bytes));
	if (os->fail_at || os->fail_every) {
		hl_statw_u64(w, "fallible_calls", HL_OS_READ(fallible_calls));
		hl_statw_u64(w, "faults_injected", HL_OS_READ(faults_injected));
	}
#undef HL_OS_READ
	hl_statw_end(w);
}

/* ---- memory for the core's own bookkeeping ----------------------------- */

void *hl_os_boot_alloc(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

void hl_os_boot_free(void *p, size_t size)
{
	if (p)
		munmap(p, size);
}
