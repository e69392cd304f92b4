/*
 * Recording a walk through a trace: one frame per op, with the heap's
 * statistics after it and, for kept frames, its DOT picture.
 *
 * The replay is heaplab's checked pass (payload patterns, overlap, the
 * heap checker), with no timed passes after it, so the heap the frames
 * describe is exactly the one the trace built.
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "vis.h"

/* The calls that change what the heap holds; mincore only measures. */
static const char *const os_call_stats[] = {
	"os.mmap_calls", "os.munmap_calls", "os.madvise_dontneed_calls",
	"os.madvise_free_calls", "os.mprotect_calls", "os.brk_calls", "os.mremap_calls",
};

static double stat_or_zero(hl_heap_t *h, const char *path)
{
	double v;
	return hl_stat(h, path, &v) == 0 ? v : 0;
}

void vis_read_stats(hl_heap_t *h, vis_stats_t *st)
{
	st->live = stat_or_zero(h, "live_requested_bytes");
	st->peak = stat_or_zero(h, "peak_requested_bytes");
	st->committed = stat_or_zero(h, "committed_bytes");
	st->resident = stat_or_zero(h, "resident_bytes");
	double peak_committed = stat_or_zero(h, "os.peak_committed_bytes");
	st->util = peak_committed > 0 ? st->peak / peak_committed : 0;
	st->oscalls = 0;
	for (size_t i = 0; i < sizeof os_call_stats / sizeof os_call_stats[0]; i++)
		st->oscalls += stat_or_zero(h, os_call_stats[i]);
}

size_t vis_default_every(size_t nops)
{
	enum { ALL_UP_TO = 400, PICTURES = 200 };
	return nops <= ALL_UP_TO ? 1 : (nops + PICTURES - 1) / PICTURES;
}

typedef struct walk_ctx {
	vis_walk_t *w;
	const hl_trace_t *t;
	const char *what;
	vis_progress_fn progress;
	bool failed;        /* out of memory for the block lists */
	vis_explain_t *explain;   /* the steps of each op, when blocks are recorded */
	vis_walk_hook_fn hook;    /* the caller's, after each frame (may be NULL) */
	void *hook_arg;
} walk_ctx_t;

/* Whether frame @p k (already holding its label) keeps a picture, when
 * @p last is the index of the last frame. */
static bool is_kept(const vis_walk_t *w, size_t k, size_t last)
{
	if (!w->every)
		return false;
	return k == 0 || k % w->every == 0 || k == last || w->frames[k].label != NULL;
}

typedef struct picture_of {
	hl_heap_t *h;
	const char *title;
} picture_of_t;

static void write_picture(FILE *f, void *arg)
{
	picture_of_t *p = arg;
	hl_snapshot_dot(p->h, f, p->title);
}

static char *picture(hl_heap_t *h, const char *title)
{
	picture_of_t p = { h, title };
	return vis_text_of(write_picture, &p);
}

/* The blocks of @p was missing from @p now (gone), and of @p now missing
 * from @p was (came); both lists are sorted by place. */
static int delta_of(const vis_blocks_t *was, const vis_blocks_t *now, vis_delta_t *d)
{
	memset(d, 0, sizeof *d);
	size_t n = was->n + now->n;
	if (!n)
		return 0;
	d->gone = malloc(n * sizeof *d->gone);
	if (!d->gone)
		return vis_fail("out of memory for the block changes");
	d->came = d->gone + was->n;
	for (size_t i = 0, j = 0; i < was->n || j < now->n;) {
		int c = i == was->n ? 1 : j == now->n ? -1 : vis_block_place_cmp(&was->b[i], &now->b[j]);
		if (c == 0 && vis_block_same(&was->b[i], &now->b[j])) {
			i++;
			j++;
			continue;
		}
		if (c <= 0)
			d->gone[d->ngone++] = was->b[i++];
		if (c >= 0)
			d->came[d->ncame++] = now->b[j++];
	}
	return 0;
}

