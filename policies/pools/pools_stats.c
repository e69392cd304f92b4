/*
 * Statistics of `pools` in the shape of CPython's sys._debugmallocstats():
 * per class the pools, blocks in use and available blocks; the arena
 * counters; where the bytes go (blocks, unused pools, pool headers,
 * quantization, the arena map); then the fallback policy's own statistics
 * as a nested object.
 */
#include "config.h"
#include <string.h>
#include "pools.h"

/* Statistics are gathered under the lock into a pl_tally_t and written
 * after it is released: writing may allocate (stdio buffers), and under
 * LD_PRELOAD that allocation comes back to this heap. */
enum { PL_STATS_USABLE = 256 };   /**< usable_arenas entries listed */

typedef struct pl_tally {
	uint64_t pools[PL_MAX_CLASSES];     /**< carved, non-empty pools per class */
	uint64_t in_use[PL_MAX_CLASSES];    /**< live blocks per class */
	uint64_t avail[PL_MAX_CLASSES];     /**< free + never-used blocks in those pools */
	uint64_t full, partly, free_pools, never_carved;
	uint64_t unused_pools;              /**< sum of nfreepools */
	uint64_t unaligned;                 /**< arenas whose mapping lost a pool */
	uint64_t arena_pools;               /**< pools the arenas can carve, in all */
	uint64_t allocated, current, highwater;  /**< arena counters */
	uint64_t small_mallocs, small_frees;     /**< pool traffic */
	uint32_t nusable;                   /**< arenas on usable_arenas */
	uint32_t usable_index[PL_STATS_USABLE];  /**< their indexes, in order */
	uint32_t usable_nfree[PL_STATS_USABLE];  /**< and free-pool counts */
} pl_tally_t;

static void pl_tally_arena(const pl_state_t *s, const pl_arena_t *a, pl_tally_t *t)
{
	size_t end = pl_carved_end(s, a);
	t->unused_pools += a->nfreepools;
	t->unaligned += pl_arena_lost_pool(s, a);
	t->arena_pools += a->ntotalpools;
	t->never_carved += a->ntotalpools - (end - s->table_pools);
	for (size_t i = s->table_pools; i < end; i++) {
		const pl_pool_t *p = pl_pool_at(s, a, i);
		if (p->ref.count == 0 || p->szidx >= s->nclasses) {
			t->free_pools++;
			continue;
		}
		unsigned c = p->szidx;
		t->pools[c]++;
		t->in_use[c] += p->ref.count;
		t->avail[c] += s->capacity[c] - p->ref.count;
		if (p->ref.count == s->capacity[c])
			t->full++;
		else
			t->partly++;
	}
}

static void pl_stats_classes(const pl_state_t *s, const pl_tally_t *t, hl_statw_t *w)
{
	hl_statw_list(w, "classes");
	for (unsigned c = 0; c < s->nclasses; c++) {
		hl_statw_object(w, NULL);
		hl_statw_u64(w, "size", pl_class_size(s, c));
		hl_statw_u64(w, "stride", s->stride[c]);
		hl_statw_u64(w, "blocks_per_pool", s->capacity[c]);
		hl_statw_u64(w, "pools", t->pools[c]);
		hl_statw_u64(w, "blocks_in_use", t->in_use[c]);
		hl_statw_u64(w, "avail_blocks", t->avail[c]);
		hl_statw_end(w);
	}
	hl_statw_end(w);
}

/* After pl_tally_arena has counted every arena's live blocks. */
static void pl_tally_usable(const pl_state_t *s, pl_tally_t *t)
{
	t->allocated = s->ntimes_arena_allocated;
	t->current = s->narenas_currently_allocated;
	t->highwater = s->narenas_highwater;
	t->small_mallocs = s->small_mallocs;
	/* each small malloc added one to a pool's count, each free took one
	 * away, so the frees are the mallocs less the blocks still live (free
	 * counts nothing) */
	uint64_t live = 0;
	for (unsigned c = 0; c < s->nclasses; c++)
		live += t->in_use[c];
	t->small_frees = s->small_mallocs - live;
	for (const pl_arena_t *a = s->usable_arenas; a; a = a->nextarena) {
		if (t->nusable < PL_STATS_USABLE) {
			t->usable_index[t->nusable] = (uint32_t)(a - s->allarenas);
			t->usable_nfree[t->nusable] = a->nfreepools;
		}
		t->nusable++;
	}
}

static void pl_stats_arenas(const pl_state_t *s, const pl_tally_t *t, hl_statw_t *w)
{
	hl_statw_u64(w, "arenas_allocated_total", t->allocated);
	hl_statw_u64(w, "arenas_reclaimed", t->allocated - t->current);
	hl_statw_u64(w, "arenas_highwater", t->highwater);
	hl_statw_u64(w, "arenas_allocated_current", t->current);
	hl_statw_u64(w, "arena_bytes", t->current * s->arena_size);
	hl_statw_u64(w, "usable_arenas_count", t->nusable);
	hl_statw_list(w, "usable_arenas");
	for (uint32_t i = 0; i < t->nusable && i < PL_STATS_USABLE; i++) {
		hl_statw_object(w, NULL);
		hl_statw_u64(w, "arena", t->usable_index[i]);
		hl_statw_u64(w, "nfreepools", t->usable_nfree[i]);
		hl_statw_end(w);
	}
	hl_statw_end(w);
}

