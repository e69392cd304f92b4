/*
 * Snapshot of `pools`: arenas as clusters with one cell per pool (class and
 * fill), a block map for the first pool of each of a few usedpools rings,
 * the usable_arenas order and the usedpools heads as lists, then the
 * fallback policy's own picture in a cluster of its own.
 *
 * Drawn as every policy draws (dot.h): under the lock, into the core's
 * text buffer, which the core writes out after the lock is released.  The
 * structures are first summarised in a pl_view_t, because a pool's cell
 * must know whether an edge will point at it (its port) before it is
 * drawn.  The view lives in a metadata region reserved at init (so
 * snapshots do not renumber the regions of later arenas); the lock
 * serialises its use.
 */
#include "config.h"
#include <stdio.h>
#include <string.h>
#include "pools.h"

enum {
	PL_DOT_ARENAS = 8,     /**< arenas drawn */
	PL_DOT_MAPS = 4,       /**< pools drawn block by block */
	PL_DOT_BLOCKS = 1024,  /**< blocks drawn per block map */
	PL_DOT_USABLE = 64,    /**< usable_arenas entries drawn */
};

enum pl_pool_kind { PL_UNCARVED, PL_FREE, PL_USED, PL_FULL, PL_TABLE };

typedef struct pl_vpool {
	uint8_t kind;          /**< enum pl_pool_kind */
	bool port;             /**< an edge points at it */
	uint16_t cls, count, cap;
	const void *base;      /**< a carved pool's first byte (as the walker gives a free pool) */
} pl_vpool_t;

typedef struct pl_varena {
	uint32_t index, nfree, ntotal;
	const void *address;
	pl_vpool_t pool[PL_MAX_POOLS];
} pl_varena_t;

typedef struct pl_vmap {
	int arena, pool;       /**< view arena slot and pool number */
	uint16_t cls, n;       /**< class and blocks drawn */
	const char *first;     /**< the pool's first block (as pl_walk_pool gives it) */
	uint32_t stride;       /**< bytes from one block to the next */
	uint8_t state[PL_DOT_BLOCKS];
} pl_vmap_t;

typedef struct pl_view {
	uint32_t narenas, nusable, nmaps;
	pl_varena_t arena[PL_DOT_ARENAS];
	uint32_t usable[PL_DOT_USABLE];        /**< arena indexes in list order */
	int head_arena[PL_MAX_CLASSES];        /**< view slot of usedpools head, -1 */
	int head_pool[PL_MAX_CLASSES];
	uint32_t ring_len[PL_MAX_CLASSES];
	pl_vmap_t map[PL_DOT_MAPS];
} pl_view_t;

/* ------------------------------------------------------------------ */
/* gathering (lock held)                                               */

static void pl_view_arena(const pl_state_t *s, const pl_arena_t *a, pl_varena_t *v)
{
	v->index = (uint32_t)(a - s->allarenas);
	v->address = (const void *)a->address;
	v->nfree = a->nfreepools;
	v->ntotal = a->ntotalpools;
	for (unsigned i = 0; i < pl_arena_slots(s, a); i++) {
		const pl_pool_t *p = pl_pool_at(s, a, i);
		pl_vpool_t *vp = &v->pool[i];
		memset(vp, 0, sizeof *vp);
		if (i < s->table_pools)
			vp->kind = PL_TABLE;
		if (i < s->table_pools || !pl_pool_is_carved(s, a, p))
			continue;
		vp->kind = p->ref.count == 0 || p->szidx >= s->nclasses ? PL_FREE
			 : p->ref.count == s->capacity[p->szidx] ? PL_FULL : PL_USED;
		vp->base = pl_pool_base(s, p);
		vp->cls = (uint16_t)p->szidx;
		vp->count = (uint16_t)p->ref.count;
		vp->cap = vp->kind == PL_FREE ? 0 : (uint16_t)s->capacity[p->szidx];
	}
}

