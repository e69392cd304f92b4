/*
 * What holds the memory: a recording replayed on a model, and at each
 * sample every committed byte given exactly one cause (diagnose.h).
 *
 *   committed = live payload            Σ requested bytes of live blocks
 *             + rounding                Σ (usable − requested), from the walker
 *             + free, by state          the walker's free / cached / top /
 *                                       dirty / muzzy / returned blocks, a
 *                                       state refined by the rule that keeps
 *                                       it where a policy's statistics tell
 *             + overhead                what is left: committed bytes in no
 *                                       block (headers, metadata, page tails)
 *
 * The sum holds by construction; what a test checks is that each term is
 * the one glibc's rules predict (tests/diagnose/diagnose.sh).  Free bytes
 * between two live blocks of a region are "held" by the live block right
 * above them: a heap that shrinks only from its top (bins' main arena)
 * cannot give them back while that block lives; the holders are counted
 * by allocation site.
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "diagnose.h"
#include "../trace/trace.h"   /* hl_trace_parse: a trace from a string */

static const struct {
	const char *key, *words;
} causes[DX_NCAUSES] = {
	[DX_LIVE] = { "live", "live payload (bytes the program asked for)" },
	[DX_ROUNDING] = { "rounding", "alignment and size-class rounding of live blocks" },
	[DX_OVERHEAD] = { "overhead", "headers, the allocator's metadata and page tails" },
	[DX_CACHED] = { "cached", "free, kept by a thread cache (tcache)" },
	[DX_FASTBIN] = { "fastbin", "free, in fastbins (never merged until a consolidation)" },
	[DX_HOLE] = { "hole", "free, in a bin below a live block (the heap shrinks only from its top)" },
	[DX_TOP] = { "top", "free at the top, under the trim threshold" },
	[DX_ARENA] = { "arena", "free in a non-main arena's heap (one per thread, up to arena_max)" },
	[DX_DIRTY] = { "dirty", "free pages not yet purged (decay or purge delay)" },
	[DX_MUZZY] = { "muzzy", "lazily purged pages (MADV_FREE) not yet taken back" },
	[DX_RETURNED] = { "returned", "purged: committed address space with no page behind it" },
};

const char *dx_cause_key(dx_cause_t c) { return c < DX_NCAUSES ? causes[c].key : "?"; }
const char *dx_cause_words(dx_cause_t c) { return c < DX_NCAUSES ? causes[c].words : "?"; }

/* ---- the replay's bookkeeping --------------------------------------------- */

typedef struct live_addr {
	uintptr_t addr;
	long id;
} live_addr_t;

typedef struct dx_ctx {
	const hl_trace_t *t;
	dx_run_t *run;
	hl_heap_t *h;
	bool attribute;
	vis_progress_fn progress;
	size_t *req;            /* requested bytes of each live id (0: none) */
	unsigned *site;         /* site of each id's last allocation */
	uintptr_t *addr;        /* where each live id is (0: not live) */
	size_t live_bytes;
	size_t next;            /* next recorded sample */
	size_t every;           /* without recorded samples: one per `every` ops */
	size_t next_split;      /* the next sample at or after this op is attributed */
	size_t cap;             /* samples allocated */
	hl_block_t *blocks;     /* one walk */
	size_t nblocks, blocks_cap;
	size_t *held;           /* per site, at the current sample */
	size_t *held_blocks, *held_bytes;
	size_t best_held;       /* largest total held so far */
	bool sampled;           /* a sampled recording: samples scaled by its rate (sample.c) */
	size_t started;         /* sampled: the model's own bytes from the start, not scaled */
} dx_ctx_t;

static size_t stat_size(hl_heap_t *h, const char *path)
{
	double v = 0;
	return hl_stat(h, path, &v) == 0 && v > 0 ? (size_t)v : 0;
}

