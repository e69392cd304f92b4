/**
 * @file firstfit.c
 * @brief `firstfit`: the free-list allocator of the textbooks.
 *
 * What it models
 *   The allocator of OSTEP chapter 17, K&R section 8.7 and CS:APP 9.9: one
 *   contiguous heap at the program break, carved into blocks that each
 *   start with a header holding their size.  Free blocks are chained on
 *   one explicit free list; a request walks that list and takes a block
 *   by the chosen fit, splitting off what it does not need; a freed block
 *   merges with free neighbours (boundary tags: a footer in every free
 *   block, a "previous is free" bit in every header).  When nothing fits
 *   the break moves up; hl_trim (and, when option trim_threshold asks
 *   for it, a large free tail) moves it back down.
 *
 * Vital statistics
 *   Alignment:  every payload is 16-byte aligned, whatever the header.
 *   Overhead:   H bytes per live block (option `header`, 8/16/32; default
 *               16 = a size word and a tag word, OSTEP's header_t), plus
 *               rounding to 16.  A free block needs H + 16 (links) + 8
 *               (footer) bytes, so the smallest block is 32, 48 or 64.
 *   Usable:     asize - H, where asize = max(MIN, round16(n + H)).
 *   Threads:    one mutex around everything; no per-thread caches.
 *   Complexity: malloc is O(free blocks) for every fit (next fit usually
 *               less); free is O(1) for LIFO/FIFO and for address order
 *               when a neighbour is free, else O(distance to the nearer
 *               end of the list) for the sorted orders.
 *
 * Options: described once, in the option table below (ff_options); `heaplab
 * options firstfit` prints them, the book's options appendix is made from it.
 * OSTEP's malloc.py spells fit, order, coalesce and header -p BEST|WORST|FIRST,
 * -l ADDRSORT|SIZESORT+|SIZESORT-|INSERT-FRONT|INSERT-BACK, -C, -H.
 *
 * Misuse detected (debug:off; no real allocator to follow)
 *   Every free reads the header in front of the pointer: outside the heap,
 *   no header (a bad tag, with header >= 16), a free block (double free) or
 *   a size that makes no sense abort.  Free-list links are range-checked
 *   before they are followed, so a write after free that smashes them
 *   aborts instead of crashing.  With debug:on the core's guard
 *   (core/guard.c) catches every misuse before the header is read.
 *
 * Choices the textbooks leave open, made here
 *   - A split keeps the front of the block; the remainder keeps the
 *     block's place on the list (as malloc.py does), except that size-
 *     sorted lists place it anew so they stay sorted.
 *   - Best fit stops at an exact fit, and on a size-asc list at the first
 *     fit; worst fit on a size-desc list looks at the head only.  The
 *     answers are the full scan's (ties go to the first block met); only
 *     the step counts are smaller than malloc.py's.
 *   - Next fit's rover rests on the block the last search took (its
 *     remainder after a split); when that block leaves the list the rover
 *     moves to its successor.
 *   - Footers are written in every free block even with coalesce:off:
 *     trimming uses them to find the tail block.
 *   - memalign asks for n + align + MIN bytes, then frees the leading gap
 *     as a block of its own and gives back the tail.
 *   - realloc shrinks in place, grows into a free next block (coalesce:on
 *     only; a block ending the heap first moves the break up), else moves.
 *
 * What it leaves out
 *   Bins, size classes, caches, mmap for large blocks, more than one
 *   arena: those are `bins`, `slab`, `sharded` and `pools`.
 */
#include "config.h"
#include <errno.h>
#include <string.h>
#include "firstfit.h"

static const hl_option_t ff_options[] = {
	{ "fit", HL_OPT_ENUM, "first", 0, 0, "first|next|best|worst",
	  "which free block a request takes (next: resume where the last search stopped)" },
	{ "order", HL_OPT_ENUM, "address", 0, 0, "address|lifo|fifo|size-asc|size-desc",
	  "where a freed block enters the free list" },
	{ "coalesce", HL_OPT_BOOL, "on", 0, 1, NULL, "merge a freed block with its free neighbours" },
	{ "header", HL_OPT_ENUM, "16", 0, 0, "8|16|32", "header bytes in front of every block" },
	{ "grow", HL_OPT_SIZE, "4K", 4096, (int64_t)1 << 30, NULL,
	  "least bytes the program break moves up by (rounded up to pages)" },
	{ "trim_threshold", HL_OPT_SIZE, "0", 0, (int64_t)1 << 40, NULL,
	  "free tail this large is trimmed to `grow` bytes at once (0: only on hl_trim)" },
	{ "brk_max", HL_OPT_SIZE, "64G", 1 << 20, (int64_t)1 << 44, NULL,
	  "address space reserved for the program break" },
	{ NULL, 0, NULL, 0, 0, NULL, NULL }
};

