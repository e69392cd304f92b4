/*
 * bins_tcache.c -- the tcache of policy `bins`, its slow part: the scan
 * that tells a double free from a chunk whose key only looks like one.
 * Putting a chunk on a thread's cache list and taking one off (safe-linked
 * as glibc 2.32+ does) are inline in bins_tcache.h, as they are the fast
 * path.  Owner thread only, no lock.  Both bins.c (malloc and free) and
 * bins_arena.c (spare exact fits stashed on the way) use the tcache; it
 * calls nothing of the policy (see bins.h, "Layers").
 */
#include "bins_tcache.h"

/* The key matched: abort when @p e really is in this thread's cache. */
void bn_tcache_double_free_scan(bn_state_t *st, bn_tcache_t *tc, bn_tentry_t *e, unsigned idx)
{
	unsigned n = 0;
	for (bn_tentry_t *x = tc->entries[idx]; x; x = bn_tentry_next(x)) {
		if (x == e)
			hl_fatal(BN, "free(): double free detected in tcache 2", e);
		if (HL_UNLIKELY(++n > st->tcache_count || ((uintptr_t)x & 15)))
			hl_fatal(BN, "free(): too many or unaligned chunks detected in tcache", x);
	}
}
