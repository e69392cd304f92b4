/**
 * @file buddy.c
 * @brief `buddy`: the binary buddy allocator.
 *
 * What it models
 *   The allocator of OSTEP chapter 17 ("Buddy allocation"), Knuth's
 *   TAOCP 2.5 and Linux's page allocator (mm/page_alloc.c: orders 0 to
 *   MAX_ORDER - 1, one free list per order, /proc/buddyinfo), here for
 *   bytes: a request is rounded up to a power of two; a free block of
 *   that order is taken, or a larger one is halved again and again, each
 *   unused upper half going on the free list of its order; a freed block
 *   merges with its buddy (offset XOR size) while the buddy is a free
 *   block of the same order, and the merged block goes one order up.
 *   No real user-space allocator works so (it has no fidelity family):
 *   it is here for what it teaches, internal fragmentation above all.
 *
 * Vital statistics
 *   Alignment:  a block of order k is aligned to 2^k from its region's
 *               base, which is on a page: in memory to the smaller of
 *               2^k and a page, so every block to at least 2^min_order.
 *               memalign(a, n) with a up to a page is a request of order
 *               max(order(n), log2 a); above a page it gets a mapping of
 *               its own (buddy.h says why regions are not aligned).
 *   Overhead:   no header: the order and the state of each block are in
 *               a side map, one byte per 2^min_order bytes (plus 4 bytes
 *               per unit for the requests, kept for the statistics, and a
 *               bit per page: committed or not).  A free block keeps its
 *               list links in its first 16 bytes, so listing one commits
 *               its first page (Linux keeps them in struct page instead).
 *               Rounding up to a power of two wastes up to half a block:
 *               policy_stats.internal_fragmentation_bytes says how much.
 *   Usable:     the whole block, 2^k bytes.
 *   Threads:    one mutex around everything; no per-thread caches.
 *   Complexity: malloc O(max_order - min_order) (lists looked at, splits);
 *               free the same (merges); realloc in place when the block
 *               still fits, when halving it fits, or when the buddies
 *               above it are free.
 *
 * Options: described once, in the option table below (bd_options); `heaplab
 * options buddy` prints them, the book's options appendix is made from it.
 *
 * Misuse detected (debug:off; no real allocator to follow)
 *   free reads only the side map: a pointer outside every region and
 *   large mapping, a pointer that does not start a block, and a block
 *   already free abort.  Free-list links are checked before they are
 *   followed, so a write after free that smashes them aborts.  A small
 *   overflow that stays inside its block's rounding is not seen: there
 *   is nothing there to damage.
 *
 * What it leaves out
 *   Linux's migrate types, per-CPU page lists, watermarks and the slab
 *   layered on top; giving regions back (trim decommits the pages inside
 *   free blocks instead).  A heap holds at most BD_MAX_REGIONS regions
 *   and BD_MAX_LARGE large blocks at once (buddy.h); past them malloc
 *   returns NULL with ENOMEM.
 */
#include "config.h"
#include <errno.h>
#include <string.h>
#include "buddy.h"

static const hl_option_t bd_options[] = {
	{ "min_order", HL_OPT_INT, "5", 4, 12, NULL,
	  "smallest block: 2^min_order bytes (5: 32 B; at least 16 B, to hold the two list links)" },
	{ "max_order", HL_OPT_INT, "22", 12, BD_ORDERS - 1, NULL,
	  "largest block and region size: 2^max_order bytes (22: 4 MiB, Linux's largest page block); "
	  "larger requests get a mapping of their own" },
	{ NULL, 0, NULL, 0, 0, NULL, NULL }
};

_Static_assert(sizeof(bd_links_t) == 16, "links fit the smallest block, 2^4 bytes");
_Static_assert(BD_ORDER_MASK >= BD_ORDERS - 1, "an order fits the map byte");

static void *bd_init(hl_heap_t *h, const hl_conf_t *conf)
{
	unsigned lo = (unsigned)hl_conf_int(conf, "min_order"), hi = (unsigned)hl_conf_int(conf, "max_order");

	if (hi <= lo || hi - lo > BD_MAX_SPREAD || bd_bytes(hi) < hl_os_page(hl_heap_os(h))) {
		hl_set_error("buddy: max_order %u must be above min_order %u, at most %d above it, and a region "
			     "(2^max_order) at least a page", hi, lo, BD_MAX_SPREAD);
		return NULL;
	}
	bd_state_t *s = hl_policy_state_new(h, sizeof *s);
	if (!s)
		return NULL;
	pthread_mutex_init(&s->lock, NULL);
	s->heap = h;
	s->os = hl_heap_os(h);
	s->min_order = lo;
	s->max_order = hi;
	return s;
}

static void bd_destroy(void *state) { pthread_mutex_destroy(&((bd_state_t *)state)->lock); }

/** A block of order @p k, or a large block when k is above max_order. */
static void *bd_alloc_locked(bd_state_t *s, unsigned k, size_t n, size_t align)
{
	if (k > s->max_order)
		return bd_large_alloc(s, n, align);
	return bd_alloc(s, k, n);
}

