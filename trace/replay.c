/*
 * Replaying a trace on a heap, the way the CMU malloc-lab driver does:
 * a checked pass (every payload filled with a pattern of its block id,
 * alignment, no overlap with any live block, pattern intact at free and
 * across realloc, the heap's own checker), then timed passes without the
 * checks for throughput.  Ops on thread N run on a real thread N, handed
 * over one at a time, so cross-thread frees really cross threads.  A
 * "#@exit N" line detaches thread N from the heap as its exit would (the
 * policy's thread_exit); N's next op, a new thread numbered N, runs on the
 * same real thread, which attaches anew.
 */
#include "config.h"
#include <pthread.h>
#include <search.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "policy.h"
#include "trace.h"

/* ---- payload patterns -------------------------------------------------- */

static inline uint64_t pattern_word(long id, size_t i)
{
	return ((uint64_t)id << 40) ^ (i * 0x9e3779b97f4a7c15ull) ^ 0x5bd1e995u;
}

static void fill(void *p, size_t n, long id)
{
	uint64_t *w = p;
	size_t words = n / 8;
	for (size_t i = 0; i < words; i++)
		w[i] = pattern_word(id, i);
	unsigned char *tail = (unsigned char *)p + words * 8;
	for (size_t i = 0; i < n % 8; i++)
		tail[i] = (unsigned char)(pattern_word(id, words) >> (8 * i));
}

static bool intact(const void *p, size_t n, long id)
{
	const uint64_t *w = p;
	size_t words = n / 8;
	for (size_t i = 0; i < words; i++)
		if (w[i] != pattern_word(id, i))
			return false;
	const unsigned char *tail = (const unsigned char *)p + words * 8;
	for (size_t i = 0; i < n % 8; i++)
		if (tail[i] != (unsigned char)(pattern_word(id, words) >> (8 * i)))
			return false;
	return true;
}

/* ---- live ranges, for the overlap check -------------------------------- */

typedef struct range {
	uintptr_t lo, hi;
	long id;
} range_t;

static int range_cmp(const void *a, const void *b)
{
	const range_t *x = a, *y = b;
	if (x->hi <= y->lo)
		return -1;
	if (x->lo >= y->hi)
		return 1;
	return 0;
}

/* ---- thread hand-off --------------------------------------------------- */

typedef struct worker {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int state;               /* 0 idle, 1 job posted, 2 quit */
	void (*job)(void *);
	void *arg;
} worker_t;

