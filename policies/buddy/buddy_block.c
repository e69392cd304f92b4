/**
 * @file buddy_block.c
 * @brief The blocks of `buddy`: regions and their side maps, the free
 *        list of each order, splitting, coalescing by XOR, the large
 *        blocks' own mappings.  Every function expects the lock held.
 */
#include "config.h"
#include <errno.h>
#include <string.h>
#include "buddy.h"

/* ---- regions -------------------------------------------------------------- */

/** How many regions start at or below @p p (by_base is sorted). */
static size_t bd_rank(const bd_state_t *s, const char *p)
{
	size_t lo = 0, hi = s->nregions;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->regions[s->by_base[mid]].base <= p)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

bd_region_t *bd_region_of(bd_state_t *s, const void *p)
{
	size_t n = bd_rank(s, p);

	if (!n)
		return NULL;
	bd_region_t *r = &s->regions[s->by_base[n - 1]];
	return (const char *)p < r->base + bd_region_bytes(s) ? r : NULL;
}

/** Pages of a region. */
static size_t bd_pages(const bd_state_t *s) { return bd_region_bytes(s) / hl_os_page(s->os); }

/** Bytes of a region's side map, request table and page bits (one
 *  metadata region). */
static size_t bd_meta_bytes(const bd_state_t *s)
{
	size_t bits = hl_align_up(bd_pages(s), 64) / 8;

	return hl_align_up(bd_units(s) * (1 + sizeof(uint32_t)) + bits, hl_os_page(s->os));
}

/* ---- committed pages ------------------------------------------------------------ */

static bool bd_page_on(const bd_region_t *r, size_t i) { return r->pages[i / 64] >> (i % 64) & 1; }

static void bd_page_set(bd_region_t *r, size_t i, bool on)
{
	if (on)
		r->pages[i / 64] |= (uint64_t)1 << (i % 64);
	else
		r->pages[i / 64] &= ~((uint64_t)1 << (i % 64));
}

/** Makes the pages of [@p a, @p a + @p len) committed, or (@p on false)
 *  decommitted, run by run; false when the page source refused (the
 *  pages done so far keep their bits).  @p done adds the bytes changed. */
static bool bd_pages_set(bd_state_t *s, bd_region_t *r, const char *a, size_t len, bool on, size_t *done)
{
	size_t page = hl_os_page(s->os);
	size_t i = (size_t)(a - r->base) / page, end = ((size_t)(a - r->base) + len + page - 1) / page;

	while (i < end) {
		if (bd_page_on(r, i) == on) {
			i++;
			continue;
		}
		size_t j = i;
		while (j < end && bd_page_on(r, j) != on)
			j++;
		char *from = r->base + i * page;
		if ((on ? hl_os_commit(s->os, from, (j - i) * page) : hl_os_decommit(s->os, from, (j - i) * page)) < 0)
			return false;
		for (; i < j; i++)
			bd_page_set(r, i, on);
		if (done)
			*done += (j - (size_t)(from - r->base) / page) * page;
	}
	return true;
}

/** Commits what handing out block @p b of order @p k, split from a free
 *  block of order @p j, writes: the block, and the first bytes of each
 *  upper half listed on the way down. */
static bool bd_commit_split(bd_state_t *s, bd_region_t *r, char *b, unsigned k, unsigned j)
{
	if (!bd_pages_set(s, r, b, bd_bytes(k), true, NULL))
		return false;
	for (unsigned i = k; i < j; i++)
		if (!bd_pages_set(s, r, b + bd_bytes(i), sizeof(bd_links_t), true, NULL))
			return false;
	return true;
}

static void bd_push(bd_state_t *s, bd_region_t *r, char *b, unsigned k);

