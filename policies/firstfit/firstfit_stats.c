/**
 * @file firstfit_stats.c
 * @brief policy_stats of `firstfit`: the options in force and what the
 *        free list looks like now.
 */
#include "config.h"
#include "firstfit.h"

/** Size of the largest free block (a list walk, under the lock). */
static size_t ff_largest_free(ff_state_t *st)
{
	size_t best = 0;

	for (ff_block_t *x = st->head; x; x = ff_links(st, x)->next)
		if (ff_size(x) > best)
			best = ff_size(x);
	return best;
}

static void ff_stats_config(ff_state_t *st, hl_statw_t *w)
{
	hl_statw_str(w, "fit", ff_fit_name(st->fit));
	hl_statw_str(w, "order", ff_order_name(st->order));
	hl_statw_bool(w, "coalesce", st->coalesce);
	hl_statw_u64(w, "header_bytes", st->hdr);
	hl_statw_u64(w, "alignment", HL_ALIGN);
	hl_statw_u64(w, "min_block", st->min);
	hl_statw_u64(w, "grow_bytes", st->grow);
	hl_statw_u64(w, "trim_threshold", st->trim_threshold);
}

void ff_stats(void *state, hl_statw_t *w)
{
	ff_state_t *st = state;

	pthread_mutex_lock(&st->lock);
	ff_stats_config(st, w);
	hl_statw_u64(w, "heap_bytes", ff_hi(st) - ff_lo(st));
	hl_statw_u64(w, "live_blocks", st->nlive);
	hl_statw_u64(w, "free_blocks", st->nfree);
	hl_statw_u64(w, "free_bytes", st->free_bytes);
	hl_statw_u64(w, "largest_free_block", ff_largest_free(st));
	hl_statw_u64(w, "searches", st->c.searches);
	hl_statw_u64(w, "search_steps", st->c.steps);
	hl_statw_u64(w, "insert_steps", st->c.insert_steps);
	hl_statw_u64(w, "splits", st->c.splits);
	hl_statw_u64(w, "coalesces", st->c.coalesces);
	hl_statw_u64(w, "grows", st->c.grows);
	hl_statw_u64(w, "trims", st->c.trims);
	hl_statw_u64(w, "trimmed_bytes", st->c.trimmed);
	pthread_mutex_unlock(&st->lock);
}
