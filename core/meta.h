/**
 * @file meta.h
 * @brief A pool of fixed-size metadata records taken from the page source.
 *
 * Policies need records that must not come from the heap they describe
 * (extent descriptors, page descriptors, thread caches).  A meta pool hands
 * them out from 64 KiB metadata regions with a free list; records are
 * zeroed when handed out.  Thread-safe (one small lock).
 */
#ifndef HL_META_H
#define HL_META_H

#include <pthread.h>
#include <stddef.h>
#include "os.h"

typedef struct hl_meta_pool {
	hl_os_t *os;
	size_t size;          /**< bytes per record (rounded to 16) */
	pthread_mutex_t lock;
	void *free;           /**< freed records */
	char *cur, *end;      /**< unused part of the newest region */
	size_t live;          /**< records handed out */
} hl_meta_pool_t;

void hl_meta_init(hl_meta_pool_t *m, hl_os_t *os, size_t size);

/** The cache line of the machines heaplab runs on (x86-64; arm64's L1). */
#define HL_CACHE_LINE 64
/** hl_meta_init for records that one thread (or CPU) each writes on every
 *  call — thread records, thread caches, per-thread heaps, arenas: each
 *  record takes whole cache lines, so two threads' records never share one
 *  (regions are page-aligned).  Packed, a thread's writes to its record
 *  evict the next record's first line from the other thread's cache (false
 *  sharing: bench/HISTORY.md, 2026-12-02, two threads at half speed). */
void hl_meta_init_private(hl_meta_pool_t *m, hl_os_t *os, size_t size);
/** A zeroed record, or NULL when the page source is out of memory. */
void *hl_meta_alloc(hl_meta_pool_t *m);
void hl_meta_free(hl_meta_pool_t *m, void *rec);
/** Re-creates the lock in a fork child. */
void hl_meta_fork_child(hl_meta_pool_t *m);
#endif
