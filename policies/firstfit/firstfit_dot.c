/**
 * @file firstfit_dot.c
 * @brief The snapshot of `firstfit`: the blocks in address order as one
 *        strip, the free list as arrows in list order, and (next fit) the
 *        rover.
 *
 *   free list ──► [live 64][free 48][live 32][free 4016]
 *                           │  ▲               ▲
 *                           │  └─ rover        │
 *                           └──────────────────┘
 */
#include "config.h"
#include <stdio.h>
#include "firstfit.h"

/** Arrows drawn at most; a note says how many more there are. */
enum { FF_DOT_MAX_ARROWS = 256, FF_DOT_COLUMNS = 16 };

/** Port of block @p b: its offset from lo, so pictures are stable. */
static const char *ff_port(const ff_state_t *st, ff_block_t *b, char *buf, size_t len)
{
	snprintf(buf, len, "b%lx", (unsigned long)(ff_addr(b) - ff_lo(st)));
	return buf;
}

/** Draws the blocks; returns the address of the first one left out
 *  (hi when all fit in the picture). */
static uintptr_t ff_dot_blocks(ff_state_t *st, hl_dot_t *d)
{
	uintptr_t a = ff_lo(st), hi = ff_hi(st);
	char port[24];
	int cells = 0;

	for (; a < hi; a += ff_size(ff_at(a)), cells++) {
		ff_block_t *b = ff_at(a);

		if (cells == HL_DOT_MAX_CELLS - 1 || ff_size(b) < st->min)
			break;
		if (ff_is_live(b))
			hl_dot_block_cell(d, HL_BLOCK_LIVE, ff_payload(st, b), NULL, "live %zu", ff_size(b));
		else
			hl_dot_block_cell(d, HL_BLOCK_FREE, b, ff_port(st, b, port, sizeof port), "free %zu",
					  ff_size(b));
	}
	if (a < hi)
		hl_dot_cell(d, HL_BLOCK_META, NULL, "%zu more bytes not drawn", (size_t)(hi - a));
	return a;
}

static void ff_dot_heap(ff_state_t *st, hl_dot_t *d, uintptr_t *cut)
{
	char label[160], where[64];
	size_t blocks = st->nfree + st->nlive;

	snprintf(label, sizeof label, "program break at %s: %zu heap bytes, header %zu",
		 hl_dot_addr(d, (void *)ff_lo(st), where, sizeof where),
		 (size_t)(ff_hi(st) - ff_lo(st)), st->hdr);
	hl_dot_cluster_begin(d, label);
	hl_dot_strip_begin(d, "ffheap", "blocks in address order",
			   blocks > FF_DOT_COLUMNS ? FF_DOT_COLUMNS : 0);
	*cut = ff_dot_blocks(st, d);
	hl_dot_strip_end(d);
	hl_dot_cluster_end(d);
}

/** Arrows from the list head through the elements in list order,
 *  numbered by position so LIFO and FIFO lists read at a glance. */
static void ff_dot_list(ff_state_t *st, hl_dot_t *d, uintptr_t cut)
{
	char label[160], from[40] = "fflist", to[40], port[24];
	int arrows = 0;

	snprintf(label, sizeof label, "free list (%s order, %s fit): %zu blocks, %zu bytes",
		 ff_order_name(st->order), ff_fit_name(st->fit), st->nfree, st->free_bytes);
	hl_dot_list_node(d, "fflist", label);
	for (ff_block_t *x = st->head; x && ff_addr(x) < cut; x = ff_links(st, x)->next) {
		if (arrows == FF_DOT_MAX_ARROWS) {
			snprintf(label, sizeof label, "%zu more list links not drawn",
				 st->nfree - (size_t)arrows);
			hl_dot_note(d, "fflist_more", label);
			return;
		}
		snprintf(to, sizeof to, "ffheap:%s", ff_port(st, x, port, sizeof port));
		snprintf(label, sizeof label, "%d", arrows + 1);
		hl_dot_edge(d, from, to, HL_EDGE_LIST, label);
		snprintf(from, sizeof from, "%s", to);
		arrows++;
	}
}

void ff_snapshot(void *state, hl_dot_t *d)
{
	ff_state_t *st = state;
	uintptr_t cut;
	char to[40], port[24];

	pthread_mutex_lock(&st->lock);
	ff_dot_heap(st, d, &cut);
	ff_dot_list(st, d, cut);
	if (st->fit == FF_FIT_NEXT && st->rover && ff_addr(st->rover) < cut) {
		hl_dot_list_node(d, "ffrover", "rover: next fit starts here");
		snprintf(to, sizeof to, "ffheap:%s", ff_port(st, st->rover, port, sizeof port));
		hl_dot_edge(d, "ffrover", to, HL_EDGE_NEXT, NULL);
	}
	pthread_mutex_unlock(&st->lock);
}