/** A new region: one free block of order max_order. */
static bool bd_new_region(bd_state_t *s)
{
	size_t size = bd_region_bytes(s);

	if (s->nregions == BD_MAX_REGIONS)
		return false;
	char *base = hl_os_reserve(s->os, size, hl_os_page(s->os), false);
	if (!base)
		return false;
	uint8_t *meta = hl_os_reserve_meta(s->os, bd_meta_bytes(s));
	if (!meta || hl_os_commit(s->os, base, hl_os_page(s->os)) < 0) {   /* the links' page */
		if (meta)
			hl_os_release(s->os, meta, bd_meta_bytes(s));
		hl_os_release(s->os, base, 0);
		return false;
	}
	size_t at = bd_rank(s, base);   /* among the regions there were */
	bd_region_t *r = &s->regions[s->nregions++];
	r->base = base;
	r->map = meta;
	r->req = (uint32_t *)(void *)(meta + bd_units(s));
	r->pages = (uint64_t *)(void *)(meta + bd_units(s) * (1 + sizeof(uint32_t)));
	bd_page_set(r, 0, true);
	r->seq = hl_os_locate(s->os, base, NULL);
	memmove(&s->by_base[at + 1], &s->by_base[at], (s->nregions - 1 - at) * sizeof s->by_base[0]);
	s->by_base[at] = (uint32_t)(s->nregions - 1);
	HL_EV(s->heap, HL_EV_NEW, "a region: one free block of the largest order, order", (int)s->max_order, size, base);
	bd_push(s, r, base, s->max_order);
	return true;
}

/* ---- free lists ------------------------------------------------------------ */

/** True when @p x may be followed as an element of free[k]: a free block
 *  of order k in one of our regions (checked before it is read). */
static bool bd_plausible(bd_state_t *s, char *x, unsigned k)
{
	bd_region_t *r = bd_region_of(s, x);

	return r && ((size_t)(x - r->base) & (bd_bytes(k) - 1)) == 0 &&
	       *bd_map_at(s, r, x) == (BD_HEAD | BD_FREE | k);
}

/** The links of listed block @p b, made sure to lead to blocks of order
 *  @p k (a write after free that smashed them aborts here). */
static bd_links_t *bd_checked_links(bd_state_t *s, char *b, unsigned k)
{
	bd_links_t *l = bd_links(b);

	if ((l->next && !bd_plausible(s, l->next, k)) || (l->prev && !bd_plausible(s, l->prev, k)) ||
	    (l->next && bd_links(l->next)->prev != b) || (l->prev && bd_links(l->prev)->next != b) ||
	    (!l->prev && s->free[k] != b))
		hl_fatal(&hl_policy_buddy, "free list link overwritten (a write after free?)", b);
	return l;
}

/** Lists free block @p b of order @p k at the head of free[k]. */
static void bd_push(bd_state_t *s, bd_region_t *r, char *b, unsigned k)
{
	bd_links_t *l = bd_links(b);

	*bd_map_at(s, r, b) = (uint8_t)(BD_HEAD | BD_FREE | k);
	l->prev = NULL;
	l->next = s->free[k];
	if (l->next)
		bd_links(l->next)->prev = b;
	s->free[k] = b;
	s->nfree[k]++;
}

/** Takes free block @p b of order @p k off free[k]; its map byte is the
 *  caller's to rewrite. */
static void bd_unlink(bd_state_t *s, char *b, unsigned k)
{
	bd_links_t *l = bd_checked_links(s, b, k);

	if (l->prev)
		bd_links(l->prev)->next = l->next;
	else
		s->free[k] = l->next;
	if (l->next)
		bd_links(l->next)->prev = l->prev;
	s->nfree[k]--;
}

/* ---- allocation and free ------------------------------------------------------- */

/** Marks @p b live, of order @p k, serving @p n bytes. */
static void bd_mark_live(bd_state_t *s, bd_region_t *r, char *b, unsigned k, size_t n)
{
	size_t u = bd_unit(s, r, b);

	r->map[u] = (uint8_t)(BD_HEAD | k);
	r->req[u] = (uint32_t)n;
	s->nlive[k]++;
	s->requested += n;
	s->rounded += bd_bytes(k);
}

