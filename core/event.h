/**
 * @file event.h
 * @brief Emitting decision events (the policies' side of hl_set_listener).
 *
 * A policy names each step it takes where the step is decided, in one line:
 *
 *     HL_EV(st->heap, HL_EV_CACHE_HIT, "tcache bin", idx, 0, p);
 *     HL_EV_COUNT(st->heap, HL_EV_CACHE_HIT, "tcache bin", idx, n + 1, n, p);
 *     HL_EV_SIZES(st->heap, HL_EV_SPLIT, "top", -1, used, rest, p);
 *
 * Cost when nobody listens: the macro tests one byte, hl_event_on (nonzero
 * while any heap of the process has a listener or keeps its events), on a
 * branch marked unlikely; the arguments are evaluated and the event built
 * only inside that branch, out of line (event.c), so the fast path gains a
 * compare and a jump that is never taken.  With a listener on another heap
 * the call happens and event.c drops the event after one table look-up.
 *
 * Why the call goes through a trampoline on x86-64: an ordinary call in
 * the cold branch clobbers the caller-saved registers, so every value a
 * fast path still needs after the emission point would have to live in a
 * callee-saved register, and the fast path would push and pop them on
 * every call (measured: 5 to 12 % more instructions per malloc+free pair,
 * bench/HISTORY.md).  The branch instead builds the event in a per-thread
 * slot (on the stack it would cost the fast path a frame) and
 * calls hl_event_trampoline (event.c) from an asm statement that declares
 * no clobbered register: the trampoline saves every register an ordinary
 * C function may change (and the SSE/x87 state), calls hl_event_emit_call,
 * and restores them.  The asm steps over the red zone first (a leaf
 * function may keep data below its stack pointer).  Other targets make an
 * ordinary call.
 *
 * Quiet copies: that one test is still a compare and a jump at each point
 * a fast path passes, 4 instructions per free+malloc pair, 2.7 to 4.7 % of
 * the shortest paths (bench/HISTORY.md).  So a policy builds its malloc and
 * free twice from one body (HL_EV_MALLOC_TWICE, HL_EV_FREE_TWICE below):
 * the body takes `bool listening` and writes its fast path's emission
 * points `if (listening) HL_EV(...)`; NAME (listening true: every point, as
 * above) goes in the table's malloc or free, NAME_quiet (false: the
 * compiler drops those points) in malloc_quiet or free_quiet.  The core
 * calls the quiet copy while nobody listens to the heap and NAME while a
 * listener or kept events are set (hl_heap_listening, heap.c, called from
 * event.c); everyone else (realloc, a host, debug mode's guard) calls NAME.
 * A call running on another thread while a listener is being set may miss
 * its fast-path step, as it could miss hl_event_on before.
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
/** An event on its way, with its heap: what the trampoline hands over. */
typedef struct hl_event_call {
	hl_heap_t *heap;
	hl_event_t e;
} hl_event_call_t;
/** Where HL_EVENT builds an event: one per thread (no stack frame for the
 *  fast path to make room for); hl_event_emit_call copies it before a
 *  listener runs, so a listener's own allocations may reuse it. */
extern __thread hl_event_call_t hl_event_slot __attribute__((visibility("hidden")));
/** hl_event_emit of the event HL_EVENT built in this thread's slot @p c
 *  (the trampoline's callee). */
void hl_event_emit_call(const hl_event_call_t *c) __attribute__((visibility("hidden")));
/** Forgets @p h's listener and kept events (the heap is being destroyed). */
void hl_event_forget(hl_heap_t *h);

/** How a fast path's body is declared: inlined into both of its copies. */
#define HL_EV_BODY static inline __attribute__((always_inline))
/** Defines @p name and name##_quiet (the header says why) from
 *  `HL_EV_BODY void *name##_body(void *st, hl_thread_t *t, size_t n, bool listening)`. */
