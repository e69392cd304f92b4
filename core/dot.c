/* Shared Graphviz helpers (see dot.h): the one palette, strips of cells
 * with long runs folded, list heads, edges and the legend. */
#include "config.h"
#include <stdarg.h>
#include <string.h>
#include "dot.h"
#include "heap_internal.h"

static const struct {
	const char *name, *fill;
} palette[HL_BLOCK_NSTATES] = {
	[HL_BLOCK_LIVE] = { "live", "#f4a261" },
	[HL_BLOCK_FREE] = { "free", "#90be6d" },
	[HL_BLOCK_CACHED] = { "cached", "#4d908e" },
	[HL_BLOCK_DIRTY] = { "dirty", "#f9c74f" },
	[HL_BLOCK_MUZZY] = { "muzzy", "#c9ada7" },
	[HL_BLOCK_RETURNED] = { "returned", "#e9ecef" },
	[HL_BLOCK_META] = { "metadata", "#adb5bd" },
	[HL_BLOCK_TOP] = { "top / never used", "#ffffff" },
	[HL_BLOCK_GUARD] = { "guard", "#6c757d" },
};

static const struct {
	const char *name, *attrs;
} edge_styles[HL_EDGE_NKINDS] = {
	[HL_EDGE_LIST] = { "free list", "color=\"#2d6a4f\"" },
	[HL_EDGE_CACHE] = { "thread cache", "color=\"#277da1\", style=bold" },
	[HL_EDGE_REMOTE] = { "remote frees", "color=\"#d62828\", style=dashed" },
	[HL_EDGE_OWNER] = { "owns", "color=\"#6c757d\", style=dotted, arrowhead=none" },
	[HL_EDGE_NEXT] = { "roving pointer", "color=\"#9d4edd\", style=dashed" },
};

const char *hl_block_state_color(hl_block_state_t st)
{
	return st < HL_BLOCK_NSTATES ? palette[st].fill : "#ffffff";
}

const char *hl_block_state_name(hl_block_state_t st)
{
	return st < HL_BLOCK_NSTATES ? palette[st].name : "?";
}

/* ---- the text buffer ----------------------------------------------------
 * A policy draws while it holds its locks, so nothing here may write to a
 * stream or allocate from a heap (under the preload library malloc is the
 * heap being drawn): the text grows in pages of the core's own
 * (hl_os_boot_alloc), and hl_dot_write hands it to stdio once the policy
 * has returned. */

/* Makes room for @p more bytes and the NUL; false (and d->failed) when the
 * page source refuses. */
static bool dot_room(hl_dot_t *d, size_t more)
{
	if (d->failed)
		return false;
	if (d->len + more + 1 <= d->cap)
		return true;
	size_t cap = d->cap ? d->cap : 64 << 10;
	while (cap < d->len + more + 1)
		cap *= 2;
	char *bigger = hl_os_boot_alloc(cap);
	if (!bigger) {
		d->failed = true;
		return false;
	}
	if (d->buf)
		memcpy(bigger, d->buf, d->len);
	hl_os_boot_free(d->buf, d->cap);
	d->buf = bigger;
	d->cap = cap;
	return true;
}

static void dot_putc(hl_dot_t *d, char c)
{
	if (dot_room(d, 1))
		d->buf[d->len++] = c;
}

static void dot_vprintf(hl_dot_t *d, const char *fmt, va_list ap)
{
	va_list copy;
	va_copy(copy, ap);
	int n = vsnprintf(NULL, 0, fmt, copy);
	va_end(copy);
	if (n > 0 && dot_room(d, (size_t)n)) {
		vsnprintf(d->buf + d->len, d->cap - d->len, fmt, ap);
		d->len += (size_t)n;
	}
}

static __attribute__((format(printf, 2, 3))) void dot_printf(hl_dot_t *d, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	dot_vprintf(d, fmt, ap);
	va_end(ap);
}

void hl_dot_raw(hl_dot_t *d, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	dot_vprintf(d, fmt, ap);
	va_end(ap);
}