static void *bd_malloc(void *state, hl_thread_t *t, size_t n)
{
	bd_state_t *s = state;

	(void)t;
	pthread_mutex_lock(&s->lock);
	void *p = bd_alloc_locked(s, bd_order_for(s, n), n, 0);
	pthread_mutex_unlock(&s->lock);
	return p;
}

/* A buddy block of order k is aligned to 2^k from its region's base, which
 * is on a page: up to a page, memalign asks for the order of the
 * alignment when that is the larger; above, a mapping of its own. */
static void *bd_memalign(void *state, hl_thread_t *t, size_t align, size_t n)
{
	bd_state_t *s = state;
	unsigned k = bd_order_for(s, n), ka = bd_order_for(s, align);

	(void)t;
	if (align > HL_MAX_REQUEST) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&s->lock);
	void *p = align > hl_os_page(s->os) ? bd_large_alloc(s, n, align) : bd_alloc_locked(s, k > ka ? k : ka, n, align);
	pthread_mutex_unlock(&s->lock);
	return p;
}

static void bd_free(void *state, hl_thread_t *t, void *p)
{
	bd_state_t *s = state;

	(void)t;
	pthread_mutex_lock(&s->lock);
	bd_region_t *r = bd_region_of(s, p);
	bd_large_t *l = r ? NULL : bd_large_of(s, p);
	if (l)
		bd_large_free(s, l);
	else {
		bd_validate(s, r, p, true);
		bd_release(s, r, p);
	}
	pthread_mutex_unlock(&s->lock);
}

/** Bytes of live block @p p (aborts when it is none). */
static size_t bd_size_locked(bd_state_t *s, const void *p)
{
	bd_region_t *r = bd_region_of(s, p);
	bd_large_t *l = r ? NULL : bd_large_of(s, p);

	return l ? l->size : bd_bytes(bd_validate(s, r, p, false));
}

static size_t bd_usable_size(void *state, const void *p)
{
	bd_state_t *s = state;

	pthread_mutex_lock(&s->lock);
	size_t n = bd_size_locked(s, p);
	pthread_mutex_unlock(&s->lock);
	return n;
}

/* In place when the new order is smaller (the upper halves are freed) or
 * when the buddies above are free; otherwise a new block and a copy. */
static void *bd_realloc(void *state, hl_thread_t *t, void *p, size_t n)
{
	bd_state_t *s = state;
	unsigned want = bd_order_for(s, n);

	(void)t;
	pthread_mutex_lock(&s->lock);
	bd_region_t *r = bd_region_of(s, p);
	size_t old = bd_size_locked(s, p);
	if (r && want <= s->max_order && bd_resize(s, r, p, bd_validate(s, r, p, false), want, n)) {
		pthread_mutex_unlock(&s->lock);
		return p;
	}
	void *q = bd_alloc_locked(s, want, n, 0);
	if (q) {
		memcpy(q, p, old < n ? old : n);
		if (r)
			bd_release(s, r, p);
		else
			bd_large_free(s, bd_large_of(s, p));
	}
	pthread_mutex_unlock(&s->lock);
	return q;
}

static bool bd_owns(void *state, const void *p)
{
	bd_state_t *s = state;

	pthread_mutex_lock(&s->lock);
	bool mine = bd_region_of(s, p) != NULL;
	for (size_t i = 0; !mine && i < s->large_high; i++) {
		const bd_large_t *l = &s->large[i];
		mine = l->base && (const char *)p >= l->base && (const char *)p < l->base + l->size;
	}
	pthread_mutex_unlock(&s->lock);
	return mine;
}

static size_t bd_trim(void *state, size_t pad)
{
	bd_state_t *s = state;

	(void)pad;   /* nothing is kept back: only free blocks give pages */
	pthread_mutex_lock(&s->lock);
	size_t n = bd_decommit_free(s);
	pthread_mutex_unlock(&s->lock);
	return n;
}

/* bd_fork_prepare, bd_fork_parent, bd_fork_child: around fork, the one lock */
HL_FORK_ONE_MUTEX(bd, bd_state_t, lock)

/* Configurations the fuzzers run beside the defaults (core/policy.h):
 * small regions (large mappings early, many regions), the smallest
 * blocks of 16 bytes, and a region of 64 MiB (with blocks of 64 B at
 * least: a region holds at most 2^20 units). */
static const char *const bd_variants[] = {
	"min_order:4,max_order:12",
	"min_order:6,max_order:16",
	"min_order:6,max_order:26",
	NULL,
};

const hl_policy_t hl_policy_buddy = {
	.name = "buddy",
	.summary = "binary buddy system: power-of-two blocks, split in halves, merged with the buddy (offset XOR size)",
	.options = bd_options,
	.variants = bd_variants,
	.init = bd_init,
	.destroy = bd_destroy,
	.malloc = bd_malloc,
	.free = bd_free,
	.realloc = bd_realloc,
	.memalign = bd_memalign,
	.usable_size = bd_usable_size,
	.owns = bd_owns,
	.trim = bd_trim,
	.stats = bd_stats,
	.snapshot = bd_snapshot,
	.check = bd_check,
	.walk = bd_walk,
	.fork_prepare = bd_fork_prepare,
	.fork_parent = bd_fork_parent,
	.fork_child = bd_fork_child,
};