#define HL_EV_MALLOC_TWICE(name)                                                                              \
	static void *name(void *st, hl_thread_t *t, size_t n) { return name##_body(st, t, n, true); }         \
	static void *name##_quiet(void *st, hl_thread_t *t, size_t n) { return name##_body(st, t, n, false); }
/** The same for `HL_EV_BODY void name##_body(void *st, hl_thread_t *t, void *p, bool listening)`. */
#define HL_EV_FREE_TWICE(name)                                                                                \
	static void name(void *st, hl_thread_t *t, void *p) { name##_body(st, t, p, true); }                  \
	static void name##_quiet(void *st, hl_thread_t *t, void *p) { name##_body(st, t, p, false); }

#if defined(__x86_64__) && defined(__GNUC__)
/* Calls the trampoline with the event's address in %rax; no register is
 * clobbered.  (Handing the address over, rather than letting the trampoline
 * find the slot itself, measured one instruction per pair less on sharded.) */
#define HL_EVENT_CALL_(c)                                                                                      \
	__asm__ volatile("sub $128, %%rsp\n\tcall hl_event_trampoline\n\tadd $128, %%rsp"                       \
			 : : "a"(c), "m"(*(c)))
#else
#define HL_EVENT_CALL_(c) hl_event_emit_call(c)
#endif

#ifdef HL_EVENTS_COMPILED_OUT
/* For measuring only (bench/instructions.sh, bench/RESULTS.md): a tree
 * configured with CPPFLAGS=-DHL_EVENTS_COMPILED_OUT has no emission point
 * at all, the figure the fast paths with events are held against.  Nothing
 * is ever delivered there, so the events' tests fail in it. */
#define HL_EVENT(h_, k_, w_, i_, s_, s2_, b_, a_, p_) do { } while (0)
#else
/** Emits every field (heap, kind, what, index, size, size2, before, after,
 *  address): the general form behind the short ones below. */
#define HL_EVENT(h_, k_, w_, i_, s_, s2_, b_, a_, p_)                                                        \
	do {                                                                                                   \
		if (__builtin_expect(hl_event_on, 0)) {                                                        \
			hl_event_call_t *hl_ev_ = &hl_event_slot;                                              \
			hl_ev_->heap = (h_);                                                                   \
			hl_ev_->e.kind = (k_);                                                                 \
			hl_ev_->e.what = (w_);                                                                 \
			hl_ev_->e.index = (long)(i_);                                                          \
			hl_ev_->e.size = (size_t)(s_);                                                         \
			hl_ev_->e.size2 = (size_t)(s2_);                                                       \
			hl_ev_->e.before = (long)(b_);                                                         \
			hl_ev_->e.after = (long)(a_);                                                          \
			hl_ev_->e.addr = (p_);                                                                 \
			HL_EVENT_CALL_(hl_ev_);                                                                \
		}                                                                                              \
	} while (0)
#endif
/** A step about one place (@p index, -1 for none), @p size bytes at @p addr. */
#define HL_EV(heap, kind, what, index, size, addr) HL_EVENT(heap, kind, what, index, size, 0, -1, -1, addr)
/** A step that changes a count or figure from @p before to @p after. */
#define HL_EV_COUNT(heap, kind, what, index, before, after, addr)                                             \
	HL_EVENT(heap, kind, what, index, 0, 0, before, after, addr)
/** A step about two sizes: a split (@p size used, @p size2 left) or a merge
 *  (@p size joined, @p size2 the result); @p index as in HL_EV. */
#define HL_EV_SIZES(heap, kind, what, index, size, size2, addr) HL_EVENT(heap, kind, what, index, size, size2, -1, -1, addr)
/** A kernel call of page source @p os (os.c only). */
#ifdef HL_EVENTS_COMPILED_OUT
#define HL_EV_OS(os, call, what, size, addr) do { } while (0)
#else
#define HL_EV_OS(os, call, what, size, addr)                                                                  \
	do {                                                                                                   \
		if (__builtin_expect(hl_event_on, 0))                                                          \
			hl_event_emit_os((os), HL_EV_OS, (what), (long)(call), (size_t)(size), (addr));          \
	} while (0)
#endif

#endif
