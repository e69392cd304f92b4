/*
 * percpu_stats.c — the statistics of `percpu` (policy_stats in
 * hl_stats_json): which front runs and how, what each tier holds, the
 * page heap's spans, its 2 MiB hugepages and the bytes released.  Read without the fronts'
 * locks: exact on a quiet heap, a close estimate while threads run.
 */
#include "config.h"
#include "percpu.h"

static const char *pc_mode_name(enum pc_mode m)
{
	return m == PC_MODE_RSEQ ? "rseq" : m == PC_MODE_LOCK ? "lock" : "thread";
}

static void pc_stats_cpus(pc_state_t *s, hl_statw_t *w)
{
	size_t total = 0, capacity = 0;
	hl_statw_list(w, "cpus");
	for (unsigned cpu = 0; cpu < s->ncpus && s->mode != PC_MODE_THREAD; cpu++) {
		const pc_cpu_t *c = &s->cpus[cpu];
		size_t bytes = pc_cpu_cached_bytes(s, cpu);
		total += bytes;
		capacity += c->capacity_bytes;
		if (!c->underflows && !c->overflows && !bytes)
			continue; /* a CPU this heap never ran on */
		hl_statw_object(w, NULL);
		hl_statw_u64(w, "cpu", cpu);
		hl_statw_u64(w, "cached_bytes", bytes);
		hl_statw_u64(w, "capacity_bytes", c->capacity_bytes);
		hl_statw_u64(w, "underflows", c->underflows);
		hl_statw_u64(w, "overflows", c->overflows);
		hl_statw_u64(w, "grows", c->grows);
		hl_statw_u64(w, "steals", c->steals);
		hl_statw_end(w);
	}
	hl_statw_end(w);
	hl_statw_u64(w, "per_cpu_cache_bytes", total);
	hl_statw_u64(w, "per_cpu_capacity_bytes", capacity);
}

static void pc_stats_threads(pc_state_t *s, hl_statw_t *w)
{
	size_t bytes = 0, n = 0;
	uint64_t hits = 0, misses = 0, scavenges = 0;
	pthread_mutex_lock(&s->threads_lock);
	for (pc_tcache_t *tc = s->tcaches; tc; tc = tc->next, n++) {
		bytes += tc->size;
		hits += tc->hits;
		misses += tc->misses;
		scavenges += tc->scavenges;
	}
	pthread_mutex_unlock(&s->threads_lock);
	hl_statw_u64(w, "thread_caches", n);
	hl_statw_u64(w, "thread_cache_bytes", bytes);
	hl_statw_u64(w, "thread_cache_hits", hits);
	hl_statw_u64(w, "thread_cache_misses", misses);
	hl_statw_u64(w, "thread_cache_scavenges", scavenges);
}

static void pc_stats_middle(pc_state_t *s, hl_statw_t *w)
{
	size_t tc_bytes = 0, tc_objects = 0, cf_bytes = 0, cf_spans = 0;
	uint64_t hits = 0, misses = 0;
	for (unsigned cls = 1; cls < s->cl.n; cls++) {
		pc_transfer_t *t = &s->transfer[cls];
		pthread_mutex_lock(&t->lock);
		tc_objects += t->count;
		tc_bytes += (size_t)t->count * s->cl.size[cls];
		hits += t->hits;
		misses += t->misses;
		pthread_mutex_unlock(&t->lock);
		pc_central_t *c = &s->central[cls];
		pthread_mutex_lock(&c->lock);
		cf_bytes += c->free_objects * s->cl.size[cls];
		cf_spans += c->spans;
		pthread_mutex_unlock(&c->lock);
	}
	hl_statw_u64(w, "transfer_cache_objects", tc_objects);
	hl_statw_u64(w, "transfer_cache_bytes", tc_bytes);
	hl_statw_u64(w, "transfer_cache_hits", hits);
	hl_statw_u64(w, "transfer_cache_misses", misses);
	hl_statw_u64(w, "central_free_bytes", cf_bytes);
	hl_statw_u64(w, "central_spans", cf_spans);
}

static void pc_stats_pageheap(pc_state_t *s, hl_statw_t *w)
{
	pc_pageheap_t *ph = &s->ph;
	pthread_mutex_lock(&ph->lock);
	size_t free_spans = 0, returned_spans = 0;
	for (size_t i = 0; i <= PC_PH_LISTS; i++) {
		free_spans += ph->normal[i].count;
		returned_spans += ph->returned[i].count;
	}
	hl_statw_u64(w, "spans_small", ph->small_spans);
	hl_statw_u64(w, "spans_large", ph->large_spans);
	hl_statw_u64(w, "spans_free", free_spans);
	hl_statw_u64(w, "spans_returned", returned_spans);
	hl_statw_u64(w, "large_bytes", ph->large_pages * PC_PAGE);
	hl_statw_u64(w, "pageheap_free_bytes", ph->free_pages * PC_PAGE);
	hl_statw_u64(w, "pageheap_returned_bytes", ph->returned_pages * PC_PAGE);
	hl_statw_u64(w, "released_bytes", ph->released_bytes);
	hl_statw_u64(w, "reused_returned_bytes", ph->reused_returned_bytes);
	hl_statw_u64(w, "release_rate", ph->release_rate);
	hl_statw_u64(w, "regions", ph->nregions);
	pthread_mutex_unlock(&ph->lock);
}

/* The hugepages: how many are intact, full, partly used, free, released
 * whole or broken, and the share of pages in use on intact ones. */
static void pc_stats_hugepages(pc_state_t *s, hl_statw_t *w)
{
	pc_hp_census_t c;
	pthread_mutex_lock(&s->ph.lock);
	pc_hp_census(&s->ph, &c);
	pthread_mutex_unlock(&s->ph.lock);
	hl_statw_bool(w, "hugepage", s->ph.hugepage);
	hl_statw_u64(w, "hugepages", c.hugepages);
	hl_statw_u64(w, "hugepages_intact", c.intact);
	hl_statw_u64(w, "hugepages_full", c.full);
	hl_statw_u64(w, "hugepages_partial", c.partial);
	hl_statw_u64(w, "hugepages_empty", c.empty);
	hl_statw_u64(w, "hugepages_released", c.released);
	hl_statw_u64(w, "hugepages_broken", c.broken);
	hl_statw_f64(w, "hugepage_coverage", c.used_pages ? (double)c.used_on_intact / (double)c.used_pages : 0);
}

void pc_stats(void *st, hl_statw_t *w)
{
	pc_state_t *s = st;
	hl_statw_str(w, "front", s->mode == PC_MODE_THREAD ? "thread" : "percpu");
	hl_statw_str(w, "front_mode", pc_mode_name(s->mode));
	hl_statw_bool(w, "rseq_available", s->rseq_usable);
	hl_statw_str(w, "size_classes", s->cl.source);
	hl_statw_u64(w, "classes", s->cl.n - 1);
	hl_statw_u64(w, "ncpus", s->ncpus);
	hl_statw_u64(w, "cpu_cache_bytes", s->cpu_cache_bytes);
	hl_statw_u64(w, "rseq_restarts", atomic_load_explicit(&s->restarts, memory_order_relaxed));
	hl_statw_u64(w, "slab_fences", atomic_load_explicit(&s->fences, memory_order_relaxed));
	pc_stats_cpus(s, w);
	pc_stats_threads(s, w);
	pc_stats_middle(s, w);
	pc_stats_pageheap(s, w);
	pc_stats_hugepages(s, w);
}