/* View slot and pool number of @p pool, or -1 when its arena is not drawn. */
static int pl_view_find(const pl_state_t *s, const pl_view_t *v, const pl_pool_t *pool, int *pi)
{
	const pl_arena_t *a = pl_arena_of_pool(s, pool);
	for (uint32_t k = 0; k < v->narenas; k++)
		if (v->arena[k].index == pool->arenaindex) {
			*pi = (int)(((uintptr_t)pool - pl_arena_first(s, a)) >> s->header_bits);
			return (int)k;
		}
	return -1;
}

static void pl_view_blocks(const pl_state_t *s, const pl_pool_t *pool, pl_vmap_t *m)
{
	uint64_t bits[(PL_DOT_BLOCKS + 63) / 64 + (256 << 10) / HL_ALIGN / 64];
	int ok = pl_free_bitmap(s, pool, bits, sizeof bits / sizeof *bits) >= 0;
	uint32_t cap = s->capacity[pool->szidx], stride = s->stride[pool->szidx];
	m->cls = (uint16_t)pool->szidx;
	m->first = (const char *)pl_pool_base(s, pool) + PL_POOL_OVERHEAD;
	m->stride = stride;
	m->n = (uint16_t)(cap < PL_DOT_BLOCKS ? cap : PL_DOT_BLOCKS);
	for (uint32_t i = 0; i < m->n; i++) {
		bool untouched = PL_POOL_OVERHEAD + i * stride >= pool->nextoffset;
		bool free = ok && (bits[i / 64] >> (i % 64) & 1);
		m->state[i] = untouched ? HL_BLOCK_TOP : free ? HL_BLOCK_FREE : HL_BLOCK_LIVE;
	}
}

static void pl_view_heads(const pl_state_t *s, pl_view_t *v)
{
	for (unsigned c = 0; c < s->nclasses; c++) {
		const pl_pool_t *head = &s->usedpools[c], *p;
		v->head_arena[c] = -1;
		for (p = head->nextpool; p != head; p = p->nextpool)
			v->ring_len[c]++;
		if (head->nextpool == head)
			continue;
		int pi, k = pl_view_find(s, v, head->nextpool, &pi);
		if (k < 0)
			continue;
		v->head_arena[c] = k;
		v->head_pool[c] = pi;
		v->arena[k].pool[pi].port = true;
		if (v->nmaps < PL_DOT_MAPS) {
			pl_vmap_t *m = &v->map[v->nmaps++];
			m->arena = k;
			m->pool = pi;
			pl_view_blocks(s, head->nextpool, m);
		}
	}
}

static void pl_view_gather(const pl_state_t *s, pl_view_t *v)
{
	for (uint32_t i = 0; i < s->maxarenas && v->narenas < PL_DOT_ARENAS; i++)
		if (s->allarenas[i].address)
			pl_view_arena(s, &s->allarenas[i], &v->arena[v->narenas++]);
	for (const pl_arena_t *a = s->usable_arenas; a && v->nusable < PL_DOT_USABLE;
	     a = a->nextarena)
		v->usable[v->nusable++] = (uint32_t)(a - s->allarenas);
	pl_view_heads(s, v);
}

/* ------------------------------------------------------------------ */
/* drawing                                                             */

static void pl_draw_arena(const pl_state_t *s, hl_dot_t *d, const pl_varena_t *a)
{
	char label[96], node[32], addr[64];
	snprintf(label, sizeof label, "arena %u at %s: %u of %u pools free", a->index,
		 hl_dot_addr(d, a->address, addr, sizeof addr), a->nfree, a->ntotal);
	hl_dot_cluster_begin(d, label);
	snprintf(node, sizeof node, "pl_a%u", a->index);
	hl_dot_strip_begin(d, node, "pools (class size, used / blocks)", 16);
	for (unsigned i = 0; i < s->table_pools + a->ntotal; i++) {
		const pl_vpool_t *p = &a->pool[i];
		char port[16];
		snprintf(port, sizeof port, "p%u", i);
		const char *pt = p->port ? port : NULL;
		uint32_t size = pl_class_size(s, p->cls);
		if (p->kind == PL_TABLE)
			hl_dot_cell(d, HL_BLOCK_META, pt, "pool headers");
		else if (p->kind == PL_UNCARVED)
			hl_dot_cell(d, HL_BLOCK_TOP, pt, "never carved");
		else if (p->kind == PL_FREE)
			hl_dot_block_cell(d, HL_BLOCK_FREE, p->base, pt, "free pool");
		else
			hl_dot_cell(d, HL_BLOCK_LIVE, pt, "%uB %u/%u%s", size, p->count, p->cap,
				    p->kind == PL_FULL ? " full" : "");
	}
	hl_dot_strip_end(d);
	hl_dot_cluster_end(d);
}

