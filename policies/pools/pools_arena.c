/*
 * Arenas and pools of `pools`: the slow paths of malloc and free, all run
 * with the policy lock held.
 *
 *   pl_alloc_from_new_pool  usedpools[c] is empty: take a pool from the
 *                           head of usable_arenas (a new arena if none)
 *   pl_insert_to_freepool   a pool became empty: arena bookkeeping, keeping
 *                           usable_arenas sorted, returning wholly free arenas
 */
#include "config.h"
#include <string.h>
#include "pools.h"

/* ------------------------------------------------------------------ */
/* arena descriptors                                                   */

/* Doubles allarenas.  Only called when usable_arenas and the unused list
 * are empty, so no list points into the old array (CPython relies on the
 * same fact when it reallocs `arenas`). */
static int pl_grow_arena_objects(pl_state_t *s)
{
	uint32_t n = s->maxarenas ? s->maxarenas * 2 : PL_ARENA_OBJECTS0;
	if (n <= s->maxarenas)
		return -1;
	size_t bytes = hl_align_up(n * sizeof(pl_arena_t), hl_os_page(s->os));
	pl_arena_t *a = hl_os_reserve_meta(s->os, bytes);
	if (!a)
		return -1;
	if (s->allarenas) {
		memcpy(a, s->allarenas, s->maxarenas * sizeof *a);
		hl_os_release(s->os, s->allarenas,
			      hl_align_up(s->maxarenas * sizeof *a, hl_os_page(s->os)));
	}
	for (uint32_t i = s->maxarenas; i < n; i++)
		a[i].nextarena = i + 1 < n ? &a[i + 1] : NULL;
	s->allarenas = a;
	s->unused_arena_objects = &a[s->maxarenas];
	s->maxarenas = n;
	return 0;
}

/* Maps one arena and describes it: CPython's new_arena(). */
static pl_arena_t *pl_new_arena(pl_state_t *s)
{
	if (!s->unused_arena_objects && pl_grow_arena_objects(s) != 0)
		return NULL;
	pl_arena_t *a = s->unused_arena_objects;
	void *base = hl_os_reserve(s->os, s->arena_size, s->arena_align, true);
	if (!base)
		return NULL;
	if (pl_map_mark(s, (uintptr_t)base, true) != 0) {
		hl_os_release(s->os, base, s->arena_size);
		return NULL;
	}
	HL_EV(s->heap, HL_EV_NEW, "arena (usable_arenas was empty)", a - s->allarenas, s->arena_size, base);
	s->unused_arena_objects = a->nextarena;
	a->address = (uintptr_t)base;
	a->freepools = NULL;
	/* headers:table: the first pools hold the headers, never carved */
	a->pool_address = (char *)pl_arena_first(s, a) + ((size_t)s->table_pools << s->pool_bits);
	a->nfreepools = s->max_pools - s->table_pools;
	if (pl_arena_lost_pool(s, a))  /* a page-aligned mapping: the bytes
					  before the first pool boundary and
					  after the last one are lost */
		a->nfreepools--;
	a->ntotalpools = a->nfreepools;
	a->nextarena = a->prevarena = NULL;
	s->narenas_currently_allocated++;
	s->ntimes_arena_allocated++;
	if (s->narenas_currently_allocated > s->narenas_highwater)
		s->narenas_highwater = s->narenas_currently_allocated;
	return a;
}

/* Unmaps a wholly free arena that is already off usable_arenas. */
static void pl_free_arena(pl_state_t *s, pl_arena_t *a)
{
	HL_EV(s->heap, HL_EV_RETIRE, "arena (all its pools free)", a - s->allarenas, s->arena_size, (void *)a->address);
	a->nextarena = s->unused_arena_objects;
	s->unused_arena_objects = a;
	pl_map_mark(s, a->address, false);
	hl_os_release(s->os, (void *)a->address, s->arena_size);
	a->address = 0;
	s->narenas_currently_allocated--;
}

/* ------------------------------------------------------------------ */
/* usable_arenas                                                       */

static void pl_unlink_arena(pl_state_t *s, pl_arena_t *a)
{
	if (a->prevarena)
		a->prevarena->nextarena = a->nextarena;
	else
		s->usable_arenas = a->nextarena;
	if (a->nextarena)
		a->nextarena->prevarena = a->prevarena;
}

static void pl_link_after(pl_arena_t *a, pl_arena_t *prev)
{
	a->prevarena = prev;
	a->nextarena = prev->nextarena;
	if (a->nextarena)
		a->nextarena->prevarena = a;
	prev->nextarena = a;
}

/* The head arena gives up one free pool: it stays the head (it had the
 * fewest) unless that was its last one. */
static void pl_head_loses_pool(pl_state_t *s)
{
	pl_arena_t *a = s->usable_arenas;
	if (s->nfp2lasta[a->nfreepools] == a)
		s->nfp2lasta[a->nfreepools] = NULL;
	if (a->nfreepools > 1)
		s->nfp2lasta[a->nfreepools - 1] = a;
	if (--a->nfreepools == 0) {          /* wholly allocated: leaves */
		s->usable_arenas = a->nextarena;
		if (s->usable_arenas)
			s->usable_arenas->prevarena = NULL;
		a->nextarena = a->prevarena = NULL;
	}
}