int hl_dot_write(hl_dot_t *d, FILE *out)
{
	int rc = d->failed ? -1 : 0;
	if (!d->failed && d->len && fwrite(d->buf, 1, d->len, out) != d->len)
		rc = -1;
	hl_os_boot_free(d->buf, d->cap);
	d->buf = NULL;
	d->len = d->cap = 0;
	return rc;
}

/* Writes s with the characters HTML-like labels reserve escaped. */
static void put_escaped(hl_dot_t *d, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': dot_printf(d, "&lt;"); break;
		case '>': dot_printf(d, "&gt;"); break;
		case '&': dot_printf(d, "&amp;"); break;
		case '"': dot_printf(d, "&quot;"); break;
		default: dot_putc(d, *s);
		}
	}
}

void hl_dot_begin(hl_dot_t *d, hl_heap_t *h, const char *title)
{
	memset(d, 0, offsetof(hl_dot_t, cells));
	d->heap = h;
	dot_printf(d, "digraph heaplab {\n  graph [rankdir=LR, fontname=\"Helvetica\", fontsize=12, labelloc=t, label=<");
	put_escaped(d, title ? title : "heap");
	dot_printf(d, " <FONT POINT-SIZE=\"10\">(%s)</FONT>>];\n", hl_heap_policy(h));
	dot_printf(d, "  node [shape=plaintext, fontname=\"Helvetica\", fontsize=10];\n"
		     "  edge [fontname=\"Helvetica\", fontsize=9];\n");
}

/* ---- marks: edges into cells ----------------------------------------
 * A cell's label and a list head's label end in a placeholder, \x02 then
 * 'C' and "node:port" or 'H' and the node, then \x03; hl_dot_end replaces
 * each with the marks the edges given since have earned it. */

static int find_head(const hl_dot_t *d, const char *node)
{
	for (int i = 0; i < d->nheads; i++)
		if (!strcmp(d->heads[i].node, node))
			return i;
	return -1;
}

/* "A", "B", ..., "Z", "AA", ... for head @p i. */
static void head_letter(int i, char *buf)
{
	if (i < 26) {
		buf[0] = (char)('A' + i);
		buf[1] = 0;
	} else {
		buf[0] = (char)('A' + i / 26 - 1);
		buf[1] = (char)('A' + i % 26);
		buf[2] = 0;
	}
}

static void dot_append(hl_dot_t *d, const char *s, size_t n)
{
	if (dot_room(d, n)) {
		memcpy(d->buf + d->len, s, n);
		d->len += n;
	}
}

static void put_mark(hl_dot_t *d, int head, int seq)
{
	char letter[4];
	head_letter(head, letter);
	const hl_dot_head_t *h = &d->heads[head];
	dot_printf(d, " <B>%s", letter);
	if (h->nlinks > 1 && seq > 0)
		dot_printf(d, "%d", seq);
	dot_printf(d, "</B>");
}

static void resolve_marks(hl_dot_t *d)
{
	char *old = d->buf;
	size_t n = d->len, cap = d->cap;
	if (!old || d->failed || !memchr(old, '\x02', n))
		return;
	d->buf = NULL;
	d->len = d->cap = 0;
	for (size_t i = 0; i < n;) {
		const char *at = memchr(old + i, '\x02', n - i);
		size_t upto = at ? (size_t)(at - old) : n;
		dot_append(d, old + i, upto - i);
		if (!at)
			break;
		const char *end = memchr(at, '\x03', n - upto);
		if (!end)
			break;
		char key[80];
		snprintf(key, sizeof key, "%.*s", (int)(end - at - 2), at + 2);
		if (at[1] == 'H') {
			int h = find_head(d, key);
			if (h >= 0) {
				const char *color = strchr(edge_styles[d->heads[h].kind].attrs, '#');
				char letter[4];
				head_letter(h, letter);
				dot_printf(d, " <FONT COLOR=\"%.7s\"><B>&#8594; %s</B></FONT>", color, letter);
			}
		} else {
			for (int k = 0; k < d->nlinks; k++)
				if (!strcmp(d->links[k].target, key))
					put_mark(d, d->links[k].head, d->links[k].seq);
		}
		i = (size_t)(end - old) + 1;
	}
	hl_os_boot_free(old, cap);
}

