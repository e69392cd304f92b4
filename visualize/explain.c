/*
 * explain.c -- what each operation of a replay did, step by step: the
 * heap's decision events (hl_events_keep / hl_events_take) in plain
 * English or as JSON, and the net change of the heap's figures.
 *
 * Text, one block per operation:
 *
 *   op 3 (line 5): a 2 100 -> region#1+0x2a0
 *       cache miss: tcache bin 5, 112 B
 *       split: top 112 B, remainder 134544 B (134656→134544) at region#1+0x290
 *       net: live usable +112 B, committed +0 B, resident +0 B, OS calls +0
 *
 * JSON: one object per line and operation (the shape is in vis.h).
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "vis.h"

/** Events one operation may report; a call that makes more says how many
 *  were lost. */
#define EXPLAIN_MAX 1024

/** The figures an explanation compares from one op to the next. */
typedef struct figures {
	double live, committed, resident, oscalls;
} figures_t;

struct vis_explain {
	hl_heap_t *h;
	figures_t before;               /**< after the previous op */
	hl_event_t ev[EXPLAIN_MAX];
};

static double stat_of(hl_heap_t *h, const char *key)
{
	double v = 0;
	return hl_stat(h, key, &v) == 0 ? v : 0;
}

static void read_figures(hl_heap_t *h, figures_t *f)
{
	vis_stats_t st;
	vis_read_stats(h, &st);
	f->live = stat_of(h, "live_usable_bytes");
	f->committed = st.committed;
	f->resident = st.resident;
	f->oscalls = st.oscalls;
}

vis_explain_t *vis_explain_new(hl_heap_t *h)
{
	vis_explain_t *x = calloc(1, sizeof *x);
	if (!x) {
		vis_fail("out of memory for an explanation");
		return NULL;
	}
	if (hl_events_keep(h, true) < 0) {
		free(x);
		return NULL;
	}
	x->h = h;
	read_figures(h, &x->before);
	hl_events_take(h, x->ev, 0);    /* nothing before the first op counts */
	return x;
}

void vis_explain_free(vis_explain_t *x)
{
	if (!x)
		return;
	hl_events_keep(x->h, false);
	free(x);
}

static void put_delta(FILE *out, const char *name, double d, bool bytes, bool comma)
{
	char b[32];
	if (bytes)
		fprintf(out, "%s %s%s%s", name, d < 0 ? "-" : "+", vis_bytes(d < 0 ? -d : d, b, sizeof b), comma ? ", " : "");
	else
		fprintf(out, "%s %+.0f%s", name, d, comma ? ", " : "");
}

/* The steps of the op and its "net:" line, indented. */
static void text_steps(vis_explain_t *x, char k, FILE *out, size_t n, const figures_t *now)
{
	char buf[256];
	for (size_t i = 0; i < n && i < EXPLAIN_MAX; i++)
		fprintf(out, "    %s\n", hl_event_text(x->h, &x->ev[i], buf, sizeof buf));
	if (n > EXPLAIN_MAX)
		fprintf(out, "    ... and %zu more steps\n", n - EXPLAIN_MAX);
	if (!n && k != 's' && k != 't')
		fprintf(out, "    (no step reported)\n");
	fprintf(out, "    net: ");
	put_delta(out, "live usable", now->live - x->before.live, true, true);
	put_delta(out, "committed", now->committed - x->before.committed, true, true);
	put_delta(out, "resident", now->resident - x->before.resident, true, true);
	put_delta(out, "OS calls", now->oscalls - x->before.oscalls, false, false);
	fputc('\n', out);
}

static void text_op(vis_explain_t *x, const hl_replay_t *rp, FILE *out, size_t n, const figures_t *now)
{
	const hl_trace_t *t = hl_replay_trace(rp);
	size_t op = hl_replay_op(rp);
	char buf[256], name[64];
	fprintf(out, "op %zu (line %u): %s", op + 1, hl_trace_op_line(t, op), hl_trace_op_text(t, op, buf, sizeof buf));
	char k = hl_trace_op_kind(t, op);
	void *p = (k == 'a' || k == 'r' || k == 'c' || k == 'm') ? hl_replay_block(rp, hl_trace_op_id(t, op)) : NULL;
	if (p)
		fprintf(out, " -> %s", hl_addr_name(x->h, p, name, sizeof name));
	fputc('\n', out);
	text_steps(x, k, out, n, now);
}

