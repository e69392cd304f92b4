/*
 * bins_stats.c -- policy_stats of `bins`, shaped like glibc's malloc_info:
 * one entry per arena with its system bytes (current and peak), the bytes
 * in live and cached chunks, the free chunks by bin ("sizes": from, to,
 * count, total) and the top; then the mapped chunks, the mmap threshold as
 * self-tuning left it, the tcache hits and misses and the lock contention.
 */
#include "bins_tcache.h"
#include <string.h>

/** Tallies of one arena, gathered by walking its chunks. */
struct bn_tally {
	size_t live, cached, free, top, nfree, records;
	size_t count[BN_NBINS], bytes[BN_NBINS];
	size_t fast_count, fast_bytes;
};

static int bn_tally_one(bn_state_t *st, bn_arena_t *a, bn_chunk_t *c, hl_block_state_t s, void *arg)
{
	struct bn_tally *t = arg;
	size_t sz = bn_csize(c);
	(void)a;
	switch (s) {
	case HL_BLOCK_TOP: t->top += sz; break;
	case HL_BLOCK_CACHED: t->cached += sz; break;
	case HL_BLOCK_META:          /* a tcache record, or a sub-heap's fencepost */
		if (bn_is_tcache_record(a, c))
			t->records += sz;
		break;
	case HL_BLOCK_FREE:
		t->free += sz;
		t->nfree++;
		if (bn_inuse(c)) {
			t->fast_count++;
			t->fast_bytes += sz;
		}
		break;
	default: t->live += sz; break;
	}
	return 0;
}

/** Free chunks per bin, read from the bins themselves. */
static void bn_tally_bins(bn_arena_t *a, struct bn_tally *t)
{
	for (unsigned i = BN_UNSORTED; i < BN_NBINS; i++) {
		bn_chunk_t *b = bn_bin(a, i);
		for (bn_chunk_t *c = b->fd; c != b; c = c->fd) {
			t->count[i]++;
			t->bytes[i] += bn_csize(c);
		}
	}
}

/** Smallest chunk size that goes to bin @p i or above (binary search:
 *  the bin index grows with the size). */
static size_t bn_bin_lo(unsigned i)
{
	size_t lo = BN_MINSIZE, hi = HL_MAX_REQUEST;
	while (lo < hi) {
		size_t mid = ((lo + hi) / 2) & ~(size_t)15;
		if (mid < lo)
			mid = lo;
		if (bn_bin_index(mid) >= i)
			hi = mid;
		else
			lo = mid + 16;
	}
	return lo;
}

static void bn_stats_sizes(hl_statw_t *w, const struct bn_tally *t)
{
	hl_statw_list(w, "sizes");
	for (unsigned i = 2; i < BN_NBINS; i++) {
		if (!t->count[i])
			continue;
		hl_statw_object(w, NULL);
		hl_statw_u64(w, "bin", i);
		hl_statw_u64(w, "from", bn_bin_lo(i));
		hl_statw_u64(w, "to", i == BN_NBINS - 2 ? 0 : bn_bin_lo(i + 1) - 16);
		hl_statw_u64(w, "count", t->count[i]);
		hl_statw_u64(w, "total", t->bytes[i]);
		hl_statw_end(w);
	}
	hl_statw_end(w);
}

static size_t bn_subheaps(const bn_arena_t *a)
{
	size_t n = 0;
	for (const bn_heap_t *hp = a->index ? a->heap : NULL; hp; hp = hp->prev)
		n++;
	return n;
}

static void bn_stats_arena(bn_state_t *st, bn_arena_t *a, hl_statw_t *w)
{
	struct bn_tally t;
	memset(&t, 0, sizeof t);
	bn_lock(a);
	bn_arena_chunks(st, a, bn_tally_one, &t);
	bn_tally_bins(a, &t);
	size_t system = a->system, peak = a->peak_system, subheaps = bn_subheaps(a);
	unsigned threads = a->attached;
	bn_unlock(a);
	hl_statw_object(w, NULL);
	hl_statw_u64(w, "nr", a->index);
	hl_statw_bool(w, "main", a->index == 0);
	hl_statw_u64(w, "system_current", system);
	hl_statw_u64(w, "system_max", peak);
	hl_statw_u64(w, "in_use_bytes", t.live);
	hl_statw_u64(w, "cached_bytes", t.cached);
	hl_statw_u64(w, "tcache_struct_bytes", t.records);
	hl_statw_u64(w, "free_bytes", t.free);
	hl_statw_u64(w, "free_chunks", t.nfree);
	hl_statw_u64(w, "unsorted_count", t.count[BN_UNSORTED]);
	hl_statw_u64(w, "unsorted_bytes", t.bytes[BN_UNSORTED]);
	hl_statw_u64(w, "fast_count", t.fast_count);
	hl_statw_u64(w, "fast_bytes", t.fast_bytes);
	hl_statw_u64(w, "top_bytes", t.top);
	hl_statw_u64(w, "subheaps", subheaps);
	hl_statw_u64(w, "threads", threads);
	hl_statw_u64(w, "contention", __atomic_load_n(&a->contention, __ATOMIC_RELAXED));
	bn_stats_sizes(w, &t);
	hl_statw_end(w);
}

/** Sums the tcache counters of live threads and exited ones. */
static void bn_tcache_totals(bn_state_t *st, uint64_t *hits, uint64_t *misses, size_t *threads)
{
	pthread_mutex_lock(&st->list_lock);
	*hits = st->old_hits;
	*misses = st->old_misses;
	*threads = 0;
	for (bn_tcache_t *tc = st->tcaches; tc; tc = tc->next) {
		*hits += __atomic_load_n(&tc->hits, __ATOMIC_RELAXED);
		*misses += __atomic_load_n(&tc->misses, __ATOMIC_RELAXED);
		++*threads;
	}
	pthread_mutex_unlock(&st->list_lock);
}

void bn_stats(void *stp, hl_statw_t *w)
{
	bn_state_t *st = stp;
	uint64_t hits, misses, contention = 0;
	size_t threads;
	bn_tcache_totals(st, &hits, &misses, &threads);
	pthread_mutex_lock(&st->list_lock);
	unsigned narenas = st->narenas;
	pthread_mutex_unlock(&st->list_lock);
	hl_statw_u64(w, "arenas", narenas);
	hl_statw_u64(w, "threads", threads);
	hl_statw_u64(w, "mmap_threshold", bn_mmap_threshold(st));
	hl_statw_u64(w, "trim_threshold", __atomic_load_n(&st->trim_threshold, __ATOMIC_RELAXED));
	hl_statw_u64(w, "top_pad", st->top_pad);
	hl_statw_u64(w, "tcache_count", st->tcache_count);
	hl_statw_bool(w, "fastbins", st->max_fast != 0);
	hl_statw_u64(w, "tcache_hits", hits);
	hl_statw_u64(w, "tcache_misses", misses);
	pthread_mutex_lock(&st->mmap_lock);
	hl_statw_u64(w, "mmapped_chunks", st->n_mmaps);
	hl_statw_u64(w, "mmapped_bytes", st->mmapped_bytes);
	hl_statw_u64(w, "mmapped_bytes_max", st->peak_mmapped);
	pthread_mutex_unlock(&st->mmap_lock);
	hl_statw_list(w, "arena");
	bn_arena_t *a = &st->main;
	do {
		contention += __atomic_load_n(&a->contention, __ATOMIC_RELAXED);
		bn_stats_arena(st, a, w);
		a = bn_ring_next(a);
	} while (a != &st->main);
	hl_statw_end(w);
	hl_statw_u64(w, "lock_contention", contention);
}