/* Follows op i: which ids are live, how big, from which site, where. */
static void follow(dx_ctx_t *c, const hl_replay_t *rp, size_t i)
{
	char kind = hl_trace_op_kind(c->t, i);
	long id = hl_trace_op_id(c->t, i);
	if (id < 0 || kind == 't' || kind == 's')
		return;
	c->live_bytes -= c->req[id];
	c->req[id] = 0;
	c->addr[id] = 0;
	if (kind == 'f' || (kind == 'r' && hl_trace_op_size(c->t, i) == 0))
		return;
	c->req[id] = hl_trace_op_size(c->t, i);
	c->addr[id] = (uintptr_t)hl_replay_block(rp, id);
	unsigned s = hl_trace_op_site(c->t, i);
	if (s || kind != 'r')
		c->site[id] = s;
	c->live_bytes += c->req[id];
}

static int collect(const hl_block_t *b, void *arg)
{
	dx_ctx_t *c = arg;
	if (c->nblocks == c->blocks_cap) {
		size_t ncap = c->blocks_cap ? c->blocks_cap * 2 : 1024;
		hl_block_t *n = realloc(c->blocks, ncap * sizeof *n);
		if (!n)
			return 1;
		c->blocks = n;
		c->blocks_cap = ncap;
	}
	c->blocks[c->nblocks++] = *b;
	return 0;
}

