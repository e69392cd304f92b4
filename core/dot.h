/**
 * @file dot.h
 * @brief Shared Graphviz helpers: one visual language for every policy.
 *
 * A snapshot is a DOT digraph the core opens and closes (with a legend);
 * the policy fills it with:
 *   - clusters (an arena, a segment, a pool group) — hl_dot_cluster_*;
 *   - strips: memory in address order as a row (or grid) of cells, one
 *     per block, coloured by hl_block_state_t — hl_dot_strip_* / hl_dot_cell.
 *     Runs of four or more identical cells with no port are drawn as one
 *     cell "label ×N", so a heap of thousands of blocks stays readable;
 *   - list heads (a bin, a free list, a tcache bin) — hl_dot_list_node —
 *     and edges from them — hl_dot_edge.  An edge into a cell ("node:port")
 *     is not drawn as an arrow, which would have to cross the cells
 *     between: the head gets a letter ("→ B") and the cells it reaches,
 *     in the order the edges were given, marks in the edge's colour
 *     ("B1", "B2", …; "B" alone for one cell).  An edge from a marked cell
 *     to another cell continues the same head's marks (a list followed
 *     link by link).  Edges between nodes are drawn as arrows.
 * A strip is wrapped into a grid no wider than about HL_DOT_STRIP_PT
 * points, so that a picture stays under about 1,600 pixels at any heap
 * size; a strip given more than HL_DOT_MAX_CELLS cells folds its runs as
 * it goes, and says how many cells (and, when its cells gave their
 * sizes, bytes) it could still not draw.  A cell with a port is kept even
 * then (up to HL_DOT_PORT_CELLS more), the cells left out before it said
 * in place, so that an edge's marks never point at a cell not drawn: a
 * policy gives ports only to the cells its edges end in.
 * Addresses are printed with hl_dot_addr as "region#k+0xoff", so the same
 * operations give the same picture on every run.
 *
 * Drawing without deadlocking, the one way for every policy: the policy
 * draws while it holds its own locks (the structures cannot change under
 * it), and every helper here only appends to a text buffer in pages of the
 * core's own — no stream, no allocation from any heap.  The core writes
 * the text out (hl_dot_write) after the policy's snapshot has returned and
 * released its locks.
 *
 *   ┌ arena 0 ─────────────────────────────────────┐
 *   │ [hdr][ live 48 ][ free 64 ][ live 32 ][ top ]│
 *   └──────────────────────────▲───────────────────┘
 *                  bin[4] ─────┘   (edge kind: list)
 */
#ifndef HL_DOT_H
#define HL_DOT_H

#include <stdbool.h>
#include <stdio.h>
#include "heaplab.h"

/** What an edge means; each kind has its own colour and style. */
typedef enum hl_dot_edge_kind {
	HL_EDGE_LIST = 0,   /**< a free list / bin link */
	HL_EDGE_CACHE,      /**< a thread cache holding a block */
	HL_EDGE_REMOTE,     /**< a cross-thread (remote) free list */
	HL_EDGE_OWNER,      /**< ownership: arena -> thread, heap -> page */
	HL_EDGE_NEXT,       /**< a roving pointer / "next fit starts here" */
	HL_EDGE_NKINDS
} hl_dot_edge_kind_t;

#define HL_DOT_MAX_CELLS 2048
#define HL_DOT_PORT_CELLS 256  /**< room past a full strip for cells with a port */
#define HL_DOT_STRIP_PT 900    /**< widest strip, in points (4/3 pixel each) */
#define HL_DOT_MAX_LINKS 1024  /**< edges into cells (marks) per picture */
#define HL_DOT_MAX_HEADS 128   /**< nodes whose edges end in cells */
#define HL_DOT_MAX_NOTES 8     /**< legend entries for a policy's letters */

typedef struct hl_dot_cell {
	hl_block_state_t state;
	char port[24];
	char label[48];
	const void *block;         /**< the block it draws (walker address), or NULL */
	unsigned long repeat;      /**< alike cells it stands for (folded as they came) */
	size_t bytes;              /**< bytes they stand for, 0 when not given */
	bool gap;                  /**< not a cell: "… N cells not drawn" here */
} hl_dot_cell_t;

/** An edge that ends in a cell, drawn as marks (see above). */
typedef struct hl_dot_link {
	char target[72];           /**< "node:port" */
	short head;                /**< index in heads */
	short seq;                 /**< 1, 2, ... along the head's edges */
} hl_dot_link_t;

typedef struct hl_dot_head {
	char node[72];
	unsigned char kind;        /**< hl_dot_edge_kind_t of its first edge */
	short nlinks;
} hl_dot_head_t;