static void pl_draw_map(const pl_state_t *s, hl_dot_t *d, const pl_view_t *v, int k)
{
	const pl_vmap_t *m = &v->map[k];
	const pl_varena_t *a = &v->arena[m->arena];
	char node[32], label[96], from[48];
	snprintf(node, sizeof node, "pl_m%d", k);
	snprintf(label, sizeof label, "blocks of pool %d in arena %u (%uB class)", m->pool,
		 a->index, pl_class_size(s, m->cls));
	hl_dot_strip_begin(d, node, label, 16);
	for (unsigned i = 0; i < m->n; i++)
		if (m->state[i] == HL_BLOCK_TOP)   /* never carved: one run for the walker too */
			hl_dot_cell(d, m->state[i], NULL, "%s", "");
		else
			hl_dot_block_cell(d, m->state[i], m->first + (size_t)i * m->stride, NULL, "%s",
					  m->state[i] == HL_BLOCK_LIVE ? "L" : "f");
	hl_dot_strip_end(d);
	snprintf(from, sizeof from, "pl_a%u:p%d", a->index, m->pool);
	hl_dot_edge(d, from, node, HL_EDGE_OWNER, NULL);   /* the strip's title says whose blocks */
}

/* usable_arenas in list order, written in its head (arrows from arena to
 * arena would put every arena in a column of its own). */
static void pl_draw_usable(hl_dot_t *d, const pl_view_t *v)
{
	char label[256];
	int n = snprintf(label, sizeof label, "usable_arenas (fewest free pools first):");
	for (uint32_t i = 0; i < v->nusable && n < (int)sizeof label - 24; i++)
		n += snprintf(label + n, sizeof label - (size_t)n, "%s arena %u", i ? "," : "", v->usable[i]);
	if (!v->nusable)
		snprintf(label + n, sizeof label - (size_t)n, " none");
	hl_dot_list_node(d, "pl_usable", label);
}

static void pl_draw_heads(const pl_state_t *s, hl_dot_t *d, const pl_view_t *v)
{
	for (unsigned c = 0; c < s->nclasses; c++) {
		if (v->head_arena[c] < 0)
			continue;
		char node[32], label[64], to[48];
		snprintf(node, sizeof node, "pl_used%u", c);
		snprintf(label, sizeof label, "usedpools[%u] %uB: %u pools", c,
			 pl_class_size(s, c), v->ring_len[c]);
		hl_dot_list_node(d, node, label);
		snprintf(to, sizeof to, "pl_a%u:p%d", v->arena[v->head_arena[c]].index,
			 v->head_pool[c]);
		hl_dot_edge(d, node, to, HL_EDGE_LIST, NULL);
	}
}

int pl_view_init(pl_state_t *s)
{
	s->view = hl_os_reserve_meta(s->os, hl_align_up(sizeof(pl_view_t), hl_os_page(s->os)));
	return s->view ? 0 : -1;
}

void pools_snapshot(void *st, hl_dot_t *d)
{
	pl_state_t *s = st;
	pl_view_t *v = s->view;
	hl_thread_t *by = pl_enter_here(s);
	memset(v, 0, sizeof *v);
	pl_view_gather(s, v);
	for (uint32_t k = 0; k < v->narenas; k++)
		pl_draw_arena(s, d, &v->arena[k]);
	for (uint32_t k = 0; k < v->nmaps; k++)
		pl_draw_map(s, d, v, (int)k);
	pl_draw_usable(d, v);
	pl_draw_heads(s, d, v);
	pl_leave_here(s, by);
	char label[64];
	snprintf(label, sizeof label, "fallback: %s (requests > %d bytes)", hl_guest_name(&s->fallback),
		 PL_THRESHOLD);
	hl_guest_snapshot(&s->fallback, d, label);
}
