/*
 * The recorder keeps the program's pace.  Recording slows the program's
 * own work (each malloc and free is written down), not the clock; where
 * a program's threads take turns by the clock, they then take turns after
 * less of their work.  CPython hands its interpreter lock on when a
 * waiting thread's timed wait of the switch interval (5 ms) runs out: a
 * program recorded several times slower interleaves its threads' work as
 * finely, and the blocks of one thread's burst are cut between the
 * others' (the seed's 8-thread program: 110 MiB predicted on glibc against
 * 75 measured without the recorder).
 *
 * HEAPLAB_RECORD_PACE says how a timed wait on a condition variable counts
 * its time:
 *   recorder    the program's time: what the recorder's work in the
 *               allocator calls took (record_pace.h, timed in the shim)
 *               is not counted, and the wait goes on by that much;
 *   allocator   the same, the C allocator's work in those calls not
 *               counted either: CPython recorded with PYTHONMALLOC=malloc
 *               runs on pymalloc as it is, which takes a small part of
 *               glibc malloc's time;
 *   MODE:NS     either, each call counted as NS nanoseconds of the
 *               program's time (NS may be below 0): what a call takes in
 *               the program as it runs (pymalloc's: 14 ns here;
 *               diagnose/record_program.c's PYMALLOC_CALL_NS says how it
 *               was chosen);
 *   K (> 1)     every wait K times as long, whatever the program did.
 * The time left out is every thread's, added up: right where one thread
 * runs at a time (CPython's lock), more than one thread's loss where
 * several allocate at once, so such a wait lasts at most
 * PROGRAM_TIME_MOST times what it asked.  A whole slowdown is not the factor to use:
 * the recorder slows the seed's frees 14 times and its building 4 times
 * (thread CPU time), and the turns that interleave the bursts are taken
 * while they are built.
 *
 * Only the wait is counted, from the moment of the call: a deadline
 * already past stays past, a wait woken before its time returns as it
 * would, a sleep (nanosleep, clock_nanosleep) is not a turn taken and
 * keeps its length.
 */
#include "config.h"
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "../trace/recorder.h"
#include "record_pace.h"

#define SHIM_API __attribute__((visibility("default")))

typedef int (*timedwait_fn)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);
typedef int (*clockwait_fn)(pthread_cond_t *, pthread_mutex_t *, clockid_t, const struct timespec *);

static timedwait_fn real_timedwait;
static clockwait_fn real_clockwait;
static double pace = 1.0;
hl_pace_mode_t hl_pace_mode;
_Atomic long long hl_pace_spent_ns;
long long hl_pace_read_ns;
long long hl_pace_call_ns;

/* What one read of the clock costs here: the least of a few rounds' mean
 * (a round cut by the scheduler counts for nothing). */
static long long clock_read_ns(void)
{
	enum { ROUNDS = 5, READS = 200 };
	long long best = 0;
	for (int r = 0; r < ROUNDS; r++) {
		long long t0 = hl_pace_now(), t = t0;
		for (int k = 0; k < READS; k++)
			t = hl_pace_now();
		long long mean = (t - t0) / READS;
		if (!r || mean < best)
			best = mean;
	}
	return best;
}

/* Called by the recorder's constructor (dlsym may allocate). */
void hl_rec_pace_start(void)
{
	real_timedwait = (timedwait_fn)dlvsym(RTLD_NEXT, "pthread_cond_timedwait", "GLIBC_2.3.2");
	if (!real_timedwait)
		real_timedwait = (timedwait_fn)dlsym(RTLD_NEXT, "pthread_cond_timedwait");
	real_clockwait = (clockwait_fn)dlsym(RTLD_NEXT, "pthread_cond_clockwait");
	const char *k = getenv("HEAPLAB_RECORD_PACE");
	size_t word = k ? strcspn(k, ":") : 0;
	bool recorder = word == 8 && !strncmp(k, "recorder", 8), allocator = word == 9 && !strncmp(k, "allocator", 9);
	if (recorder || allocator) {
		char *end = NULL;
		double per_call = k[word] == ':' ? strtod(k + word + 1, &end) : 0;
		if (k[word] == ':' && (end == k + word + 1 || *end || per_call < -1000 || per_call > 1000)) {
			const char msg[] = "heaplab: HEAPLAB_RECORD_PACE's :NS is a number of nanoseconds from -1000 "
					   "to 1000: each call counted as 0\n";
			(void)!write(2, msg, sizeof msg - 1);
			per_call = 0;
		}
		hl_pace_call_ns = (long long)per_call;
		hl_pace_read_ns = clock_read_ns();
		hl_pace_mode = recorder ? HL_PACE_RECORDER : HL_PACE_ALLOCATOR;
		return;
	}
	double v = k ? strtod(k, NULL) : 1.0;
	pace = v > 1.0 && v <= 1000.0 ? v : 1.0;
}