/* A pool from the head of usable_arenas: a cached free pool, else a
 * never-carved one. */
static pl_pool_t *pl_take_pool(pl_state_t *s)
{
	pl_arena_t *a = s->usable_arenas;
	pl_pool_t *pool = a->freepools;
	HL_EVENT(s->heap, HL_EV_LOOK, pool ? "arena at the head of usable_arenas (most used first): a cached free pool" : "arena at the head of usable_arenas (most used first): a never-used pool", a - s->allarenas, 0, 0, a->nfreepools, a->nfreepools - 1, NULL);
	if (pool) {
		a->freepools = pool->nextpool;
	} else {
		pool = pl_pool_of(s, a->pool_address);
		pool->arenaindex = (uint32_t)(a - s->allarenas);
		pool->szidx = PL_NO_CLASS;
		a->pool_address += s->pool_size;
	}
	pl_head_loses_pool(s);
	return pool;
}

/* ------------------------------------------------------------------ */
/* pools                                                               */

/* Puts @p pool first on usedpools[c] and hands out its first free block. */
static void *pl_start_pool(pl_state_t *s, pl_pool_t *pool, unsigned c)
{
	pl_used_push(s, pool, c);
	pool->ref.count = 1;
	HL_EV(s->heap, HL_EV_NEW, pool->szidx == c ? "pool first on usedpools[class] (same class as before: its list kept)" : "pool first on usedpools[class] (carved for this class)", c, s->stride[c], pl_pool_base(s, pool));
	if (pool->szidx == c) {          /* same class as before: list intact */
		void *bp = pool->freeblock;
		void *next = *(void **)bp;
		/* as pl_malloc_in: a link out of its pool was written over (a
		 * write after free); pymalloc would follow it and crash */
		if (HL_UNLIKELY(next && ((uintptr_t)next ^ (uintptr_t)bp) >= s->pool_size))
			hl_fatal(&hl_policy_pools, "free list smashed", bp);
		pool->freeblock = next;
		return bp;
	}
	uint32_t stride = s->stride[c];
	char *bp = pl_pool_base(s, pool) + PL_POOL_OVERHEAD;
	pool->szidx = c;
	pool->nextoffset = PL_POOL_OVERHEAD + 2 * stride;
	pool->maxnextoffset = (uint32_t)s->pool_size - stride;
	pool->freeblock = bp + stride;
	*(void **)pool->freeblock = NULL;
	return bp;
}

void *pl_alloc_from_new_pool(pl_state_t *s, unsigned c)
{
	if (HL_UNLIKELY(s->usable_arenas == NULL)) {
		pl_arena_t *a = pl_new_arena(s);
		if (!a)
			return NULL;
		s->usable_arenas = a;
		s->nfp2lasta[a->nfreepools] = a;
	}
	return pl_start_pool(s, pl_take_pool(s), c);
}

/* Moves @p a (now with nf free pools, previously nf - 1) to stay sorted;
 * @p lastnf was the last arena with nf - 1 free pools before the change. */
static void pl_resort(pl_state_t *s, pl_arena_t *a, pl_arena_t *lastnf)
{
	uint32_t nf = a->nfreepools;
	if (nf == 1) {                    /* was full: not listed; goes first */
		a->prevarena = NULL;
		a->nextarena = s->usable_arenas;
		if (s->usable_arenas)
			s->usable_arenas->prevarena = a;
		s->usable_arenas = a;
		if (!s->nfp2lasta[1])
			s->nfp2lasta[1] = a;
		return;
	}
	if (!s->nfp2lasta[nf])
		s->nfp2lasta[nf] = a;
	if (a == lastnf)                  /* already right of every nf - 1 */
		return;
	pl_unlink_arena(s, a);
	pl_link_after(a, lastnf);
}

void pl_insert_to_freepool(pl_state_t *s, pl_pool_t *pool)
{
	pl_used_unlink(pool);
	pl_arena_t *a = pl_arena_of_pool(s, pool);
	HL_EVENT(s->heap, HL_EV_MOVE, "pool empty: to its arena's freepools, arena", a - s->allarenas, 0, 0, a->nfreepools, a->nfreepools + 1, pl_pool_base(s, pool));
	pool->nextpool = a->freepools;
	a->freepools = pool;
	uint32_t nf = a->nfreepools;
	pl_arena_t *lastnf = s->nfp2lasta[nf];
	if (lastnf == a) {
		pl_arena_t *p = a->prevarena;
		s->nfp2lasta[nf] = p && p->nfreepools == nf ? p : NULL;
	}
	a->nfreepools = ++nf;
	if (nf == a->ntotalpools && a->nextarena) {
		pl_unlink_arena(s, a);        /* wholly free and not the last one */
		pl_free_arena(s, a);
		return;
	}
	pl_resort(s, a, lastnf);
}
