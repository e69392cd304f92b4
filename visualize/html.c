/*
 * The stepper page: one HTML file that opens from disk with no network.
 * Its style and script (stepper.css, moves.js and stepper.js, compiled in
 * as strings by embed.awk) come inline; the frames follow as JavaScript
 * data, the pictures as the SVG that dot drew for them.  With several
 * policies, the lockstep page: a column per policy (lockstep.css,
 * moves.js and lockstep.js; visualize/lockstep.c).
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "vis.h"

/* From the generated stepper_assets.c. */
extern const char vis_asset_stepper_css[];
extern const char vis_asset_stepper_js[];
extern const char vis_asset_heapdiff_js[];
extern const char vis_asset_moves_js[];
extern const char vis_asset_lockstep_css[];
extern const char vis_asset_lockstep_js[];

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* The page's head: "heaplab WHAT: TRACE on POLICIES", with @p css. */
static void head(FILE *out, const char *what, const char *trace, const char *policies, const char *css)
{
	fprintf(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		     "<meta name=\"generator\" content=\"heaplab step\">\n<title>heaplab %s: ", what);
	vis_put_xml(out, base_name(trace));
	fputs(" on ", out);
	vis_put_xml(out, policies);
	fprintf(out, "</title>\n<style>\n%s</style>\n</head>\n", css);
}

/* How often a picture was kept. */
static void every_note(FILE *out, const vis_walk_t *w)
{
	fputs("<p id=\"every-note\">", out);
	if (w->every <= 1)
		fputs("A picture of the heap after every op.", out);
	else
		fprintf(out, "For a long trace the page keeps a picture every %zu ops and at each label "
			     "(%zu pictures); the statistics are exact after every op.", w->every, w->kept);
	fputs("</p>\n", out);
}

/* The banner's title and the start of its first line, up to the number of
 * ops: "heaplab: TRACE on NAMES[TAIL]", the configuration. */
static void banner_start(FILE *out, const char *trace, const char *id, const char *names, const char *tail,
			 const char *conf, size_t nops)
{
	fputs("<body>\n<header>\n<h1>heaplab: <span id=\"trace\">", out);
	vis_put_xml(out, base_name(trace));
	fprintf(out, "</span> on <span id=\"%s\">", id);
	vis_put_xml(out, names);
	fprintf(out, "</span>%s</h1>\n<p>configuration: <code>", tail);
	vis_put_xml(out, conf && *conf ? conf : "defaults");
	fprintf(out, "</code> &middot; %zu ops", nops);
}

static void banner(FILE *out, const vis_walk_t *w, const char *trace, const char *policy, const char *conf)
{
	banner_start(out, trace, "policy", policy, "", conf, w->nframes - 1);
	fputs("</p>\n", out);
	every_note(out, w);
	if (!w->result.ok && w->result.message[0]) {
		fputs("<p id=\"failure\">The replay stopped: ", out);
		vis_put_xml(out, w->result.message);
		fputs("</p>\n", out);
	}
	fputs("</header>\n", out);
}

/* The buttons and boxes that move through the ops (both pages). */
static void moves(FILE *out)
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
	      "<span class=\"sep\"></span>\n",
	      out);
}