void hl_dot_legend_note(hl_dot_t *d, const char *key, const char *meaning)
{
	for (int i = 0; i < d->nnotes; i++)
		if (!strcmp(d->notes[i][0], key))
			return;
	if (d->nnotes == HL_DOT_MAX_NOTES)
		return;
	snprintf(d->notes[d->nnotes][0], sizeof d->notes[0][0], "%s", key);
	snprintf(d->notes[d->nnotes][1], sizeof d->notes[0][1], "%s", meaning);
	d->nnotes++;
}

static void legend(hl_dot_t *d)
{
	dot_printf(d, "  subgraph cluster_legend {\n    label=\"legend\"; style=rounded; color=\"#adb5bd\";\n"
		     "    legend [label=<<TABLE BORDER=\"0\" CELLBORDER=\"1\" CELLSPACING=\"2\">");
	for (int s = 0; s < HL_BLOCK_NSTATES; s++)
		if (d->used_states & (1u << s))
			dot_printf(d, "<TR><TD BGCOLOR=\"%s\" WIDTH=\"20\"> </TD><TD ALIGN=\"LEFT\">%s</TD></TR>",
				palette[s].fill, palette[s].name);
	for (int e = 0; e < HL_EDGE_NKINDS; e++)
		if (d->used_marks & (1u << e))
			dot_printf(d, "<TR><TD BORDER=\"0\"><FONT COLOR=\"%.7s\"><B>&#8594; B</B></FONT></TD>"
				     "<TD ALIGN=\"LEFT\">%s: B1, B2, &#8230; mark what head B reaches, in order</TD></TR>",
				strchr(edge_styles[e].attrs, '#'), edge_styles[e].name);
	for (int i = 0; i < d->nnotes; i++) {
		dot_printf(d, "<TR><TD BORDER=\"0\"><B>");
		put_escaped(d, d->notes[i][0]);
		dot_printf(d, "</B></TD><TD ALIGN=\"LEFT\">");
		put_escaped(d, d->notes[i][1]);
		dot_printf(d, "</TD></TR>");
	}
	dot_printf(d, "</TABLE>>];\n");
	for (int e = 0; e < HL_EDGE_NKINDS; e++)
		if (d->used_edges & (1u << e)) {
			dot_printf(d, "    legend_e%d_a [label=\"\", shape=point, width=0.01];\n"
				     "    legend_e%d_b [label=\"%s\"];\n"
				     "    legend_e%d_a -> legend_e%d_b [%s];\n",
				e, e, edge_styles[e].name, e, e, edge_styles[e].attrs);
		}
	dot_printf(d, "  }\n");
}

void hl_dot_end(hl_dot_t *d)
{
	if (d->used_states == 0)
		d->used_states = 1u << HL_BLOCK_TOP;
	resolve_marks(d);
	legend(d);
	dot_printf(d, "}\n");
}