static void *worker_main(void *arg)
{
	worker_t *w = arg;
	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (w->state == 0)
			pthread_cond_wait(&w->cond, &w->lock);
		if (w->state == 2)
			break;
		w->job(w->arg);
		w->state = 0;
		pthread_cond_broadcast(&w->cond);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

static void worker_run(worker_t *w, void (*job)(void *), void *arg)
{
	pthread_mutex_lock(&w->lock);
	w->job = job;
	w->arg = arg;
	w->state = 1;
	pthread_cond_broadcast(&w->cond);
	while (w->state == 1)
		pthread_cond_wait(&w->cond, &w->lock);
	pthread_mutex_unlock(&w->lock);
}

/* ---- one pass ---------------------------------------------------------- */

/* A pass is the replay context after_op callbacks see (hl_replay_t). */
typedef struct hl_replay {
	hl_heap_t *h;
	const hl_trace_t *t;
	const hl_replay_opts_t *o;
	hl_replay_result_t *r;
	bool verify;
	void **blocks;         /* address of each live block id */
	void **freed_at;       /* address each block id had when it was freed */
	size_t *sizes;         /* requested size of each live block id */
	void *tree;            /* tsearch tree of live ranges */
	range_t *ranges;       /* one per id (the tree points into it) */
	worker_t *workers;     /* one per thread id >= 1 */
	size_t live, peak_live;
	const hl_trace_op_t *op; /* op being run by a worker */
	size_t op_index;       /* and its number */
	void *result;
	bool on_worker;        /* a stretch runs on its thread: call directly */
	size_t stretch_at;     /* a stretch: its first op, then the op after it */
	int stretch_rc;        /* one_op's answer that ended it */
	size_t index;          /* the op just performed, for after_op */
	bool timed;            /* a replay heap: the clock follows the trace */
	uint64_t time_base;    /* its time when the pass began */
	size_t time_k;         /* "#@t" stamps at or before the op */
} pass_t;

hl_heap_t *hl_replay_heap(const hl_replay_t *rp) { return rp->h; }
const hl_trace_t *hl_replay_trace(const hl_replay_t *rp) { return rp->t; }
size_t hl_replay_op(const hl_replay_t *rp) { return rp->index; }

void *hl_replay_block(const hl_replay_t *rp, long id)
{
	return rp && id >= 0 && id < rp->t->max_id ? rp->blocks[id] : NULL;
}

static int failf(pass_t *ps, size_t i, const char *fmt, const char *extra)
{
	hl_replay_result_t *r = ps->r;
	r->ok = false;
	r->failed_op = i;
	r->failed_line = hl_trace_op_at(ps->t, i)->line;
	char op[64];
	hl_trace_op_text(ps->t, i, op, sizeof op);
	char what[160];
	snprintf(what, sizeof what, fmt, extra ? extra : "");
	snprintf(r->message, sizeof r->message, "%s:%u: op %zu '%s': %s", ps->t->path, r->failed_line, i, op,
		 what);
	return -1;
}

/* Names the operation being replayed in a fatal line of the allocator. */
static void describe_op(void *arg, char *buf, size_t len)
{
	const pass_t *ps = arg;
	size_t i = ps->op_index;
	char text[64];
	hl_trace_op_text(ps->t, i, text, sizeof text);
	snprintf(buf, len, "op %zu '%s' (%s:%u)", i, text, ps->t->path, hl_trace_op_line(ps->t, i));
}

/* Runs the allocator call of ps->op (on whichever thread calls it). */
static void call_allocator(void *arg)
{
	pass_t *ps = arg;
	const hl_trace_op_t *op = ps->op;
	hl_fatal_context(describe_op, ps);
	if (op->kind == 'x') {       /* the thread exits: it leaves the heap */
		hl_thread_detach(ps->h);
		hl_fatal_context(NULL, NULL);
		return;
	}
	void *old = op->id < 0 ? NULL : op->kind == 'f' && op->aux ? ps->freed_at[op->id] : ps->blocks[op->id];
	if (ps->o->past_front) {
		hl_thread_t *th = hl_thread_get(ps->h);
		if (th)
			th->past_front = op->site && ps->o->past_front[op->site];
	}
	switch (op->kind) {
	case 'a': ps->result = hl_malloc(ps->h, op->size); break;
	case 'c': ps->result = hl_calloc(ps->h, op->aux, op->size); break;
	case 'm': ps->result = hl_memalign(ps->h, op->aux, op->size); break;
	case 'r': ps->result = hl_realloc(ps->h, old, op->size); break;
	case 'f': hl_free(ps->h, old); ps->result = NULL; break;
	}
	hl_fatal_context(NULL, NULL);
}

static void run_on_thread(pass_t *ps, const hl_trace_op_t *op)
{
	ps->op = op;
	if (op->tid == 0 || !ps->workers || ps->on_worker)
		call_allocator(ps);
	else
		worker_run(&ps->workers[op->tid - 1], call_allocator, ps);
}

static int forget_block(pass_t *ps, size_t i, long id)
{
	if (!ps->verify)
		return 0;
	void *p = ps->blocks[id];
	if (!intact(p, ps->sizes[id], id))
		return failf(ps, i, "payload of block changed while it was live%s", NULL);
	tdelete(&ps->ranges[id], &ps->tree, range_cmp);
	return 0;
}

/* Writes each page of [p, p + n) once, leaving its bytes as they were: the
 * page becomes resident as it does when a program fills its block.  A byte
 * every 4096 and the last one reach every page of any size from 4 KiB. */
static void touch_pages(void *p, size_t n)
{
	volatile unsigned char *b = p;
	for (size_t k = 0; k < n; k += 4096)
		b[k] = b[k];
	if (n)
		b[n - 1] = b[n - 1];
}

static int adopt_block(pass_t *ps, size_t i, long id, void *p, size_t n, size_t keep)
{
	ps->blocks[id] = p;
	ps->sizes[id] = n;
	if (!ps->verify && ps->o->touch)   /* as much as the program wrote, where the recording says */
		touch_pages(p, hl_trace_op_touched(ps->t, i, n));
	if (!ps->verify)
		return 0;
	if ((uintptr_t)p % hl_block_align(n))
		return failf(ps, i, "block is not aligned to 16 bytes (8 for 8 bytes or less)%s", NULL);
	const hl_trace_op_t *op = hl_trace_op_at(ps->t, i);
	if (op->kind == 'm' && (uintptr_t)p % op->aux)
		return failf(ps, i, "block does not have the alignment asked for%s", NULL);
	if (keep && !intact(p, keep, id))
		return failf(ps, i, "realloc did not preserve the contents%s", NULL);
	if (op->kind == 'c') {
		const unsigned char *b = p;
		for (size_t k = 0; k < n; k++)
			if (b[k])
				return failf(ps, i, "calloc memory is not zeroed%s", NULL);
	}
	range_t *rg = &ps->ranges[id];
	rg->lo = (uintptr_t)p;
	rg->hi = (uintptr_t)p + (n ? n : 1);
	rg->id = id;
	range_t **found = tsearch(rg, &ps->tree, range_cmp);
	if (!found)
		return failf(ps, i, "out of memory in the checker%s", NULL);
	if (*found != rg) {
		char other[32];
		snprintf(other, sizeof other, "%ld", (*found)->id);
		return failf(ps, i, "block overlaps live block %s", other);
	}
	fill(p, n, id);
	return 0;
}

static int step(pass_t *ps, size_t i)
{
	const hl_trace_op_t *op = hl_trace_op_at(ps->t, i);
	ps->op_index = i;
	if (op->kind == 'x') {
		run_on_thread(ps, op);
		return 0;
	}
	if (op->kind == 't' || op->kind == 's' || (op->kind == 'f' && op->id < 0))
		return 0;
	long id = op->id;
	size_t old_n = ps->blocks[id] ? ps->sizes[id] : 0;
	size_t n = op->kind == 'c' ? op->aux * op->size : op->size;
	bool had = ps->blocks[id] != NULL;
	if (had && (op->kind == 'f' || op->kind == 'r')) {
		if (forget_block(ps, i, id) < 0)
			return -1;
		ps->live -= old_n;
	}
	run_on_thread(ps, op);
	/* A trace's "r ID 0" ends the block (glibc's realloc(p, 0)); a policy
	 * that returns a new block there (sharded, as mimalloc) has it freed
	 * at once, so the trace means the same under every policy. */
	if (op->kind == 'r' && n == 0 && ps->result)
		hl_free(ps->h, ps->result);
	if (op->kind == 'f' || (op->kind == 'r' && n == 0)) {
		if (had)
			ps->freed_at[id] = ps->blocks[id];
		ps->blocks[id] = NULL;
		return 0;
	}
	if (!ps->result)
		return failf(ps, i, "the allocator returned NULL%s", NULL);
	ps->live += n;
	if (ps->live > ps->peak_live)
		ps->peak_live = ps->live;
	size_t keep = op->kind == 'r' && had ? (old_n < n ? old_n : n) : 0;
	return adopt_block(ps, i, id, ps->result, n, keep);
}

static int check_heap(pass_t *ps, size_t i)
{
	char report[512];
	FILE *mem = fmemopen(report, sizeof report, "w");
	int problems = hl_check(ps->h, mem);
	if (mem)
		fclose(mem);
	if (problems) {
		report[sizeof report - 1] = 0;
		char *nl = strchr(report, '\n');
		if (nl)
			*nl = 0;
		return failf(ps, i, "heap checker: %s", report);
	}
	return 0;
}

static bool want_check(const hl_replay_opts_t *o, size_t i, size_t nops)
{
	if (!o->check_every)
		return i + 1 == nops;
	return (i + 1) % o->check_every == 0 || i + 1 == nops;
}

static void no_op(void *arg) { (void)arg; }

static int start_workers(pass_t *ps)
{
	unsigned n = ps->t->nthreads > 1 ? ps->t->nthreads - 1 : 0;
	if (!n)
		return 0;
	ps->workers = calloc(n, sizeof *ps->workers);
	if (!ps->workers)
		return -1;
	for (unsigned k = 0; k < n; k++) {
		worker_t *w = &ps->workers[k];
		pthread_mutex_init(&w->lock, NULL);
		pthread_cond_init(&w->cond, NULL);
		if (pthread_create(&w->thread, NULL, worker_main, w) != 0)
			return -1;
		worker_run(w, no_op, NULL);
	}
	return 0;
}

static void stop_workers(pass_t *ps)
{
	unsigned n = ps->t->nthreads > 1 ? ps->t->nthreads - 1 : 0;
	for (unsigned k = 0; ps->workers && k < n; k++) {
		worker_t *w = &ps->workers[k];
		pthread_mutex_lock(&w->lock);
		w->state = 2;
		pthread_cond_broadcast(&w->cond);
		pthread_mutex_unlock(&w->lock);
		pthread_join(w->thread, NULL);
	}
	free(ps->workers);
	ps->workers = NULL;
}

static void free_tree_node(void *node) { (void)node; }

/* Frees every block still live so the next pass starts clean. */
static void drain(pass_t *ps)
{
	for (long id = 0; id < ps->t->max_id; id++)
		if (ps->blocks[id]) {
			hl_free(ps->h, ps->blocks[id]);
			ps->blocks[id] = NULL;
		}
	tdestroy(ps->tree, free_tree_node);
	ps->tree = NULL;
	ps->live = 0;
}

static double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Sets a replay heap's clock to op @p i's time in the trace: its last "#@t"
 * stamp, or i times op_ns (ops come in order: the stamps are walked once). */
static void follow_clock(pass_t *ps, size_t i)
{
	const hl_trace_t *t = ps->t;
	uint64_t ns = (uint64_t)i * ps->o->op_ns;
	if (t->ntimes) {
		while (ps->time_k < t->ntimes && t->times[ps->time_k].ops_before <= i)
			ps->time_k++;
		ns = ps->time_k ? t->times[ps->time_k - 1].us * 1000u : 0;
	}
	hl_heap_set_time(ps->h, ps->time_base + ns);
}

/* Op @p i with its checks and the caller's after_op: 0 to go on, 1 when
 * after_op asks to stop, -1 when a check failed. */
static int one_op(pass_t *ps, size_t i)
{
	const hl_trace_t *t = ps->t;
	if (ps->timed)
		follow_clock(ps, i);
	if (step(ps, i) < 0)
		return -1;
	if (ps->verify && ps->o->check_heap && want_check(ps->o, i, t->nops) && check_heap(ps, i) < 0)
		return -1;
	ps->index = i;
	return ps->o->after_op && ps->o->after_op(ps, ps->o->arg) ? 1 : 0;
}

/* On a worker: the ops from ps->stretch_at while they stay on its thread. */
static void run_stretch(void *arg)
{
	pass_t *ps = arg;
	const hl_trace_t *t = ps->t;
	unsigned tid = hl_trace_op_at(t, ps->stretch_at)->tid;
	size_t i = ps->stretch_at;
	ps->on_worker = true;
	ps->stretch_rc = 0;
	while (i < t->nops && hl_trace_op_at(t, i)->tid == tid && (ps->stretch_rc = one_op(ps, i)) == 0)
		i++;
	ps->stretch_at = i;
	ps->on_worker = false;
}

static int run_pass(pass_t *ps, bool verify, bool last)
{
	const hl_trace_t *t = ps->t;
	ps->verify = verify;
	ps->time_base = ps->timed ? hl_heap_time(ps->h) : 0;
	ps->time_k = 0;
	double start = now_seconds();
	size_t i = 0;
	bool stopped = false;
	while (i < t->nops && !stopped) {
		int rc;
		unsigned tid = hl_trace_op_at(t, i)->tid;
		if (ps->o->by_stretch && ps->workers && tid != 0) {
			ps->stretch_at = i;
			worker_run(&ps->workers[tid - 1], run_stretch, ps);
			rc = ps->stretch_rc;
			i = ps->stretch_at + (rc != 0);
		} else {
			rc = one_op(ps, i++);
		}
		if (rc < 0)
			return -1;
		stopped = rc > 0;
	}
	if (ps->timed && !stopped)   /* the clock goes on to the trace's end (an idle end) */
		hl_heap_set_time(ps->h, ps->time_base + hl_trace_end_ns(t, ps->o->op_ns));
	if (!verify)
		ps->r->seconds += now_seconds() - start;
	ps->r->ops = t->nops;
	if (!last)
		drain(ps);
	return 0;
}

/* Utilization: peak live requested bytes over the heap's peak committed
 * bytes (the page source's figure, through the public statistics). */
static void measure(pass_t *ps)
{
	hl_replay_result_t *r = ps->r;
	double peak = 0;
	hl_stat(ps->h, "os.peak_committed_bytes", &peak);
	r->peak_requested = ps->peak_live;
	r->peak_committed = (size_t)peak;
	r->utilization = r->peak_committed ? (double)r->peak_requested / (double)r->peak_committed : 0;
}

/* A recording that went past pymalloc ("#@front pymalloc") replayed
 * under the model of pymalloc, without a table of its own: the sites'
 * table (pymalloc_sites.c), so that the loader's and the libraries' calls
 * go past the pools as they do in the real process; NULL otherwise. */
static bool *front_table(const hl_heap_t *h, const hl_trace_t *t, const hl_replay_opts_t *o)
{
	const char *front = hl_trace_front(t), *model = hl_policy_of_family("pymalloc");
	if (o->past_front || !front || strcmp(front, "pymalloc") || !model || strcmp(hl_heap_policy(h), model))
		return NULL;
	return hl_trace_past_pymalloc(t);
}

int hl_replay(hl_heap_t *h, const hl_trace_t *t, const hl_replay_opts_t *o, hl_replay_result_t *r)
{
	hl_replay_opts_t defaults = { .verify = true, .check_heap = true, .repeat = 1 };
	if (!o)
		o = &defaults;
	hl_replay_opts_t with_table;
	bool *table = front_table(h, t, o);
	if (table) {
		with_table = *o;
		with_table.past_front = table;
		o = &with_table;
	}
	memset(r, 0, sizeof *r);
	r->ok = true;
	pass_t ps = { .h = h, .t = t, .o = o, .r = r, .timed = hl_heap_replay_clock(h) };
	size_t n = (size_t)(t->max_id > 0 ? t->max_id : 1);
	ps.blocks = calloc(n, sizeof *ps.blocks);
	ps.sizes = calloc(n, sizeof *ps.sizes);
	ps.ranges = calloc(n, sizeof *ps.ranges);
	ps.freed_at = calloc(n, sizeof *ps.freed_at);
	if (!ps.blocks || !ps.sizes || !ps.ranges || !ps.freed_at || start_workers(&ps) < 0) {
		snprintf(r->message, sizeof r->message, "%s: out of memory for the replay", t->path);
		r->ok = false;
	}
	int passes = o->repeat > 0 ? o->repeat : 0;
	if (r->ok && o->verify && run_pass(&ps, true, passes == 0) < 0)
		r->ok = false;
	if (r->ok)
		measure(&ps);
	for (int k = 0; r->ok && k < passes; k++)
		if (run_pass(&ps, false, k + 1 == passes) < 0)
			r->ok = false;
	if (!o->verify && r->ok)
		measure(&ps);
	stop_workers(&ps);
	tdestroy(ps.tree, free_tree_node);
	free(ps.blocks);
	free(ps.sizes);
	free(ps.ranges);
	free(ps.freed_at);
	free(table);
	return r->ok ? 0 : -1;
}