void *bd_alloc(bd_state_t *s, unsigned k, size_t n)
{
	unsigned j = k;

	while (j <= s->max_order && !s->free[j])
		j++;
	if (j > s->max_order) {
		HL_EV(s->heap, HL_EV_REJECT, "every free list from the order asked up is empty (a new region), order", (int)k, bd_bytes(k), NULL);
		if (!bd_new_region(s)) {
			HL_EV(s->heap, HL_EV_FAIL, "no new region", (int)k, bd_bytes(k), NULL);
			errno = ENOMEM;
			return NULL;
		}
		j = s->max_order;
	}
	char *b = s->free[j];
	bd_region_t *r = bd_region_of(s, b);
	if (!r || *bd_map_at(s, r, b) != (BD_HEAD | BD_FREE | j))
		hl_fatal(&hl_policy_buddy, "free list head overwritten (a write after free?)", b);
	if (!bd_commit_split(s, r, b, k, j)) {
		HL_EV(s->heap, HL_EV_FAIL, "pages of the block not committed", (int)k, bd_bytes(k), b);
		errno = ENOMEM;
		return NULL;
	}
	bd_unlink(s, b, j);
	HL_EV(s->heap, HL_EV_LIST_POP, j == k ? "the list of the order asked, order" : "a larger order's list (to split), order", (int)j, bd_bytes(j), b);
	while (j > k) {
		j--;
		bd_push(s, r, b + bd_bytes(j), j);
		s->c.splits++;
		HL_EV_SIZES(s->heap, HL_EV_SPLIT, "halved, the upper half listed on the free list of order", (int)j, bd_bytes(j), bd_bytes(j), b);
	}
	bd_mark_live(s, r, b, k, n);
	return b;
}

unsigned bd_validate(bd_state_t *s, bd_region_t *r, const void *p, bool freeing)
{
	uint8_t m;

	if (!r)
		hl_fatal(&hl_policy_buddy, "free of a pointer this heap does not own", p);
	if (((uintptr_t)p & (bd_bytes(s->min_order) - 1)) || !((m = *bd_map_at(s, r, p)) & BD_HEAD))
		hl_fatal(&hl_policy_buddy, "invalid pointer (not the start of a block)", p);
	if (m & BD_FREE)
		hl_fatal(&hl_policy_buddy, freeing ? "double free" : "use of a freed block", p);
	return m & BD_ORDER_MASK;
}

/** Takes live block @p b of order @p k out of the live counts. */
static void bd_unmark_live(bd_state_t *s, bd_region_t *r, char *b, unsigned k)
{
	size_t u = bd_unit(s, r, b);

	s->nlive[k]--;
	s->requested -= r->req[u];
	s->rounded -= bd_bytes(k);
	r->req[u] = 0;
}

void bd_release(bd_state_t *s, bd_region_t *r, char *b)
{
	unsigned k = *bd_map_at(s, r, b) & BD_ORDER_MASK;

	bd_unmark_live(s, r, b, k);
	while (k < s->max_order) {
		char *buddy = bd_buddy(r, b, k);
		uint8_t *bm = bd_map_at(s, r, buddy);
		if (*bm != (BD_HEAD | BD_FREE | k)) {
			s->c.refused++;
			HL_EV(s->heap, HL_EV_REJECT, *bm & BD_HEAD && !(*bm & BD_FREE) ? "no merge: the buddy is live, order" : "no merge: the buddy is split, order", (int)k, bd_bytes(k), buddy);
			break;
		}
		bd_unlink(s, buddy, k);
		char *upper = buddy > b ? buddy : b;
		*bd_map_at(s, r, upper) = 0;
		b = buddy < b ? buddy : b;
		*bd_map_at(s, r, b) = 0;
		s->c.merges++;
		HL_EV_SIZES(s->heap, HL_EV_MERGE, "with its free buddy (offset XOR size) of order", (int)k, bd_bytes(k), bd_bytes(k + 1), b);
		k++;
	}
	bd_push(s, r, b, k);
	HL_EV(s->heap, HL_EV_LIST_PUSH, "the list of the block's order, order", (int)k, bd_bytes(k), b);
}

/** True when live block @p b of order @p k can grow to order @p want by
 *  taking the buddies above it, each a free block of its order. */
