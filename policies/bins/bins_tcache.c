/*
 * bins_tcache.c -- the tcache of policy `bins`, its slow part: the scan
 * that tells a double free from a chunk whose key only looks like one.
 * Putting a chunk on a thread's cache list and taking one off (safe-linked
 * as glibc 2.32+ does) are inline in bins_tcache.h, as they are the fast
 * path.  Owner thread only, no lock.  Both bins.c (malloc and free) and
 * bins_arena.c (spare exact fits stashed on the way) use the tcache; it
 * calls nothing of the policy (see bins.h, "Layers").
 */
#include "bins_tcache.h"

/* The key matched: abort when @p e really is on the list from @p head. */
static void bn_scan_list(const bn_state_t *st, bn_tentry_t *head, bn_tentry_t *e)
{
	unsigned n = 0;
	for (bn_tentry_t *x = head; x; x = bn_tentry_next(x)) {
		if (x == e)
			hl_fatal(BN, "free(): double free detected in tcache 2", e);
		if (HL_UNLIKELY(++n > st->tcache_count || ((uintptr_t)x & 15)))
			hl_fatal(BN, "free(): too many or unaligned chunks detected in tcache", x);
	}
}

void bn_tcache_double_free_scan(bn_state_t *st, bn_tcache_t *tc, bn_tentry_t *e, unsigned idx)
{
	bn_scan_list(st, tc->entries[idx], e);
}

/* The large bins (glibc 2.42's tcache_location_large and its callers,
 * malloc/malloc.c): a list kept sorted by chunk size, walked from its head
 * to the first chunk at least nb bytes big.  *at is the link to it. */
static bn_tentry_t *bn_large_find(bn_tcache_t *tc, unsigned j, size_t nb, uintptr_t **at)
{
	bn_tentry_t *e = tc->large[j];
	*at = (uintptr_t *)&tc->large[j];
	while (e && bn_csize(bn_mem2chunk(e)) < nb) {
		*at = &e->next;
		e = bn_tentry_next(e);
	}
	return e;
}

/* A link: the head is stored plain, a chunk's next safe-linked. */
static void bn_large_link(bn_tcache_t *tc, unsigned j, uintptr_t *at, const bn_tentry_t *to)
{
	*at = at == (uintptr_t *)&tc->large[j] ? (uintptr_t)to : bn_protect(at, (uintptr_t)to);
}

void *bn_tcache_get_large(bn_tcache_t *tc, unsigned j, size_t nb, bool exact)
{
	uintptr_t *at;
	bn_tentry_t *e = bn_large_find(tc, j, nb, &at);
	if (!e || (exact && bn_csize(bn_mem2chunk(e)) != nb))
		return NULL;
	bn_tentry_t *nx = bn_tentry_next(e);
	if (HL_UNLIKELY((uintptr_t)nx & 15))
		hl_fatal(BN, "malloc(): unaligned tcache chunk detected", e);
	bn_large_link(tc, j, at, nx);
	tc->large_counts[j]--;
	e->key = 0;
	return e;
}

void bn_tcache_put_large(bn_state_t *st, bn_tcache_t *tc, bn_chunk_t *c, unsigned j)
{
	uintptr_t *at;
	bn_tentry_t *e = bn_chunk2mem(c), *after = bn_large_find(tc, j, bn_csize(c), &at);
	e->key = st->key;
	e->next = bn_protect(&e->next, (uintptr_t)after);
	bn_large_link(tc, j, at, e);
	tc->large_counts[j]++;
}

void bn_tcache_double_free_scan_large(bn_state_t *st, bn_tcache_t *tc, bn_tentry_t *e, unsigned j)
{
	bn_scan_list(st, tc->large[j], e);
}
