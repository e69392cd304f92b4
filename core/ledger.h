/**
 * @file ledger.h
 * @brief The request ledger: what size the program asked for, per block.
 *
 * Policies keep usable sizes, not requested ones, yet "live requested
 * bytes" (and so utilization and the bloat factor) need the request.  The
 * ledger is a striped open-addressing hash table from pointer to request,
 * kept in a page source of its own (the heap's ledger_os), so its mappings
 * are not counted among the policy's OS calls or metadata: it is heaplab's
 * measuring apparatus, and how many stripes a run touches depends on the
 * pointers' hashes, which change from run to run.  It costs one hash
 * insert per malloc and one delete per free; a heap can switch it off with
 * `ledger:off`, and then live_requested_bytes is not reported.
 */
#ifndef HL_LEDGER_H
#define HL_LEDGER_H

#include <pthread.h>
#include <stdint.h>
#include "os.h"

#define HL_LEDGER_STRIPES 64

typedef struct hl_ledger_stripe {
	pthread_mutex_t lock;
	uintptr_t *keys;      /**< 0 empty, 1 tombstone */
	size_t *vals;
	size_t cap, used, tomb;
	char pad[16];
} hl_ledger_stripe_t;

typedef struct hl_ledger {
	hl_os_t *os;
	hl_ledger_stripe_t stripe[HL_LEDGER_STRIPES];
	int64_t live;         /**< sum of live requests (atomic) */
	int64_t peak;         /**< highest value of live (atomic) */
} hl_ledger_t;

void hl_ledger_init(hl_ledger_t *l, hl_os_t *os);
/** Records @p n for @p p; false when out of memory. */
bool hl_ledger_add(hl_ledger_t *l, const void *p, size_t n);
/** Forgets @p p; returns its request, or (size_t)-1 when unknown. */
size_t hl_ledger_remove(hl_ledger_t *l, const void *p);
/** Request recorded for @p p, or (size_t)-1. */
size_t hl_ledger_get(hl_ledger_t *l, const void *p);
/** Calls @p fn(pointer, value, @p arg) for every block until it returns
 *  non-zero, which is returned (each stripe locked while it is visited). */
int hl_ledger_foreach(hl_ledger_t *l, int (*fn)(uintptr_t p, size_t v, void *arg), void *arg);
/** Forgets every block (a region reset). */
void hl_ledger_clear(hl_ledger_t *l);
void hl_ledger_fork_prepare(hl_ledger_t *l);
void hl_ledger_fork_parent(hl_ledger_t *l);
void hl_ledger_fork_child(hl_ledger_t *l);
#endif