static bool bd_can_grow(bd_state_t *s, bd_region_t *r, char *b, unsigned k, unsigned want)
{
	for (; k < want; k++) {
		char *buddy = bd_buddy(r, b, k);
		if (buddy < b || *bd_map_at(s, r, buddy) != (BD_HEAD | BD_FREE | k))
			return false;
	}
	return true;
}

bool bd_resize(bd_state_t *s, bd_region_t *r, char *b, unsigned k, unsigned want, size_t n)
{
	if (want > k && (!bd_can_grow(s, r, b, k, want) || !bd_pages_set(s, r, b, bd_bytes(want), true, NULL)))
		return false;
	bd_unmark_live(s, r, b, k);
	for (; k < want; k++) {
		char *buddy = bd_buddy(r, b, k);
		bd_unlink(s, buddy, k);
		*bd_map_at(s, r, buddy) = 0;
		s->c.merges++;
		HL_EV_SIZES(s->heap, HL_EV_MERGE, "realloc in place: with its free buddy above, of order", (int)k, bd_bytes(k), bd_bytes(k + 1), b);
	}
	while (k > want) {
		k--;
		bd_push(s, r, b + bd_bytes(k), k);
		s->c.splits++;
		HL_EV_SIZES(s->heap, HL_EV_SPLIT, "realloc in place: the upper half freed, order", (int)k, bd_bytes(k), bd_bytes(k), b);
	}
	bd_mark_live(s, r, b, k, n);
	return true;
}

/* ---- large blocks -------------------------------------------------------------- */

void *bd_large_alloc(bd_state_t *s, size_t n, size_t align)
{
	size_t page = hl_os_page(s->os), i = 0;

	while (i < BD_MAX_LARGE && s->large[i].base)
		i++;
	if (i == BD_MAX_LARGE || n > HL_MAX_REQUEST) {
		errno = ENOMEM;
		return NULL;
	}
	size_t size = hl_align_up(n, page);
	char *base = hl_os_reserve(s->os, size, align > page ? align : page, true);
	if (!base) {
		HL_EV(s->heap, HL_EV_FAIL, "no mapping for a large block", -1, size, NULL);
		errno = ENOMEM;
		return NULL;
	}
	bd_large_t *l = &s->large[i];
	*l = (bd_large_t){ base, size, n, hl_os_locate(s->os, base, NULL) };
	hl_os_set_data(s->os, base, l);
	if (i + 1 > s->large_high)
		s->large_high = i + 1;
	s->large_live++;
	s->large_bytes += size;
	s->large_requested += n;
	s->c.maps++;
	HL_EV(s->heap, HL_EV_MAP, "above the largest order: a mapping of its own", -1, size, base);
	return base;
}

bd_large_t *bd_large_of(bd_state_t *s, const void *p)
{
	bd_large_t *l = hl_os_data(s->os, p);

	return l >= s->large && l < s->large + BD_MAX_LARGE && l->base == p ? l : NULL;
}

void bd_large_free(bd_state_t *s, bd_large_t *l)
{
	HL_EV(s->heap, HL_EV_UNMAP, "a large block's mapping", -1, l->size, l->base);
	s->large_live--;
	s->large_bytes -= l->size;
	s->large_requested -= l->req;
	s->c.unmaps++;
	hl_os_release(s->os, l->base, l->size);
	l->base = NULL;
}

size_t bd_decommit_free(bd_state_t *s)
{
	size_t page = hl_os_page(s->os), given = 0;

	for (unsigned k = s->min_order; k <= s->max_order; k++) {
		if (bd_bytes(k) <= page)
			continue;
		for (char *b = s->free[k]; b; b = bd_links(b)->next) {
			bd_checked_links(s, b, k);
			bd_pages_set(s, bd_region_of(s, b), b + page, bd_bytes(k) - page, false, &given);
		}
	}
	if (given)
		HL_EV(s->heap, HL_EV_PURGE, "committed pages inside free blocks (the first page keeps the links)", -1, given, NULL);
	s->c.decommitted += given;
	return given;
}
