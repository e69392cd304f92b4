/**
 * @file firstfit_check.c
 * @brief The checker and the walker of `firstfit`.
 *
 * The checker proves the invariants of firstfit.h in two passes, both
 * under the lock:
 *   1. the list walk: every element is a free block inside the heap, its
 *      back link agrees, the order holds, no element comes twice (it sets
 *      FF_MARK on each one it visits), counts and bytes agree;
 *   2. the heap walk: block sizes chain from lo exactly to hi, tags,
 *      footers and PF bits agree, every free block carries FF_MARK (so it
 *      was on the list), no two free blocks touch when coalescing.  It
 *      clears every FF_MARK as it goes.
 */
#include "config.h"
#include "firstfit.h"

/** Totals the list walk found, compared with the heap walk's. */
typedef struct ff_tally {
	size_t listed;        /**< elements on the list */
	size_t listed_bytes;  /**< their bytes */
	bool rover_seen;      /**< the rover was one of them */
} ff_tally_t;

/** True when @p x could be a block of this heap (checked before reading it). */
static bool ff_plausible(const ff_state_t *st, ff_block_t *x)
{
	uintptr_t a = ff_addr(x);

	return a >= ff_lo(st) && a + st->min <= ff_hi(st) && (a + st->hdr) % HL_ALIGN == 0;
}

/** One list element: reports what is wrong; false stops the walk. */
static bool ff_check_element(ff_state_t *st, hl_report_t *r, ff_block_t *prev, ff_block_t *x)
{
	if (!HL_EXPECT(r, ff_plausible(st, x), "free list: element %p is not a block of this heap",
		       (void *)x))
		return false;
	if (!HL_EXPECT(r, !(ff_word(x)[0] & FF_MARK), "free list: block %p is listed twice", (void *)x))
		return false;
	ff_word(x)[0] |= FF_MARK;
	HL_EXPECT(r, !ff_is_live(x), "free list: block %p is live", (void *)x);
	HL_EXPECT(r, ff_links(st, x)->prev == prev, "free list: back link of %p is %p, not %p",
		  (void *)x, (void *)ff_links(st, x)->prev, (void *)prev);
	HL_EXPECT(r, !prev || ff_list_in_order(st, prev, x), "free list: %p before %p breaks order %s",
		  (void *)prev, (void *)x, ff_order_name(st->order));
	return true;
}

static void ff_check_list(ff_state_t *st, hl_report_t *r, ff_tally_t *t)
{
	ff_block_t *prev = NULL;
	size_t limit = (ff_hi(st) - ff_lo(st)) / st->min;

	for (ff_block_t *x = st->head; x; prev = x, x = ff_links(st, x)->next) {
		if (!HL_EXPECT(r, t->listed <= limit, "free list: longer than the heap allows (a cycle?)"))
			return;
		if (!ff_check_element(st, r, prev, x))
			return;
		t->listed++;
		t->listed_bytes += ff_size(x);
		t->rover_seen |= x == st->rover;
	}
	HL_EXPECT(r, st->tail == prev, "free list: tail is %p, the walk ended at %p",
		  (void *)st->tail, (void *)prev);
	HL_EXPECT(r, t->listed == st->nfree, "free list: %zu elements, count says %zu", t->listed, st->nfree);
	HL_EXPECT(r, t->listed_bytes == st->free_bytes, "free list: %zu bytes, count says %zu",
		  t->listed_bytes, st->free_bytes);
	HL_EXPECT(r, !st->rover || t->rover_seen, "rover %p is not on the free list", (void *)st->rover);
}

