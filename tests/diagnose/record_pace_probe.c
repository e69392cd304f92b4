/*
 * A timed wait on a condition variable nobody signals, as CPython's
 * waiting threads make one: pthread_cond_timedwait on a monotonic
 * condition variable (argument "timed"), on a default (realtime) one
 * ("realtime"), or pthread_cond_clockwait ("clock"), with a deadline
 * MS milliseconds ahead.  Prints the milliseconds the wait took and
 * whether it timed out: "waited N timedout".  With BUSY, another thread
 * (THREADS others) calls malloc and free over and over for BUSY
 * milliseconds from the wait's start (its time all but wholly in the
 * allocator's calls), or until the wait ends, and the line goes on with
 * "while-busy" when they were all still calling them then, "after-busy"
 * when one had stopped.
 * "woken": another thread signals the variable after 10 ms, and the wait
 * (on a monotonic one, through pthread_cond_timedwait) ends "woken".
 *
 * Usage: record_pace_probe timed|realtime|clock|woken MS [BUSY [THREADS]]
 */
#include <errno.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdatomic.h>
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

static pthread_cond_t cond;
static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static long busy_ms;
static int signalled;
static atomic_int stop, busy_done;

static void *allocate(void *arg)
{
	(void)arg;
	long long until = ms_now(CLOCK_MONOTONIC) + busy_ms;
	while (ms_now(CLOCK_MONOTONIC) < until && !atomic_load(&stop))
		for (int k = 0; k < 1000; k++) {
			void *volatile p = malloc(64);
			free(p);
		}
	atomic_store(&busy_done, 1);
	return NULL;
}

static void *wake(void *arg)
{
	(void)arg;
	struct timespec ten = { 0, 10000000L };
	nanosleep(&ten, NULL);
	pthread_mutex_lock(&mutex);
	signalled = 1;
	pthread_cond_signal(&cond);
	pthread_mutex_unlock(&mutex);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 3 || argc > 5)
		return fprintf(stderr, "usage: record_pace_probe timed|realtime|clock|woken MS [BUSY [THREADS]]\n"), 2;
	long ms = strtol(argv[2], NULL, 10);
	busy_ms = argc >= 4 ? strtol(argv[3], NULL, 10) : 0;
	int nbusy = argc == 5 ? atoi(argv[4]) : 1;
	if (nbusy < 1 || nbusy > 8)
		return fprintf(stderr, "record_pace_probe: THREADS is 1 to 8\n"), 2;
	bool woken = !strcmp(argv[1], "woken");
	clockid_t clock = strcmp(argv[1], "realtime") ? CLOCK_MONOTONIC : CLOCK_REALTIME;
	pthread_condattr_t attr;
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, clock);
	pthread_cond_init(&cond, &attr);
	struct timespec deadline;
	clock_gettime(clock, &deadline);
	deadline.tv_sec += ms / 1000;
	deadline.tv_nsec += ms % 1000 * 1000000L;
	if (deadline.tv_nsec >= 1000000000L) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	long long start = ms_now(CLOCK_MONOTONIC);
	pthread_t other[8];
	int started = 0;
	for (int k = 0; k < (woken ? 1 : busy_ms > 0 ? nbusy : 0); k++)
		started += pthread_create(&other[started], NULL, woken ? wake : allocate, NULL) == 0;
	pthread_mutex_lock(&mutex);
	int rc;
	do
		rc = strcmp(argv[1], "clock") ? pthread_cond_timedwait(&cond, &mutex, &deadline)
					       : pthread_cond_clockwait(&cond, &mutex, clock, &deadline);
	while (rc == 0 && !signalled);   /* a spurious wake-up waits on to the deadline */
	pthread_mutex_unlock(&mutex);
	long long took = ms_now(CLOCK_MONOTONIC) - start;
	bool busy_then = busy_ms > 0 && !atomic_load(&busy_done);
	atomic_store(&stop, 1);
	for (int k = 0; k < started; k++)
		pthread_join(other[k], NULL);
	printf("waited %lld %s%s\n", took, rc == ETIMEDOUT ? "timedout" : rc == 0 ? "woken" : strerror(rc),
	       busy_ms > 0 ? busy_then ? " while-busy" : " after-busy" : "");
	return 0;
}
