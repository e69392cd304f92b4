/*
 * Statistics of policy `slab` (under policy_stats): arenas and their
 * threads, per small class region and slab size, slabs, live regions and
 * utilization, bytes of extents by state, purge counts, tcache counters.
 * Thread caches are read without their owners' locks (counts may be a
 * moment old while threads run).
 */
#include "config.h"
#include <string.h>
#include "slab.h"

/* Sums over every arena, gathered under the arenas' locks. */
typedef struct sl_sum {
	size_t slabs[SL_NBINS_MAX], taken[SL_NBINS_MAX], cached[SL_MAX_NHBINS];
	uint64_t fills[SL_NBINS_MAX], flushes[SL_NBINS_MAX];
	size_t state_pages[3];
	sl_astats_t st;
	unsigned used, max_threads, threads;
} sl_sum_t;

static void sl_sum_arena(sl_state_t *s, sl_arena_t *a, sl_sum_t *m)
{
	for (unsigned b = 0; b < s->sc.nbins; b++) {
		pthread_mutex_lock(&a->bins[b].lock);
		m->slabs[b] += a->bins[b].nslabs;
		m->taken[b] += a->bins[b].curregs;
		m->fills[b] += a->bins[b].nfills;
		m->flushes[b] += a->bins[b].nflushes;
		pthread_mutex_unlock(&a->bins[b].lock);
	}
	pthread_mutex_lock(&a->ext_lock);
	for (int i = 0; i < 3; i++)
		m->state_pages[i] += a->esets[i].npages;
	const uint64_t *src = (const uint64_t *)&a->st;
	uint64_t *dst = (uint64_t *)&m->st;
	for (size_t i = 0; i < sizeof a->st / sizeof(uint64_t); i++)
		dst[i] += src[i];
	pthread_mutex_unlock(&a->ext_lock);
}

static void sl_sum(sl_state_t *s, sl_sum_t *m)
{
	memset(m, 0, sizeof *m);
	pthread_mutex_lock(&s->arenas_lock);
	sl_arena_t *a;
	for (unsigned i = 0; (a = sl_arena_nth(s, i)); i++) {
		m->used += a->nthreads > 0;
		m->threads += a->nthreads;
		if (a->nthreads > m->max_threads)
			m->max_threads = a->nthreads;
		sl_sum_arena(s, a, m);
	}
	m->st.tc_hits = s->dead_hits;
	m->st.tc_fills = s->dead_fills;
	m->st.tc_flushes = s->dead_flushes;
	for (sl_tcache_t *tc = s->tcaches; tc; tc = tc->next) {
		m->st.tc_hits += __atomic_load_n(&tc->hits, __ATOMIC_RELAXED);
		m->st.tc_fills += __atomic_load_n(&tc->fills, __ATOMIC_RELAXED);
		m->st.tc_flushes += __atomic_load_n(&tc->flushes, __ATOMIC_RELAXED);
		for (unsigned b = 0; b < s->nhbins; b++)
			m->cached[b] += sl_cbin_ncached(tc, b);
	}
	pthread_mutex_unlock(&s->arenas_lock);
}

static void sl_stats_classes(sl_state_t *s, hl_statw_t *w, const sl_sum_t *m)
{
	const sl_sc_t *sc = &s->sc;
	hl_statw_list(w, "classes");
	for (unsigned b = 0; b < sc->nbins; b++) {
		size_t cached = m->cached[b] < m->taken[b] ? m->cached[b] : m->taken[b];
		size_t regions = m->slabs[b] * sc->nregs[b];
		hl_statw_object(w, NULL);
		hl_statw_u64(w, "size", sc->size[b]);
		hl_statw_u64(w, "stride", sc->stride[b]);
		hl_statw_u64(w, "slab_size", sc->slab_size[b]);
		hl_statw_u64(w, "regions_per_slab", sc->nregs[b]);
		hl_statw_u64(w, "slabs", m->slabs[b]);
		hl_statw_u64(w, "live_regions", m->taken[b] - cached);
		hl_statw_u64(w, "cached_regions", cached);
		hl_statw_f64(w, "utilization", regions ? (double)(m->taken[b] - cached) / (double)regions : 0.0);
		hl_statw_u64(w, "bin_fills", m->fills[b]);
		hl_statw_u64(w, "bin_flushes", m->flushes[b]);
		hl_statw_end(w);
	}
	hl_statw_end(w);
}

