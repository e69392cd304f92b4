/*
 * The stepper page: one HTML file that opens from disk with no network.
 * Its style and script (stepper.css, stepper.js, compiled in as strings
 * by embed.awk) come inline; the frames follow as JavaScript data, the
 * pictures as the SVG that dot drew for them.
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "vis.h"

/* From the generated stepper_assets.c. */
extern const char vis_asset_stepper_css[];
extern const char vis_asset_stepper_js[];
extern const char vis_asset_heapdiff_js[];

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

static void head(FILE *out, const char *trace, const char *policy)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"generator\" content=\"heaplab step\">\n<title>heaplab stepper: ", out);
	vis_put_xml(out, base_name(trace));
	fputs(" on ", out);
	vis_put_xml(out, policy);
	fprintf(out, "</title>\n<style>\n%s</style>\n</head>\n", vis_asset_stepper_css);
}

static void banner(FILE *out, const vis_walk_t *w, const char *trace, const char *policy, const char *conf)
{
	fputs("<body>\n<header>\n<h1>heaplab: <span id=\"trace\">", out);
	vis_put_xml(out, base_name(trace));
	fputs("</span> on <span id=\"policy\">", out);
	vis_put_xml(out, policy);
	fputs("</span></h1>\n<p>configuration: <code>", out);
	vis_put_xml(out, conf && *conf ? conf : "defaults");
	fprintf(out, "</code> &middot; %zu ops</p>\n<p id=\"every-note\">", w->nframes - 1);
	if (w->every <= 1)
		fputs("A picture of the heap after every op.", out);
	else
		fprintf(out, "For a long trace the page keeps a picture every %zu ops and at each label "
			     "(%zu pictures); the statistics are exact after every op.", w->every, w->kept);
	fputs("</p>\n", out);
	if (!w->result.ok && w->result.message[0]) {
		fputs("<p id=\"failure\">The replay stopped: ", out);
		vis_put_xml(out, w->result.message);
		fputs("</p>\n", out);
	}
	fputs("</header>\n", out);
}

static void controls(FILE *out)
{
	fputs("<div id=\"controls\">\n"
	      "<button id=\"first\" title=\"first (Home)\">first</button>\n"
	      "<button id=\"prev\" title=\"previous (left arrow, p)\">previous</button>\n"
	      "<button id=\"play\" title=\"play / pause (space)\">play</button>\n"
	      "<button id=\"next\" title=\"next (right arrow, n)\">next</button>\n"
	      "<button id=\"last\" title=\"last (End)\">last</button>\n<span class=\"sep\"></span>\n"
	      "<form id=\"jump-form\"><label>op or label <input id=\"jump-op\" size=\"8\" "
	      "title=\"an op number or a label (g)\"></label> <button id=\"jump-go\">go</button></form>\n"
	      "<label>label <select id=\"jump-label\"><option value=\"\">&mdash;</option></select></label>\n"
	      "<span class=\"sep\"></span>\n<form id=\"compare-form\"><label>compare with step <input id=\"compare-op\" "
	      "size=\"6\" title=\"a step number: the changes between it and the shown step (c)\"></label> "
	      "<button id=\"compare-go\">compare</button></form>\n"
	      "<button id=\"compare-off\" title=\"back to what each op changed\">op by op</button>\n"
	      "<span class=\"keys\">keys: &larr; &rarr; n p, Home, End, space, g, c</span>\n</div>\n",
	      out);
}

static void view(FILE *out)
{
	fputs("<main>\n<nav id=\"ops\"><ol id=\"ops-list\"></ol></nav>\n<section id=\"view\">\n"
	      "<p id=\"now\"><span id=\"now-what\">after op</span> <b id=\"step-index\">0</b>: "
	      "<code id=\"op-text\"></code> "
	      "<span id=\"op-line\"></span> <b id=\"op-label\"></b></p>\n"
	      "<table id=\"stats\"><tr><th>live requested</th><th>peak requested</th><th>committed (heap)</th>"
	      "<th>resident</th><th>utilization</th>"
	      "<th title=\"mmap, munmap, madvise, mprotect, brk and mremap calls, including those that map "
	      "the allocator's own bookkeeping (counted in no column above): the reason for calls at op 0\">"
	      "OS calls (bookkeeping too)</th></tr>\n"
	      "<tr><td id=\"stat-live\"></td><td id=\"stat-peak\"></td><td id=\"stat-committed\"></td>"
	      "<td id=\"stat-resident\"></td><td id=\"stat-util\"></td><td id=\"stat-oscalls\"></td></tr></table>\n"
	      "<div id=\"changes\"><p id=\"changes-what\"></p><ul id=\"changes-list\"></ul>\n"
	      "<p id=\"explain-what\">The steps the policy took:</p><pre id=\"explain\"></pre></div>\n"
	      "<div id=\"diagram\"></div>\n<p id=\"diagram-note\"></p>\n</section>\n</main>\n",
	      out);
}

