/*
 * The recorder keeps the program's pace: HEAPLAB_RECORD_PACE=K (K > 1)
 * makes every timed wait on a condition variable K times as long.
 *
 * Recording slows the program's own work (each malloc and free is written
 * down), but not the clock.  Where a program's threads take turns by the
 * clock, they then take turns after less of their work: CPython hands its
 * interpreter lock on when a waiting thread's timed wait of the switch
 * interval (5 ms) runs out, so a program recorded 3.5 times slower
 * interleaves its threads' work 3.5 times as finely, and the blocks of
 * one thread's burst are cut between the others' (the seed's 8-thread
 * program: 110 MiB predicted on glibc against 75 measured without the
 * recorder).  `heaplab diagnose` measures the slowdown (the recorded
 * run's CPU time against the program's alone) and records once more with
 * it as the pace; the timed waits then end after as much of the program's
 * work as they would without the recorder.
 *
 * Only the wait is stretched, from the moment of the call: a deadline
 * already past stays past, a sleep (nanosleep, clock_nanosleep) is not a
 * turn taken and keeps its length.
 */
#include "config.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include "../trace/recorder.h"

#define SHIM_API __attribute__((visibility("default")))

typedef int (*timedwait_fn)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);
typedef int (*clockwait_fn)(pthread_cond_t *, pthread_mutex_t *, clockid_t, const struct timespec *);

static timedwait_fn real_timedwait;
static clockwait_fn real_clockwait;
static double pace = 1.0;

/* Called by the recorder's constructor (dlsym may allocate). */
void hl_rec_pace_start(void)
{
	real_timedwait = (timedwait_fn)dlvsym(RTLD_NEXT, "pthread_cond_timedwait", "GLIBC_2.3.2");
	if (!real_timedwait)
		real_timedwait = (timedwait_fn)dlsym(RTLD_NEXT, "pthread_cond_timedwait");
	real_clockwait = (clockwait_fn)dlsym(RTLD_NEXT, "pthread_cond_clockwait");
	const char *k = getenv("HEAPLAB_RECORD_PACE");
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

SHIM_API int pthread_cond_timedwait(pthread_cond_t *cond, pthread_mutex_t *mutex, const struct timespec *deadline)
{
	if (!real_timedwait)
		hl_rec_pace_start();
	if (pace == 1.0 || deadline->tv_nsec < 0 || deadline->tv_nsec >= 1000000000L)
		return real_timedwait(cond, mutex, deadline);
	struct timespec later = stretched(clock_near(deadline), deadline);
	return real_timedwait(cond, mutex, &later);
}

SHIM_API int pthread_cond_clockwait(pthread_cond_t *cond, pthread_mutex_t *mutex, clockid_t clock,
				    const struct timespec *deadline)
{
	if (!real_clockwait)
		hl_rec_pace_start();
	if (pace == 1.0 || deadline->tv_nsec < 0 || deadline->tv_nsec >= 1000000000L)
		return real_clockwait(cond, mutex, clock, deadline);
	struct timespec later = stretched(clock, deadline);
	return real_clockwait(cond, mutex, clock, &later);
}