_Static_assert(sizeof(ff_links_t) == 16, "links fill the first 16 payload bytes");
_Static_assert(HL_ALIGN == 16 && FF_FLAGS < HL_ALIGN, "flags live in the low bits sizes never use");

static void ff_read_options(ff_state_t *st, const hl_conf_t *conf)
{
	size_t page = hl_os_page(st->os);

	st->fit = (enum ff_fit)hl_conf_enum(conf, "fit");
	st->order = (enum ff_order)hl_conf_enum(conf, "order");
	st->coalesce = hl_conf_bool(conf, "coalesce");
	st->hdr = (size_t)8 << hl_conf_enum(conf, "header");   /* "8|16|32" */
	st->lead = st->hdr % HL_ALIGN;
	st->min = hl_align_up(st->hdr + sizeof(ff_links_t) + sizeof(uint64_t), HL_ALIGN);
	st->grow = hl_align_up(hl_conf_size(conf, "grow"), page);
	st->trim_threshold = hl_conf_size(conf, "trim_threshold");
}

static void *ff_init(hl_heap_t *h, const hl_conf_t *conf)
{
	hl_os_t *os = hl_heap_os(h);
	ff_state_t *st = hl_policy_state_new(h, sizeof *st);
	if (!st)
		return NULL;
	pthread_mutex_init(&st->lock, NULL);
	st->heap = h;
	st->os = os;
	ff_read_options(st, conf);
	st->key = hl_mix64((uintptr_t)st ^ ((uint64_t)hl_heap_id(h) << 40)) & ~(uint64_t)FF_FLAGS;
	if (hl_brk_init(os, &st->brk, hl_align_up(hl_conf_size(conf, "brk_max"), hl_os_page(os))) != 0) {
		hl_set_error("firstfit: cannot reserve %zu bytes for the program break",
			     hl_conf_size(conf, "brk_max"));
		pthread_mutex_destroy(&st->lock);
		return NULL;
	}
	return st;
}

static void ff_destroy(void *state)
{
	ff_state_t *st = state;

	pthread_mutex_destroy(&st->lock);
}

/** True when @p b is the start of a block, by walking the heap (debug). */
static bool ff_is_block_start(ff_state_t *st, ff_block_t *b)
{
	uintptr_t a = ff_lo(st), hi = ff_hi(st);

	while (a < hi && a < ff_addr(b) && ff_size(ff_at(a)) >= st->min)
		a += ff_size(ff_at(a));
	return a == ff_addr(b);
}

/**
 * The live block whose payload is @p p, or abort naming what is wrong.
 * Cheap checks always run: bounds, the tag (H >= 16), the live bit, the
 * size.  Debug heaps also walk the heap to prove @p p starts a block,
 * which is the only test an untagged (H = 8) header allows.
 */
static ff_block_t *ff_validate(ff_state_t *st, const void *p, bool freeing)
{
	uintptr_t a = (uintptr_t)p;
	ff_block_t *b = ff_block_of(st, p);
	bool start;

	if (a < ff_lo(st) + st->hdr || a >= ff_hi(st) || a % HL_ALIGN)
		hl_fatal(&hl_policy_firstfit, "invalid pointer (not inside this heap)", p);
	if (st->hdr >= 16 && ff_word(b)[1] != ff_tag(st, b))
		hl_fatal(&hl_policy_firstfit, "invalid pointer (no block header in front of it)", p);
	start = !hl_heap_debug(st->heap) || ff_is_block_start(st, b);
	if (st->hdr < 16 && !start)
		hl_fatal(&hl_policy_firstfit, "invalid pointer (not the start of a block)", p);
	if (!ff_is_live(b))
		hl_fatal(&hl_policy_firstfit, freeing ? "double free" : "use of a freed block", p);
	if (!start || ff_size(b) < st->min || ff_addr(b) + ff_size(b) > ff_hi(st))
		hl_fatal(&hl_policy_firstfit, "corrupt block header", p);
	return b;
}

