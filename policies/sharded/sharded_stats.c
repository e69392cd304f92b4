/*
 * sharded_stats.c — policy_stats of the `sharded` policy: segments, pages
 * per size class and how full they are, blocks on each of the three lists,
 * remote and delayed frees, purges.  Read under st->lock; counters of live
 * heaps are read without their owners' cooperation (a snapshot, not a
 * barrier); so are those of the heaps a fork left behind (orphans).
 */
#include "config.h"
#include <stdio.h>
#include <string.h>
#include "sharded_heap.h"

typedef struct shd_tally {
	uint64_t segs, huge_segs, abandoned, heaps;
	uint64_t pages[4], full, retired;
	uint64_t blocks[SHD_ON_KINDS];
	uint64_t bin_pages[SHD_BIN_FULL], bin_used[SHD_BIN_FULL], bin_reserved[SHD_BIN_FULL];
	shd_counts_t c;
} shd_tally_t;

static void shd_tally_page(shd_state_t *st, const shd_page_t *pg, shd_tally_t *t)
{
	shd_marks_t m;
	shd_page_mark(st, pg, &m, NULL);
	t->pages[pg->kind]++;
	t->full += (shd_flags(pg) & SHD_PF_FULL) != 0;
	t->retired += pg->retire != 0;
	for (int k = 0; k < SHD_ON_KINDS; k++)
		t->blocks[k] += (uint64_t)m.n[k];
	t->bin_pages[pg->bin]++;
	t->bin_used[pg->bin] += pg->used - (uint64_t)m.n[SHD_ON_THREAD] - (uint64_t)m.n[SHD_ON_DELAYED];
	t->bin_reserved[pg->bin] += pg->reserved;
}

static void shd_tally(shd_state_t *st, shd_tally_t *t)
{
	memset(t, 0, sizeof *t);
	t->c = st->gone;
	for (shd_heap_t *hp = st->heaps; hp; hp = hp->next) {
		t->heaps++;
		shd_counts_add(&t->c, &hp->c);
	}
	for (shd_heap_t *hp = st->orphans; hp; hp = hp->next) /* fork child */
		shd_counts_add(&t->c, &hp->c);
	for (shd_segment_t *s = st->segs; s; s = s->gnext) {
		t->segs++;
		t->huge_segs += s->huge;
		t->abandoned += atomic_load(&s->owner) == NULL;
		for (size_t i = shd_next_used(s, SHD_INFO_SLICES); i < SHD_SLICES; i = shd_next_page(s, i))
			shd_tally_page(st, &s->pages[i], t);
	}
}

static void shd_stats_classes(const shd_tally_t *t, hl_statw_t *w)
{
	hl_statw_list(w, "classes");
	for (unsigned b = 1; b < SHD_BIN_FULL; b++) {
		if (!t->bin_pages[b])
			continue;
		hl_statw_object(w, NULL);
		hl_statw_u64(w, "bin", b);
		hl_statw_u64(w, "block_size", b < SHD_BIN_HUGE ? shd_bin_wsize(b) * 8 : 0);
		hl_statw_u64(w, "pages", t->bin_pages[b]);
		hl_statw_u64(w, "live_blocks", t->bin_used[b]);
		hl_statw_u64(w, "reserved_blocks", t->bin_reserved[b]);
		hl_statw_f64(w, "fullness", t->bin_reserved[b] ? (double)t->bin_used[b] / (double)t->bin_reserved[b] : 0);
		hl_statw_end(w);
	}
	hl_statw_end(w);
}

void shd_stats(void *vst, hl_statw_t *w)
{
	shd_state_t *st = vst;
	shd_tally_t tally, *t = &tally;
	pthread_mutex_lock(&st->lock);
	shd_tally(st, t);
	hl_statw_object(w, "segments");
	hl_statw_u64(w, "in_use", t->segs - t->abandoned);
	hl_statw_u64(w, "abandoned", t->abandoned);
	hl_statw_u64(w, "reclaimed", t->c.reclaimed);
	hl_statw_u64(w, "huge", t->huge_segs);
	hl_statw_u64(w, "made", st->segments_made);
	hl_statw_u64(w, "released", st->segments_released);
	hl_statw_u64(w, "abandoned_total", st->segments_abandoned);
	hl_statw_u64(w, "cached", st->cached);
	hl_statw_u64(w, "cache_purges", st->cache_purges);
	hl_statw_u64(w, "cache_purged_bytes", st->cache_purged_bytes);
	hl_statw_end(w);
	hl_statw_object(w, "pages");
	hl_statw_u64(w, "small", t->pages[SHD_PAGE_SMALL]);
	hl_statw_u64(w, "medium", t->pages[SHD_PAGE_MEDIUM]);
	hl_statw_u64(w, "large", t->pages[SHD_PAGE_LARGE]);
	hl_statw_u64(w, "huge", t->pages[SHD_PAGE_HUGE]);
	hl_statw_u64(w, "full", t->full);
	hl_statw_u64(w, "retired", t->retired);
	hl_statw_u64(w, "made", t->c.pages_fresh);
	hl_statw_u64(w, "freed", t->c.pages_freed);
	hl_statw_end(w);
	shd_stats_classes(t, w);
	hl_statw_object(w, "blocks");
	hl_statw_u64(w, "live", t->blocks[SHD_ON_NONE]);
	hl_statw_u64(w, "free", t->blocks[SHD_ON_FREE]);
	hl_statw_u64(w, "local_free", t->blocks[SHD_ON_LOCAL]);
	hl_statw_u64(w, "thread_free", t->blocks[SHD_ON_THREAD]);
	hl_statw_u64(w, "delayed", t->blocks[SHD_ON_DELAYED]);
	hl_statw_end(w);
	hl_statw_u64(w, "remote_frees", t->c.remote_frees);
	hl_statw_u64(w, "delayed_frees", t->c.delayed_frees);
	hl_statw_u64(w, "purges", t->c.purges);
	hl_statw_u64(w, "purged_bytes", t->c.purged_bytes);
	hl_statw_u64(w, "extends", t->c.extends);
	hl_statw_u64(w, "heaps", t->heaps);
	hl_statw_bool(w, "secure", st->secure);
	hl_statw_i64(w, "purge_delay_ms", st->purge_delay);
	hl_statw_i64(w, "segment_purge_delay_ms", st->segment_purge_delay);
	pthread_mutex_unlock(&st->lock);
}
