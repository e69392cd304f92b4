/* Small helpers the fidelity probes share besides probe.h: waiting and
 * percentages. */
#ifndef HL_FIDELITY_PROBE_UTIL_H
#define HL_FIDELITY_PROBE_UTIL_H

#include <time.h>
#include "probe.h"

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

/* A purge trigger: mimalloc (and sharded) have no timer; they run the
 * purges that are due when a page is freed.  Arm it early (two pages'
 * worth of 5000-byte blocks, allocated before the memory being measured),
 * fire it later (free them: a page comes free). */
enum { PROBE_TRIGGER_BLOCKS = 40, PROBE_TRIGGER_SIZE = 5000 };
typedef struct probe_trigger {
	void *block[PROBE_TRIGGER_BLOCKS];
} probe_trigger_t;

static inline void probe_trigger_arm(probe_trigger_t *t)
{
	for (int i = 0; i < PROBE_TRIGGER_BLOCKS; i++)
		if (!(t->block[i] = malloc(PROBE_TRIGGER_SIZE)))
			probe_die("malloc failed");
}

static inline void probe_trigger_fire(probe_trigger_t *t)
{
	for (int i = 0; i < PROBE_TRIGGER_BLOCKS; i++)
		free(t->block[i]);
}

#endif
