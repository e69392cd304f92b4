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

static void legend(hl_dot_t *d)
{
	dot_printf(d, "  subgraph cluster_legend {\n    label=\"legend\"; style=rounded; color=\"#adb5bd\";\n"
		     "    legend [label=<<TABLE BORDER=\"0\" CELLBORDER=\"1\" CELLSPACING=\"2\">");
	for (int s = 0; s < HL_BLOCK_NSTATES; s++)
		if (d->used_states & (1u << s))
			dot_printf(d, "<TR><TD BGCOLOR=\"%s\" WIDTH=\"20\"> </TD><TD ALIGN=\"LEFT\">%s</TD></TR>",
				palette[s].fill, palette[s].name);
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
	legend(d);
	dot_printf(d, "}\n");
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
}

static hl_dot_cell_t *new_cell(hl_dot_t *d, hl_block_state_t st, const char *port)
{
	if (d->ncells == HL_DOT_MAX_CELLS) {
		d->dropped++;
		return NULL;
	}
	hl_dot_cell_t *c = &d->cells[d->ncells++];
	c->state = st;
	snprintf(c->port, sizeof c->port, "%s", port ? port : "");
	c->block = NULL;
	d->used_states |= 1u << st;
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

/* Whether @p b repeats @p a and may be folded into "label ×N".  A cell
 * that names its block is kept apart (the stepper outlines it) unless
 * the strip is so long that folding matters more. */
static bool same_cell(const hl_dot_t *d, const hl_dot_cell_t *a, const hl_dot_cell_t *b)
{
	enum { BLOCK_CELLS_UP_TO = 256 };
	bool named = (a->block || b->block) && d->ncells <= BLOCK_CELLS_UP_TO;
	return !a->port[0] && !b->port[0] && !named && a->state == b->state && !strcmp(a->label, b->label);
}

static void emit_cell(hl_dot_t *d, const hl_dot_cell_t *c, int repeat, bool name_block)
{
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
	dot_putc(d, '>');
	put_escaped(d, c->label[0] ? c->label : " ");
	if (repeat > 1)
		dot_printf(d, " &#215;%d", repeat);
	dot_printf(d, "</TD>");
}

void hl_dot_strip_end(hl_dot_t *d)
{
	enum { FOLD_AT = 4 };
	dot_printf(d, "    %s [label=<<TABLE BORDER=\"0\" CELLBORDER=\"1\" CELLSPACING=\"0\" CELLPADDING=\"3\">",
		d->strip_node);
	if (d->strip_label[0]) {
		dot_printf(d, "<TR><TD BORDER=\"0\" ALIGN=\"LEFT\" COLSPAN=\"%d\">",
			d->strip_columns > 0 ? d->strip_columns : 1);
		put_escaped(d, d->strip_label);
		dot_printf(d, "</TD></TR>");
	}
	dot_printf(d, "<TR>");
	int col = 0;
	for (int i = 0; i < d->ncells;) {
		int run = 1;
		while (i + run < d->ncells && same_cell(d, &d->cells[i], &d->cells[i + run]))
			run++;
		int shown = run >= FOLD_AT ? 1 : run;
		for (int k = 0; k < shown; k++) {
			if (d->strip_columns > 0 && col == d->strip_columns) {
				dot_printf(d, "</TR><TR>");
				col = 0;
			}
			emit_cell(d, &d->cells[i + k], run >= FOLD_AT ? run : 1, run < FOLD_AT);
			col++;
		}
		i += run;
	}
	if (d->ncells == 0)
		dot_printf(d, "<TD> </TD>");
	if (d->dropped)
		dot_printf(d, "<TD>... %d more</TD>", d->dropped);
	dot_printf(d, "</TR></TABLE>>];\n");
	d->ncells = 0;
}

void hl_dot_list_node(hl_dot_t *d, const char *node, const char *label)
{
	dot_printf(d, "    %s [shape=box, style=\"rounded\", label=<", node);
	put_escaped(d, label);
	dot_printf(d, ">];\n");
}

void hl_dot_note(hl_dot_t *d, const char *node, const char *text)
{
	dot_printf(d, "    %s [shape=plaintext, label=<", node);
	put_escaped(d, text);
	dot_printf(d, ">];\n");
}

void hl_dot_edge(hl_dot_t *d, const char *from, const char *to, hl_dot_edge_kind_t kind,
		 const char *label)
{
	if (kind >= HL_EDGE_NKINDS)
		kind = HL_EDGE_LIST;
	d->used_edges |= 1u << kind;
	dot_printf(d, "    %s -> %s [%s", from, to, edge_styles[kind].attrs);
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
