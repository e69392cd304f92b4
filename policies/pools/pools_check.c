/*
 * The checker and the walker of `pools`.  Both run with the policy lock
 * held (the walker's visitor must not call back into this heap).
 *
 * The checker verifies the invariants I1..I7 of pools.h: every carved
 * pool's live count plus its free list plus its never-used tail equals the
 * class capacity; usedpools rings hold exactly the partly used pools of
 * their class; each arena's free-pool count matches its freepools list and
 * never-carved pools; usable_arenas is sorted by free pools and nfp2lasta
 * points at the last arena of each count; the arena map marks every arena.
 */
#include "config.h"
#include <string.h>
#include "pools.h"

enum { PL_BITMAP_WORDS = (256 << 10) / HL_ALIGN / 64 };

static inline void pl_bit_set(uint64_t *bits, size_t i) { bits[i / 64] |= 1ull << (i % 64); }
static inline bool pl_bit(const uint64_t *bits, size_t i) { return bits[i / 64] >> (i % 64) & 1; }

int pl_free_bitmap(const pl_state_t *s, const pl_pool_t *pool, uint64_t *bits, size_t nwords)
{
	memset(bits, 0, nwords * sizeof *bits);
	uint32_t stride = s->stride[pool->szidx], cap = s->capacity[pool->szidx];
	int n = 0;
	for (const char *b = pool->freeblock; b; b = *(void *const *)b) {
		uintptr_t off = (uintptr_t)(b - pl_pool_base(s, pool));
		if (off < PL_POOL_OVERHEAD || off >= pool->nextoffset || (off - PL_POOL_OVERHEAD) % stride)
			return -1;
		size_t i = (off - PL_POOL_OVERHEAD) / stride;
		if (i >= cap || pl_bit(bits, i) || (size_t)n >= cap)
			return -1;
		pl_bit_set(bits, i);
		n++;
	}
	return n;
}

int pl_freepool_bitmap(const pl_state_t *s, const pl_arena_t *a, uint64_t *bits, size_t nwords)
{
	memset(bits, 0, nwords * sizeof *bits);
	int n = 0;
	for (const pl_pool_t *p = a->freepools; p; p = p->nextpool) {
		uintptr_t off = (uintptr_t)p - pl_arena_first(s, a);
		if (off >= s->arena_size || off & (((uintptr_t)1 << s->header_bits) - 1))
			return -1;
		size_t i = off >> s->header_bits;
		if (i < s->table_pools || !pl_pool_is_carved(s, a, p))
			return -1;
		if (pl_bit(bits, i) || p->ref.count != 0)
			return -1;
		pl_bit_set(bits, i);
		n++;
	}
	return n;
}

/* ------------------------------------------------------------------ */
/* checker                                                             */

/* I1 and I2 for one carved pool that is not free. */
static void pl_check_pool(pl_state_t *s, const pl_pool_t *pool, hl_report_t *r)
{
	uint64_t bits[PL_BITMAP_WORDS];
	if (!HL_EXPECT(r, pool->szidx < s->nclasses, "pool %p has class %u", (void *)pool, pool->szidx))
		return;
	uint32_t cap = s->capacity[pool->szidx];
	int nfree = pl_free_bitmap(s, pool, bits, PL_BITMAP_WORDS);
	if (!HL_EXPECT(r, nfree >= 0, "pool %p: free list leaves the pool or loops", (void *)pool))
		return;
	HL_EXPECT(r, pool->ref.count + (uint32_t)nfree + pl_untouched(s, pool) == cap,
		  "pool %p: %u used + %d free + %u untouched != %u blocks", (void *)pool,
		  pool->ref.count, nfree, pl_untouched(s, pool), cap);
	HL_EXPECT(r, pool->ref.count > 0, "pool %p: carved, not free, but empty", (void *)pool);
	bool full = pool->ref.count == cap;
	HL_EXPECT(r, full == (pool->freeblock == NULL),
		  "pool %p: full=%d but freeblock=%p", (void *)pool, full, pool->freeblock);
	if (!full)
		HL_EXPECT(r, pool->prevpool->nextpool == pool && pool->nextpool->prevpool == pool,
			  "pool %p: partly used but not linked on usedpools", (void *)pool);
}

