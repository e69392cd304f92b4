/* The best layout a trace allows (bound.h): the peak of live bytes below,
 * three real layouts above.  Reads the trace through the public API only. */
#include "config.h"
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bound.h"
#include "error.h"
#include "vis.h"

/* Blocks of more than 8 bytes start at multiples of 16, as glibc's do;
 * blocks of up to 8 at multiples of 8, as jemalloc's, mimalloc's and
 * TCMalloc's 8-byte classes do (C asks only for an alignment that suits
 * every object of the block's size). */
enum { BD_GRAIN = 16, BD_SMALL = 8 };

/* Bytes a block of @p n takes in a layout and the alignment it needs. */
static size_t grain_of(size_t n)
{
	return n <= BD_SMALL ? BD_SMALL : BD_GRAIN;
}

/* One block's life in one layout: alive from op `from` up to, not
 * including, op `to`, at [off, off + len). */
typedef struct bd_life {
	size_t from, to;
	size_t off, len;
	size_t align;
} bd_life_t;

typedef struct bd_lives {
	bd_life_t *v;
	size_t n, cap;
} bd_lives_t;

/* A free stretch below the layout's top, [lo, hi). */
typedef struct bd_gap {
	size_t lo, hi;
} bd_gap_t;

/* An online layout under way: free stretches in address order below
 * `top`; every live block's current life. */
typedef struct bd_online {
	bool best;          /* best fit, else first fit */
	bd_gap_t *gap;
	size_t ngaps, capgaps;
	size_t top, peak;
	long *life_of;      /* block id -> index in lives, -1 when not live */
	bd_lives_t lives;
} bd_online_t;

const char *vis_layout_name(vis_layout_kind_t k)
{
	static const char *const names[VIS_LAYOUTS] = { "first fit", "best fit", "offline" };
	return k < VIS_LAYOUTS ? names[k] : "?";
}

static size_t round_up(size_t n, size_t a)
{
	return (n + a - 1) / a * a;
}

/* The array @p v of @p n used and *@p cap allocated elements of @p size
 * bytes, with room for one more (moved, perhaps); NULL when out of memory
 * (@p v is then unchanged). */
static void *room_for_one(void *v, size_t n, size_t *cap, size_t size)
{
	if (n < *cap)
		return v;
	size_t more = *cap ? 2 * *cap : 256;
	void *grown = realloc(v, more * size);
	if (grown)
		*cap = more;
	return grown;
}

static int lives_push(bd_lives_t *l, bd_life_t life)
{
	bd_life_t *v = room_for_one(l->v, l->n, &l->cap, sizeof *v);
	if (!v)
		return -1;
	l->v = v;
	l->v[l->n++] = life;
	return 0;
}

/* The alignment op @p i asks for: a memalign's own, else the grain. */
static size_t op_align(const hl_trace_t *t, size_t i)
{
	if (hl_trace_op_kind(t, i) != 'm')
		return grain_of(hl_trace_op_size(t, i));
	char buf[96];
	long id;
	size_t align = BD_GRAIN, n;
	if (sscanf(hl_trace_op_text(t, i, buf, sizeof buf), "m %ld %zu %zu", &id, &align, &n) != 3)
		return BD_GRAIN;
	return align > BD_GRAIN ? align : BD_GRAIN;
}

/* ---- the lower bound ---------------------------------------------------- */

static int peak_live(const hl_trace_t *t, vis_bound_t *b)
{
	if (hl_trace_live_peak(t, &b->bound, &b->bound_op) < 0)
		return vis_fail("%s", hl_last_error());
	long max = hl_trace_max_id(t);
	for (size_t i = 0; i < hl_trace_ops(t); i++) {
		long id = hl_trace_op_id(t, i);
		b->blocks += strchr("acm", hl_trace_op_kind(t, i)) && id >= 0 && id < max;
	}
	return 0;
}

/* ---- online layouts: free stretches in address order --------------------- */

static int gap_insert(bd_online_t *o, size_t at, bd_gap_t g)
{
	bd_gap_t *v = room_for_one(o->gap, o->ngaps, &o->capgaps, sizeof *v);
	if (!v)
		return -1;
	o->gap = v;
	memmove(o->gap + at + 1, o->gap + at, (o->ngaps - at) * sizeof *o->gap);
	o->gap[at] = g;
	o->ngaps++;
	return 0;
}

static void gap_remove(bd_online_t *o, size_t at)
{
	memmove(o->gap + at, o->gap + at + 1, (o->ngaps - at - 1) * sizeof *o->gap);
	o->ngaps--;
}

