/* Small helpers the fidelity probes share besides probe.h: waiting and
 * percentages. */
#ifndef HL_FIDELITY_PROBE_UTIL_H
#define HL_FIDELITY_PROBE_UTIL_H

#include <time.h>

/* Sleeps @p ms milliseconds, resuming after signals. */
static inline void probe_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0)
		;
}

/* @p part in percent of @p whole, rounded; 0 when @p whole is not positive. */
static inline long probe_pct(long part, long whole)
{
	return whole > 0 ? (part * 100 + whole / 2) / whole : 0;
}

#endif
