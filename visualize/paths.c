/*
 * The path each op of a trace took, named from the policy's decision
 * events: the material of "which path will the next call take?"
 * questions (heaplab quiz --paths, and the bank's `run:` checks).
 *
 * A path is the op's steps that decide where the block comes from or goes
 * to, in order, each as "kind (the policy's word)": "cache miss (tcache
 * bin) → split (top)".  Kernel calls, candidates looked at or rejected,
 * scans and sorting are left out of the name (they vary with the heap's
 * history, not with the path) but are shown when the answer is revealed,
 * with every other step, as replay --explain prints them.
 */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "vis.h"

enum { PATH_EVENTS = 256 };

typedef struct paths_ctx {
	vis_paths_t *out;
	hl_event_t ev[PATH_EVENTS];
	bool failed;
} paths_ctx_t;

static bool names_the_path(hl_event_kind_t k)
{
	return k != HL_EV_OS && k != HL_EV_LOOK && k != HL_EV_REJECT && k != HL_EV_SCAN && k != HL_EV_SORT;
}

/* "cache miss (tcache bin)": the kind in words and the policy's word. */
static void step_name(const hl_event_t *e, char *buf, size_t len)
{
	snprintf(buf, len, "%s", hl_event_kind_name(e->kind));
	for (char *c = buf; *c; c++)
		if (*c == '_')
			*c = ' ';
	size_t n = strlen(buf);
	if (e->what && *e->what && n + 4 < len)
		snprintf(buf + n, len - n, " (%s)", e->what);
}

static void name_path(const hl_event_t *ev, size_t n, char *path, size_t len)
{
	char last[96] = "", step[96];
	size_t used = 0;
	path[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		if (!names_the_path(ev[i].kind))
			continue;
		step_name(&ev[i], step, sizeof step);
		if (!strcmp(step, last))
			continue;             /* "merge, merge": one step of the path */
		int w = snprintf(path + used, len - used, "%s%s", used ? " → " : "", step);
		if (w < 0 || (size_t)w >= len - used)
			break;
		used += (size_t)w;
		snprintf(last, sizeof last, "%s", step);
	}
	if (!used)
		snprintf(path, len, "no step");
}

typedef struct reveal_of {
	hl_heap_t *h;
	const hl_event_t *ev;
	size_t n, total;
} reveal_of_t;

static void write_reveal(FILE *f, void *arg)
{
	reveal_of_t *r = arg;
	char line[256];
	for (size_t i = 0; i < r->n; i++)
		fprintf(f, "%s\n", hl_event_text(r->h, &r->ev[i], line, sizeof line));
	if (r->total > r->n)
		fprintf(f, "... and %zu more steps\n", r->total - r->n);
}

static char *reveal(hl_heap_t *h, const hl_event_t *ev, size_t n, size_t total)
{
	reveal_of_t r = { h, ev, n, total };
	return vis_text_of(write_reveal, &r);
}

static int after_op(const hl_replay_t *rp, void *arg)
{
	paths_ctx_t *c = arg;
	hl_heap_t *h = hl_replay_heap(rp);
	const hl_trace_t *t = hl_replay_trace(rp);
	size_t op = hl_replay_op(rp), total = hl_events_take(h, c->ev, PATH_EVENTS);
	size_t n = total < PATH_EVENTS ? total : PATH_EVENTS;
	vis_path_op_t *p = &c->out->op[op];
	p->kind = hl_trace_op_kind(t, op);
	hl_trace_op_text(t, op, p->text, sizeof p->text);
	name_path(c->ev, n, p->path, sizeof p->path);
	if (!(p->reveal = reveal(h, c->ev, n, total))) {
		c->failed = true;
		return 1;
	}
	c->out->n = op + 1;
	return 0;
}

int vis_paths_trace(const char *policy, const char *conf, const hl_trace_t *t, vis_paths_t *out)
{
	memset(out, 0, sizeof *out);
	size_t nops = hl_trace_ops(t);
	paths_ctx_t *c = calloc(1, sizeof *c);
	out->op = calloc(nops ? nops : 1, sizeof *out->op);
	if (!c || !out->op) {
		free(c);
		return vis_fail("out of memory for the paths of %zu ops", nops);
	}
	c->out = out;
	hl_heap_t *h = hl_heap_new(policy, conf);
	if (!h || hl_events_keep(h, true) < 0) {
		if (h)
			hl_heap_destroy(h);
		free(c);
		return 2;
	}
	hl_events_take(h, c->ev, 0);   /* the heap's own start is no op's path */
	hl_replay_opts_t o = { .verify = true, .after_op = after_op, .arg = c };
	hl_replay_result_t r;
	int rc = hl_replay(h, t, &o, &r) == 0 ? 0 : 1;
	if (c->failed) {
		rc = vis_fail("out of memory for the steps of an op");
	} else if (rc) {
		vis_fail("%s", r.message);
		rc = 1;
	}
	hl_events_keep(h, false);
	hl_heap_destroy(h);
	free(c);
	return rc;
}

void vis_paths_free(vis_paths_t *p)
{
	for (size_t i = 0; p->op && i < p->n; i++)
		free(p->op[i].reveal);
	free(p->op);
	memset(p, 0, sizeof *p);
}
