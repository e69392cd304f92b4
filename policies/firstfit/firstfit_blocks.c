/**
 * @file firstfit_blocks.c
 * @brief Block surgery for `firstfit`: writing headers and footers,
 *        splitting a free block, freeing with coalescing, and moving the
 *        program break up (grow) and down (trim).
 *
 * Every function here runs with ff_state_t.lock held.
 */
#include "config.h"
#include <string.h>
#include "firstfit.h"

/** Writes the header (and tag, and footer) of a free block. */
void ff_write_free(ff_state_t *st, ff_block_t *b, size_t size, bool prev_free)
{
	uint64_t *w = ff_word(b);

	w[0] = size | (prev_free ? FF_PREV_FREE : 0);
	if (st->hdr >= 16)
		w[1] = ff_tag(st, b);
	if (st->hdr >= 32)
		w[2] = w[3] = 0;
	*ff_footer(b) = size;
}

/** Writes the header of a live block serving a request of @p req bytes. */
void ff_write_live(ff_state_t *st, ff_block_t *b, size_t size, bool prev_free, size_t req)
{
	uint64_t *w = ff_word(b);

	w[0] = size | FF_ALLOC | (prev_free ? FF_PREV_FREE : 0);
	if (st->hdr >= 16)
		w[1] = ff_tag(st, b);
	if (st->hdr >= 32) {
		w[2] = req;
		w[3] = 0;
	}
}

/** Tells the block after @p b (or the end of the heap) whether @p b is free. */
void ff_set_pf_after(ff_state_t *st, ff_block_t *b, bool free)
{
	uintptr_t n = ff_addr(b) + ff_size(b);
	uint64_t *w;

	if (n >= ff_hi(st)) {
		st->tail_free = free;
		return;
	}
	w = ff_word(ff_at(n));
	*w = free ? (*w | FF_PREV_FREE) : (*w & ~(uint64_t)FF_PREV_FREE);
}

/**
 * Hands out listed free block @p b for a block of @p asize bytes.  The
 * live part is the front of @p b; a remainder of at least MIN bytes stays
 * free and takes @p b's place on the list (sorted-by-size lists place it
 * anew), otherwise the whole block is handed out.
 */
void *ff_take(ff_state_t *st, ff_block_t *b, size_t asize, size_t req)
{
	size_t size = ff_size(b);
	bool pf = ff_prev_is_free(b);

	if (size - asize >= st->min) {
		ff_block_t *r = ff_at(ff_addr(b) + asize);

		ff_write_free(st, r, size - asize, false);
		if (st->order == FF_ORDER_SIZE_ASC || st->order == FF_ORDER_SIZE_DESC) {
			ff_list_unlink(st, b);
			ff_list_insert(st, r);
		} else {
			ff_list_replace(st, b, r);
		}
		st->c.splits++;
		HL_EV_SIZES(st->heap, HL_EV_SPLIT, "free block (the remainder stays free)", -1, asize, size - asize, (void *)ff_addr(b));
		ff_write_live(st, b, asize, pf, req);
	} else {
		ff_list_unlink(st, b);
		ff_write_live(st, b, size, pf, req);
		ff_set_pf_after(st, b, false);
	}
	st->nlive++;
	return ff_payload(st, b);
}

/** Gives live block @p b's bytes beyond @p asize back as a free block. */
void ff_shrink(ff_state_t *st, ff_block_t *b, size_t asize)
{
	size_t size = ff_size(b);
	ff_block_t *r;

	if (size - asize < st->min)
		return;
	r = ff_at(ff_addr(b) + asize);
	ff_word(b)[0] = asize | (ff_word(b)[0] & FF_FLAGS);
	ff_write_live(st, r, size - asize, false, 0);
	st->c.splits++;
	HL_EV_SIZES(st->heap, HL_EV_SPLIT, "live block shrunk in place (its tail is freed)", -1, asize, size - asize, (void *)ff_addr(b));
	ff_release(st, r);
}

/** Cuts a free tail of at least trim_threshold bytes down to `grow`. */
static void ff_auto_trim(ff_state_t *st, ff_block_t *m)
{
	if (st->trim_threshold && ff_addr(m) + ff_size(m) == ff_hi(st) &&
	    ff_size(m) >= st->trim_threshold)
		ff_trim_tail(st, st->grow);
}

/**
 * Makes block @p b (its header says live) free: merges it with free
 * neighbours when coalescing is on, then lists the result.  Under address
 * order a merged block keeps the list place of the neighbour it grew
 * from; under the other orders it is listed as if newly freed (LIFO at the
 * front, FIFO at the back, sorted by its new size).
 */