/* One line per arena: its threads and its free pages by state. */
static void sl_stats_arenas(sl_state_t *s, hl_statw_t *w)
{
	unsigned lg = s->sc.lg_page;
	hl_statw_list(w, "arena_list");
	pthread_mutex_lock(&s->arenas_lock);
	sl_arena_t *a;
	for (unsigned i = 0; (a = sl_arena_nth(s, i)); i++) {
		hl_statw_object(w, NULL);
		hl_statw_bool(w, "huge", a->index == SL_HUGE_ARENA);
		hl_statw_u64(w, "threads", a->nthreads);
		pthread_mutex_lock(&a->ext_lock);
		hl_statw_i64(w, "dirty_decay_ms", a->decay[0].ms);
		hl_statw_i64(w, "muzzy_decay_ms", a->decay[1].ms);
		hl_statw_u64(w, "dirty_bytes", (uint64_t)a->esets[0].npages << lg);
		hl_statw_u64(w, "muzzy_bytes", (uint64_t)a->esets[1].npages << lg);
		hl_statw_u64(w, "returned_bytes", (uint64_t)a->esets[2].npages << lg);
		hl_statw_u64(w, "chunks", a->st.grows);
		pthread_mutex_unlock(&a->ext_lock);
		hl_statw_end(w);
	}
	pthread_mutex_unlock(&s->arenas_lock);
	hl_statw_end(w);
}

void sl_stats(void *st, hl_statw_t *w)
{
	sl_state_t *s = st;
	sl_sum_t m;
	sl_sum(s, &m);
	unsigned lg = s->sc.lg_page;
	hl_statw_u64(w, "narenas", s->narenas);
	hl_statw_u64(w, "arenas", s->ninit);
	hl_statw_u64(w, "oversize_threshold", s->oversize);
	hl_statw_bool(w, "huge_arena", sl_arena_get(s, SL_HUGE_ARENA) != NULL);
	hl_statw_u64(w, "arenas_in_use", m.used);
	hl_statw_u64(w, "threads", m.threads);
	hl_statw_u64(w, "max_threads_per_arena", m.max_threads);
	hl_statw_i64(w, "dirty_decay_ms", s->dirty_ms);
	hl_statw_i64(w, "muzzy_decay_ms", s->muzzy_ms);
	hl_statw_u64(w, "dirty_bytes", (uint64_t)m.state_pages[0] << lg);
	hl_statw_u64(w, "muzzy_bytes", (uint64_t)m.state_pages[1] << lg);
	hl_statw_u64(w, "returned_bytes", (uint64_t)m.state_pages[2] << lg);
	hl_statw_u64(w, "large_extents", m.st.nlarge);
	hl_statw_u64(w, "large_bytes", m.st.large_bytes);
	hl_statw_u64(w, "chunks_reserved", m.st.grows);
	hl_statw_u64(w, "purge_lazy_calls", m.st.purge_lazy_calls);
	hl_statw_u64(w, "purge_calls", m.st.purge_calls);
	hl_statw_u64(w, "purged_lazy_bytes", m.st.purged_lazy_pages << lg);
	hl_statw_u64(w, "purged_bytes", m.st.purged_pages << lg);
	hl_statw_u64(w, "decay_epochs", m.st.decay_epochs);
	hl_statw_bool(w, "tcache", s->tcache_on);
	hl_statw_u64(w, "tcache_hits", m.st.tc_hits);
	hl_statw_u64(w, "tcache_fills", m.st.tc_fills);
	hl_statw_u64(w, "tcache_flushes", m.st.tc_flushes);
	hl_statw_bool(w, "background_thread", hl_background_running(&s->bg));
	hl_statw_u64(w, "background_runs", hl_background_runs(&s->bg));
	sl_stats_arenas(s, w);
	sl_stats_classes(s, w, &m);
}
