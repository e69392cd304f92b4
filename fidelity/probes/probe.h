/* What every fidelity probe shares.  A probe is a plain C program that uses
 * the C library's malloc, so the same binary runs on the real allocator and,
 * through LD_PRELOAD, on the heaplab policy that models it.  It prints its
 * findings as "key=value" lines on stdout; fidelity/README.md says how rows
 * pick one of them. */
#ifndef HL_FIDELITY_PROBE_H
#define HL_FIDELITY_PROBE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* Resident bytes of the whole process now, from /proc/self/statm. */
static inline long probe_rss_bytes(void)
{
	long pages = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	if (f) {
		if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
			resident = 0;
		fclose(f);
	}
	return resident * sysconf(_SC_PAGESIZE);
}

/* Fails the probe with one line on stderr and exit status 2. */
static inline void probe_die(const char *what)
{
	fprintf(stderr, "probe: %s\n", what);
	exit(2);
}

#endif