static void *ff_alloc_locked(ff_state_t *st, size_t n)
{
	size_t asize = ff_asize(st, n);
	ff_block_t *b = ff_search(st, asize);

	if (b)
		HL_EV(st->heap, st->fit == FF_FIT_BEST ? HL_EV_BEST_FIT : st->fit == FF_FIT_WORST ? HL_EV_LOOK : HL_EV_FIRST_FIT, st->fit == FF_FIT_NEXT ? "next fit (from the rover)" : st->fit == FF_FIT_WORST ? "worst fit: the largest free block" : "free block", -1, ff_size(b), (void *)ff_addr(b));
	else
		HL_EV(st->heap, HL_EV_REJECT, "no free block fits: the break moves", -1, asize, NULL);
	if (!b && !(b = ff_grow(st, asize))) {
		errno = ENOMEM;
		return NULL;
	}
	return ff_take(st, b, asize, n);
}

static void ff_free_locked(ff_state_t *st, ff_block_t *b)
{
	st->nlive--;
	ff_release(st, b);
}

static void *ff_malloc(void *state, hl_thread_t *t, size_t n)
{
	ff_state_t *st = state;
	void *p;

	(void)t;
	pthread_mutex_lock(&st->lock);
	p = ff_alloc_locked(st, n);
	pthread_mutex_unlock(&st->lock);
	return p;
}

static void ff_free(void *state, hl_thread_t *t, void *p)
{
	ff_state_t *st = state;

	(void)t;
	pthread_mutex_lock(&st->lock);
	ff_free_locked(st, ff_validate(st, p, true));
	pthread_mutex_unlock(&st->lock);
}

/** Carves a block aligned to @p align out of a padded ordinary one: the
 *  leading gap (at least MIN bytes when there is one) becomes free. */
static void *ff_memalign_locked(ff_state_t *st, size_t align, size_t n)
{
	void *p = ff_alloc_locked(st, n + align + st->min);
	uintptr_t q;
	ff_block_t *b, *nb;

	if (!p)
		return NULL;
	b = ff_block_of(st, p);
	q = hl_ptr_align_up((uintptr_t)p, align);
	if (q != (uintptr_t)p && q - (uintptr_t)p < st->min)
		q += hl_align_up(st->min - (q - (uintptr_t)p), align);
	if (q != (uintptr_t)p) {
		size_t gap = q - (uintptr_t)p;

		nb = ff_block_of(st, (void *)q);
		ff_write_live(st, nb, ff_size(b) - gap, true, n);
		ff_write_live(st, b, gap, ff_prev_is_free(b), 0);
		st->c.splits++;
		HL_EV_SIZES(st->heap, HL_EV_SPLIT, "memalign: the gap before the aligned block is freed", -1, gap, ff_size(nb), (void *)ff_addr(b));
		ff_release(st, b);
		b = nb;
	}
	ff_shrink(st, b, ff_asize(st, n));
	return (void *)q;
}

static void *ff_memalign(void *state, hl_thread_t *t, size_t align, size_t n)
{
	ff_state_t *st = state;
	void *p;

	(void)t;
	if (align > HL_MAX_REQUEST) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&st->lock);
	p = ff_memalign_locked(st, align, n);
	pthread_mutex_unlock(&st->lock);
	return p;
}

/** True when nothing but (at most) the free tail block follows @p b. */
static bool ff_ends_heap(ff_state_t *st, ff_block_t *b)
{
	ff_block_t *nb = ff_next_blk(b);

	return ff_addr(nb) >= ff_hi(st) ||
	       (!ff_is_live(nb) && ff_addr(nb) + ff_size(nb) == ff_hi(st));
}

/** Grows live block @p b in place to @p asize bytes over a free next
 *  block, moving the break up first when @p b ends the heap, as a
 *  program growing its last buffer would by moving the break (coalesce:on only). */
