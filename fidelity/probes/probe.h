/* What every fidelity probe shares.  A probe is a plain C program that uses
 * the C library's malloc, so the same binary runs on the real allocator and,
 * through LD_PRELOAD, on the heaplab policy that models it.  It prints its
 * findings as "key=value" lines on stdout; fidelity/README.md says how rows
 * pick one of them. */
#ifndef HL_FIDELITY_PROBE_H
#define HL_FIDELITY_PROBE_H

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../../bench/workloads/bench_util.h"

/* Fails the probe with one line on stderr and exit status 2. */
static inline void probe_die(const char *what)
{
	fprintf(stderr, "probe: %s\n", what);
	exit(2);
}

/* "real" or "model", as heaplab fidelity sets FIDELITY_SIDE. */
static inline const char *probe_side(void)
{
	const char *s = getenv("FIDELITY_SIDE");
	return s ? s : "real";
}

static inline int probe_is_model(void)
{
	return strcmp(probe_side(), "model") == 0;
}

/* Resident bytes of the whole process now: the benchmarks' reading of
 * /proc/self/statm, which never allocates (see bench_util.h). */
static inline long probe_rss_bytes(void)
{
	return bench_rss_bytes();
}

/* Reads one of the model's own statistics (a path as hl_stat takes it, e.g.
 * "policy_stats.arenas") from the heap behind malloc.  Returns 0 with the
 * value in *out, or -1 on the real side, or when the statistic is unknown.
 * The functions are looked up at run time, so a probe links nothing of
 * heaplab's and runs unchanged on the real allocator. */
static inline int probe_model_stat(const char *name, double *out)
{
	void *(*default_heap)(void);
	int (*stat)(void *, const char *, double *);
	if (!probe_is_model())
		return -1;
	*(void **)&default_heap = dlsym(RTLD_DEFAULT, "hl_default_heap");
	*(void **)&stat = dlsym(RTLD_DEFAULT, "hl_stat");
	void *heap = default_heap ? default_heap() : NULL;
	if (!heap || !stat)
		return -1;
	return stat(heap, name, out);
}

/* Gives stdout a static buffer, so printing never calls malloc: a probe
 * calls this first, before its first allocation, and its heap then holds
 * only what it allocates itself. */
static inline void probe_static_stdout(void)
{
	bench_static_stdout();
}

/* argv[i] as a non-negative number, or @p def when absent; dies if bad. */
static inline long probe_arg(int argc, char **argv, int i, long def)
{
	if (i >= argc)
		return def;
	char *end;
	long v = strtol(argv[i], &end, 10);
	if (*end || end == argv[i] || v < 0)
		probe_die("bad number argument");
	return v;
}

#endif