static long long ns_of(const struct timespec *t) { return t->tv_sec * 1000000000LL + t->tv_nsec; }

/* @p deadline on @p clock, moved so that what was left of the wait at
 * this moment is @c pace times as long. */
static struct timespec stretched(clockid_t clock, const struct timespec *deadline)
{
	struct timespec now;
	clock_gettime(clock, &now);
	long long left = ns_of(deadline) - ns_of(&now);
	if (left <= 0)
		return *deadline;
	long long at = ns_of(&now) + (long long)((double)left * pace);
	return (struct timespec){ at / 1000000000LL, at % 1000000000LL };
}

/* The clock of a deadline given to pthread_cond_timedwait: the condition
 * variable's (its attribute, which glibc keeps in the variable and does
 * not let a caller read back), so the one the deadline lies near. */
static clockid_t clock_near(const struct timespec *deadline)
{
	struct timespec mono, real;
	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &real);
	long long d = ns_of(deadline), m = llabs(d - ns_of(&mono)), r = llabs(d - ns_of(&real));
	return m < r ? CLOCK_MONOTONIC : CLOCK_REALTIME;
}

/* A wait in the program's time lasts at most this many times what it
 * asked for by the clock: a thread that does nothing but allocate (C code
 * between its calls, or several threads at once) leaves the program's
 * time nearly still, and a timer waited for beside it would not fire
 * while it ran.  CPython's interpreter between its calls keeps a wait of
 * the seed's program within 5 to 8 times. */
enum { PROGRAM_TIME_MOST = 100 };

/* A wait of what was left of @p deadline on @p clock at the call, counted
 * in the program's time: what the allocator's calls took meanwhile (the
 * part hl_pace_mode does not count) is waited again, until the program has
 * had its time, the wait is woken, or it has lasted PROGRAM_TIME_MOST
 * times what it asked. */
static int wait_program_time(pthread_cond_t *cond, pthread_mutex_t *mutex, clockid_t clock,
			     const struct timespec *deadline)
{
	struct timespec now;
	clock_gettime(clock, &now);
	long long start = ns_of(&now), asked = ns_of(deadline) - start;
	long long spent0 = atomic_load_explicit(&hl_pace_spent_ns, memory_order_relaxed);
	long long left = asked;
	long long most = asked < (LLONG_MAX - start) / PROGRAM_TIME_MOST ? start + asked * PROGRAM_TIME_MOST : LLONG_MAX;
	for (;;) {
		if (left <= 0)
			return ETIMEDOUT;
		clock_gettime(clock, &now);
		if (ns_of(&now) >= most)
			return ETIMEDOUT;
		long long at = left < most - ns_of(&now) ? ns_of(&now) + left : most;
		struct timespec until = { at / 1000000000LL, at % 1000000000LL };
		int rc = real_clockwait ? real_clockwait(cond, mutex, clock, &until)
					: real_timedwait(cond, mutex, &until);
		if (rc != ETIMEDOUT)
			return rc;
		clock_gettime(clock, &now);
		long long spent = atomic_load_explicit(&hl_pace_spent_ns, memory_order_relaxed) - spent0;
		left = asked - (ns_of(&now) - start - spent);
	}
}

SHIM_API int pthread_cond_timedwait(pthread_cond_t *cond, pthread_mutex_t *mutex, const struct timespec *deadline)
{
	if (!real_timedwait)
		hl_rec_pace_start();
	if (deadline->tv_nsec < 0 || deadline->tv_nsec >= 1000000000L)
		return real_timedwait(cond, mutex, deadline);
	if (hl_pace_mode != HL_PACE_OFF)
		return wait_program_time(cond, mutex, clock_near(deadline), deadline);
	if (pace == 1.0)
		return real_timedwait(cond, mutex, deadline);
	struct timespec later = stretched(clock_near(deadline), deadline);
	return real_timedwait(cond, mutex, &later);
}

SHIM_API int pthread_cond_clockwait(pthread_cond_t *cond, pthread_mutex_t *mutex, clockid_t clock,
				    const struct timespec *deadline)
{
	if (!real_clockwait)
		hl_rec_pace_start();
	if (deadline->tv_nsec < 0 || deadline->tv_nsec >= 1000000000L)
		return real_clockwait(cond, mutex, clock, deadline);
	if (hl_pace_mode != HL_PACE_OFF)
		return wait_program_time(cond, mutex, clock, deadline);
	if (pace == 1.0)
		return real_clockwait(cond, mutex, clock, deadline);
	struct timespec later = stretched(clock, deadline);
	return real_clockwait(cond, mutex, clock, &later);
}
