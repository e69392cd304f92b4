/**
 * @file malloc_api.h
 * @brief The rest of the C library's malloc API in the preload library
 *        (shim/malloc_api.c): mallinfo, mallinfo2, mallopt, malloc_stats,
 *        malloc_info, malloc_trim.
 *
 * Each call is answered as the default heap's real allocator answers it.
 * A policy says how in its table's `libc_api` (policy.h), pointing at an
 * hl_libc_api_t; a NULL table, or a NULL function in it, means that its
 * allocator exports no such function, so that under it a program's call
 * reaches the C library's own (glibc's malloc, which then holds nothing
 * and describes an empty heap: what jemalloc 5.3 and mimalloc 2.0.9 give,
 * and gperftools 2.10 for the calls it does not export).  The core finds
 * the C library's function with dlsym(RTLD_NEXT).
 *
 * A policy's functions here are called with no lock of the core held and
 * may take the policy's own; they write to a stream (malloc_stats,
 * malloc_info) only after letting go of them, as glibc's malloc_info does,
 * since the stream's buffer may come from this very heap.
 */
#ifndef HL_MALLOC_API_H
#define HL_MALLOC_API_H

#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include "heaplab.h"

struct hl_policy;

/** How a policy answers the C library's calls; NULL members go to the C
 *  library's own. */
typedef struct hl_libc_api {
	/** mallinfo's fields from the policy's state (mallinfo cuts them
	 *  to int, as glibc and gperftools do). */
	void (*mallinfo)(void *st, struct mallinfo2 *m);
	/** The allocator exports mallinfo2 as well (glibc since 2.33); when
	 *  false, mallinfo2 is the C library's own (gperftools 2.10). */
	bool mallinfo2;
	/** mallopt(param, value): 1 when done, 0 when refused. */
	int (*mallopt)(void *st, int param, int value);
	/** malloc_stats: the text the allocator writes on @p err (stderr). */
	void (*malloc_stats)(void *st, FILE *err);
	/** malloc_info(options, fp): 0, or an errno value. */
	int (*malloc_info)(void *st, int options, FILE *fp);
	/** malloc_trim is the heap's trim (hl_trim): 1 when it gave
	 *  anything back.  False: the C library's own. */
	bool trims;
	/** A host whose real allocator leaves these calls to the allocator
	 *  under it (pools: CPython's pymalloc, over glibc): returns the
	 *  guest's table and stores its state in @p guest_st; the guest's
	 *  table answers instead (malloc_trim, when it trims, is the heap's
	 *  trim, which such a host passes to its guest).  NULL for the others. */
	const struct hl_policy *(*delegate)(void *st, void **guest_st);
} hl_libc_api_t;

#endif
