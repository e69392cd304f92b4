/**
 * @file firstfit_list.c
 * @brief The free list of `firstfit`: where a free block enters it (the
 *        `order` option) and which block a request takes (the `fit` option).
 *
 * The list is doubly linked through the payloads of free blocks.  Sorted
 * orders (address, size-asc, size-desc) find their place by walking from
 * both ends at once, one element each way per step, so a block that
 * belongs near either end costs a few steps whatever the list length.
 * Every function here runs with ff_state_t.lock held.
 */
#include "config.h"
#include "firstfit.h"

static const char *const ff_fit_names[] = { "first", "next", "best", "worst" };
static const char *const ff_order_names[] = { "address", "lifo", "fifo", "size-asc", "size-desc" };

const char *ff_fit_name(enum ff_fit f) { return ff_fit_names[f]; }
const char *ff_order_name(enum ff_order o) { return ff_order_names[o]; }

/** Link @p x read from free block @p b, checked before anyone follows it:
 *  the links live in the payload, where a write after free lands.  The
 *  test is only that a whole smallest block fits below the break there
 *  (so reading its header and links cannot fault): the checker does the
 *  thorough job, this one runs on every step of a search. */
static inline ff_block_t *ff_link_checked(const ff_state_t *st, ff_block_t *b, ff_block_t *x)
{
	if (HL_UNLIKELY((uintptr_t)x - (uintptr_t)st->brk.base > st->brk.end - st->min && x))
		hl_fatal(&hl_policy_firstfit, "free list link overwritten (a write after free?)", ff_payload(st, b));
	return x;
}

static inline ff_block_t *ff_nx(const ff_state_t *st, ff_block_t *b) { return ff_link_checked(st, b, ff_links(st, b)->next); }
static inline ff_block_t *ff_pv(const ff_state_t *st, ff_block_t *b) { return ff_link_checked(st, b, ff_links(st, b)->prev); }

/** Links @p b between @p prev and @p next (either may be NULL). */
static void ff_link_between(ff_state_t *st, ff_block_t *b, ff_block_t *prev, ff_block_t *next)
{
	ff_links(st, b)->prev = prev;
	ff_links(st, b)->next = next;
	if (prev)
		ff_links(st, prev)->next = b;
	else
		st->head = b;
	if (next)
		ff_links(st, next)->prev = b;
	else
		st->tail = b;
}

/** Takes @p b out of the chain without touching the counts.  A rover
 *  resting on it moves on to its successor. */
static void ff_detach(ff_state_t *st, ff_block_t *b)
{
	ff_block_t *prev = ff_pv(st, b), *next = ff_nx(st, b);

	if (prev)
		ff_links(st, prev)->next = next;
	else
		st->head = next;
	if (next)
		ff_links(st, next)->prev = prev;
	else
		st->tail = prev;
	if (st->rover == b)
		st->rover = next;
}

/** True when @p a may stand before @p b under the list order; for sorted
 *  orders, equal keys keep their age (a newcomer goes behind them).
 *  LIFO and FIFO lists impose nothing on neighbours. */
bool ff_list_in_order(const ff_state_t *st, ff_block_t *a, ff_block_t *b)
{
	switch (st->order) {
	case FF_ORDER_ADDRESS:
		return ff_addr(a) < ff_addr(b);
	case FF_ORDER_SIZE_ASC:
		return ff_size(a) <= ff_size(b);
	case FF_ORDER_SIZE_DESC:
		return ff_size(a) >= ff_size(b);
	default:
		return true;
	}
}

/** Inserts @p b into a sorted list, walking in from both ends. */
static void ff_place_sorted(ff_state_t *st, ff_block_t *b)
{
	ff_block_t *fwd = st->head, *bwd = st->tail;

	for (;;) {
		if (!fwd || !ff_list_in_order(st, fwd, b)) {
			ff_link_between(st, b, fwd ? ff_pv(st, fwd) : st->tail, fwd);
			return;
		}
		if (!bwd || ff_list_in_order(st, bwd, b)) {
			ff_link_between(st, b, bwd, bwd ? ff_nx(st, bwd) : st->head);
			return;
		}
		fwd = ff_nx(st, fwd);
		bwd = ff_pv(st, bwd);
		st->c.insert_steps++;
	}
}

