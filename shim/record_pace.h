/*
 * The program's own time, for the recorder's pace (record_pace.c): under
 * HEAPLAB_RECORD_PACE=recorder or allocator, the shim times the part of
 * each malloc, calloc, realloc and free that the mode does not count (the
 * recorder's work; or the whole call, the C allocator's work with it),
 * and the parts are added up, every thread's, in hl_pace_spent_ns.
 *
 * A part is timed by two clock reads, and about one read's worth of each
 * pair falls outside it (the start of the first, the end of the second):
 * the recorder's overhead all the same, added to each part as
 * hl_pace_read_ns, the cost of one read measured when the recorder
 * starts.  Without it, a thread that only allocates advances the
 * program's time by a third of the clock's (measured: a 50 ms wait while
 * another thread calls malloc and free for 400 ms ended after 165 ms).
 *
 * Less hl_pace_call_ns a call ("allocator:NS"): what a call takes in the
 * program as it runs, which the part timed leaves out with the rest
 * (CPython's pymalloc, in front of malloc as the program runs:
 * diagnose/record_program.c's PYMALLOC_CALL_NS).
 */
#ifndef HEAPLAB_RECORD_PACE_H
#define HEAPLAB_RECORD_PACE_H
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>

/** What a timed wait does not count (HEAPLAB_RECORD_PACE). */
typedef enum {
	HL_PACE_OFF,        /**< counts all (or stretched by a factor) */
	HL_PACE_RECORDER,   /**< the recorder's work */
	HL_PACE_ALLOCATOR,  /**< the C allocator's and the recorder's */
} hl_pace_mode_t;
extern hl_pace_mode_t hl_pace_mode;
extern _Atomic long long hl_pace_spent_ns;
extern long long hl_pace_read_ns;
extern long long hl_pace_call_ns;

static inline long long hl_pace_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Where the part that @p mode does not count starts: the time (0: not
 * counting, or counting from a start already taken, @p from). */
static inline long long hl_pace_from(hl_pace_mode_t mode, long long from)
{
	return __builtin_expect(hl_pace_mode == mode, 0) ? hl_pace_now() : from;
}

/* Where it ends: what it took, added up; 0, nothing more to add. */
static inline long long hl_pace_to(long long t0)
{
	if (__builtin_expect(t0 != 0, 0)) {
		long long part = hl_pace_now() - t0 + hl_pace_read_ns - hl_pace_call_ns;
		atomic_fetch_add_explicit(&hl_pace_spent_ns, part, memory_order_relaxed);
	}
	return 0;
}
#endif