/* I3 for one arena, and I1/I2 for each of its carved pools. */
static void pl_check_arena(pl_state_t *s, const pl_arena_t *a, hl_report_t *r)
{
	uint64_t fbits[PL_MAX_POOLS / 64];
	int nfree = pl_freepool_bitmap(s, a, fbits, PL_MAX_POOLS / 64);
	if (!HL_EXPECT(r, nfree >= 0, "arena %p: freepools list broken", (void *)a->address))
		return;
	size_t end = pl_carved_end(s, a), carved = end - s->table_pools;
	HL_EXPECT(r, a->nfreepools == (uint32_t)nfree + (a->ntotalpools - carved),
		  "arena %p: nfreepools %u but %d free + %zu never carved", (void *)a->address,
		  a->nfreepools, nfree, a->ntotalpools - carved);
	HL_EXPECT(r, pl_map_is_used(s, (void *)a->address) &&
		  pl_map_is_used(s, (void *)(a->address + s->arena_size - 1)),
		  "arena %p: not marked in the arena map", (void *)a->address);
	for (size_t i = s->table_pools; i < end; i++)
		if (!pl_bit(fbits, i))
			pl_check_pool(s, pl_pool_at(s, a, i), r);
}

/* Each usedpools ring holds partly used pools of its own class. */
static void pl_check_usedpools(pl_state_t *s, hl_report_t *r)
{
	for (unsigned c = 0; c < s->nclasses; c++) {
		const pl_pool_t *head = pl_used_head(s, c);
		size_t hops = 0;
		for (const pl_pool_t *p = head->nextpool; p != head; p = p->nextpool) {
			if (!HL_EXPECT(r, ++hops <= s->maxarenas * (size_t)s->max_pools &&
				       pl_map_is_used(s, p), "usedpools[%u]: ring broken", c))
				break;
			HL_EXPECT(r, p->szidx == c && p->ref.count > 0 && p->ref.count < s->capacity[c],
				  "usedpools[%u]: pool %p has class %u and %u used", c, (void *)p,
				  p->szidx, p->ref.count);
		}
	}
}

/* I4 and I5: usable_arenas sorted, complete, nfp2lasta right. */
static void pl_check_usable(pl_state_t *s, hl_report_t *r)
{
	size_t n = 0, want = 0;
	const pl_arena_t *prev = NULL;
	for (const pl_arena_t *a = s->usable_arenas; a; prev = a, a = a->nextarena) {
		if (!HL_EXPECT(r, ++n <= s->maxarenas && a->prevarena == prev && a->address,
			       "usable_arenas: list broken at entry %zu", n))
			return;
		HL_EXPECT(r, a->nfreepools > 0, "usable_arenas: arena %p has no free pool",
			  (void *)a->address);
		HL_EXPECT(r, !prev || prev->nfreepools <= a->nfreepools,
			  "usable_arenas: out of order at entry %zu (%u after %u)", n,
			  a->nfreepools, prev ? prev->nfreepools : 0);
		if (!a->nextarena || a->nextarena->nfreepools != a->nfreepools)
			HL_EXPECT(r, s->nfp2lasta[a->nfreepools] == a,
				  "nfp2lasta[%u] is not the last arena with that count", a->nfreepools);
	}
	for (uint32_t i = 0; i < s->maxarenas; i++)
		want += s->allarenas[i].address && s->allarenas[i].nfreepools > 0;
	HL_EXPECT(r, n == want, "usable_arenas has %zu arenas, %zu have free pools", n, want);
	for (unsigned k = 0; k <= s->max_pools; k++) {
		const pl_arena_t *l = s->nfp2lasta[k];
		HL_EXPECT(r, !l || (l->address && l->nfreepools == k),
			  "nfp2lasta[%u] names an arena with %u free pools", k, l ? l->nfreepools : 0);
	}
}