static void frame_data(FILE *out, const vis_frame_t *f, size_t picture)
{
	fputc('[', out);
	vis_json_string(out, f->text);
	fprintf(out, ",%u,", f->line);
	if (f->label)
		vis_json_string(out, f->label);
	else
		fputs("null", out);
	fprintf(out, ",%.0f,%.0f,%.0f,%.0f,%.6f,%.0f,%zu,%zu]", f->st.live, f->st.peak, f->st.committed,
		f->st.resident, f->st.util, f->st.oscalls, picture, f->diagram);
}

static void block_data(FILE *out, const vis_block_t *b)
{
	fputc('[', out);
	vis_json_string(out, b->name);
	fprintf(out, ",%zu,%d]", b->size, (int)b->state);
}

/* What each op changed in the block list (heapdiff.js reads it). */
static void deltas(FILE *out, const vis_walk_t *w)
{
	if (!w->blocks)
		return;
	fputs("var HL_STATES = [", out);
	for (int s = 0; s < HL_BLOCK_NSTATES; s++) {
		vis_json_string(out, hl_block_state_name((hl_block_state_t)s));
		fputs(s + 1 < HL_BLOCK_NSTATES ? "," : "];\nvar HL_DELTAS = [\n", out);
	}
	for (size_t i = 0; i < w->nframes; i++) {
		const vis_delta_t *d = &w->frames[i].delta;
		fputs("[[", out);
		for (size_t k = 0; k < d->ngone; k++) {
			if (k)
				fputc(',', out);
			vis_json_string(out, d->gone[k].name);
		}
		fputs("],[", out);
		for (size_t k = 0; k < d->ncame; k++) {
			if (k)
				fputc(',', out);
			block_data(out, &d->came[k]);
		}
		fputs(i + 1 < w->nframes ? "]],\n" : "]]\n", out);
	}
	fputs("];\nvar HL_EXPLAIN = [\n", out);
	for (size_t i = 0; i < w->nframes; i++) {
		vis_json_string(out, w->frames[i].explain ? w->frames[i].explain : "");
		fputs(i + 1 < w->nframes ? ",\n" : "\n", out);
	}
	fputs("];\n", out);
}

/* The frames and pictures as script data; a frame names its picture by
 * its rank among the kept frames. */
static int data(FILE *out, const vis_walk_t *w, char *const *svgs)
{
	size_t *rank = calloc(w->nframes, sizeof *rank);
	if (!rank)
		return -1;
	for (size_t i = 0, r = 0; i < w->nframes; i++)
		if (w->frames[i].dot)
			rank[i] = r++;
	fprintf(out, "<script>\nvar HL_EVERY = %zu;\nvar HL_STEPS = [\n", w->every);
	for (size_t i = 0; i < w->nframes; i++) {
		frame_data(out, &w->frames[i], rank[w->frames[i].diagram]);
		fputs(i + 1 < w->nframes ? ",\n" : "\n", out);
	}
	fputs("];\nvar HL_SVGS = [\n", out);
	for (size_t i = 0; i < w->kept; i++) {
		vis_json_string(out, svgs[i]);
		fputs(i + 1 < w->kept ? ",\n" : "\n", out);
	}
	fputs("];\n", out);
	deltas(out, w);
	fputs("</script>\n", out);
	free(rank);
	return 0;
}

int vis_html_write(FILE *out, const vis_walk_t *w, char *const *svgs, const char *trace,
		   const char *policy, const char *conf)
{
	head(out, trace, policy);
	banner(out, w, trace, policy, conf);
	controls(out);
	view(out);
	if (data(out, w, svgs) < 0)
		return -1;
	fprintf(out, "<script>\n%s</script>\n<script>\n%s</script>\n</body>\n</html>\n", vis_asset_heapdiff_js,
		vis_asset_stepper_js);
	return ferror(out) ? -1 : 0;
}
