/*
 * The program's own mappings, seen by the recorder (libheaplab-record.so):
 * each anonymous mapping the program or one of its libraries makes through
 * the C library's mmap is noted in a table of ranges (munmap and mremap
 * keep it true), so that the layers of /proc/self/smaps (record_layers.c)
 * tell the program's mappings from the C allocator's, which glibc makes
 * through its internal entry, never through these symbols.  CPython's
 * pymalloc maps its arenas this way.  The recorder's own tables (core/os.c's
 * boot allocator, bound to these symbols inside the library by
 * -Bsymbolic-functions) are noted apart.
 *
 * (Naming the mappings with prctl(PR_SET_VMA_ANON_NAME) would let smaps
 * say it alone, but this machine's kernel is built without
 * CONFIG_ANON_VMA_NAME: the call fails with EINVAL.)
 *
 * This file asks the kernel for no memory of its own: it forwards to the
 * C library's functions and notes what came back (tests/house/os_seam.py lists
 * it among the allowed files for that reason).  The table is static: a
 * program with more than RANGES anonymous mappings at once has the rest
 * counted with the C allocator's (the summary calls them "unnamed").
 */
#include "config.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include "../trace/recorder.h"

#define SHIM_API __attribute__((visibility("default")))

typedef void *(*mmap_fn)(void *, size_t, int, int, int, off_t);
typedef int (*munmap_fn)(void *, size_t);
typedef void *(*mremap_fn)(void *, size_t, size_t, int, ...);
static mmap_fn real_mmap;
static munmap_fn real_munmap;
static mremap_fn real_mremap;
static void *self_base;

enum { RANGES = 1 << 14 };
typedef struct range {
	uintptr_t lo, hi;       /* hi == 0: a free slot */
	bool own;               /* the recorder's table */
} range_t;
static range_t ranges[RANGES];
static size_t nranges;          /* slots used so far (free ones among them) */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void resolve(void)
{
	real_mmap = (mmap_fn)dlsym(RTLD_NEXT, "mmap");
	real_munmap = (munmap_fn)dlsym(RTLD_NEXT, "munmap");
	real_mremap = (mremap_fn)dlsym(RTLD_NEXT, "mremap");
}

/* Called by the recorder's constructor before it records anything: dlsym
 * may allocate, and an allocation recorded may map a table. */
void hl_rec_mmap_start(void)
{
	resolve();
	Dl_info me;
	if (dladdr((void *)hl_rec_mmap_start, &me))
		self_base = me.dli_fbase;
}

static bool ours(const void *caller)
{
	Dl_info who;
	return self_base && dladdr(caller, &who) && who.dli_fbase == self_base;
}

static void note(uintptr_t lo, uintptr_t hi, bool own)
{
	pthread_mutex_lock(&lock);
	size_t k = 0;
	while (k < nranges && ranges[k].hi)
		k++;
	if (k < RANGES) {
		ranges[k] = (range_t){ lo, hi, own };
		if (k == nranges)
			nranges++;
	}
	pthread_mutex_unlock(&lock);
}

/* Takes [lo, hi) out of every range (a range cut in two keeps its lower
 * part in its slot and its upper part in a new one). */
static void drop(uintptr_t lo, uintptr_t hi)
{
	pthread_mutex_lock(&lock);
	for (size_t k = 0; k < nranges; k++) {
		range_t *r = &ranges[k];
		if (!r->hi || r->hi <= lo || r->lo >= hi)
			continue;
		range_t upper = { hi, r->hi, r->own };
		if (r->lo < lo)
			r->hi = lo;
		else
			r->hi = 0;
		if (upper.lo < upper.hi) {
			if (r->hi) {
				pthread_mutex_unlock(&lock);
				note(upper.lo, upper.hi, upper.own);
				pthread_mutex_lock(&lock);
			} else {
				*r = upper;
			}
		}
	}
	pthread_mutex_unlock(&lock);
}

size_t hl_rec_mapped_overlap(uintptr_t lo, uintptr_t hi, size_t *own)
{
	size_t prog = 0;
	*own = 0;
	pthread_mutex_lock(&lock);
	for (size_t k = 0; k < nranges; k++) {
		const range_t *r = &ranges[k];
		if (!r->hi || r->hi <= lo || r->lo >= hi)
			continue;
		size_t n = (r->hi < hi ? r->hi : hi) - (r->lo > lo ? r->lo : lo);
		if (r->own)
			*own += n;
		else
			prog += n;
	}
	pthread_mutex_unlock(&lock);
	return prog;
}

static void *forward(void *addr, size_t n, int prot, int flags, int fd, off_t off, const void *caller)
{
	if (!real_mmap)
		resolve();
	void *p = real_mmap(addr, n, prot, flags, fd, off);
	if (p != MAP_FAILED && (flags & MAP_ANONYMOUS)) {
		if (flags & MAP_FIXED)
			drop((uintptr_t)p, (uintptr_t)p + n);
		note((uintptr_t)p, (uintptr_t)p + n, ours(caller));
	}
	return p;
}

SHIM_API void *mmap(void *addr, size_t n, int prot, int flags, int fd, off_t off)
{
	return forward(addr, n, prot, flags, fd, off, __builtin_return_address(0));
}

SHIM_API void *mmap64(void *addr, size_t n, int prot, int flags, int fd, off_t off)
{
	return forward(addr, n, prot, flags, fd, off, __builtin_return_address(0));
}

SHIM_API int munmap(void *p, size_t n)
{
	if (!real_munmap)
		resolve();
	int rc = real_munmap(p, n);
	if (rc == 0)
		drop((uintptr_t)p, (uintptr_t)p + n);
	return rc;
}

SHIM_API void *mremap(void *old, size_t old_n, size_t n, int flags, ...)
{
	if (!real_mremap)
		resolve();
	void *want = NULL;
	if (flags & MREMAP_FIXED) {
		va_list ap;
		va_start(ap, flags);
		want = va_arg(ap, void *);
		va_end(ap);
	}
	size_t own;
	bool noted = hl_rec_mapped_overlap((uintptr_t)old, (uintptr_t)old + old_n, &own) || own;
	void *p = (flags & MREMAP_FIXED) ? real_mremap(old, old_n, n, flags, want) : real_mremap(old, old_n, n, flags);
	if (p != MAP_FAILED && noted) {
		drop((uintptr_t)old, (uintptr_t)old + old_n);
		note((uintptr_t)p, (uintptr_t)p + n, own != 0);
	}
	return p;
}
