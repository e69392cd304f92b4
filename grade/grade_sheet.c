/* The score sheet: the totals of the traces, the points of each part, and
 * the sheet as a table or as one JSON object. */
#include "config.h"
#include <string.h>
#include "grade.h"

typedef struct totals {
	int correct, total, hidden_correct, hidden_total;
	int scored_util, scored_tput, counted;
	double util_sum, ops, instr, ref_ops, ref_instr;
	double util, ipo, ref_ipo, ratio, index;
	double pts_correct, pts_perf, pts_checker, pts_total;
} totals_t;

/* Instructions per operation of a counted run, 0 when not counted. */
static double ipo_of(const gr_run_t *r)
{
	return r->counted && r->ops ? (double)r->instructions / (double)r->ops : 0;
}

static void add_row(totals_t *s, const gr_row_t *w)
{
	s->total++;
	s->correct += w->mine.ok;
	s->hidden_total += w->hidden;
	s->hidden_correct += w->hidden && w->mine.ok;
	if (w->scoring & GR_UTIL) {
		s->scored_util++;
		s->util_sum += w->mine.ok ? w->mine.util : 0;
	}
	if (w->scoring & GR_TPUT) {
		s->scored_tput++;
		if (w->mine.ok && w->mine.counted && w->ref.ok && w->ref.counted) {
			s->counted++;
			s->ops += (double)w->mine.ops;
			s->instr += (double)w->mine.instructions;
			s->ref_ops += (double)w->ref.ops;
			s->ref_instr += (double)w->ref.instructions;
		}
	}
}

static void finish(totals_t *s, const gr_opts_t *o, const gr_row_t *rows, const gr_checker_t *c)
{
	for (int i = 0; i < o->ntraces; i++)
		add_row(s, &rows[i]);
	s->util = s->scored_util ? s->util_sum / s->scored_util : 0;
	s->ipo = s->ops > 0 ? s->instr / s->ops : 0;
	s->ref_ipo = s->ref_ops > 0 ? s->ref_instr / s->ref_ops : 0;
	/* operations per instruction, graded over reference */
	double ratio = s->ipo > 0 ? s->ref_ipo / s->ipo : 0;
	double share = s->scored_tput ? (double)s->counted / s->scored_tput : 0;
	s->ratio = (ratio > 1 ? 1 : ratio) * share;
	s->index = 100 * (o->weight * s->util + (1 - o->weight) * s->ratio);
	s->pts_correct = s->total ? GR_PTS_CORRECT * (double)s->correct / s->total : 0;
	s->pts_perf = GR_PTS_PERF * s->index / 100;
	s->pts_checker = c->sound_ok && c->injected ? GR_PTS_CHECKER * (double)c->caught / c->injected : 0;
	s->pts_total = s->pts_correct + s->pts_perf + s->pts_checker;
}

static const char *scoring_note(int scoring)
{
	return scoring == GR_ALL ? "" : scoring == GR_UTIL ? "  (util only)" :
	       scoring == GR_TPUT ? "  (throughput only)" : "  (not scored)";
}