static void json_num(FILE *out, const char *key, double v, bool comma)
{
	fprintf(out, "\"%s\":%.0f%s", key, v, comma ? "," : "");
}

static void json_event(vis_explain_t *x, FILE *out, const hl_event_t *e)
{
	char buf[256];
	fprintf(out, "{\"kind\":");
	vis_json_string(out, hl_event_kind_name(e->kind));
	fprintf(out, ",\"what\":");
	vis_json_string(out, e->what);
	fprintf(out, ",\"index\":%ld,\"size\":%zu,\"size2\":%zu,\"before\":%ld,\"after\":%ld,\"addr\":", e->index, e->size,
		e->size2, e->before, e->after);
	if (e->where[0])
		vis_json_string(out, e->where);
	else
		fputs("null", out);
	fprintf(out, ",\"text\":");
	vis_json_string(out, hl_event_text(x->h, e, buf, sizeof buf));
	fputc('}', out);
}

static void json_figures(FILE *out, const char *key, const figures_t *f, bool comma)
{
	fprintf(out, "\"%s\":{", key);
	json_num(out, "live", f->live, true);
	json_num(out, "committed", f->committed, true);
	json_num(out, "resident", f->resident, true);
	json_num(out, "os_calls", f->oscalls, false);
	fprintf(out, "}%s", comma ? "," : "");
}

static void json_op(vis_explain_t *x, const hl_replay_t *rp, FILE *out, size_t n, const figures_t *now)
{
	const hl_trace_t *t = hl_replay_trace(rp);
	size_t op = hl_replay_op(rp);
	char buf[256], kind[2] = { hl_trace_op_kind(t, op), 0 };
	fprintf(out, "{\"policy\":");
	vis_json_string(out, hl_heap_policy(x->h));
	fprintf(out, ",\"op\":%zu,\"line\":%u,\"text\":", op + 1, hl_trace_op_line(t, op));
	vis_json_string(out, hl_trace_op_text(t, op, buf, sizeof buf));
	fprintf(out, ",\"kind\":");
	vis_json_string(out, kind);
	fprintf(out, ",\"id\":%ld,\"size\":%zu,\"addr\":", hl_trace_op_id(t, op), hl_trace_op_size(t, op));
	void *p = strchr("arcm", kind[0]) ? hl_replay_block(rp, hl_trace_op_id(t, op)) : NULL;
	if (p)
		vis_json_string(out, hl_addr_name(x->h, p, buf, sizeof buf));
	else
		fputs("null", out);
	fprintf(out, ",\"events\":[");
	for (size_t i = 0; i < n && i < EXPLAIN_MAX; i++) {
		if (i)
			fputc(',', out);
		json_event(x, out, &x->ev[i]);
	}
	fprintf(out, "],\"lost_events\":%zu,", n > EXPLAIN_MAX ? n - EXPLAIN_MAX : 0);
	figures_t d = { now->live - x->before.live, now->committed - x->before.committed,
			now->resident - x->before.resident, now->oscalls - x->before.oscalls };
	json_figures(out, "delta", &d, true);
	json_figures(out, "after", now, false);
	fprintf(out, "}\n");
}

void vis_explain_steps(vis_explain_t *x, const hl_replay_t *rp, FILE *out)
{
	size_t n = hl_events_take(x->h, x->ev, EXPLAIN_MAX);
	figures_t now;
	read_figures(x->h, &now);
	text_steps(x, hl_trace_op_kind(hl_replay_trace(rp), hl_replay_op(rp)), out, n, &now);
	x->before = now;
}

void vis_explain_op(vis_explain_t *x, const hl_replay_t *rp, FILE *out, bool json)
{
	size_t n = hl_events_take(x->h, x->ev, EXPLAIN_MAX);
	figures_t now;
	read_figures(x->h, &now);
	if (json)
		json_op(x, rp, out, n, &now);
	else
		text_op(x, rp, out, n, &now);
	x->before = now;
}
