/**
 * @file guard.h
 * @brief Debug mode's misuse guard: the checks every policy gets from the core.
 *
 * With `debug:on` every operation runs under the heap's guard, one at a
 * time (the guard lock is the outermost lock of a call):
 *
 *   begin(op)   the program ran since the last call; did it break anything?
 *               - every recently freed block still hashes as it did when the
 *                 last call returned (a write into a freed block);
 *               - the policy's checker finds its structures intact (a
 *                 header or footer overwritten); if not, a live block whose
 *                 slack lost its canary is named instead (the overflow that
 *                 did it);
 *   takeback(p) free and realloc: p must be a live block's start: a freed
 *               one is a double free, one inside the policy's memory is an
 *               interior pointer, anything else was never this heap's.
 *               Decided from the guard's own maps and the policy's `owns`
 *               (an address range test), so no header is read first.  The
 *               block's slack, the bytes between what was asked and the
 *               usable end, must still hold the canary (a write past the
 *               end);
 *   handout(p)  fresh bytes get 0xAA, the slack gets the canary;
 *   freed(p)    freed bytes get 0xDD before the policy sees them;
 *   end(op)     the checker again, then the freed blocks are hashed.
 *
 * A misuse ends the program with one line, "heaplab: <policy>: <what>
 * (<address>)", plus the replayed operation under `heaplab replay`.
 * Nothing here runs unless the heap is in debug mode.
 */
#ifndef HL_GUARD_H
#define HL_GUARD_H

#include <pthread.h>
#include <stdint.h>
#include "ledger.h"

/** Recently freed blocks watched for writes (a ring). */
#define HL_GUARD_WATCH 32
/** Bytes of each watched block that are hashed (its beginning). */
#define HL_GUARD_WATCH_BYTES 1024

typedef struct hl_guard_watch {
	const unsigned char *p; /**< NULL: empty slot */
	size_t len;
	uint64_t sum;
} hl_guard_watch_t;

typedef struct hl_guard {
	pthread_mutex_t lock;     /**< held for a whole operation */
	hl_ledger_t live;         /**< live block -> request | canary bytes << 47 */
	hl_ledger_t freed;        /**< freed block start -> 1, until handed out again */
	hl_guard_watch_t watch[HL_GUARD_WATCH];
	unsigned next_watch;
	uint64_t os_mark;         /**< page source calls that can unmap, at end() */
} hl_guard_t;

typedef struct hl_heap hl_heap_t;
typedef struct hl_thread hl_thread_t;

void hl_guard_init(hl_guard_t *g, hl_os_t *bookkeeping);
/** Takes the guard and checks what the program did since the last call. */
void hl_guard_begin(hl_heap_t *h, const char *op);
/** Checks the heap after the call, remembers the freed blocks, lets go. */
void hl_guard_end(hl_heap_t *h, const char *op);
/** Aborts unless @p p is a live block's start (@p op: "free", "realloc"). */
void hl_guard_takeback(hl_heap_t *h, const void *p, const char *op);
/** @p p (usable @p usable) is about to go back to the policy. */
void hl_guard_freeing(hl_heap_t *h, void *p, size_t usable);
/** @p p was freed inside a call (a realloc moved the block). */
void hl_guard_moved(hl_heap_t *h, const void *p);
/** Every block is gone at once (a region reset). */
void hl_guard_forget_all(hl_heap_t *h);
/** @p p, asked for @p n bytes, was handed out; @p fresh: junk-fill it
 *  (not after a realloc, whose contents are the program's). */
void hl_guard_handout(hl_heap_t *h, void *p, size_t n, bool fresh);
/** The malloc the fast path calls in debug mode (state = the heap): opens
 *  the operation that the core's accounting closes. */
void *hl_guard_malloc(void *heap, hl_thread_t *t, size_t n);
/** What the program asked for at live block @p p; aborts, naming the
 *  mistake, when p is not one. */
size_t hl_guard_request(hl_heap_t *h, const void *p);
void hl_guard_fork_prepare(hl_guard_t *g);
void hl_guard_fork_parent(hl_guard_t *g);
void hl_guard_fork_child(hl_guard_t *g);
#endif