static void print_traces(const gr_opts_t *o, const gr_row_t *rows, const totals_t *s, FILE *out)
{
	fprintf(out, "Traces for policy %s (reference %s, instructions counted by callgrind):\n", o->policy,
		o->reference);
	fprintf(out, "%-22s %-6s %-5s %7s %7s %7s %9s %9s %6s\n", "trace", "set", "valid", "ops", "util", "best",
		"instr/op", "ref", "ratio");
	double best_sum = 0;
	for (int i = 0; i < o->ntraces; i++) {
		const gr_row_t *w = &rows[i];
		double m = ipo_of(&w->mine), r = ipo_of(&w->ref);
		best_sum += w->best;
		fprintf(out, "%-22s %-6s %-5s %7zu %6.1f%% %6.1f%% %9.0f %9.0f %6.2f%s\n", w->name,
			w->hidden ? "hidden" : "public", w->mine.ok ? "yes" : "NO", w->mine.ops, 100 * w->mine.util,
			100 * w->best, m, r, m > 0 ? r / m : 0, scoring_note(w->scoring));
	}
	fprintf(out, "%-22s %-6s %-5s %7s %6.1f%% %6.1f%% %9.0f %9.0f %6.2f\n", "total", "", "", "", 100 * s->util,
		o->ntraces ? 100 * best_sum / o->ntraces : 0, s->ipo, s->ref_ipo, s->ratio);
	fprintf(out, "(best: the utilization of the best layout found knowing the whole trace, heaplab bound;\n"
		     " instr/op: instructions inside the allocator per operation; ratio: ref / instr/op, at most 1\n"
		     " in the index, scaled by the share of traces counted)\n");
	for (int i = 0; i < o->ntraces; i++) {
		const gr_row_t *w = &rows[i];
		if (!w->mine.ok)
			fprintf(out, "ERROR %s: %s\n", w->name, w->mine.error);
		else if (o->count && (w->scoring & GR_TPUT) && !w->mine.counted)
			fprintf(out, "not counted %s: %s\n", w->name, w->mine.count_error);
		if (!w->ref.ok)
			fprintf(out, "warning: reference failed %s: %s\n", w->name, w->ref.error);
	}
}

/* One line of the sheet; points < 0: blank, for the grader to fill in. */
static void sheet_line(FILE *out, const char *part, const char *what, double points, int max)
{
	if (points < 0)
		fprintf(out, "  %-13s %-54s  ____ / %d\n", part, what, max);
	else
		fprintf(out, "  %-13s %-54s %5.1f / %d\n", part, what, points, max);
}

static void print_table(const gr_opts_t *o, const gr_row_t *rows, const gr_checker_t *c, const totals_t *s,
			FILE *out)
{
	print_traces(o, rows, s, out);
	fprintf(out, "\nHeap checker (the policy's check, on a sound heap and on heaps the grader damaged):\n");
	for (int k = 0; k < GR_CASES; k++) {
		const gr_case_t *x = &c->cases[k];
		const char *verdict = !x->done ? "not made" : x->problems < 0 ? "checker failed" :
				      !x->damaged ? (x->problems ? "false alarm" : "passed") :
				      x->problems ? "caught" : "missed";
		fprintf(out, "  %-20s %-15s %s\n", x->name, verdict, x->note);
	}
	char what[160];
	fprintf(out, "\nScore sheet for %s:\n", o->policy);
	snprintf(what, sizeof what, "%d of %d traces (%d of %d hidden%s)", s->correct, s->total, s->hidden_correct,
		 s->hidden_total, o->hidden_dir[0] && !o->hidden_found ? ": none in this tree" : "");
	sheet_line(out, "correctness", what, s->pts_correct, GR_PTS_CORRECT);
	snprintf(what, sizeof what, "index %.1f = %.1f (util) + %.1f (instructions)", s->index,
		 100 * o->weight * s->util, 100 * (1 - o->weight) * s->ratio);
	sheet_line(out, "performance", what, s->pts_perf, GR_PTS_PERF);
	snprintf(what, sizeof what, "sound heap %s, %d of %d damages caught", c->sound_ok ? "passed" : "FAILED",
		 c->caught, c->injected);
	sheet_line(out, "heap checker", what, s->pts_checker, GR_PTS_CHECKER);
	sheet_line(out, "write-up", "graded by hand (the instructor's guide has the rubric)", -1, GR_PTS_WRITEUP);
	sheet_line(out, "total", "without the write-up", s->pts_total, GR_PTS_CORRECT + GR_PTS_PERF + GR_PTS_CHECKER);
	fprintf(out, "Perf index = %.1f (util) + %.1f (thru) = %.1f/100\n", 100 * o->weight * s->util,
		100 * (1 - o->weight) * s->ratio, s->index);
}