/* Index of the first stretch that starts at or above @p off. */
static size_t gap_find(const bd_online_t *o, size_t off)
{
	size_t lo = 0, hi = o->ngaps;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (o->gap[mid].lo < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Gives [off, off + len) back, merged with its neighbours; a stretch that
 * reaches the top lowers the top. */
static int give_back(bd_online_t *o, size_t off, size_t len)
{
	if (len == 0)
		return 0;
	size_t at = gap_find(o, off), lo = off, hi = off + len;
	if (at > 0 && o->gap[at - 1].hi == lo) {
		lo = o->gap[at - 1].lo;
		gap_remove(o, --at);
	}
	if (at < o->ngaps && o->gap[at].lo == hi) {
		hi = o->gap[at].hi;
		gap_remove(o, at);
	}
	if (hi == o->top) {
		o->top = lo;
		return 0;
	}
	return gap_insert(o, at, (bd_gap_t){ lo, hi });
}

/* Takes [start, start + len) out of stretch @p at, keeping what is left on
 * either side. */
static int carve(bd_online_t *o, size_t at, size_t start, size_t len)
{
	bd_gap_t g = o->gap[at];
	gap_remove(o, at);
	if (start + len < g.hi && gap_insert(o, at, (bd_gap_t){ start + len, g.hi }) < 0)
		return -1;
	if (g.lo < start && gap_insert(o, at, (bd_gap_t){ g.lo, start }) < 0)
		return -1;
	return 0;
}

/* An offset for @p len bytes aligned to @p align; (size_t)-1 when out of
 * memory for the stretch list. */
static size_t place(bd_online_t *o, size_t len, size_t align)
{
	size_t pick = SIZE_MAX, pick_waste = SIZE_MAX;
	for (size_t i = 0; i < o->ngaps; i++) {
		size_t start = round_up(o->gap[i].lo, align);
		if (start >= o->gap[i].hi || o->gap[i].hi - start < len)
			continue;
		size_t waste = o->gap[i].hi - o->gap[i].lo - len;
		if (!o->best) {
			pick = i;
			break;
		}
		if (waste < pick_waste) {
			pick = i;
			pick_waste = waste;
		}
	}
	if (pick != SIZE_MAX) {
		size_t start = round_up(o->gap[pick].lo, align);
		return carve(o, pick, start, len) < 0 ? SIZE_MAX : start;
	}
	size_t start = round_up(o->top, align);
	if (start > o->top && gap_insert(o, o->ngaps, (bd_gap_t){ o->top, start }) < 0)
		return SIZE_MAX;
	o->top = start + len;
	if (o->top > o->peak)
		o->peak = o->top;
	return start;
}

/* Ends block @p id's current life at op @p to; its index, or -1. */
static long end_life(bd_online_t *o, long id, size_t to)
{
	long li = o->life_of[id];
	if (li >= 0)
		o->lives.v[li].to = to;
	o->life_of[id] = -1;
	return li;
}

static int begin_life(bd_online_t *o, long id, size_t from, size_t off, size_t len, size_t align)
{
	if (lives_push(&o->lives, (bd_life_t){ from, SIZE_MAX, off, len, align }) < 0)
		return -1;
	o->life_of[id] = (long)o->lives.n - 1;
	return 0;
}

/* realloc of a live block: in place when it shrinks or the space above it
 * is free (or is the top), else moved (both lives overlap at op @p i). */
static int resize(bd_online_t *o, long id, size_t i, size_t len)
{
	bd_life_t old = o->lives.v[o->life_of[id]];
	size_t end = old.off + old.len;
	if (len <= old.len) {
		end_life(o, id, i);
		return begin_life(o, id, i, old.off, len, old.align) < 0 ? -1
		       : give_back(o, old.off + len, old.len - len);
	}
	size_t need = len - old.len, at = gap_find(o, end);
	bool above_free = at < o->ngaps && o->gap[at].lo == end && o->gap[at].hi - end >= need;
	if (above_free || end == o->top) {
		if (above_free) {
			if (carve(o, at, end, need) < 0)
				return -1;
		} else {
			o->top = end + need;
			if (o->top > o->peak)
				o->peak = o->top;
		}
		end_life(o, id, i);
		return begin_life(o, id, i, old.off, len, old.align);
	}
	size_t off = place(o, len, old.align);
	if (off == SIZE_MAX)
		return -1;
	end_life(o, id, i + 1);
	if (begin_life(o, id, i, off, len, old.align) < 0)
		return -1;
	return give_back(o, old.off, old.len);
}

static int online_op(bd_online_t *o, const hl_trace_t *t, size_t i, long max)
{
	char k = hl_trace_op_kind(t, i);
	long id = hl_trace_op_id(t, i);
	if (id < 0 || id >= max)
		return 0;
	size_t n = hl_trace_op_size(t, i) ? hl_trace_op_size(t, i) : 1, len = round_up(n, grain_of(n));
	if (k == 'f' || ((k == 'a' || k == 'c' || k == 'm') && o->life_of[id] >= 0)) {
		long li = end_life(o, id, i);
		if (li >= 0 && give_back(o, o->lives.v[li].off, o->lives.v[li].len) < 0)
			return -1;
		if (k == 'f')
			return 0;
	}
	if (k == 'r' && o->life_of[id] >= 0)
		return resize(o, id, i, len);
	if (k != 'a' && k != 'c' && k != 'm' && k != 'r')
		return 0;
	size_t align = op_align(t, i), off = place(o, len, align);
	return off == SIZE_MAX ? -1 : begin_life(o, id, i, off, len, align);
}

static int online(const hl_trace_t *t, bool best, size_t *span, bd_lives_t *lives)
{
	long max = hl_trace_max_id(t);
	bd_online_t o = { .best = best };
	o.life_of = malloc((size_t)(max > 0 ? max : 1) * sizeof *o.life_of);
	int rc = o.life_of ? 0 : -1;
	for (long id = 0; id < max && o.life_of; id++)
		o.life_of[id] = -1;
	for (size_t i = 0; rc == 0 && i < hl_trace_ops(t); i++)
		rc = online_op(&o, t, i, max);
	free(o.life_of);
	free(o.gap);
	*span = o.peak;
	*lives = o.lives;
	return rc < 0 ? vis_fail("out of memory for a layout of the trace") : 0;
}

/* ---- the offline layout: every lifetime known, largest first ------------- */

/* The trace's lives as the offline layout sees them: a realloc ends the
 * old life one op after the new one starts (a copy needs both). */
static int trace_lives(const hl_trace_t *t, bd_lives_t *l)
{
	long max = hl_trace_max_id(t);
	long *cur = malloc((size_t)(max > 0 ? max : 1) * sizeof *cur);
	if (!cur)
		return -1;
	for (long id = 0; id < max; id++)
		cur[id] = -1;
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < hl_trace_ops(t); i++) {
		char k = hl_trace_op_kind(t, i);
		long id = hl_trace_op_id(t, i);
		if (id < 0 || id >= max || !strchr("acmrf", k))
			continue;
		if (cur[id] >= 0)
			l->v[cur[id]].to = k == 'r' ? i + 1 : i;
		cur[id] = -1;
		if (k == 'f')
			continue;
		size_t n = hl_trace_op_size(t, i) ? hl_trace_op_size(t, i) : 1, len = round_up(n, grain_of(n));
		rc = lives_push(l, (bd_life_t){ i, SIZE_MAX, 0, len, op_align(t, i) });
		cur[id] = (long)l->n - 1;
	}
	free(cur);
	return rc;
}

static bool overlap_in_time(const bd_life_t *a, const bd_life_t *b)
{
	return a->from < b->to && b->from < a->to;
}

static int by_len_desc(const void *x, const void *y)
{
	const bd_life_t *a = x, *b = y;
	if (a->len != b->len)
		return a->len > b->len ? -1 : 1;
	return a->from < b->from ? -1 : a->from > b->from;
}

static int by_off(const void *x, const void *y)
{
	const bd_gap_t *a = x, *b = y;
	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

static int offline(const hl_trace_t *t, size_t *span, bd_lives_t *l)
{
	if (trace_lives(t, l) < 0)
		return vis_fail("out of memory for the trace's lifetimes");
	qsort(l->v, l->n, sizeof *l->v, by_len_desc);
	bd_gap_t *taken = malloc((l->n ? l->n : 1) * sizeof *taken);
	if (!taken)
		return vis_fail("out of memory for the offline layout");
	*span = 0;
	for (size_t i = 0; i < l->n; i++) {
		bd_life_t *me = &l->v[i];
		size_t n = 0;
		for (size_t j = 0; j < i; j++)
			if (overlap_in_time(me, &l->v[j]))
				taken[n++] = (bd_gap_t){ l->v[j].off, l->v[j].off + l->v[j].len };
		qsort(taken, n, sizeof *taken, by_off);
		size_t off = 0;
		for (size_t j = 0; j < n; j++) {
			if (round_up(off, me->align) + me->len <= taken[j].lo)
				break;
			if (taken[j].hi > off)
				off = taken[j].hi;
		}
		me->off = round_up(off, me->align);
		if (me->off + me->len > *span)
			*span = me->off + me->len;
	}
	free(taken);
	return 0;
}

/* ---- checking a layout ------------------------------------------------- */

static int by_from(const void *x, const void *y)
{
	const bd_life_t *a = x, *b = y;
	return a->from < b->from ? -1 : a->from > b->from;
}

/* Every life aligned, inside the span, and apart from every other life it
 * shares a moment with.  Sweeps lives by start, keeping those still alive
 * in address order. */
static int verify(bd_lives_t *l, size_t span, const char *name)
{
	qsort(l->v, l->n, sizeof *l->v, by_from);
	bd_life_t **alive = malloc((l->n ? l->n : 1) * sizeof *alive);
	if (!alive)
		return vis_fail("out of memory to check the %s layout", name);
	size_t nalive = 0;
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < l->n; i++) {
		bd_life_t *me = &l->v[i];
		if (me->off % me->align || me->off + me->len > span)
			rc = vis_fail("%s layout: block at op %zu misplaced (offset %zu, %zu bytes)", name, me->from,
				      me->off, me->len);
		size_t keep = 0;
		for (size_t j = 0; j < nalive; j++)
			if (alive[j]->to > me->from)
				alive[keep++] = alive[j];
		nalive = keep;
		for (size_t j = 0; rc == 0 && j < nalive; j++)
			if (me->off < alive[j]->off + alive[j]->len && alive[j]->off < me->off + me->len)
				rc = vis_fail("%s layout: blocks of ops %zu and %zu overlap", name, alive[j]->from,
					      me->from);
		alive[nalive++] = me;
	}
	free(alive);
	return rc;
}

int vis_bound(const hl_trace_t *t, size_t offline_max, bool verify_layouts, vis_bound_t *b)
{
	memset(b, 0, sizeof *b);
	if (peak_live(t, b))
		return 2;
	for (int k = 0; k < VIS_LAYOUTS; k++) {
		bd_lives_t lives = { 0 };
		int rc;
		if (k == VIS_LAYOUT_OFFLINE) {
			if (b->blocks > offline_max)
				continue;
			rc = offline(t, &b->span[k], &lives);
		} else {
			rc = online(t, k == VIS_LAYOUT_BEST_FIT, &b->span[k], &lives);
		}
		if (rc == 0 && verify_layouts)
			rc = verify(&lives, b->span[k], vis_layout_name(k));
		free(lives.v);
		if (rc)
			return 2;
		if (b->found == 0 || b->span[k] < b->found) {
			b->found = b->span[k];
			b->found_by = (vis_layout_kind_t)k;
		}
	}
	return 0;
}

/* ---- a policy beside the bound --------------------------------------------- */

typedef struct bd_sampler {
	size_t every, peak, peak_meta;
	double meta0; /* the metadata resident when the heap was made */
} bd_sampler_t;

static int sample_resident(const hl_replay_t *rp, void *arg)
{
	bd_sampler_t *s = arg;
	size_t op = hl_replay_op(rp);
	if (op % s->every && op + 1 != hl_trace_ops(hl_replay_trace(rp)))
		return 0;
	double resident = 0, meta = 0;
	hl_stat(hl_replay_heap(rp), "resident_bytes", &resident);
	hl_stat(hl_replay_heap(rp), "os.metadata_resident_bytes", &meta);
	if ((size_t)resident > s->peak)
		s->peak = (size_t)resident;
	double with_meta = resident + (meta > s->meta0 ? meta - s->meta0 : 0);
	if ((size_t)with_meta > s->peak_meta)
		s->peak_meta = (size_t)with_meta;
	return 0;
}

int vis_bound_policy(const hl_trace_t *t, const char *policy, const char *conf, vis_bound_policy_t *p)
{
	memset(p, 0, sizeof *p);
	/* on the replay's clock: a trace without times lets no time pass, so
	 * decay and purge delays act the same in every run */
	hl_heap_t *h = hl_heap_new_replay(policy, conf);
	if (!h)
		return 2;
	size_t ops = hl_trace_ops(t);
	bd_sampler_t s = { ops <= 2000 ? 1 : ops / 1000, 0, 0, 0 };
	hl_stat(h, "os.metadata_resident_bytes", &s.meta0);
	hl_replay_opts_t o = { .verify = false, .repeat = 1, .after_op = sample_resident, .arg = &s, .touch = true };
	hl_replay_result_t r;
	int rc = hl_replay(h, t, &o, &r);
	hl_heap_destroy(h);
	if (rc != 0 || !r.ok)
		return vis_fail("%s: the replay failed at op %zu: %s", policy, r.failed_op, r.message);
	p->peak_committed = r.peak_committed;
	p->peak_resident = s.peak;
	p->peak_resident_meta = s.peak_meta;
	return 0;
}