const char *hl_dot_count(unsigned long long n, char *buf, size_t len)
{
	char digits[32];
	int k = snprintf(digits, sizeof digits, "%llu", n), o = 0;
	for (int i = 0; i < k && (size_t)o + 2 < len; i++) {
		if (i && (k - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = 0;
	return buf;
}

const char *hl_dot_size(size_t bytes, char *buf, size_t len)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)bytes;
	int u = 0;
	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	if (u == 0 || v == (double)(unsigned long long)v)
		snprintf(buf, len, "%llu %s", (unsigned long long)v, unit[u]);
	else
		snprintf(buf, len, "%.1f %s", v, unit[u]);
	return buf;
}

void hl_dot_cluster_begin(hl_dot_t *d, const char *label)
{
	dot_printf(d, "  subgraph cluster_%d {\n    style=rounded; color=\"#495057\"; label=<", d->clusters++);
	put_escaped(d, label);
	dot_printf(d, ">;\n");
}

void hl_dot_cluster_end(hl_dot_t *d)
{
	dot_printf(d, "  }\n");
}

void hl_dot_strip_begin(hl_dot_t *d, const char *node, const char *label, int columns)
{
	snprintf(d->strip_node, sizeof d->strip_node, "%s", node);
	snprintf(d->strip_label, sizeof d->strip_label, "%s", label ? label : "");
	d->strip_columns = columns;
	d->ncells = 0;
	d->dropped = 0;
	d->dropped_bytes = 0;
	d->last_dropped = false;
}

/* Whether @p b repeats @p a and may be folded into "label ×N".  A cell
 * that names its block is kept apart (the stepper outlines it) unless
 * the strip is so long that folding matters more. */
static bool same_cell(const hl_dot_t *d, const hl_dot_cell_t *a, const hl_dot_cell_t *b)
{
	enum { BLOCK_CELLS_UP_TO = 256 };
	bool named = (a->block || b->block) && d->ncells <= BLOCK_CELLS_UP_TO;
	return !a->port[0] && !b->port[0] && !a->gap && !b->gap && !named && a->state == b->state &&
	       !strcmp(a->label, b->label);
}

/* A full strip folds its runs in place (each becomes one cell with a
 * count), so a heap of any size is drawn in HL_DOT_MAX_CELLS cells. */
static void fold_cells(hl_dot_t *d)
{
	int out = 0;
	for (int i = 0; i < d->ncells; i++) {
		hl_dot_cell_t *c = &d->cells[i];
		if (out && same_cell(d, &d->cells[out - 1], c)) {
			hl_dot_cell_t *run = &d->cells[out - 1];
			run->repeat += c->repeat;
			run->bytes += c->bytes;
			run->block = NULL;
			continue;
		}
		if (out != i)
			d->cells[out] = *c;
		out++;
	}
	d->ncells = out;
}

/* Says in place how many cells were left out since the last cell kept
 * ("… 97,960 cells not drawn (95.1 MiB)"), before a cell with a port. */
static void gap_cell(hl_dot_t *d)
{
	char n[32], sz[32];
	hl_dot_cell_t *g = &d->cells[d->ncells++];
	memset(g, 0, sizeof *g);
	g->state = HL_BLOCK_TOP;
	g->gap = true;
	g->repeat = 1;
	snprintf(g->label, sizeof g->label, "… %s %s not drawn%s%s%s", hl_dot_count(d->dropped, n, sizeof n),
		 d->dropped == 1 ? "cell" : "cells", d->dropped_bytes ? " (" : "",
		 d->dropped_bytes ? hl_dot_size(d->dropped_bytes, sz, sizeof sz) : "", d->dropped_bytes ? ")" : "");
	d->dropped = 0;
	d->dropped_bytes = 0;
}

static hl_dot_cell_t *new_cell(hl_dot_t *d, hl_block_state_t st, const char *port)
{
	d->used_states |= 1u << st;
	if (d->ncells >= HL_DOT_MAX_CELLS)
		fold_cells(d);
	/* a cell with a port may be where an edge ends: it is kept (with the
	 * cells left out before it said in place) while room remains */
	bool ported = port && *port;
	d->last_dropped = d->ncells >= HL_DOT_MAX_CELLS &&
			  (!ported || d->ncells + 2 > HL_DOT_MAX_CELLS + HL_DOT_PORT_CELLS);
	if (d->last_dropped) {
		d->dropped++;
		return NULL;
	}
	if (d->dropped)
		gap_cell(d);
	hl_dot_cell_t *c = &d->cells[d->ncells++];
	c->state = st;
	snprintf(c->port, sizeof c->port, "%s", port ? port : "");
	c->block = NULL;
	c->repeat = 1;
	c->bytes = 0;
	c->gap = false;
	return c;
}

static void vcell(hl_dot_t *d, hl_block_state_t st, const void *block, const char *port, const char *fmt,
		  va_list ap)
{
	hl_dot_cell_t *c = new_cell(d, st, port);
	if (!c)
		return;
	vsnprintf(c->label, sizeof c->label, fmt, ap);
	c->block = block;
	/* the last cell may now repeat the one before: fold at once when the
	 * strip is long (keeps runs of a huge heap in a few cells) */
	if (d->ncells > 256 + 1 && same_cell(d, &d->cells[d->ncells - 2], c)) {
		d->cells[d->ncells - 2].repeat += c->repeat;
		d->cells[d->ncells - 2].block = NULL;
		d->ncells--;
	}
}

void hl_dot_cell(hl_dot_t *d, hl_block_state_t st, const char *port, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vcell(d, st, NULL, port, fmt, ap);
	va_end(ap);
}

void hl_dot_block_cell(hl_dot_t *d, hl_block_state_t st, const void *block, const char *port,
		       const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vcell(d, st, block, port, fmt, ap);
	va_end(ap);
}

void hl_dot_run_cell(hl_dot_t *d, hl_block_state_t st, unsigned long count, size_t bytes, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	hl_dot_cell_t *c = new_cell(d, st, NULL);
	if (c) {
		vsnprintf(c->label, sizeof c->label, fmt, ap);
		c->repeat = count;
		c->bytes = bytes;
	}
	va_end(ap);
}

void hl_dot_cell_bytes(hl_dot_t *d, size_t bytes)
{
	if (d->last_dropped || !d->ncells) {
		d->dropped_bytes += d->last_dropped ? bytes : 0;
		return;
	}
	hl_dot_cell_t *c = &d->cells[d->ncells - 1];
	if (c->repeat > 1)   /* folded with the one before as it came */
		c->bytes += bytes;
	else
		c->bytes = bytes;
}

/* " ×62,481 (61.0 MiB)": what a folded run adds to its label. */
static void run_suffix(const hl_dot_cell_t *c, unsigned long repeat, size_t bytes, char *buf, size_t len)
{
	char n[32], sz[32];
	buf[0] = 0;
	(void)c;
	if (repeat > 1 && bytes)
		snprintf(buf, len, " &#215;%s (%s)", hl_dot_count(repeat, n, sizeof n), hl_dot_size(bytes, sz, sizeof sz));
	else if (repeat > 1)
		snprintf(buf, len, " &#215;%s", hl_dot_count(repeat, n, sizeof n));
}

/* Points a label of @p s takes at 10 points (Helvetica's mean advance),
 * with the cell's padding and border. */
static double text_width(const char *s)
{
	int chars = 0;
	for (; *s; s++)
		chars += ((unsigned char)*s & 0xC0) != 0x80;
	return chars * 5.8 + 10;
}

/* The cells of a strip as drawn, group by group: a run of FOLD_AT alike
 * cells or more (or of cells already folded) becomes one cell "label ×N";
 * two cells that alternate three times or more (a slab, a free extent, a
 * slab, ...) become one pair "(a | b) ×N". */
enum { FOLD_AT = 4, PAIRS_AT = 3 };

typedef struct group {
	int cells;               /* cells of d->cells it takes */
	int shown;               /* cells drawn for it: 1 or 2 when folded */
	int period;              /* 1, or 2 for a pair */
	unsigned long repeat[2]; /* what each drawn cell stands for */
	size_t bytes[2];
	bool fold;
} group_t;

static void group_at(const hl_dot_t *d, int i, group_t *g)
{
	int run = 1;
	while (i + run < d->ncells && same_cell(d, &d->cells[i], &d->cells[i + run]))
		run++;
	memset(g, 0, sizeof *g);
	g->period = 1;
	if (d->cells[i].gap) {   /* cells left out: drawn as their note */
		g->cells = g->shown = 1;
		return;
	}
	g->fold = run >= FOLD_AT;
	for (int k = 0; k < run; k++) {
		g->repeat[0] += d->cells[i + k].repeat;
		g->bytes[0] += d->cells[i + k].bytes;
		g->fold |= d->cells[i + k].repeat > 1;
	}
	if (!g->fold && run == 1 && i + 1 < d->ncells) {
		int pairs = 1;
		while (i + 2 * pairs + 1 < d->ncells && same_cell(d, &d->cells[i], &d->cells[i + 2 * pairs]) &&
		       same_cell(d, &d->cells[i + 1], &d->cells[i + 2 * pairs + 1]))
			pairs++;
		if (pairs >= PAIRS_AT && !same_cell(d, &d->cells[i], &d->cells[i + 1])) {
			g->period = 2;
			g->fold = true;
			g->cells = 2 * pairs;
			g->shown = 2;
			g->repeat[0] = g->repeat[1] = (unsigned long)pairs;
			for (int k = 0; k < 2 * pairs; k++)
				g->bytes[k % 2] += d->cells[i + k].bytes;
			return;
		}
	}
	g->cells = run;
	g->shown = g->fold ? 1 : run;
}

/* What group @p g draws as its @p k-th cell: the cell, its prefix and suffix. */
static const hl_dot_cell_t *group_cell(const hl_dot_t *d, int i, const group_t *g, int k, char *pre,
				       char *suffix, size_t len)
{
	pre[0] = 0;
	if (!g->fold) {
		suffix[0] = 0;
		return &d->cells[i + k];
	}
	const hl_dot_cell_t *c = &d->cells[i + k];
	if (g->period == 1) {
		run_suffix(c, g->repeat[0], g->bytes[0], suffix, len);
		return c;
	}
	char n[32], sz[32];
	if (k == 0) {
		snprintf(pre, 8, "(");
		suffix[0] = 0;
		if (g->bytes[0])
			snprintf(suffix, len, " %s", hl_dot_size(g->bytes[0], sz, sizeof sz));
	} else {
		snprintf(suffix, len, "%s%s) &#215;%s", g->bytes[1] ? " " : "",
			 g->bytes[1] ? hl_dot_size(g->bytes[1], sz, sizeof sz) : "", hl_dot_count(g->repeat[1], n, sizeof n));
	}
	return c;
}

static void emit_group_cell(hl_dot_t *d, const hl_dot_cell_t *c, const char *pre, const char *suffix, bool name_block)
{
	if (c->gap) {
		dot_printf(d, "<TD BORDER=\"0\">");
		put_escaped(d, c->label);
		dot_printf(d, "</TD>");
		return;
	}
	dot_printf(d, "<TD BGCOLOR=\"%s\"", palette[c->state].fill);
	if (c->port[0])
		dot_printf(d, " PORT=\"%s\"", c->port);
	if (c->block && name_block) {
		/* Graphviz names the cell's SVG group "a_" + ID only when the
		 * cell has a link; the stepper cancels the link's click. */
		char id[64], name[48];
		hl_block_id(d->heap, c->block, id, sizeof id);
		hl_addr_name(d->heap, c->block, name, sizeof name);
		dot_printf(d, " ID=\"%s\" HREF=\"#%s\" TOOLTIP=\"%s, %s\"", id, id, name,
			   hl_block_state_name(c->state));
	}
	dot_printf(d, ">%s", pre);
	put_escaped(d, c->label[0] ? c->label : " ");
	dot_printf(d, "%s", suffix);
	if (c->port[0])   /* the marks of the edges that end here (resolve_marks) */
		dot_printf(d, "\x02" "C%s:%s\x03", d->strip_node, c->port);
	dot_printf(d, "</TD>");
}

void hl_dot_strip_end(hl_dot_t *d)
{
	/* how many cells, how wide the widest */
	int shown = 0;
	double widest = 0;
	group_t g;
	char pre[8], suffix[96];
	for (int i = 0; i < d->ncells; i += g.cells) {
		group_at(d, i, &g);
		for (int k = 0; k < g.shown; k++) {
			const hl_dot_cell_t *c = group_cell(d, i, &g, k, pre, suffix, sizeof suffix);
			double w = text_width(c->label) + text_width(suffix) + (pre[0] ? 5.8 : 0) - 10 -
				   (strstr(suffix, "&#215;") ? 5 * 5.8 : 0) + (c->port[0] ? 24 : 0);
			widest = w > widest ? w : widest;
			shown++;
		}
	}
	int fit = (int)(HL_DOT_STRIP_PT / (widest > 1 ? widest : 1));
	fit = fit < 1 ? 1 : fit;
	int columns = d->strip_columns > 0 ? d->strip_columns : shown;
	if (columns > fit)
		columns = fit;
	if (columns > shown)
		columns = shown;
	if (columns < 1)
		columns = 1;
	if (columns > 1 && columns % 2 && columns < shown)
		columns--;   /* an even width keeps a folded pair on one row */
	dot_printf(d, "    %s [label=<<TABLE BORDER=\"0\" CELLBORDER=\"1\" CELLSPACING=\"0\" CELLPADDING=\"3\">",
		d->strip_node);
	if (d->strip_label[0]) {
		dot_printf(d, "<TR><TD BORDER=\"0\" ALIGN=\"LEFT\" COLSPAN=\"%d\">", columns);
		put_escaped(d, d->strip_label);
		dot_printf(d, "</TD></TR>");
	}
	dot_printf(d, "<TR>");
	int col = 0;
	for (int i = 0; i < d->ncells; i += g.cells) {
		group_at(d, i, &g);
		for (int k = 0; k < g.shown; k++) {
			if (col == columns) {
				dot_printf(d, "</TR><TR>");
				col = 0;
			}
			const hl_dot_cell_t *c = group_cell(d, i, &g, k, pre, suffix, sizeof suffix);
			emit_group_cell(d, c, pre, suffix, !g.fold);
			col++;
		}
	}
	if (d->ncells == 0)
		dot_printf(d, "<TD> </TD>");
	if (d->dropped) {
		char n[32], sz[32];
		if (col == columns)
			dot_printf(d, "</TR><TR>");
		dot_printf(d, "<TD BORDER=\"0\" COLSPAN=\"%d\">&#8230; %s more %s not drawn", columns,
			   hl_dot_count(d->dropped, n, sizeof n), d->dropped == 1 ? "cell" : "cells");
		if (d->dropped_bytes)
			dot_printf(d, " (%s)", hl_dot_size(d->dropped_bytes, sz, sizeof sz));
		dot_printf(d, "</TD>");
	}
	dot_printf(d, "</TR></TABLE>>];\n");
	d->ncells = 0;
}

void hl_dot_list_node(hl_dot_t *d, const char *node, const char *label)
{
	dot_printf(d, "    %s [shape=box, style=\"rounded\", label=<", node);
	put_escaped(d, label);
	dot_printf(d, "\x02" "H%s\x03>];\n", node);   /* its letter, if its edges end in cells */
}

void hl_dot_note(hl_dot_t *d, const char *node, const char *text)
{
	dot_printf(d, "    %s [shape=plaintext, label=<", node);
	put_escaped(d, text);
	dot_printf(d, ">];\n");
}

/* An edge into a cell becomes marks: the head's letter and the cell's
 * mark (see dot.h). */
static void mark_edge(hl_dot_t *d, const char *from, const char *to, hl_dot_edge_kind_t kind)
{
	int head = -1;
	if (strchr(from, ':'))   /* from a marked cell: the same head goes on */
		for (int k = d->nlinks; k-- > 0;)
			if (!strcmp(d->links[k].target, from)) {
				head = d->links[k].head;
				break;
			}
	if (head < 0)
		head = find_head(d, from);
	if (d->nlinks == HL_DOT_MAX_LINKS)   /* a head with a letter and no mark would mislead */
		return;
	if (head < 0) {
		if (d->nheads == HL_DOT_MAX_HEADS)
			return;
		head = d->nheads++;
		snprintf(d->heads[head].node, sizeof d->heads[head].node, "%s", from);
		d->heads[head].kind = (unsigned char)kind;
		d->heads[head].nlinks = 0;
	}
	hl_dot_link_t *l = &d->links[d->nlinks++];
	snprintf(l->target, sizeof l->target, "%s", to);
	l->head = (short)head;
	l->seq = ++d->heads[head].nlinks;
	d->used_marks |= 1u << d->heads[head].kind;
}

void hl_dot_edge(hl_dot_t *d, const char *from, const char *to, hl_dot_edge_kind_t kind,
		 const char *label)
{
	if (kind >= HL_EDGE_NKINDS)
		kind = HL_EDGE_LIST;
	if (strchr(to, ':')) {
		mark_edge(d, from, to, kind);
		return;
	}
	d->used_edges |= 1u << kind;
	/* from a cell to a node: from the cell's node, not across its cells */
	dot_printf(d, "    %.*s -> %s [%s", (int)strcspn(from, ":"), from, to, edge_styles[kind].attrs);
	if (label && *label) {
		dot_printf(d, ", label=<");
		put_escaped(d, label);
		dot_putc(d, '>');
	}
	dot_printf(d, "];\n");
}

const char *hl_dot_addr(hl_dot_t *d, const void *p, char *buf, size_t len)
{
	return hl_addr_name(d->heap, p, buf, len);
}