/** Puts @p b where the order says, without touching the counts. */
static void ff_place(ff_state_t *st, ff_block_t *b)
{
	if (st->order == FF_ORDER_LIFO)
		ff_link_between(st, b, NULL, st->head);
	else if (st->order == FF_ORDER_FIFO)
		ff_link_between(st, b, st->tail, NULL);
	else
		ff_place_sorted(st, b);
}

void ff_list_insert(ff_state_t *st, ff_block_t *b)
{
	ff_place(st, b);
	st->nfree++;
	st->free_bytes += ff_size(b);
}

void ff_list_unlink(ff_state_t *st, ff_block_t *b)
{
	ff_detach(st, b);
	st->nfree--;
	st->free_bytes -= ff_size(b);
}

/** @p b takes the list position of @p old (split remainders, merges). */
void ff_list_replace(ff_state_t *st, ff_block_t *old, ff_block_t *b)
{
	ff_link_between(st, b, ff_pv(st, old), ff_nx(st, old));
	if (st->rover == old)
		st->rover = b;
	st->free_bytes += ff_size(b) - ff_size(old);
}

/** The size of listed block @p b changed from @p old_size: fixes the byte
 *  count and, when the order depends on size (or @p requeue asks to treat
 *  it as newly freed: a merge), its place on the list. */
void ff_list_resized(ff_state_t *st, ff_block_t *b, size_t old_size, bool requeue)
{
	bool by_size = st->order == FF_ORDER_SIZE_ASC || st->order == FF_ORDER_SIZE_DESC;

	st->free_bytes += ff_size(b) - old_size;
	if (by_size || (requeue && st->order != FF_ORDER_ADDRESS)) {
		ff_detach(st, b);
		ff_place(st, b);
	}
}

/** First element from @p from (inclusive) to @p stop (exclusive) that fits. */
static ff_block_t *ff_scan_first(ff_state_t *st, ff_block_t *from, ff_block_t *stop, size_t asize)
{
	for (ff_block_t *x = from; x != stop; x = ff_nx(st, x)) {
		st->c.steps++;
		HL_EV(st->heap, ff_size(x) >= asize ? HL_EV_LOOK : HL_EV_REJECT, ff_size(x) >= asize ? "candidate fits: the scan stops" : "candidate too small", -1, ff_size(x), (void *)ff_addr(x));
		if (ff_size(x) >= asize)
			return x;
	}
	return NULL;
}

/** Next fit: from the rover to the tail, then from the head up to it. */
static ff_block_t *ff_scan_next(ff_state_t *st, size_t asize)
{
	ff_block_t *start = st->rover ? st->rover : st->head;
	ff_block_t *x = ff_scan_first(st, start, NULL, asize);

	if (!x && start != st->head)
		x = ff_scan_first(st, st->head, start, asize);
	if (x)
		st->rover = x;
	return x;
}

/** Best (smallest fitting) or worst (largest) fit; ties go to the first
 *  met.  Stops early where the answer is already certain: an exact fit,
 *  or the first fitting block of a list sorted the helpful way. */
static ff_block_t *ff_scan_extreme(ff_state_t *st, size_t asize, bool best)
{
	ff_block_t *pick = NULL;

	for (ff_block_t *x = st->head; x; x = ff_nx(st, x)) {
		size_t s = ff_size(x);

		st->c.steps++;
		if (s >= asize && (!pick || (best ? s < ff_size(pick) : s > ff_size(pick))))
			pick = x;
		HL_EV(st->heap, pick == x ? HL_EV_LOOK : HL_EV_REJECT, s < asize ? "candidate too small" : pick == x ? "candidate fits: the best so far" : best ? "candidate fits but is not smaller than the best so far" : "candidate fits but is not larger than the largest so far", -1, s, (void *)ff_addr(x));
		if (best && pick && (s == asize || st->order == FF_ORDER_SIZE_ASC))
			break;
		if (!best && st->order == FF_ORDER_SIZE_DESC)
			break;
	}
	return pick;
}

ff_block_t *ff_search(ff_state_t *st, size_t asize)
{
	st->c.searches++;
	switch (st->fit) {
	case FF_FIT_FIRST:
		return ff_scan_first(st, st->head, NULL, asize);
	case FF_FIT_NEXT:
		return ff_scan_next(st, asize);
	case FF_FIT_BEST:
		return ff_scan_extreme(st, asize, true);
	default:
		return ff_scan_extreme(st, asize, false);
	}
}