/** One block of the heap walk; false stops the walk. */
static bool ff_check_block(ff_state_t *st, hl_report_t *r, ff_block_t *b, bool prev_free)
{
	size_t size = ff_size(b);
	bool free = !ff_is_live(b);

	if (!HL_EXPECT_AT(r, size >= st->min && size % HL_ALIGN == 0 && ff_addr(b) + size <= ff_hi(st),
			  ff_payload(st, b), "heap: block %p has a bad size %zu", (void *)b, size))
		return false;
	HL_EXPECT(r, st->hdr < 16 || ff_word(b)[1] == ff_tag(st, b), "heap: block %p has a bad tag",
		  (void *)b);
	HL_EXPECT(r, ff_prev_is_free(b) == prev_free, "heap: block %p has PF=%d but the block before is %s",
		  (void *)b, (int)ff_prev_is_free(b), prev_free ? "free" : "live");
	if (free) {
		HL_EXPECT(r, *ff_footer(b) == size, "heap: free block %p footer %llu, size %zu", (void *)b,
			  (unsigned long long)*ff_footer(b), size);
		HL_EXPECT(r, ff_word(b)[0] & FF_MARK, "heap: free block %p is not on the free list",
			  (void *)b);
		HL_EXPECT(r, !(st->coalesce && prev_free), "heap: free blocks touch at %p (coalesce is on)",
			  (void *)b);
	}
	ff_word(b)[0] &= ~(uint64_t)FF_MARK;
	return true;
}

static void ff_check_heap(ff_state_t *st, hl_report_t *r, const ff_tally_t *t)
{
	uintptr_t a = ff_lo(st), hi = ff_hi(st);
	size_t nfree = 0, nlive = 0;
	bool prev_free = false;

	while (a < hi && ff_check_block(st, r, ff_at(a), prev_free)) {
		prev_free = !ff_is_live(ff_at(a));
		nfree += prev_free;
		nlive += !prev_free;
		a += ff_size(ff_at(a));
	}
	if (a != hi)
		return;
	HL_EXPECT(r, st->tail_free == prev_free, "heap: tail flag says %s, last block is %s",
		  st->tail_free ? "free" : "live", prev_free ? "free" : "live");
	HL_EXPECT(r, nfree == t->listed, "heap: %zu free blocks, %zu listed", nfree, t->listed);
	HL_EXPECT(r, nlive == st->nlive, "heap: %zu live blocks, count says %zu", nlive, st->nlive);
}

int ff_check(void *state, hl_report_t *r)
{
	ff_state_t *st = state;
	ff_tally_t t = { 0, 0, false };
	int before = r->problems;

	pthread_mutex_lock(&st->lock);
	ff_check_list(st, r, &t);
	ff_check_heap(st, r, &t);
	pthread_mutex_unlock(&st->lock);
	return r->problems - before;
}

/** Blocks the walker copies out per turn of the lock. */
enum { FF_WALK_BATCH = 64 };

/** Copies up to FF_WALK_BATCH blocks from address @p *a on into @p out;
 *  advances @p *a.  Returns how many; *done when the heap end was reached. */
static int ff_walk_batch(ff_state_t *st, uintptr_t *a, hl_block_t *out, int region, bool *done)
{
	int n = 0;

	pthread_mutex_lock(&st->lock);
	while (*a < ff_hi(st) && n < FF_WALK_BATCH) {
		ff_block_t *b = ff_at(*a);
		bool live = ff_is_live(b);

		if (ff_size(b) < st->min || *a + ff_size(b) > ff_hi(st))
			break;
		out[n++] = (hl_block_t){
			.addr = live ? ff_payload(st, b) : (void *)b,
			.size = live ? ff_size(b) - st->hdr : ff_size(b),
			.state = live ? HL_BLOCK_LIVE : HL_BLOCK_FREE,
			.region = region,
			.size_class = 0,
		};
		*a += ff_size(b);
	}
	*done = n < FF_WALK_BATCH;
	pthread_mutex_unlock(&st->lock);
	return n;
}

/** Visits every block in address order; live blocks are reported by
 *  their payload and usable bytes, free ones whole.  @p fn runs without
 *  the lock (it may call back into the heap, e.g. hl_usable_size); the
 *  walk is exact when no other thread changes the heap meanwhile. */
int ff_walk(void *state, hl_walk_fn fn, void *arg)
{
	ff_state_t *st = state;
	hl_block_t batch[FF_WALK_BATCH];
	size_t off;
	int region = hl_os_locate(st->os, st->brk.base, &off), n, stop = 0;
	uintptr_t a;
	bool done = false;

	pthread_mutex_lock(&st->lock);
	a = ff_lo(st);
	pthread_mutex_unlock(&st->lock);
	while (!done && !stop) {
		n = ff_walk_batch(st, &a, batch, region, &done);
		for (int i = 0; i < n && !stop; i++)
			stop = fn(&batch[i], arg);
	}
	return stop;
}
