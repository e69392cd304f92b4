/*
 * The arena map of `pools`: CPython's radix tree (WITH_PYMALLOC_RADIX_TREE)
 * that answers "is this address inside one of our arenas?" in three loads.
 *
 * An address is cut, from the top, into a root index, a mid index, a bottom
 * index and the offset inside an arena-sized slot:
 *
 *     63            49 48           34 33         20 19              0
 *   ┌────────────────┬───────────────┬─────────────┬──────────────────┐
 *   │ top (15 bits)  │ mid (15 bits) │ bot (14)    │ offset in arena  │
 *   └────────────────┴───────────────┴─────────────┴──────────────────┘
 *   (figures for 1 MiB arenas: interior = (64 - arena_bits + 2) / 3.)
 *
 * The root is allocated at start-up; mid and bottom nodes when the first
 * arena below them appears, and they are never freed (as in CPython).  A
 * bottom entry holds tail_hi / tail_lo: an arena that starts at offset t of
 * a slot covers [t, end) of it (tail_hi = t, or -1 when t = 0) and [0, t) of
 * the next slot (tail_lo = t).  heaplab's arenas are arena-aligned, so only
 * the t = 0 case occurs, but the test is CPython's.
 *
 * Writers hold the policy lock; readers (free, owns) take none: node
 * pointers are published with release stores and read with acquire loads,
 * and an entry can only change for an arena that has no live block, which
 * no correct reader can be asking about.
 */
#include "config.h"
#include "pools.h"

static size_t pl_node_bytes(unsigned bits, size_t entry)
{
	return ((size_t)1 << bits) * entry;
}

size_t pl_map_root_bytes(const pl_state_t *s)
{
	return pl_node_bytes(s->map_top_bits, sizeof(void *));
}

size_t pl_map_mid_bytes(const pl_state_t *s)
{
	return s->map_mid_nodes * pl_node_bytes(s->map_mid_bits, sizeof(void *));
}

size_t pl_map_bot_bytes(const pl_state_t *s)
{
	return s->map_bot_nodes * pl_node_bytes(s->map_bot_bits, sizeof(pl_cover_t));
}

static void *pl_node_new(pl_state_t *s, size_t bytes)
{
	return hl_os_reserve_meta(s->os, hl_align_up(bytes, hl_os_page(s->os)));
}

int pl_map_init(pl_state_t *s)
{
	unsigned map_bits = PL_ADDRESS_BITS - s->arena_bits;
	unsigned interior = (map_bits + 2) / 3;
	s->map_top_bits = interior;
	s->map_mid_bits = interior;
	s->map_bot_bits = map_bits - 2 * interior;
	s->map_shift[0] = PL_ADDRESS_BITS - s->map_top_bits;
	s->map_shift[1] = s->arena_bits + s->map_bot_bits;
	s->map_shift[2] = s->arena_bits;
	s->map_mask[0] = s->arena_size - 1;          /* offset inside the arena slot */
	s->map_mask[1] = ((uintptr_t)1 << s->map_mid_bits) - 1;
	s->map_mask[2] = ((uintptr_t)1 << s->map_bot_bits) - 1;
	s->map_root = pl_node_new(s, pl_map_root_bytes(s));
	if (!s->map_root) {
		hl_set_error("pools: out of memory for the arena map");
		return -1;
	}
	return 0;
}

/* The bottom node covering @p a; with @p create, missing nodes are made. */
static pl_cover_t *pl_map_bot(pl_state_t *s, uintptr_t a, bool create)
{
	void **slot = &s->map_root[pl_i1(s, a)];
	void **mid = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	if (!mid) {
		if (!create || !(mid = pl_node_new(s, pl_node_bytes(s->map_mid_bits, sizeof(void *)))))
			return NULL;
		s->map_mid_nodes++;
		__atomic_store_n(slot, mid, __ATOMIC_RELEASE);
	}
	slot = &mid[pl_i2(s, a)];
	pl_cover_t *bot = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	if (!bot) {
		if (!create || !(bot = pl_node_new(s, pl_node_bytes(s->map_bot_bits, sizeof(pl_cover_t)))))
			return NULL;
		s->map_bot_nodes++;
		__atomic_store_n(slot, (void *)bot, __ATOMIC_RELEASE);
	}
	return bot;
}

int pl_map_mark(pl_state_t *s, uintptr_t base, bool used)
{
	pl_cover_t *bot = pl_map_bot(s, base, used);
	if (!bot)
		return used ? -1 : 0;
	int32_t tail = (int32_t)(base & (s->arena_size - 1));
	int32_t hi = used ? (tail == 0 ? -1 : tail) : 0;
	__atomic_store_n(&bot[pl_i3(s, base)].tail_hi, hi, __ATOMIC_RELEASE);
	if (tail == 0)
		return 0;
	pl_cover_t *next = pl_map_bot(s, base + s->arena_size, used);
	if (!next)
		return used ? -1 : 0;
	__atomic_store_n(&next[pl_i3(s, base + s->arena_size)].tail_lo, used ? tail : 0,
			 __ATOMIC_RELEASE);
	return 0;
}

