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

/* Writes s with the characters HTML-like labels reserve escaped. */
static void put_escaped(FILE *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '&': fputs("&amp;", out); break;
		case '"': fputs("&quot;", out); break;
		default: fputc(*s, out);
		}
	}
}

void hl_dot_begin(hl_dot_t *d, FILE *out, hl_heap_t *h, const char *title)
{
	memset(d, 0, offsetof(hl_dot_t, cells));
	d->out = out;
	d->heap = h;
	fprintf(out, "digraph heaplab {\n  graph [rankdir=LR, fontname=\"Helvetica\", fontsize=12, labelloc=t, label=<");
	put_escaped(out, title ? title : "heap");
	fprintf(out, " <FONT POINT-SIZE=\"10\">(%s)</FONT>>];\n", hl_heap_policy(h));
	fprintf(out, "  node [shape=plaintext, fontname=\"Helvetica\", fontsize=10];\n"
		     "  edge [fontname=\"Helvetica\", fontsize=9];\n");
}

static void legend(hl_dot_t *d)
{
	FILE *out = d->out;
	fprintf(out, "  subgraph cluster_legend {\n    label=\"legend\"; style=rounded; color=\"#adb5bd\";\n"
		     "    legend [label=<<TABLE BORDER=\"0\" CELLBORDER=\"1\" CELLSPACING=\"2\">");
	for (int s = 0; s < HL_BLOCK_NSTATES; s++)
		if (d->used_states & (1u << s))
			fprintf(out, "<TR><TD BGCOLOR=\"%s\" WIDTH=\"20\"> </TD><TD ALIGN=\"LEFT\">%s</TD></TR>",
				palette[s].fill, palette[s].name);
	fprintf(out, "</TABLE>>];\n");
	for (int e = 0; e < HL_EDGE_NKINDS; e++)
		if (d->used_edges & (1u << e)) {
			fprintf(out, "    legend_e%d_a [label=\"\", shape=point, width=0.01];\n"
				     "    legend_e%d_b [label=\"%s\"];\n"
				     "    legend_e%d_a -> legend_e%d_b [%s];\n",
				e, e, edge_styles[e].name, e, e, edge_styles[e].attrs);
		}
	fprintf(out, "  }\n");
}

void hl_dot_end(hl_dot_t *d)
{
	if (d->used_states == 0)
		d->used_states = 1u << HL_BLOCK_TOP;
	legend(d);
	fprintf(d->out, "}\n");
}

void hl_dot_cluster_begin(hl_dot_t *d, const char *label)
{
	fprintf(d->out, "  subgraph cluster_%d {\n    style=rounded; color=\"#495057\"; label=<", d->clusters++);
	put_escaped(d->out, label);
	fprintf(d->out, ">;\n");
}

void hl_dot_cluster_end(hl_dot_t *d)
{
	fprintf(d->out, "  }\n");
}

void hl_dot_strip_begin(hl_dot_t *d, const char *node, const char *label, int columns)
{
	snprintf(d->strip_node, sizeof d->strip_node, "%s", node);
	snprintf(d->strip_label, sizeof d->strip_label, "%s", label ? label : "");
	d->strip_columns = columns;
	d->ncells = 0;
	d->dropped = 0;
}

void hl_dot_cell(hl_dot_t *d, hl_block_state_t st, const char *port, const char *fmt, ...)
{
	if (d->ncells == HL_DOT_MAX_CELLS) {
		d->dropped++;
		return;
	}
	hl_dot_cell_t *c = &d->cells[d->ncells++];
	c->state = st;
	snprintf(c->port, sizeof c->port, "%s", port ? port : "");
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->label, sizeof c->label, fmt, ap);
	va_end(ap);
	d->used_states |= 1u << st;
}

static bool same_cell(const hl_dot_cell_t *a, const hl_dot_cell_t *b)
{
	return !a->port[0] && !b->port[0] && a->state == b->state && !strcmp(a->label, b->label);
}

static void emit_cell(hl_dot_t *d, const hl_dot_cell_t *c, int repeat)
{
	fprintf(d->out, "<TD BGCOLOR=\"%s\"", palette[c->state].fill);
	if (c->port[0])
		fprintf(d->out, " PORT=\"%s\"", c->port);
	fputc('>', d->out);
	put_escaped(d->out, c->label[0] ? c->label : " ");
	if (repeat > 1)
		fprintf(d->out, " &#215;%d", repeat);
	fprintf(d->out, "</TD>");
}

void hl_dot_strip_end(hl_dot_t *d)
{
	enum { FOLD_AT = 4 };
	FILE *out = d->out;
	fprintf(out, "    %s [label=<<TABLE BORDER=\"0\" CELLBORDER=\"1\" CELLSPACING=\"0\" CELLPADDING=\"3\">",
		d->strip_node);
	if (d->strip_label[0]) {
		fprintf(out, "<TR><TD BORDER=\"0\" ALIGN=\"LEFT\" COLSPAN=\"%d\">",
			d->strip_columns > 0 ? d->strip_columns : 1);
		put_escaped(out, d->strip_label);
		fprintf(out, "</TD></TR>");
	}
	fprintf(out, "<TR>");
	int col = 0;
	for (int i = 0; i < d->ncells;) {
		int run = 1;
		while (i + run < d->ncells && same_cell(&d->cells[i], &d->cells[i + run]))
			run++;
		int shown = run >= FOLD_AT ? 1 : run;
		for (int k = 0; k < shown; k++) {
			if (d->strip_columns > 0 && col == d->strip_columns) {
				fprintf(out, "</TR><TR>");
				col = 0;
			}
			emit_cell(d, &d->cells[i + k], run >= FOLD_AT ? run : 1);
			col++;
		}
		i += run;
	}
	if (d->ncells == 0)
		fprintf(out, "<TD> </TD>");
	if (d->dropped)
		fprintf(out, "<TD>... %d more</TD>", d->dropped);
	fprintf(out, "</TR></TABLE>>];\n");
	d->ncells = 0;
}

void hl_dot_list_node(hl_dot_t *d, const char *node, const char *label)
{
	fprintf(d->out, "    %s [shape=box, style=\"rounded\", label=<", node);
	put_escaped(d->out, label);
	fprintf(d->out, ">];\n");
}

void hl_dot_note(hl_dot_t *d, const char *node, const char *text)
{
	fprintf(d->out, "    %s [shape=plaintext, label=<", node);
	put_escaped(d->out, text);
	fprintf(d->out, ">];\n");
}

void hl_dot_edge(hl_dot_t *d, const char *from, const char *to, hl_dot_edge_kind_t kind,
		 const char *label)
{
	if (kind >= HL_EDGE_NKINDS)
		kind = HL_EDGE_LIST;
	d->used_edges |= 1u << kind;
	fprintf(d->out, "    %s -> %s [%s", from, to, edge_styles[kind].attrs);
	if (label && *label) {
		fprintf(d->out, ", label=<");
		put_escaped(d->out, label);
		fputc('>', d->out);
	}
	fprintf(d->out, "];\n");
}

const char *hl_dot_addr(hl_dot_t *d, const void *p, char *buf, size_t len)
{
	return hl_addr_name(d->heap, p, buf, len);
}