static int record_blocks(vis_walk_t *w, hl_heap_t *h, vis_frame_t *f)
{
	vis_blocks_t next = { 0 };
	if (vis_blocks_capture(h, &next) < 0 || delta_of(&w->now, &next, &f->delta) < 0) {
		vis_blocks_free(&next);
		return -1;
	}
	vis_blocks_free(&w->now);
	w->now = next;
	return 0;
}

/* Fills frame @p k (the heap after op k - 1). */
static void record(walk_ctx_t *c, hl_heap_t *h, size_t k)
{
	vis_walk_t *w = c->w;
	vis_frame_t *f = &w->frames[k];
	f->op = (long)k - 1;
	if (k > 0) {
		hl_trace_op_text(c->t, k - 1, f->text, sizeof f->text);
		f->line = hl_trace_op_line(c->t, k - 1);
		f->label = hl_trace_op_label(c->t, k - 1);
	}
	vis_read_stats(h, &f->st);
	f->diagram = k > 0 ? w->frames[k - 1].diagram : 0;
	if (is_kept(w, k, hl_trace_ops(c->t))) {
		char title[128];
		if (k == 0)
			snprintf(title, sizeof title, "before the first op");
		else
			snprintf(title, sizeof title, "after op %zu (line %u): %s", k, f->line, f->text);
		f->dot = picture(h, title);
		f->diagram = k;
		w->kept++;
	}
	if (w->blocks && record_blocks(w, h, f) < 0)
		c->failed = true;
	w->nframes = k + 1;
}

/* The op's steps, as the terminal walk prints them, kept as text. */
typedef struct steps_of {
	vis_explain_t *x;
	const hl_replay_t *rp;
} steps_of_t;

static void write_steps(FILE *f, void *arg)
{
	steps_of_t *st = arg;
	vis_explain_steps(st->x, st->rp, f);
}

static char *steps_text(vis_explain_t *x, const hl_replay_t *rp)
{
	steps_of_t st = { x, rp };
	return vis_text_of(write_steps, &st);
}

static int after_op(const hl_replay_t *rp, void *arg)
{
	walk_ctx_t *c = arg;
	size_t op = hl_replay_op(rp);
	if (c->explain && !(c->w->frames[op + 1].explain = steps_text(c->explain, rp)))
		c->failed = true;
	record(c, hl_replay_heap(rp), op + 1);
	if (c->hook && c->hook(rp, op + 1, c->hook_arg))
		c->failed = true;
	if (c->progress)
		c->progress(c->what, op + 1, hl_trace_ops(hl_replay_trace(rp)));
	return c->failed;
}

int vis_walk_run(const char *policy, const char *conf, const hl_trace_t *t, const vis_walk_opts_t *wo,
		 vis_walk_t *w)
{
	memset(w, 0, sizeof *w);
	w->blocks = wo->blocks;
	size_t nops = hl_trace_ops(t);
	w->frames = calloc(nops + 1, sizeof *w->frames);
	if (!w->frames)
		return vis_fail("out of memory for %zu frames", nops + 1);
	w->every = wo->every;
	hl_heap_t *h = hl_heap_new_replay(policy, conf);
	if (!h)
		return 2;
	walk_ctx_t c = { w, t, wo->what, wo->progress, false, NULL, wo->hook, wo->arg };
	record(&c, h, 0);
	if (wo->blocks && !(c.explain = vis_explain_new(h))) {
		hl_heap_destroy(h);
		return 2;
	}
	hl_replay_opts_t o = {
		.verify = true,
		.check_heap = true,
		.check_every = nops <= 20000 ? 1 : nops / 200,
		.repeat = 0,
		.after_op = after_op,
		.arg = &c,
	};
	int rc = c.failed ? 2 : hl_replay(h, t, &o, &w->result) == 0 ? 0 : 1;
	if (wo->progress)
		wo->progress(wo->what, nops, nops);
	vis_explain_free(c.explain);
	hl_heap_destroy(h);
	return c.failed ? 2 : rc;
}