void ff_release(ff_state_t *st, ff_block_t *b)
{
	ff_block_t *m = b, *nb = ff_next_blk(b);
	size_t msize = ff_size(b), old = 0;
	bool listed = false, rover_on_next = false;

	if (st->coalesce && ff_prev_is_free(b)) {
		m = ff_prev_blk(b);
		old = ff_size(m);
		msize += old;
		listed = true;
		st->c.coalesces++;
		HL_EV_SIZES(st->heap, HL_EV_MERGE, "with the previous free block", -1, ff_size(b), msize, (void *)ff_addr(m));
	}
	if (st->coalesce && ff_addr(nb) < ff_hi(st) && !ff_is_live(nb)) {
		msize += ff_size(nb);
		rover_on_next = st->rover == nb;
		if (listed || st->order != FF_ORDER_ADDRESS) {
			ff_list_unlink(st, nb);
		} else {
			ff_write_free(st, m, msize, ff_prev_is_free(m));
			ff_list_replace(st, nb, m);
			listed = true;
			old = msize;
		}
		st->c.coalesces++;
		HL_EV_SIZES(st->heap, HL_EV_MERGE, "with the next free block", -1, ff_size(nb), msize, (void *)ff_addr(m));
	}
	ff_write_free(st, m, msize, ff_prev_is_free(m));
	ff_set_pf_after(st, m, true);
	HL_EV(st->heap, HL_EV_LIST_PUSH, st->order == FF_ORDER_ADDRESS ? "free list, in address order" : st->order == FF_ORDER_LIFO ? "free list head (LIFO)" : st->order == FF_ORDER_FIFO ? "free list tail (FIFO)" : "free list, in size order", -1, msize, (void *)ff_addr(m));
	if (listed)
		ff_list_resized(st, m, old, true);
	else
		ff_list_insert(st, m);
	if (rover_on_next)
		st->rover = m;
	ff_auto_trim(st, m);
}

/**
 * Moves the break up so that a block of @p asize bytes fits, by at least
 * `grow` bytes.  With coalescing on, a free tail block is extended in
 * place; otherwise the new space becomes a free block of its own.
 * @return the listed free block that now fits, or NULL (ENOMEM).
 */
ff_block_t *ff_grow(ff_state_t *st, size_t asize)
{
	uintptr_t old_hi = ff_hi(st);
	ff_block_t *tail = NULL, *b;
	size_t need = asize, delta;

	if (st->coalesce && st->tail_free) {
		tail = ff_prev_blk(ff_at(old_hi));
		if (ff_size(tail) >= asize)
			return tail;
		need -= ff_size(tail);
	}
	delta = hl_align_up(need + (st->brk.end ? 0 : 2 * st->lead), hl_os_page(st->os));
	if (delta < st->grow)
		delta = st->grow;
	if (!hl_brk_move(st->os, &st->brk, (intptr_t)delta))
		return NULL;
	st->c.grows++;
	HL_EVENT(st->heap, HL_EV_GROW, tail ? "break moved up: the free tail block grows" : "break moved up: a new free block at the end", -1, delta, 0, old_hi - ff_lo(st), ff_hi(st) - ff_lo(st), (void *)old_hi);
	if (tail) {
		size_t was = ff_size(tail);

		ff_write_free(st, tail, was + (ff_hi(st) - old_hi), ff_prev_is_free(tail));
		ff_list_resized(st, tail, was, false);
		return tail;
	}
	b = ff_at(old_hi);
	ff_write_free(st, b, ff_hi(st) - old_hi, st->tail_free);
	st->tail_free = true;
	ff_list_insert(st, b);
	return b;
}

/** Where the heap may end if free tail block @p t keeps @p keep bytes:
 *  the break moves in pages, and a kept piece is at least MIN bytes. */
static uintptr_t ff_trim_point(const ff_state_t *st, ff_block_t *t, size_t keep)
{
	uintptr_t base = (uintptr_t)st->brk.base, start = ff_addr(t), want, end;
	size_t page = hl_os_page(st->os);

	want = start + hl_align_up(keep, HL_ALIGN);
	if (want != start && want - start < st->min)
		want = start + st->min;
	end = base + hl_align_up(want + st->lead - base, page) - st->lead;
	if (end != start && end - start < st->min)
		end += page;
	return end;
}

/**
 * Moves the break down over free tail blocks, keeping @p pad bytes of
 * the last one.  Without coalescing several free blocks may end the heap;
 * each is dropped in turn.
 * @return bytes given back.
 */
size_t ff_trim_tail(ff_state_t *st, size_t pad)
{
	size_t total = 0;

	while (st->tail_free) {
		uintptr_t hi = ff_hi(st);
		ff_block_t *t = ff_prev_blk(ff_at(hi));
		uintptr_t end = ff_trim_point(st, t, pad < hi - ff_addr(t) ? pad : hi - ff_addr(t));
		bool whole = end == ff_addr(t);

		if (end >= hi)
			break;
		if (whole) {
			ff_list_unlink(st, t);
			st->tail_free = ff_prev_is_free(t);
		} else {
			size_t was = ff_size(t);

			ff_write_free(st, t, end - ff_addr(t), ff_prev_is_free(t));
			ff_list_resized(st, t, was, false);
		}
		if (!hl_brk_move(st->os, &st->brk, -(intptr_t)(hi - end)))
			hl_fatal(&hl_policy_firstfit, "the break refused to move down", (void *)end);
		st->c.trims++;
		HL_EVENT(st->heap, HL_EV_SHRINK, "break moved down over the free tail", -1, hi - end, 0, hi - ff_lo(st), end - ff_lo(st), (void *)end);
		st->c.trimmed += hi - end;
		total += hi - end;
		if (!whole)
			break;
	}
	return total;
}
