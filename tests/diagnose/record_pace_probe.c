/*
 * A timed wait on a condition variable nobody signals, as CPython's
 * waiting threads make one: pthread_cond_timedwait on a monotonic
 * condition variable (argument "timed"), on a default (realtime) one
 * ("realtime"), or pthread_cond_clockwait ("clock"), with a deadline
 * MS milliseconds ahead.  Prints the milliseconds the wait took and
 * whether it timed out: "waited N timedout".
 *
 * Usage: record_pace_probe timed|realtime|clock MS
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long long ms_now(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return t.tv_sec * 1000LL + t.tv_nsec / 1000000;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return fprintf(stderr, "usage: record_pace_probe timed|realtime|clock MS\n"), 2;
	long ms = strtol(argv[2], NULL, 10);
	clockid_t clock = strcmp(argv[1], "realtime") ? CLOCK_MONOTONIC : CLOCK_REALTIME;
	pthread_condattr_t attr;
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, clock);
	pthread_cond_t cond;
	pthread_cond_init(&cond, &attr);
	pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
	struct timespec deadline;
	clock_gettime(clock, &deadline);
	deadline.tv_sec += ms / 1000;
	deadline.tv_nsec += ms % 1000 * 1000000L;
	if (deadline.tv_nsec >= 1000000000L) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	long long start = ms_now(CLOCK_MONOTONIC);
	pthread_mutex_lock(&mutex);
	int rc;
	do
		rc = strcmp(argv[1], "clock") ? pthread_cond_timedwait(&cond, &mutex, &deadline)
					       : pthread_cond_clockwait(&cond, &mutex, clock, &deadline);
	while (rc == 0);   /* a spurious wake-up waits on to the deadline */
	pthread_mutex_unlock(&mutex);
	printf("waited %lld %s\n", ms_now(CLOCK_MONOTONIC) - start, rc == ETIMEDOUT ? "timedout" : strerror(rc));
	return 0;
}
