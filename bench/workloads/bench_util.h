/* Helpers for the benchmark workloads: timing, RSS, a fast generator.
 * The workloads use the C library's malloc, so that the same binary runs
 * under every allocator through LD_PRELOAD. */
#ifndef HL_BENCH_UTIL_H
#define HL_BENCH_UTIL_H

#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static inline double bench_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Resident bytes of the whole process now, from /proc/self/statm.  Read
 * with open and read, not stdio: fopen would malloc a FILE in the middle of
 * the workload, and that one block (or the thread cache keeping it after
 * fclose) can sit above the workload's blocks and pin the top of a heap.
 * (The fidelity probes measure with it too.) */
static inline long bench_rss_bytes(void)
{
	char text[128];
	long pages = 0, resident = 0;
	int fd = open("/proc/self/statm", O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, text, sizeof text - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return 0;
	text[n] = 0;
	if (sscanf(text, "%ld %ld", &pages, &resident) != 2)
		resident = 0;
	return resident * sysconf(_SC_PAGESIZE);
}

static inline double bench_rss_mb(void)
{
	return (double)bench_rss_bytes() / (1024.0 * 1024.0);
}

/* Gives stdout a static buffer: printing a result then never allocates
 * (a workload calls this before its first malloc). */
static inline void bench_static_stdout(void)
{
	static char buf[1 << 16];
	setvbuf(stdout, buf, _IOFBF, sizeof buf);
}

/* Peak resident set size, in MiB. */
static inline double bench_peak_mb(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_maxrss / 1024.0;
}

static inline uint64_t bench_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static inline int bench_by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The median of v[0..n), n > 0 (sorts v in place). */
static inline double bench_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, bench_by_value);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static inline long bench_arg(int argc, char **argv, int i, long def)
{
	return argc > i ? strtol(argv[i], NULL, 10) : def;
}

/* The CPUs this process may run on, in order, at most @max of them into
 * @cpus; returns how many (0 when the affinity cannot be read). */
static inline int bench_allowed_cpus(int *cpus, int max)
{
	cpu_set_t set;
	int n = 0;
	if (sched_getaffinity(0, sizeof set, &set) != 0)
		return 0;
	for (int c = 0; c < CPU_SETSIZE && n < max; c++)
		if (CPU_ISSET(c, &set))
			cpus[n++] = c;
	return n;
}

/* Pins the calling thread to @cpu; on failure says so as @who and exits 2. */
static inline void bench_pin(int cpu, const char *who)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof set, &set) != 0) {
		fprintf(stderr, "%s: cannot pin a thread to CPU %d\n", who, cpu);
		exit(2);
	}
}
#endif