static int by_place(const void *a, const void *b)
{
	const hl_block_t *x = a, *y = b;
	if (x->region != y->region)
		return x->region < y->region ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int by_addr(const void *a, const void *b)
{
	const live_addr_t *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* bins' per-arena figures, gathered in one pass over its statistics */
typedef struct arena_figs {
	size_t fast_main, arena_free, arena_top, all_free, all_top;
	size_t free, top, fast;     /* the arena being read */
	bool main;
	int index;                  /* which arena that is (-1: none yet) */
} arena_figs_t;

static void arena_done(arena_figs_t *f)
{
	if (f->index < 0)
		return;
	f->all_free += f->free;
	f->all_top += f->top;
	if (f->main) {
		f->fast_main += f->fast;
	} else {
		f->arena_free += f->free;
		f->arena_top += f->top;
	}
	f->free = f->top = f->fast = 0;
	f->main = false;
}

static void arena_fig(const char *path, double v, void *arg)
{
	arena_figs_t *f = arg;
	char *end;
	long k = strtol(path + sizeof "policy_stats.arena." - 1, &end, 10);
	if (*end != '.')
		return;
	if (k != f->index) {
		arena_done(f);
		f->index = (int)k;
	}
	size_t n = v > 0 ? (size_t)v : 0;
	if (!strcmp(end, ".free_bytes"))
		f->free = n;
	else if (!strcmp(end, ".top_bytes"))
		f->top = n;
	else if (!strcmp(end, ".fast_bytes"))
		f->fast = n;
	else if (!strcmp(end, ".main"))
		f->main = v != 0;
}

/* bins: the walker's free, top and cached bytes split by arena and by
 * fastbin, from its per-arena statistics (bins_stats.c).  Leaves the
 * generic split alone when the statistics do not add up to it. */
static void bins_rules(hl_heap_t *h, size_t *b)
{
	arena_figs_t f = { .index = -1 };
	hl_stat_each(h, "policy_stats.arena.", arena_fig, &f);
	arena_done(&f);
	if (f.all_free != b[DX_HOLE] || f.all_top != b[DX_TOP])
		return;
	b[DX_HOLE] -= f.fast_main + f.arena_free;
	b[DX_FASTBIN] += f.fast_main;
	b[DX_TOP] -= f.arena_top;
	b[DX_ARENA] += f.arena_free + f.arena_top;
}

/* Free bytes between live blocks of a region, given to the live block
 * right above them (a holder); kept when they are the most so far.  The
 * holders are few beside the live blocks: one pass over the live ids finds
 * each holder's id by a search among them, with no sort of the live ids. */
static void count_holds(dx_ctx_t *c, size_t sample)
{
	size_t nsites = hl_trace_sites(c->t) + 1, total = 0, pending = 0, nholders = 0;
	memset(c->held, 0, nsites * sizeof *c->held);
	memset(c->held_blocks, 0, nsites * sizeof *c->held_blocks);
	memset(c->held_bytes, 0, nsites * sizeof *c->held_bytes);
	size_t sorted = 1;   /* a walker hands most heaps over in place order already */
	while (sorted < c->nblocks && by_place(&c->blocks[sorted - 1], &c->blocks[sorted]) <= 0)
		sorted++;
	if (sorted < c->nblocks)
		qsort(c->blocks, c->nblocks, sizeof *c->blocks, by_place);
	/* at most one holder in two blocks (a free block below each) */
	live_addr_t *holders = malloc((c->nblocks / 2 + 1) * sizeof *holders);
	if (!holders)
		return;
	for (size_t k = 0; k < c->nblocks; k++) {
		const hl_block_t *b = &c->blocks[k];
		if (k && b->region != c->blocks[k - 1].region)
			pending = 0;      /* free bytes above every live block: not held */
		if (b->state == HL_BLOCK_FREE || b->state == HL_BLOCK_CACHED || b->state == HL_BLOCK_DIRTY ||
		    b->state == HL_BLOCK_MUZZY) {
			pending += b->size;
			continue;
		}
		if (b->state != HL_BLOCK_LIVE || !pending)
			continue;
		/* the holder's address, and (in id) the bytes it holds */
		live_addr_t h = { (uintptr_t)b->addr, (long)pending };
		holders[nholders++] = h;
		total += pending;
		pending = 0;
	}
	qsort(holders, nholders, sizeof *holders, by_addr);
	size_t ids = (size_t)hl_trace_max_id(c->t);
	for (size_t id = 0; nholders && id < ids; id++) {
		if (!c->addr[id])
			continue;
		live_addr_t key = { c->addr[id], 0 };
		live_addr_t *hit = bsearch(&key, holders, nholders, sizeof key, by_addr);
		if (!hit || hit->id < 0)
			continue;
		unsigned s = c->site[id];
		c->held[s] += (size_t)hit->id;
		c->held_blocks[s]++;
		c->held_bytes[s] += c->req[id];
		hit->id = -1;     /* counted */
	}
	for (size_t k = 0; k < nholders; k++)
		if (holders[k].id >= 0) {    /* a live block the replay does not know */
			c->held[0] += (size_t)holders[k].id;
			c->held_blocks[0]++;
		}
	free(holders);
	if (total <= c->best_held && c->run->holds)
		return;
	c->best_held = total;
	dx_run_t *run = c->run;
	free(run->holds);
	run->holds = calloc(nsites, sizeof *run->holds);
	run->nholds = 0;
	run->hold_sample = sample;
	for (size_t s = 0; run->holds && s < nsites; s++)
		if (c->held[s])
			run->holds[run->nholds++] = (dx_hold_t){ (unsigned)s, c->held[s], c->held_blocks[s],
								 c->held_bytes[s] };
}

/* The causes of the model's @p committed bytes, scaled by the rate @p k
 * (overhead: what the scaled causes leave of the scaled sum). */
static void attribute(dx_ctx_t *c, dx_sample_t *s, size_t committed, unsigned long k)
{
	size_t by_state[HL_BLOCK_NSTATES] = { 0 };
	c->nblocks = 0;
	hl_walk(c->h, collect, c);
	for (size_t k = 0; k < c->nblocks; k++)
		by_state[c->blocks[k].state] += c->blocks[k].size;
	size_t *b = s->bytes;
	b[DX_LIVE] = c->live_bytes;
	b[DX_ROUNDING] = by_state[HL_BLOCK_LIVE] > c->live_bytes ? by_state[HL_BLOCK_LIVE] - c->live_bytes : 0;
	b[DX_CACHED] = by_state[HL_BLOCK_CACHED];
	b[DX_HOLE] = by_state[HL_BLOCK_FREE];
	b[DX_TOP] = by_state[HL_BLOCK_TOP];
	b[DX_DIRTY] = by_state[HL_BLOCK_DIRTY];
	b[DX_MUZZY] = by_state[HL_BLOCK_MUZZY];
	b[DX_RETURNED] = by_state[HL_BLOCK_RETURNED];
	const char *family = hl_policy_family(c->run->policy);
	if (family && !strcmp(family, "glibc"))
		bins_rules(c->h, b);
	size_t named = 0;
	for (int i = 0; i < DX_NCAUSES; i++)
		if (i != DX_OVERHEAD)
			named += b[i];
	b[DX_OVERHEAD] = committed > named ? committed - named : 0;
	if (k > 1) {
		named = 0;
		for (int i = 0; i < DX_NCAUSES; i++)
			if (i != DX_OVERHEAD)
				named += (b[i] *= k);
		b[DX_OVERHEAD] = s->committed > named ? s->committed - named : 0;
	}
	count_holds(c, (size_t)(s - c->run->samples));
}

/* ---- samples ----------------------------------------------------------------- */

static int take_sample(dx_ctx_t *c, size_t ops, double ms, size_t rss)
{
	dx_run_t *run = c->run;
	if (run->nsamples == c->cap) {
		size_t ncap = c->cap ? c->cap * 2 : 128;
		dx_sample_t *n = realloc(run->samples, ncap * sizeof *n);
		if (!n)
			return -1;
		run->samples = n;
		c->cap = ncap;
	}
	dx_sample_t *s = &run->samples[run->nsamples++];
	memset(s, 0, sizeof *s);
	s->op = ops;
	s->ms = ms;
	s->measured_rss = rss;
	s->committed = stat_size(c->h, "committed_bytes");
	/* what the process's RSS would count: the heap's pages and the
	 * allocator's own metadata (jemalloc's base: 5.1 MiB of the Python
	 * case's 15.6 MiB at the end, bench/HISTORY.md) */
	s->resident = stat_size(c->h, "resident_bytes") + stat_size(c->h, "os.metadata_resident_bytes");
	unsigned long k = c->sampled ? hl_trace_rate_at(c->t, ops) : 1;
	size_t model_committed = s->committed;
	s->committed = dx_scaled(k, c->started, s->committed);
	s->resident = dx_scaled(k, c->started, s->resident);
	if (s->committed > run->peak_committed)
		run->peak_committed = s->committed;
	if (s->resident > run->peak_resident)
		run->peak_resident = s->resident;
	if (c->attribute && (ops >= c->next_split || ops == hl_trace_ops(c->t))) {
		attribute(c, s, model_committed, k);
		s->attributed = true;
		run->nattributed++;
		size_t nops = hl_trace_ops(c->t);
		while (c->next_split <= ops)   /* the next 1/DX_ATTRIBUTED of the ops */
			c->next_split += nops / DX_ATTRIBUTED ? nops / DX_ATTRIBUTED : 1;
	}
	return 0;
}

/* Takes the samples due after @p done ops. */
static int samples_due(dx_ctx_t *c, size_t done)
{
	size_t ops;
	unsigned long ms;
	size_t rss;
	bool any = false;
	while (hl_trace_sample(c->t, c->next, &ops, &ms, &rss) && ops <= done) {
		c->next++;
		if (!any && take_sample(c, done, (double)ms, rss) < 0)
			return -1;
		any = true;         /* several samples between two ops: one walk */
	}
	if (!hl_trace_samples(c->t) && done % c->every == 0 && take_sample(c, done, -1, 0) < 0)
		return -1;
	return 0;
}

static int after_op(const hl_replay_t *rp, void *arg)
{
	dx_ctx_t *c = arg;
	size_t i = hl_replay_op(rp), n = hl_trace_ops(c->t);
	follow(c, rp, i);
	if (c->progress && (i % 4096 == 0 || i + 1 == n))
		c->progress(c->run->policy, i + 1, n);
	return samples_due(c, i + 1) < 0;
}

static void ctx_free(dx_ctx_t *c)
{
	free(c->req);
	free(c->site);
	free(c->addr);
	free(c->blocks);
	free(c->held);
	free(c->held_blocks);
	free(c->held_bytes);
}

static int by_held(const void *a, const void *b)
{
	const dx_hold_t *x = a, *y = b;
	return x->held > y->held ? -1 : x->held < y->held;
}

static unsigned long long os_calls(hl_heap_t *h)
{
	static const char *const calls[] = { "os.mmap_calls", "os.munmap_calls", "os.madvise_dontneed_calls",
					     "os.madvise_free_calls", "os.mprotect_calls", "os.brk_calls",
					     "os.mremap_calls" };
	unsigned long long n = 0;
	for (size_t k = 0; k < sizeof calls / sizeof calls[0]; k++)
		n += stat_size(h, calls[k]);
	return n;
}

int dx_replay(const hl_trace_t *t, const char *policy, const char *conf, bool attribute, vis_progress_fn progress,
	      dx_run_t *run)
{
	memset(run, 0, sizeof *run);
	snprintf(run->policy, sizeof run->policy, "%s", policy);
	snprintf(run->conf, sizeof run->conf, "%s", conf ? conf : "");
	/* no request ledger: the replay knows every block's request already,
	 * and the ledger's table was a sixth of a replay's time */
	char quiet[512];
	int len = snprintf(quiet, sizeof quiet, "ledger:off%s%s", conf && *conf ? "," : "", conf ? conf : "");
	hl_heap_t *h = len > 0 && (size_t)len < sizeof quiet ? hl_heap_new_replay(policy, quiet) : NULL;
	if (!h)
		return 2;
	size_t ids = (size_t)hl_trace_max_id(t) + 1, nsites = hl_trace_sites(t) + 1;
	dx_ctx_t c = { .t = t, .run = run, .h = h, .attribute = attribute, .progress = progress,
		       .sampled = hl_trace_rates(t) > 0 || hl_trace_thinned(t, NULL) };
	if (c.sampled)
		c.started = dx_model_started(policy, conf);
	c.every = hl_trace_ops(t) / 100 ? hl_trace_ops(t) / 100 : 1;
	c.req = calloc(ids, sizeof *c.req);
	c.site = calloc(ids, sizeof *c.site);
	c.addr = calloc(ids, sizeof *c.addr);
	c.held = calloc(nsites, sizeof *c.held);
	c.held_blocks = calloc(nsites, sizeof *c.held_blocks);
	c.held_bytes = calloc(nsites, sizeof *c.held_bytes);
	const char *front = hl_policy_of_family("pymalloc");
	bool *past = front && !strcmp(policy, front) ? hl_trace_past_pymalloc(t) : NULL;
	hl_replay_opts_t o = { .verify = false, .repeat = 1, .after_op = after_op, .arg = &c, .by_stretch = true,
			       .touch = true, .past_front = past };
	hl_replay_result_t r;
	if (!c.req || !c.site || !c.addr || !c.held || !c.held_blocks || !c.held_bytes) {
		snprintf(run->message, sizeof run->message, "out of memory");
	} else if (hl_replay(h, t, &o, &r) < 0) {
		snprintf(run->message, sizeof run->message, "%s", r.message[0] ? r.message : "replay stopped");
	} else {
		run->ok = true;
		if (!run->nsamples || run->samples[run->nsamples - 1].op != hl_trace_ops(t))
			run->ok = take_sample(&c, hl_trace_ops(t), -1, 0) == 0;
	}
	if (run->nsamples) {
		run->final_committed = run->samples[run->nsamples - 1].committed;
		run->final_resident = run->samples[run->nsamples - 1].resident;
	}
	size_t peak = c.sampled ? 0 : stat_size(h, "os.peak_committed_bytes");   /* sampled: the samples' */
	if (peak > run->peak_committed)
		run->peak_committed = peak;
	run->os_calls = os_calls(h);
	if (run->holds)
		qsort(run->holds, run->nholds, sizeof *run->holds, by_held);
	ctx_free(&c);
	free(past);
	hl_heap_destroy(h);
	return 0;
}

void dx_run_free(dx_run_t *run)
{
	free(run->samples);
	free(run->holds);
	run->samples = NULL;
	run->holds = NULL;
}

size_t dx_model_started(const char *policy, const char *conf)
{
	static const char ops[] = "a 0 100\nf 0\n";
	hl_trace_t *t = hl_trace_parse("one malloc", ops, sizeof ops - 1);
	dx_run_t run;
	size_t bytes = t && dx_replay(t, policy, conf, false, NULL, &run) == 0 && run.ok ? run.final_resident : 0;
	if (t)
		dx_run_free(&run);
	hl_trace_free(t);
	return bytes;
}