static void controls(FILE *out)
{
	moves(out);
	fputs("<form id=\"compare-form\"><label>compare with step <input id=\"compare-op\" "
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

/* "[text,line,label": the op of frame @p f (both pages). */
static void op_data(FILE *out, const vis_frame_t *f)
{
	fputc('[', out);
	vis_json_string(out, f->text);
	fprintf(out, ",%u,", f->line);
	if (f->label)
		vis_json_string(out, f->label);
	else
		fputs("null", out);
}

static void frame_data(FILE *out, const vis_frame_t *f, size_t picture)
{
	op_data(out, f);
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
	head(out, "stepper", trace, policy, vis_asset_stepper_css);
	banner(out, w, trace, policy, conf);
	controls(out);
	view(out);
	if (data(out, w, svgs) < 0)
		return -1;
	fprintf(out, "<script>\n%s</script>\n<script>\n%s</script>\n<script>\n%s</script>\n</body>\n</html>\n",
		vis_asset_heapdiff_js, vis_asset_moves_js, vis_asset_stepper_js);
	return ferror(out) ? -1 : 0;
}

/* ---- the lockstep page: a column per policy ------------------------------ */

static const char *const rule_text[VIS_NRULES] = {
	[VIS_RULE_OS] = "an OS call in one column, none in another",
	[VIS_RULE_REUSE] = "a freed block&rsquo;s bytes reused in one column, not in another",
	[VIS_RULE_COMMITTED] = "committed bytes changing, the columns apart by more than N %",
};

static void lockstep_banner(FILE *out, const vis_lockstep_t *ls, const char *trace, const char *policies,
			    const char *conf)
{
	banner_start(out, trace, "policies", policies, ", in lockstep", conf, ls->nframes - 1);
	fputs(" &middot; each column replays the trace on its own heap, on the trace&rsquo;s clock</p>\n", out);
	every_note(out, &ls->col[0].walk);
	for (size_t c = 0; c < ls->ncols; c++) {
		const vis_walk_t *w = &ls->col[c].walk;
		if (w->result.ok || !w->result.message[0])
			continue;
		fputs("<p class=\"failure\">", out);
		vis_put_xml(out, ls->col[c].policy);
		fputs(": the replay stopped: ", out);
		vis_put_xml(out, w->result.message);
		fputs("</p>\n", out);
	}
	fputs("</header>\n", out);
}

static void lockstep_controls(FILE *out, vis_rule_t rule, double pct)
{
	moves(out);
	fputs("<label>divergence: <select id=\"rule\" title=\"what makes the columns differ\">", out);
	for (int r = 0; r < VIS_NRULES; r++)
		fprintf(out, "<option value=\"%s\"%s>%s</option>", vis_rule_name((vis_rule_t)r),
			r == (int)rule ? " selected" : "", rule_text[r]);
	fprintf(out, "</select></label>\n<label>N <input id=\"pct\" size=\"4\" value=\"%g\" "
		     "title=\"the committed rule&rsquo;s N, in per cent\"> %%</label>\n"
		     "<button id=\"prev-div\" title=\"previous divergence (shift+d)\">previous divergence</button>\n"
		     "<button id=\"next-div\" title=\"next divergence (d)\">next divergence</button>\n"
		     "<span class=\"keys\">keys: &larr; &rarr; n p, Home, End, space, g, d, D</span>\n</div>\n"
		     "<p id=\"div-note\"></p>\n",
		pct);
}

static void lockstep_view(FILE *out)
{
	fputs("<main>\n<nav id=\"ops\"><ol id=\"ops-list\"></ol></nav>\n<section id=\"view\">\n"
	      "<p id=\"now\"><span id=\"now-what\">after op</span> <b id=\"step-index\">0</b>: "
	      "<code id=\"op-text\"></code> <span id=\"op-line\"></span> <b id=\"op-label\"></b></p>\n"
	      "<div id=\"columns\"></div>\n</section>\n</main>\n",
	      out);
}

/* One column's frame: [live, peak, committed, resident, utilization, OS
 * calls, picture, frame of that picture, reused, reused id, address, cell]. */
static void column_step(FILE *out, const vis_frame_t *f, const vis_lockstep_op_t *o, size_t picture)
{
	fprintf(out, "[%.0f,%.0f,%.0f,%.0f,%.6f,%.0f,%zu,%zu,%d,%ld,", f->st.live, f->st.peak, f->st.committed,
		f->st.resident, f->st.util, f->st.oscalls, picture, f->diagram, o->reused, o->reused_id);
	vis_json_string(out, o->addr);
	fputc(',', out);
	vis_json_string(out, o->block_id);
	fputc(']', out);
}

static int column_data(FILE *out, const vis_lockstep_column_t *col, char *const *svgs)
{
	const vis_walk_t *w = &col->walk;
	size_t *rank = calloc(w->nframes + 1, sizeof *rank);
	if (!rank)
		return -1;
	for (size_t i = 0, r = 0; i < w->nframes; i++)
		if (w->frames[i].dot)
			rank[i] = r++;
	fputs("{\"policy\":", out);
	vis_json_string(out, col->policy);
	fputs(",\"stopped\":", out);
	if (w->result.ok || !w->result.message[0])
		fputs("null", out);
	else
		vis_json_string(out, w->result.message);
	fputs(",\n\"steps\":[", out);
	for (size_t i = 0; i < w->nframes; i++) {
		fputs(i ? ",\n" : "\n", out);
		column_step(out, &w->frames[i], &col->op[i], rank[w->frames[i].diagram]);
	}
	fputs("],\n\"explain\":[", out);
	for (size_t i = 0; i < w->nframes; i++) {
		fputs(i ? ",\n" : "\n", out);
		vis_json_string(out, w->frames[i].explain ? w->frames[i].explain : "");
	}
	fputs("],\n\"svgs\":[", out);
	for (size_t i = 0; i < w->kept; i++) {
		fputs(i ? ",\n" : "\n", out);
		vis_json_string(out, svgs[i]);
	}
	fputs("]}", out);
	free(rank);
	return 0;
}

/* The ops (from the column that went furthest) and every column. */
static int lockstep_data(FILE *out, const vis_lockstep_t *ls, char **const *svgs, vis_rule_t rule, double pct)
{
	const vis_walk_t *longest = &ls->col[0].walk;
	for (size_t c = 1; c < ls->ncols; c++)
		if (ls->col[c].walk.nframes > longest->nframes)
			longest = &ls->col[c].walk;
	fprintf(out, "<script>\nvar HL_EVERY = %zu;\nvar HL_RULE = \"%s\";\nvar HL_PCT = %g;\nvar HL_OPS = [\n",
		longest->every, vis_rule_name(rule), pct);
	for (size_t i = 0; i < longest->nframes; i++) {
		op_data(out, &longest->frames[i]);
		fputs(i + 1 < longest->nframes ? "],\n" : "]\n", out);
	}
	fputs("];\nvar HL_COLUMNS = [\n", out);
	for (size_t c = 0; c < ls->ncols; c++) {
		if (column_data(out, &ls->col[c], svgs[c]) < 0)
			return -1;
		fputs(c + 1 < ls->ncols ? ",\n" : "\n", out);
	}
	fputs("];\n</script>\n", out);
	return 0;
}

int vis_html_write_lockstep(FILE *out, const vis_lockstep_t *ls, char **const *svgs, const char *trace,
			    const char *conf, vis_rule_t rule, double pct)
{
	char *policies = NULL;
	size_t len = 0;
	FILE *names = open_memstream(&policies, &len);
	if (!names)
		return -1;
	for (size_t c = 0; c < ls->ncols; c++)
		fprintf(names, "%s%s", c ? ", " : "", ls->col[c].policy);
	if (fclose(names) != 0)
		return -1;
	head(out, "lockstep", trace, policies, vis_asset_lockstep_css);
	lockstep_banner(out, ls, trace, policies, conf);
	free(policies);
	lockstep_controls(out, rule, pct);
	lockstep_view(out);
	if (lockstep_data(out, ls, svgs, rule, pct) < 0)
		return -1;
	fprintf(out, "<script>\n%s</script>\n<script>\n%s</script>\n</body>\n</html>\n", vis_asset_moves_js,
		vis_asset_lockstep_js);
	return ferror(out) ? -1 : 0;
}
