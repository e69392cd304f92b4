/**
 * @file event.h
 * @brief Emitting decision events (the policies' side of hl_set_listener).
 *
 * A policy names each step it takes where the step is decided, in one line:
 *
 *     HL_EV(st->heap, HL_EV_CACHE_HIT, "tcache bin", idx, 0, p);
 *     HL_EV_COUNT(st->heap, HL_EV_CACHE_HIT, "tcache bin", idx, n + 1, n, p);
 *     HL_EV_SIZES(st->heap, HL_EV_SPLIT, "top", old, used, rest, p);
 *
 * Cost when nobody listens: the macro tests one byte, hl_event_on (nonzero
 * while any heap of the process has a listener or keeps its events), on a
 * branch marked unlikely; the arguments are evaluated and the event built
 * only inside that branch, out of line (event.c), so the fast path gains a
 * compare and a jump that is never taken.  With a listener on another heap
 * the call happens and event.c drops the event after one table look-up.
 *
 * Fields (heaplab.h, hl_event_t): @c what is a string literal (the event
 * keeps the pointer); numbers that do not apply are -1 (index, before,
 * after) or 0 (sizes, address).
 */
#ifndef HL_EVENT_H
#define HL_EVENT_H

#include "heaplab.h"

struct hl_os;

/** Nonzero while some heap listens; read on every emission point. */
extern unsigned char hl_event_on __attribute__((visibility("hidden")));

/** Builds and delivers one event of heap @p h (out of line, cold). */
void hl_event_emit(hl_heap_t *h, hl_event_kind_t kind, const char *what, long index, size_t size,
		   size_t size2, long before, long after, const void *addr)
	__attribute__((cold, noinline));
/** The same for a page source: the heap whose page source @p os is (the
 *  ledger's and the boot allocator's calls are no heap's and are dropped). */
void hl_event_emit_os(struct hl_os *os, hl_event_kind_t kind, const char *what, long index, size_t size,
		      const void *addr) __attribute__((cold, noinline));
/** Forgets @p h's listener and kept events (the heap is being destroyed). */
void hl_event_forget(hl_heap_t *h);

/** Emits every field: the general form behind the short ones below. */
#define HL_EVENT(heap, kind, what, index, size, size2, before, after, addr)                                   \
	do {                                                                                                   \
		if (__builtin_expect(hl_event_on, 0))                                                          \
			hl_event_emit((heap), (kind), (what), (long)(index), (size_t)(size), (size_t)(size2),   \
				      (long)(before), (long)(after), (addr));                                   \
	} while (0)
/** A step about one place (@p index, -1 for none), @p size bytes at @p addr. */
#define HL_EV(heap, kind, what, index, size, addr) HL_EVENT(heap, kind, what, index, size, 0, -1, -1, addr)
/** A step that changes a count or figure from @p before to @p after. */
#define HL_EV_COUNT(heap, kind, what, index, before, after, addr)                                             \
	HL_EVENT(heap, kind, what, index, 0, 0, before, after, addr)
/** A step about two sizes: a split (@p size used, @p size2 left) or a merge
 *  (@p size joined, @p size2 the result); @p index as in HL_EV. */
#define HL_EV_SIZES(heap, kind, what, index, size, size2, addr) HL_EVENT(heap, kind, what, index, size, size2, -1, -1, addr)
/** A kernel call of page source @p os (os.c only). */
#define HL_EV_OS(os, call, what, size, addr)                                                                  \
	do {                                                                                                   \
		if (__builtin_expect(hl_event_on, 0))                                                          \
			hl_event_emit_os((os), HL_EV_OS, (what), (long)(call), (size_t)(size), (addr));          \
	} while (0)

#endif
