/**
 * @file clock.h
 * @brief The clock seam: every time-based rule of every policy reads the
 *        time here, and a policy's background work runs here.
 *
 * A heap runs on one of two clocks, chosen when it is made (core option
 * `clock`):
 *
 * - `real` (the default, and every LD_PRELOAD run): CLOCK_MONOTONIC, and a
 *   background task is a thread that sleeps between passes.
 * - `replay`: the time the replay gives (hl_heap_set_time: a recording's
 *   `#@t` stamps, or `--op-ns` per operation), starting at 0 and moving
 *   only when the replay moves it.  A background task has no thread: when
 *   the replay moves the clock past the time the task would have woken, the
 *   task's pass runs there and then, on the replaying thread, with the
 *   clock set to that wake-up time; so decay, purge delays, release rates
 *   and background threads act at the recorded times, and a replay stays
 *   deterministic.
 *
 * Only core/clock.c reads the system clock for a heap (tests/house/clock_seam.sh);
 * the recorder and the replay's own timing are heaplab measuring itself.
 */
#ifndef HL_CLOCK_H
#define HL_CLOCK_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct hl_heap hl_heap_t;

/** Monotonic nanoseconds of heap @p h's clock (see above). */
uint64_t hl_clock_now_ns(const hl_heap_t *h);
/** Milliseconds of the same clock. */
static inline int64_t hl_clock_now_ms(const hl_heap_t *h) { return (int64_t)(hl_clock_now_ns(h) / 1000000u); }
/** A seed for a policy's keys and jitter: the real clock's nanoseconds on
 *  a real heap, a fixed value (by heap id) on a replay heap, so that a
 *  replay does the same every time. */
uint64_t hl_clock_seed(const hl_heap_t *h);

/** One pass of a background task: does its work, returns the nanoseconds
 *  until it wants its next pass (at least 1). */
typedef uint64_t (*hl_background_fn)(void *arg);

/** A policy's background task (a thread of the modelled allocator), kept
 *  inside the policy's state; its fields are the core's. */
typedef struct hl_background {
	hl_heap_t *heap;
	hl_background_fn fn;
	void *arg;
	pthread_mutex_t lock;     /**< guards the fields below */
	pthread_cond_t cond;      /**< the thread sleeps on it (CLOCK_MONOTONIC) */
	pthread_t thread;         /**< valid while running on a real heap */
	bool running;             /**< started and not stopped (nor lost in a fork child) */
	bool stop;                /**< asked to end */
	uint64_t kicks;           /**< wake-ups asked for */
	uint64_t runs;            /**< passes made */
	uint64_t due_ns;          /**< replay heap: the clock time of the next pass */
	struct hl_background *next; /**< replay heap: the heap's other tasks */
} hl_background_t;

/** Starts @p bg on heap @p h: a thread on a real heap (whose first pass
 *  runs at once), a task due now on a replay heap.  0, or -1 when the
 *  thread could not be made. */
int hl_background_start(hl_background_t *bg, hl_heap_t *h, hl_background_fn fn, void *arg);
/** Wakes @p bg for a pass now (a replay heap: at the clock's next move). */
void hl_background_kick(hl_background_t *bg);
/** Ends @p bg and waits for its thread (nothing when not running). */
void hl_background_stop(hl_background_t *bg);
/** Passes @p bg has made. */
uint64_t hl_background_runs(hl_background_t *bg);
/** True while @p bg runs. */
bool hl_background_running(hl_background_t *bg);
/** Fork: hold @p bg's lock across the fork, release it in the parent; in
 *  the child the task is gone (its thread did not come along) and its lock
 *  is new.  Whether it starts again is the policy's rule. */
void hl_background_fork_prepare(hl_background_t *bg);
void hl_background_fork_parent(hl_background_t *bg);
void hl_background_fork_child(hl_background_t *bg);
#endif
