/*
 * sharded_cache.c — the segment cache of mimalloc 2.0.9 (segment-cache.c
 * there): a regular segment whose last page is freed is not unmapped but
 * parked, still committed and resident, in one of SHD_CACHE_SLOTS slots,
 * and the next new segment takes the parked one in the lowest slot.
 *
 * A parked segment may be purged segment_purge_delay ms after it was
 * parked, but nothing watches the clock: only parking another segment
 * looks at SHD_CACHE_PROBE slots from a start that depends on the time,
 * and purges the expired ones it finds (it stops after more than
 * SHD_CACHE_PURGES).  A program that frees its segments and then stops
 * making and freeing segments keeps them resident: the half-gigabyte
 * program on mimalloc 2.0.9 stays at 500 MiB after freeing everything.
 *
 * Deviations: the info slice of a parked segment (its header) stays
 * resident when the rest is purged, 64 KiB a segment; and secure mode
 * does not park (its guard pages would need renewing).
 */
#include "config.h"
#include <string.h>
#include "sharded_segment.h"

static inline bool shd_slice_committed(const shd_segment_t *s, size_t i)
{
	return (s->committed[i >> 6] >> (i & 63)) & 1;
}

/* Purges the committed slices of parked slot @p i past the info slice. */
static void shd_cache_purge_slot(shd_state_t *st, size_t i)
{
	shd_segment_t *s = st->cache[i];
	for (size_t j = SHD_INFO_SLICES; j < SHD_SLICES;) {
		size_t k = j;
		while (k < SHD_SLICES && shd_slice_committed(s, k))
			k++;
		if (k > j) {
			hl_os_purge(st->os, shd_slice_addr(s, j), (k - j) * SHD_SLICE_SIZE);
			st->cache_purged_bytes += (k - j) * SHD_SLICE_SIZE;
		}
		j = k + 1;
	}
	st->cache_expire[i] = 0;
	st->cache_purges++;
}

/* What parking does first: a look at a few slots, purging expired ones. */
static void shd_cache_purge_some(shd_state_t *st, int64_t now)
{
	size_t i = (size_t)(hl_mix64((uint64_t)now) % SHD_CACHE_SLOTS), purged = 0;
	for (size_t visited = 0; visited < SHD_CACHE_PROBE; visited++, i = (i + 1) % SHD_CACHE_SLOTS) {
		if (!st->cache[i] || !st->cache_expire[i] || now < st->cache_expire[i])
			continue;
		shd_cache_purge_slot(st, i);
		if (++purged > SHD_CACHE_PURGES)
			break;
	}
}

bool shd_cache_park(shd_state_t *st, shd_segment_t *s)
{
	if (!st->cache_on || st->secure || s->huge)
		return false;
	pthread_mutex_lock(&st->lock);
	int64_t now = shd_now_ms(st);
	shd_cache_purge_some(st, now);
	size_t i = 0;
	while (i < SHD_CACHE_SLOTS && st->cache[i])
		i++;
	if (i < SHD_CACHE_SLOTS) {
		st->cache[i] = s;
		st->cache_expire[i] = 0;
		st->cached++;
		if (st->segment_purge_delay == 0)
			shd_cache_purge_slot(st, i);
		else if (st->segment_purge_delay > 0)
			st->cache_expire[i] = now + st->segment_purge_delay;
	}
	pthread_mutex_unlock(&st->lock);
	return i < SHD_CACHE_SLOTS;
}

shd_segment_t *shd_cache_take(shd_state_t *st)
{
	if (!st->cache_on)
		return NULL;
	shd_segment_t *s = NULL;
	pthread_mutex_lock(&st->lock);
	for (size_t i = 0; st->cached && i < SHD_CACHE_SLOTS; i++) {
		if (!st->cache[i])
			continue;
		s = st->cache[i];
		st->cache[i] = NULL;
		st->cache_expire[i] = 0;
		st->cached--;
		break;
	}
	pthread_mutex_unlock(&st->lock);
	if (s) { /* a clean header; what is committed stays committed */
		uint64_t committed[SHD_LIST_WORDS];
		size_t bytes = s->committed_bytes;
		memcpy(committed, s->committed, sizeof committed);
		memset(s, 0, sizeof *s);
		memcpy(s->committed, committed, sizeof committed);
		s->committed_bytes = bytes;
	}
	return s;
}

size_t shd_cache_release_all(shd_state_t *st)
{
	size_t bytes = 0;
	pthread_mutex_lock(&st->lock);
	for (size_t i = 0; st->cached && i < SHD_CACHE_SLOTS; i++) {
		shd_segment_t *s = st->cache[i];
		if (!s)
			continue;
		bytes += s->committed_bytes;
		st->cache[i] = NULL;
		st->cache_expire[i] = 0;
		st->cached--;
		hl_os_release(st->os, s, s->committed_bytes);
	}
	pthread_mutex_unlock(&st->lock);
	return bytes;
}