int vis_walk_trace(const char *policy, const char *conf, const hl_trace_t *t, size_t every,
		   const char *what, vis_progress_fn progress, vis_walk_t *w)
{
	vis_walk_opts_t o = { .every = every, .what = what, .progress = progress };
	return vis_walk_run(policy, conf, t, &o, w);
}

int vis_walk_trace_blocks(const char *policy, const char *conf, const hl_trace_t *t, size_t every,
			  const char *what, vis_progress_fn progress, vis_walk_t *w)
{
	vis_walk_opts_t o = { .every = every, .blocks = true, .what = what, .progress = progress };
	return vis_walk_run(policy, conf, t, &o, w);
}

/* Applies one frame's delta to the sorted list @p s. */
static int apply(vis_blocks_t *s, const vis_delta_t *d)
{
	size_t n = s->n - d->ngone + d->ncame;
	vis_block_t *out = malloc((n ? n : 1) * sizeof *out);
	if (!out)
		return vis_fail("out of memory rebuilding the heap's blocks");
	size_t i = 0, g = 0, c = 0, k = 0;
	while (i < s->n || c < d->ncame) {
		if (i < s->n && g < d->ngone && vis_block_place_cmp(&s->b[i], &d->gone[g]) == 0) {
			i++;
			g++;
		} else if (c < d->ncame && (i == s->n || vis_block_place_cmp(&d->came[c], &s->b[i]) < 0)) {
			out[k++] = d->came[c++];
		} else {
			out[k++] = s->b[i++];
		}
	}
	free(s->b);
	s->b = out;
	s->n = k;
	s->cap = n ? n : 1;
	return 0;
}

int vis_walk_blocks_at(const vis_walk_t *w, size_t k, vis_blocks_t *out)
{
	vis_blocks_free(out);
	if (!w->blocks || k >= w->nframes)
		return vis_fail("no block list for frame %zu", k);
	for (size_t i = 0; i <= k; i++)
		if (apply(out, &w->frames[i].delta) < 0)
			return -1;
	return 0;
}

/* Drops the pictures of frames no longer kept (svgs[] follows). */
static void drop_unkept(vis_walk_t *w, char **svgs, size_t *total)
{
	size_t rank = 0, kept = 0;
	for (size_t i = 0; i < w->nframes; i++) {
		vis_frame_t *f = &w->frames[i];
		if (f->dot && !is_kept(w, i, w->nframes - 1)) {
			*total -= strlen(svgs[rank]);
			free(svgs[rank++]);
			free(f->dot);
			f->dot = NULL;
		} else if (f->dot) {
			svgs[kept++] = svgs[rank++];
		}
		f->diagram = f->dot || i == 0 ? i : w->frames[i - 1].diagram;
	}
	w->kept = kept;
}

/* Doubles `every` while the pictures weigh more than @p budget or
 * `every` is below @p at_least. */
static size_t thin(vis_walk_t *w, char **svgs, size_t budget, size_t at_least)
{
	size_t total = 0, rounds = 0;
	for (size_t i = 0; i < w->kept; i++)
		total += strlen(svgs[i]);
	while ((total > budget || w->every < at_least) && w->every > 0 && w->every * 2 < w->nframes) {
		w->every *= 2;
		drop_unkept(w, svgs, &total);
		rounds++;
	}
	return rounds;
}

size_t vis_walk_thin(vis_walk_t *w, char **svgs, size_t budget)
{
	return thin(w, svgs, budget, 0);
}

size_t vis_walk_thin_to(vis_walk_t *w, char **svgs, size_t every)
{
	return thin(w, svgs, (size_t)-1, every);
}

void vis_walk_free(vis_walk_t *w)
{
	for (size_t i = 0; w->frames && i < w->nframes; i++) {
		free(w->frames[i].dot);
		free(w->frames[i].delta.gone);
		free(w->frames[i].explain);
	}
	vis_blocks_free(&w->now);
	free(w->frames);
	memset(w, 0, sizeof *w);
}