int pools_check(void *st, hl_report_t *r)
{
	pl_state_t *s = st;
	int before = r->problems;
	hl_thread_t *by = pl_enter_here(s);
	uint64_t live = 0;
	for (uint32_t i = 0; i < s->maxarenas; i++)
		if (s->allarenas[i].address) {
			live++;
			pl_check_arena(s, &s->allarenas[i], r);
		}
	HL_EXPECT(r, live == s->narenas_currently_allocated,
		  "%llu arenas mapped but narenas_currently_allocated = %llu",
		  (unsigned long long)live, (unsigned long long)s->narenas_currently_allocated);
	pl_check_usedpools(s, r);
	pl_check_usable(s, r);
	pl_leave_here(s, by);
	hl_guest_check(&s->fallback, r);
	return r->problems - before;
}

/* ------------------------------------------------------------------ */
/* walker                                                              */

typedef struct pl_walk {
	hl_walk_fn fn;
	void *arg;
	int region;
} pl_walk_t;

static int pl_visit(pl_walk_t *w, const void *addr, size_t size, hl_block_state_t st,
		    unsigned cls)
{
	hl_block_t b = { addr, size, st, w->region, cls };
	return size ? w->fn(&b, w->arg) : 0;
}

/* Header, blocks, never-used tail and quantization remainder of a pool. */
static int pl_walk_pool(pl_state_t *s, const pl_pool_t *pool, pl_walk_t *w)
{
	uint64_t bits[PL_BITMAP_WORDS];
	unsigned c = pool->szidx;
	uint32_t stride = s->stride[c], cap = s->capacity[c];
	const char *base = pl_pool_base(s, pool);
	if (pl_free_bitmap(s, pool, bits, PL_BITMAP_WORDS) < 0)
		memset(bits, 0, sizeof bits);
	int stop = pl_visit(w, base, PL_POOL_OVERHEAD, HL_BLOCK_META, c);
	uint32_t i = 0;
	for (; !stop && i < cap && PL_POOL_OVERHEAD + i * stride < pool->nextoffset; i++)
		stop = pl_visit(w, base + PL_POOL_OVERHEAD + i * stride, stride,
				pl_bit(bits, i) ? HL_BLOCK_FREE : HL_BLOCK_LIVE, c);
	uint32_t used_end = PL_POOL_OVERHEAD + i * stride;
	if (!stop)
		stop = pl_visit(w, base + used_end, s->pool_size - used_end, HL_BLOCK_TOP, c);
	return stop;
}

static int pl_walk_arena(pl_state_t *s, const pl_arena_t *a, pl_walk_t *w)
{
	uint64_t fbits[PL_MAX_POOLS / 64];
	size_t off;
	w->region = hl_os_locate(s->os, (void *)a->address, &off);
	if (pl_freepool_bitmap(s, a, fbits, PL_MAX_POOLS / 64) < 0)
		memset(fbits, 0, sizeof fbits);
	size_t end = pl_carved_end(s, a);
	uintptr_t first = pl_arena_first(s, a);
	/* what an unaligned mapping loses before its first pool boundary */
	int stop = pl_visit(w, (const void *)a->address, first - a->address, HL_BLOCK_META, 0);
	if (!stop)
		stop = pl_visit(w, (const void *)first, (size_t)s->table_pools << s->pool_bits,
				HL_BLOCK_META, 0);
	for (size_t i = s->table_pools; !stop && i < end; i++) {
		const pl_pool_t *p = pl_pool_at(s, a, i);
		stop = pl_bit(fbits, i) ? pl_visit(w, pl_pool_base(s, p), s->pool_size, HL_BLOCK_FREE, 0)
					: pl_walk_pool(s, p, w);
	}
	if (!stop)
		stop = pl_visit(w, a->pool_address, a->address + s->arena_size -
				(uintptr_t)a->pool_address, HL_BLOCK_TOP, 0);
	return stop;
}

int pools_walk(void *st, hl_walk_fn fn, void *arg)
{
	pl_state_t *s = st;
	pl_walk_t w = { fn, arg, -1 };
	int stop = 0;
	hl_thread_t *by = pl_enter_here(s);
	for (uint32_t i = 0; !stop && i < s->maxarenas; i++)
		if (s->allarenas[i].address)
			stop = pl_walk_arena(s, &s->allarenas[i], &w);
	pl_leave_here(s, by);
	return stop ? stop : hl_guest_walk(&s->fallback, fn, arg);
}
