/*
 * percpu_hugepage.c — the page heap's view of 2 MiB hugepages: how many
 * pages of each are in use and how many released, which free run a new
 * span should go to and which free run to release first when hugepage:on,
 * and the census the statistics print.  Called only by the page heap
 * (percpu_pageheap.c), under its lock; the checker reads the counts.
 *
 * What it models (hugepage:on), from google/tcmalloc at fce3f55d
 * (huge_page_filler.h, huge_page_aware_allocator.h): TCMalloc's
 * hugepage-aware allocator, Temeraire, packs every span of up to half a
 * hugepage into one hugepage (its HugePageFiller), choosing among the
 * hugepages that have a long enough free range the one whose longest
 * free range is shortest, then the one with the most allocations; a
 * hugepage that empties goes whole to a cache of hugepages, and release
 * takes whole cached hugepages before it breaks any hugepage in use
 * ("subrelease", emptiest first).  The model keeps one rule of each:
 * a span of up to 128 pages goes into the hugepage with the most pages in
 * use that has a free run long enough (resident runs before released
 * ones, then the lowest address), so it never straddles two hugepages;
 * release takes free runs from the least used hugepages first, wholly
 * free ones before any in use.  Left out: the longest-free-range order,
 * the allocation counts, the hugepage cache and its sizing, HugeRegions
 * and raw hugepages for longer spans (here they take the legacy search),
 * donated tails, dense/sparse spans, and skipping subrelease.
 */
#include "config.h"
#include "percpu.h"

int pc_hp_region_init(pc_region_t *r, hl_os_t *os)
{
	size_t n = r->size >> PC_HUGE_SHIFT;
	uint16_t *counts = hl_os_reserve_meta(os, hl_align_up(2 * n * sizeof *counts, 4096));
	if (!counts)
		return -1;
	r->hp_used = counts;
	r->hp_released = counts + n;
	return 0;
}

/* Index in its region of the hugepage holding @at. */
static size_t pc_hp_index(const pc_region_t *r, uintptr_t at)
{
	return (at - r->base) >> PC_HUGE_SHIFT;
}

/* End of the run from @at to @end that stays inside @at's hugepage. */
static uintptr_t pc_hp_run_end(uintptr_t at, uintptr_t end)
{
	uintptr_t next = (at | (PC_HUGE - 1)) + 1;
	return next < end ? next : end;
}

void pc_hp_add(pc_region_t *r, uintptr_t start, size_t npages, enum pc_hp_count which, int sign)
{
	uint16_t *counts = which == PC_HP_USED ? r->hp_used : r->hp_released;
	uintptr_t end = start + npages * PC_PAGE;
	for (uintptr_t at = start; at < end;) {
		uintptr_t run_end = pc_hp_run_end(at, end);
		uint16_t pages = (uint16_t)((run_end - at) / PC_PAGE);
		uint16_t *count = &counts[pc_hp_index(r, at)];
		*count = (uint16_t)(sign > 0 ? *count + pages : *count - pages);
		at = run_end;
	}
}

/* True when a run in a hugepage with @used pages in use, at @at, ranks
 * before @pick in @order. */
static bool pc_hp_before(enum pc_hp_order order, unsigned used, bool returned, uintptr_t at,
			 const pc_hp_pick_t *pick)
{
	if (!pick->span)
		return true;
	if (used != pick->used)
		return order == PC_HP_DENSEST ? used > pick->used : used < pick->used;
	bool pick_returned = pick->span->state == PC_SPAN_RETURNED;
	if (order == PC_HP_DENSEST && returned != pick_returned)
		return !returned;
	return at < pick->at;
}

void pc_hp_consider(const pc_pageheap_t *ph, pc_span_t *s, size_t want, enum pc_hp_order order,
		    pc_hp_pick_t *pick)
{
	const pc_region_t *r = &ph->regions[s->region];
	uintptr_t end = s->start + s->npages * PC_PAGE;
	bool returned = s->state == PC_SPAN_RETURNED;
	for (uintptr_t at = s->start; at < end;) {
		uintptr_t run_end = pc_hp_run_end(at, end);
		size_t run = (run_end - at) / PC_PAGE;
		unsigned used = r->hp_used[pc_hp_index(r, at)];
		if (run >= want && pc_hp_before(order, used, returned, at, pick))
			*pick = (pc_hp_pick_t){ s, at, run, used };
		at = run_end;
	}
}

/* Adds hugepage @k of region @r to census @c. */
static void pc_hp_count_one(const pc_region_t *r, size_t k, pc_hp_census_t *c)
{
	unsigned used = r->hp_used[k], released = r->hp_released[k];
	bool committed = ((k + 1) << PC_HUGE_SHIFT) <= r->frontier;
	bool intact = committed && released == 0;
	c->hugepages++;
	c->intact += intact;
	c->full += used == PC_HUGE_PAGES;
	c->partial += used > 0 && used < PC_HUGE_PAGES;
	c->empty += used == 0;
	c->released += released == PC_HUGE_PAGES;
	c->broken += released > 0 && released < PC_HUGE_PAGES;
	c->used_pages += used;
	c->used_on_intact += intact ? used : 0;
}

void pc_hp_census(const pc_pageheap_t *ph, pc_hp_census_t *c)
{
	*c = (pc_hp_census_t){ 0 };
	for (unsigned i = 0; i < ph->nregions; i++)
		for (size_t k = 0; k < pc_hp_touched(&ph->regions[i]); k++)
			pc_hp_count_one(&ph->regions[i], k, c);
}