/* Where the bytes of the arenas go, as _debugmallocstats lists them. */
static void pl_stats_bytes(const pl_state_t *s, const pl_tally_t *t, hl_statw_t *w)
{
	uint64_t alloc = 0, avail = 0, pools = 0, quant = 0, pad = 0;
	for (unsigned c = 0; c < s->nclasses; c++) {
		uint32_t size = pl_class_size(s, c), stride = s->stride[c];
		alloc += t->in_use[c] * size;
		avail += t->avail[c] * size;
		pools += t->pools[c];
		quant += t->pools[c] * ((s->pool_size - PL_POOL_OVERHEAD) % stride);
		pad += (t->in_use[c] + t->avail[c]) * (stride - size);
	}
	hl_statw_u64(w, "pools_full", t->full);
	hl_statw_u64(w, "pools_partly_used", t->partly);
	hl_statw_u64(w, "pools_free", t->free_pools);
	hl_statw_u64(w, "pools_never_carved", t->never_carved);
	hl_statw_u64(w, "unused_pools", t->unused_pools);
	hl_statw_u64(w, "bytes_in_allocated_blocks", alloc);
	hl_statw_u64(w, "bytes_in_available_blocks", avail);
	hl_statw_u64(w, "bytes_in_unused_pools", t->unused_pools * s->pool_size);
	hl_statw_u64(w, "bytes_lost_pool_headers", pools * PL_POOL_OVERHEAD);
	hl_statw_u64(w, "bytes_lost_header_table",
		     t->current * ((uint64_t)s->table_pools << s->pool_bits));
	hl_statw_u64(w, "bytes_lost_quantization", quant);
	hl_statw_u64(w, "bytes_lost_stride_padding", pad);
	/* CPython counts one pool per arena whose base is not pool-aligned */
	hl_statw_u64(w, "arenas_unaligned", t->unaligned);
	hl_statw_u64(w, "arena_pools", t->arena_pools);
	hl_statw_u64(w, "bytes_lost_arena_alignment", t->unaligned * s->pool_size);
	hl_statw_u64(w, "arena_map_mid_nodes", s->map_mid_nodes);
	hl_statw_u64(w, "arena_map_bot_nodes", s->map_bot_nodes);
	hl_statw_u64(w, "bytes_lost_arena_map_root", pl_map_root_bytes(s));
	hl_statw_u64(w, "bytes_lost_arena_map_mid", pl_map_mid_bytes(s));
	hl_statw_u64(w, "bytes_lost_arena_map_bot", pl_map_bot_bytes(s));
}

static void pl_stats_geometry(const pl_state_t *s, hl_statw_t *w)
{
	hl_statw_u64(w, "small_block_threshold", PL_THRESHOLD);
	hl_statw_u64(w, "size_classes", s->nclasses);
	hl_statw_u64(w, "alignment", 1u << s->align_shift);
	hl_statw_u64(w, "arena_size", s->arena_size);
	hl_statw_u64(w, "pool_size", s->pool_size);
	/* at most: an arena whose mapping is not pool-aligned has one fewer
	 * (arena_pools sums what the arenas really have) */
	hl_statw_u64(w, "pools_per_arena", s->max_pools - s->table_pools);
	hl_statw_str(w, "arenas", s->arena_align == s->arena_size ? "aligned" : "mmap");
	hl_statw_u64(w, "pool_header_bytes", PL_POOL_OVERHEAD);
	hl_statw_str(w, "pool_headers", s->header_table ? "table" : "inline");
}

static void pl_stats_counts(pl_state_t *s, const pl_tally_t *t, hl_statw_t *w)
{
	pl_counts_t *c = &s->counts;
	hl_statw_u64(w, "small_mallocs", t->small_mallocs);
	hl_statw_u64(w, "small_frees", t->small_frees);
	hl_statw_u64(w, "fallback_mallocs", __atomic_load_n(&c->fallback_mallocs, __ATOMIC_RELAXED));
	hl_statw_bool(w, "lock_bias_enabled", s->bias_ok);
	hl_statw_u64(w, "lock_bias_moves", s->bias_moves);
	hl_statw_u64(w, "lock_bias_moves_max", PL_BIAS_MOVES);
	hl_statw_u64(w, "fallback_frees", __atomic_load_n(&c->fallback_frees, __ATOMIC_RELAXED));
}

void pools_stats(void *st, hl_statw_t *w)
{
	pl_state_t *s = st;
	pl_tally_t t;
	memset(&t, 0, sizeof t);
	hl_thread_t *by = pl_enter_here(s);
	for (uint32_t i = 0; i < s->maxarenas; i++)
		if (s->allarenas[i].address)
			pl_tally_arena(s, &s->allarenas[i], &t);
	pl_tally_usable(s, &t);
	pl_leave_here(s, by);
	pl_stats_geometry(s, w);
	pl_stats_counts(s, &t, w);
	pl_stats_classes(s, &t, w);
	pl_stats_arenas(s, &t, w);
	pl_stats_bytes(s, &t, w);
	hl_guest_stats(&s->fallback, w, "fallback");
}