typedef struct hl_dot {
	char *buf;                 /**< the DOT text so far (core pages, not a heap's) */
	size_t len, cap;           /**< bytes in buf, bytes it can hold */
	bool failed;               /**< out of memory for the text */
	hl_heap_t *heap;
	int clusters;              /**< clusters opened so far (for unique ids) */
	unsigned used_states;      /**< bit per hl_block_state_t drawn */
	unsigned used_edges;       /**< bit per hl_dot_edge_kind_t drawn */
	unsigned used_marks;       /**< bit per hl_dot_edge_kind_t drawn as marks */
	int nlinks, nheads, nnotes;
	hl_dot_link_t links[HL_DOT_MAX_LINKS];
	hl_dot_head_t heads[HL_DOT_MAX_HEADS];
	char notes[HL_DOT_MAX_NOTES][2][96]; /**< legend: a letter and what it means */
	/* the strip being built */
	char strip_node[48];
	char strip_label[128];
	int strip_columns;
	int ncells;
	hl_dot_cell_t cells[HL_DOT_MAX_CELLS + HL_DOT_PORT_CELLS];
	unsigned long dropped;     /**< cells beyond HL_DOT_MAX_CELLS, after folding */
	size_t dropped_bytes;      /**< the bytes those gave (hl_dot_cell_bytes) */
	bool last_dropped;         /**< the cell added last could not be kept */
} hl_dot_t;

void hl_dot_cluster_begin(hl_dot_t *d, const char *label);
void hl_dot_cluster_end(hl_dot_t *d);

/** Starts a strip node named @p node; @p columns > 0 wraps it as a grid. */
void hl_dot_strip_begin(hl_dot_t *d, const char *node, const char *label, int columns);
/** Adds one cell; @p port (may be NULL) lets edges point at it. */
void hl_dot_cell(hl_dot_t *d, hl_block_state_t st, const char *port, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/** Adds the cell of exactly one block, whose walker address is @p block
 *  (what hl_walk reports as hl_block_t.addr).  The cell carries the
 *  block in the SVG (an element whose id is hl_block_id, and a tooltip
 *  with hl_addr_name), so the stepper can find and highlight a block that
 *  changed; such cells are not folded into a run unless the strip has
 *  more than 256 cells (then a folded run names no block). */
void hl_dot_block_cell(hl_dot_t *d, hl_block_state_t st, const void *block, const char *port,
		       const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/** Gives the cell added last the @p bytes it stands for: a folded run
 *  then says its total ("1024 ×62,481 (61.0 MiB)"), and cells that could
 *  not be drawn say theirs. */
void hl_dot_cell_bytes(hl_dot_t *d, size_t bytes);
/** Adds one cell standing for @p count alike things (slabs, pages,
 *  spans) of @p bytes in all: drawn "label ×count (size)". */
void hl_dot_run_cell(hl_dot_t *d, hl_block_state_t st, unsigned long count, size_t bytes, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
void hl_dot_strip_end(hl_dot_t *d);
/** A legend entry for a letter or word the policy writes in its cells
 *  ("P": the chunk below is in use); the same key once per picture. */
void hl_dot_legend_note(hl_dot_t *d, const char *key, const char *meaning);
/** "62,481" (into @p buf, which is returned). */
const char *hl_dot_count(unsigned long long n, char *buf, size_t len);
/** "61.0 MiB", "3 KiB", "48 B" (into @p buf, which is returned). */
const char *hl_dot_size(size_t bytes, char *buf, size_t len);

/** A small box standing for a list head, a bin, a thread, a queue. */
void hl_dot_list_node(hl_dot_t *d, const char *node, const char *label);
/** A plain note (text without a box). */
void hl_dot_note(hl_dot_t *d, const char *node, const char *text);
/** An edge; endpoints are "node" or "node:port". */
void hl_dot_edge(hl_dot_t *d, const char *from, const char *to, hl_dot_edge_kind_t kind,
		 const char *label);

/** Appends raw DOT text (node attributes a helper does not cover). */
void hl_dot_raw(hl_dot_t *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/** "region#k+0xoff" for @p p (into @p buf, which is returned). */
const char *hl_dot_addr(hl_dot_t *d, const void *p, char *buf, size_t len);
/* hl_block_state_name and hl_block_state_color (the one palette) are
 * public: heaplab.h. */

/* used by the core */
/** Opens the graph of heap @p h in @p d (text kept in memory). */
void hl_dot_begin(hl_dot_t *d, hl_heap_t *h, const char *title);
void hl_dot_end(hl_dot_t *d);
/** Writes the text to @p out and frees it: after the policy has returned.
 *  0, or -1 when the text could not be kept or written. */
int hl_dot_write(hl_dot_t *d, FILE *out);
#endif