static bool ff_grow_in_place(ff_state_t *st, ff_block_t *b, size_t asize)
{
	ff_block_t *nb = ff_next_blk(b);
	bool at_end;

	if (!st->coalesce)
		return false;
	at_end = ff_ends_heap(st, b);
	if (at_end && !ff_grow(st, asize - ff_size(b)))
		return false;
	if (ff_addr(nb) >= ff_hi(st) || ff_is_live(nb) || ff_size(b) + ff_size(nb) < asize)
		return false;
	HL_EV_SIZES(st->heap, HL_EV_MERGE, "realloc in place: with the next free block", -1, ff_size(nb), ff_size(b) + ff_size(nb), (void *)ff_addr(b));
	ff_list_unlink(st, nb);
	ff_word(b)[0] += ff_size(nb);
	ff_set_pf_after(st, b, false);
	st->c.coalesces++;
	return true;
}

static void *ff_realloc(void *state, hl_thread_t *t, void *p, size_t n)
{
	ff_state_t *st = state;
	ff_block_t *b;
	size_t asize = 0;
	void *q = p;

	(void)t;
	pthread_mutex_lock(&st->lock);
	b = ff_validate(st, p, false);
	asize = ff_asize(st, n);
	if (asize <= ff_size(b) || ff_grow_in_place(st, b, asize)) {
		ff_shrink(st, b, asize);
		if (st->hdr >= 32)
			ff_word(b)[2] = n;
	} else if ((q = ff_alloc_locked(st, n)) != NULL) {
		memcpy(q, p, ff_size(b) - st->hdr);
		ff_free_locked(st, b);
	}
	pthread_mutex_unlock(&st->lock);
	return q;
}

static size_t ff_usable_size(void *state, const void *p)
{
	ff_state_t *st = state;
	size_t n;

	pthread_mutex_lock(&st->lock);
	n = ff_size(ff_validate(st, p, false)) - st->hdr;
	pthread_mutex_unlock(&st->lock);
	return n;
}

static bool ff_owns(void *state, const void *p)
{
	ff_state_t *st = state;
	uintptr_t a = (uintptr_t)p;
	bool mine;

	pthread_mutex_lock(&st->lock);
	mine = a >= ff_lo(st) && a < ff_hi(st);
	pthread_mutex_unlock(&st->lock);
	return mine;
}

static size_t ff_trim(void *state, size_t pad)
{
	ff_state_t *st = state;
	size_t n;

	pthread_mutex_lock(&st->lock);
	n = ff_trim_tail(st, pad);
	pthread_mutex_unlock(&st->lock);
	return n;
}

/* ff_fork_prepare, ff_fork_parent, ff_fork_child: around fork, the one lock */
HL_FORK_ONE_MUTEX(ff, ff_state_t, lock)

/* heaplab diagnose's candidates: knobs that change how memory comes back,
 * each with what the real allocator needs to do the same. */
static const hl_whatif_t ff_whatif[] = {
	{ "", NULL },
	{ NULL, NULL },
};

/* Configurations the fuzzers run beside the defaults (core/policy.h). */
static const char *const ff_variants[] = {
	"fit:best,order:lifo,header:8",
	"fit:next,order:fifo,coalesce:off,trim_threshold:8K",
	"fit:worst,order:size-desc,header:32,grow:64K",
	NULL,
};

const hl_policy_t hl_policy_firstfit = {
	.name = "firstfit",
	.summary = "textbook free list: headers, splitting, coalescing; first/next/best/worst fit",
	.options = ff_options,
	.whatif = ff_whatif,
	.variants = ff_variants,
	.cells = HL_CELLS_EVERY_BLOCK,
	.init = ff_init,
	.destroy = ff_destroy,
	.malloc = ff_malloc,
	.free = ff_free,
	.realloc = ff_realloc,
	.memalign = ff_memalign,
	.usable_size = ff_usable_size,
	.owns = ff_owns,
	.trim = ff_trim,
	.reset = NULL,
	.stats = ff_stats,
	.snapshot = ff_snapshot,
	.check = ff_check,
	.walk = ff_walk,
	.thread_exit = NULL,
	.fork_prepare = ff_fork_prepare,
	.fork_parent = ff_fork_parent,
	.fork_child = ff_fork_child,
};