static void json_row(const gr_row_t *w, FILE *out)
{
	fprintf(out, "{\"trace\":");
	vis_json_string(out, w->name);
	fprintf(out, ",\"valid\":%s,\"scored_util\":%s,\"scored_throughput\":%s,\"ops\":%zu,"
		     "\"utilization\":%.4f,\"best_layout_utilization\":%.4f,\"instructions\":%llu,"
		     "\"instr_per_op\":%.1f,\"ref_valid\":%s,\"ref_instructions\":%llu,\"ref_instr_per_op\":%.1f,"
		     "\"hidden\":%s",
		w->mine.ok ? "true" : "false", w->scoring & GR_UTIL ? "true" : "false",
		w->scoring & GR_TPUT ? "true" : "false", w->mine.ops, w->mine.util, w->best,
		(unsigned long long)w->mine.instructions, ipo_of(&w->mine), w->ref.ok ? "true" : "false",
		(unsigned long long)w->ref.instructions, ipo_of(&w->ref), w->hidden ? "true" : "false");
	if (!w->mine.ok) {
		fprintf(out, ",\"error\":");
		vis_json_string(out, w->mine.error);
	}
	fprintf(out, "}");
}

static void print_json(const gr_opts_t *o, const gr_row_t *rows, const gr_checker_t *c, const totals_t *s,
		       FILE *out)
{
	fprintf(out, "{\"policy\":");
	vis_json_string(out, o->policy);
	fprintf(out, ",\"reference\":");
	vis_json_string(out, o->reference);
	fprintf(out, ",\"weight\":%.3f,\"repeat\":%d,\"counted\":%s,\"traces\":[", o->weight, o->repeat,
		o->count ? "true" : "false");
	for (int i = 0; i < o->ntraces; i++) {
		fprintf(out, "%s", i ? "," : "");
		json_row(&rows[i], out);
	}
	fprintf(out, "],\"checker\":{\"sound\":%s,\"injected\":%d,\"caught\":%d,\"cases\":[",
		c->sound_ok ? "true" : "false", c->injected, c->caught);
	for (int k = 0; k < GR_CASES; k++) {
		const gr_case_t *x = &c->cases[k];
		fprintf(out, "%s{\"case\":", k ? "," : "");
		vis_json_string(out, x->name);
		fprintf(out, ",\"damaged\":%s,\"made\":%s,\"problems\":%d,\"note\":", x->damaged ? "true" : "false",
			x->done ? "true" : "false", x->problems);
		vis_json_string(out, x->note);
		fprintf(out, "}");
	}
	fprintf(out, "]},\"correct\":%d,\"total\":%d,\"hidden_correct\":%d,\"hidden_total\":%d,"
		     "\"utilization\":%.4f,\"instr_per_op\":%.1f,\"ref_instr_per_op\":%.1f,"
		     "\"throughput_ratio\":%.4f,\"score_util\":%.2f,\"score_throughput\":%.2f,\"index\":%.2f,"
		     "\"points\":{\"correctness\":%.2f,\"performance\":%.2f,\"checker\":%.2f,\"writeup\":null,"
		     "\"total\":%.2f,\"max_without_writeup\":%d,\"writeup_max\":%d}}\n",
		s->correct, s->total, s->hidden_correct, s->hidden_total, s->util, s->ipo, s->ref_ipo, s->ratio,
		100 * o->weight * s->util, 100 * (1 - o->weight) * s->ratio, s->index, s->pts_correct, s->pts_perf,
		s->pts_checker, s->pts_total, GR_PTS_CORRECT + GR_PTS_PERF + GR_PTS_CHECKER, GR_PTS_WRITEUP);
}

int gr_print_sheet(const gr_opts_t *o, const gr_row_t *rows, const gr_checker_t *c, FILE *out)
{
	totals_t s;
	memset(&s, 0, sizeof s);
	finish(&s, o, rows, c);
	if (o->json)
		print_json(o, rows, c, &s, out);
	else
		print_table(o, rows, c, &s, out);
	return s.correct == s.total ? 0 : 1;
}
