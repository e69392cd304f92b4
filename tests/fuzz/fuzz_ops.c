/*
 * Fuzz harness: an operation sequence on one heap, through the public API.
 *
 * Input layout:
 *   byte 0   which compiled-in policy (modulo their number)
 *   byte 1   bits 0-1: which configuration of that policy (its table's variants);
 *            bit 2: debug:on; bit 3: ledger:off
 *   then     one op per byte, with its arguments in the bytes after it:
 *            bit 7 the thread (0: this one, 1: a worker thread), bits 3-6
 *            the slot (16 of them), bits 0-2 the op:
 *              0 malloc  SIZE          4 calloc  COUNT SIZE
 *              1 free                  5 trim    SIZE (the pad)
 *              2 realloc SIZE          6 the worker thread exits; a new one starts
 *              3 memalign A SIZE       7 walk + statistics, or reset (R odd)
 *            SIZE is two bytes: 14 bits of size, 2 bits of scale (x1 for
 *            sizes below 256, x1, x16, x256), so that every size class,
 *            the mmap thresholds and a few megabytes are all reachable.
 *
 * Two threads' worth of ops: the worker is a real thread, but each op is
 * handed to it and waited for, so a run is deterministic (libFuzzer needs
 * that) and still makes cross-thread frees and thread exits real.
 *
 * After every op: the policy's checker must find the heap consistent, and
 * every live block must still hold the pattern written into it (a shadow
 * copy by formula: block seed and offset).  A new block must be aligned,
 * owned by the heap, as large as asked, and overlap no live block.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "heaplab.h"
#include "policy.h" /* realloc_zero_allocates */
#include "fuzz.h"

static const char H[] = "fuzz_ops";

enum { NSLOTS = 16, VERIFY_WHOLE = 4096, VERIFY_EDGE = 512 };

typedef struct slot {
	unsigned char *p;
	size_t n;
	unsigned seed;
} slot_t;

typedef struct run {
	hl_heap_t *h;
	const char *what;   /* policy and configuration, for messages */
	bool zero_allocates; /* realloc(p, 0) returns a block (sharded) */
	const uint8_t *in;
	size_t left;
	size_t op;          /* index of the op, for messages */
	unsigned seeds;
	slot_t slot[NSLOTS];
} run_t;

/* ---- the input --------------------------------------------------------- */

static unsigned take(run_t *r)
{
	if (!r->left)
		return 0;
	r->left--;
	return *r->in++;
}

static size_t take_size(run_t *r)
{
	unsigned v = take(r) << 8;
	v |= take(r);
	size_t base = v & 0x3fff;
	switch (v >> 14) {
	case 0: return base & 0xff;
	case 1: return base;
	case 2: return base << 4;
	default: return base << 8;
	}
}

/* ---- the shadow: what each live block must hold ------------------------ */

static inline unsigned char pattern(unsigned seed, size_t i)
{
	return (unsigned char)(seed * 131u + i * 7u + (i >> 9));
}

static void fill(slot_t *s)
{
	for (size_t i = 0; i < s->n; i++)
		s->p[i] = pattern(s->seed, i);
}

static void verify_range(run_t *r, const slot_t *s, size_t from, size_t to, const char *when)
{
	for (size_t i = from; i < to; i++)
		if (s->p[i] != pattern(s->seed, i))
			fuzz_bug(H, "%s: op %zu: %s: byte %zu of a live %zu-byte block %p changed (0x%02x, not 0x%02x)",
				 r->what, r->op, when, i, s->n, (void *)s->p, s->p[i], pattern(s->seed, i));
}

/* Every byte of a small block; the two ends of a large one. */
static void verify(run_t *r, const slot_t *s, const char *when)
{
	if (s->n <= VERIFY_WHOLE) {
		verify_range(r, s, 0, s->n, when);
		return;
	}
	verify_range(r, s, 0, VERIFY_EDGE, when);
	verify_range(r, s, s->n - VERIFY_EDGE, s->n, when);
}

/* Takes a block the heap just handed out into slot @p k (@p align: what
 * memalign asked for, 1 for the other calls; hl_block_align(n) in any case). */
static void adopt(run_t *r, int k, void *p, size_t n, size_t align, bool zeroed)
{
	slot_t *s = &r->slot[k];
	size_t want = align > hl_block_align(n) ? align : hl_block_align(n);
	if ((uintptr_t)p % want)
		fuzz_bug(H, "%s: op %zu: %p is not %zu-byte aligned", r->what, r->op, p, want);
	if (!hl_owns(r->h, p))
		fuzz_bug(H, "%s: op %zu: the heap does not own the block %p it handed out", r->what, r->op, p);
	size_t usable = hl_usable_size(r->h, p);
	if (usable < n)
		fuzz_bug(H, "%s: op %zu: %zu usable bytes for a request of %zu", r->what, r->op, usable, n);
	uintptr_t lo = (uintptr_t)p, hi = lo + (n ? n : 1);
	for (int j = 0; j < NSLOTS; j++) {
		const slot_t *o = &r->slot[j];
		if (j == k || !o->p)
			continue;
		uintptr_t olo = (uintptr_t)o->p, ohi = olo + (o->n ? o->n : 1);
		if (lo < ohi && olo < hi)
			fuzz_bug(H, "%s: op %zu: new block %p+%zu overlaps live block %p+%zu", r->what, r->op, p, n,
				 (void *)o->p, o->n);
	}
	if (zeroed)
		for (size_t i = 0; i < n; i++)
			if (((unsigned char *)p)[i])
				fuzz_bug(H, "%s: op %zu: calloc byte %zu is 0x%02x", r->what, r->op, i, ((unsigned char *)p)[i]);
	s->p = p;
	s->n = n;
	s->seed = ++r->seeds;
	fill(s);
}

static void release(run_t *r, int k)
{
	slot_t *s = &r->slot[k];
	if (!s->p)
		return;
	verify(r, s, "before free");
	hl_free(r->h, s->p);
	s->p = NULL;
}

/* ---- the ops ----------------------------------------------------------- */

typedef struct op {
	run_t *r;
	unsigned code;
	int slot;
	size_t size, count, align;
	unsigned byte;
} op_t;

static void do_malloc(op_t *o)
{
	run_t *r = o->r;
	release(r, o->slot);
	void *p = hl_malloc(r->h, o->size);
	if (p)
		adopt(r, o->slot, p, o->size, 1, false);
	else if (o->size < (1u << 24))
		fuzz_bug(H, "%s: op %zu: malloc(%zu) failed", r->what, r->op, o->size);
}

static void do_realloc(op_t *o)
{
	run_t *r = o->r;
	slot_t *s = &r->slot[o->slot];
	if (s->p)
		verify(r, s, "before realloc");
	slot_t old = *s;
	void *p = hl_realloc(r->h, s->p, o->size);
	if (o->size == 0 && old.p && !r->zero_allocates) {
		if (p)
			fuzz_bug(H, "%s: op %zu: realloc(p, 0) returned %p, not NULL", r->what, r->op, p);
		s->p = NULL;
		return;
	}
	if (!p)
		fuzz_bug(H, "%s: op %zu: realloc(%p, %zu) failed", r->what, r->op, (void *)old.p, o->size);
	if (old.p) {
		s->p = p;
		s->n = old.n < o->size ? old.n : o->size;
		verify(r, s, "the contents realloc kept");
		s->p = NULL;
	}
	adopt(r, o->slot, p, o->size, 1, false);
}

/* The A byte: bits 0-4 the alignment's log2 (0..16 valid powers of two),
 * bit 5 posix_memalign, bit 6 a non-power of two (refused with EINVAL). */
static void do_memalign(op_t *o)
{
	run_t *r = o->r;
	release(r, o->slot);
	size_t align = (size_t)1 << (o->byte & 31) % 17;
	bool posix = o->byte & 32;
	if (o->byte & 64)
		align = align * 3 + 48;
	void *p = NULL;
	int rc = 0;
	errno = 0;
	if (posix)
		rc = hl_posix_memalign(r->h, &p, align, o->size);
	else
		p = hl_memalign(r->h, align, o->size);
	bool valid = !(align & (align - 1)) && (!posix || align % sizeof(void *) == 0);
	if (!valid) {
		if (p || (posix ? rc : errno) != EINVAL)
			fuzz_bug(H, "%s: op %zu: %smemalign(%zu) was not refused with EINVAL", r->what, r->op,
				 posix ? "posix_" : "", align);
		return;
	}
	if (!p)
		fuzz_bug(H, "%s: op %zu: %smemalign(%zu, %zu) failed", r->what, r->op, posix ? "posix_" : "", align,
			 o->size);
	adopt(r, o->slot, p, o->size, align, false);
}

static void do_calloc(op_t *o)
{
	run_t *r = o->r;
	release(r, o->slot);
	void *p = hl_calloc(r->h, o->count, o->size);
	size_t n = o->count * o->size;
	if (!p)
		fuzz_bug(H, "%s: op %zu: calloc(%zu, %zu) failed", r->what, r->op, o->count, o->size);
	adopt(r, o->slot, p, n, 1, true);
}

static int walk_count(const hl_block_t *b, void *arg)
{
	if (b->state >= HL_BLOCK_NSTATES)
		return 1;
	++*(size_t *)arg;
	return 0;
}

static FILE *null_out(void)
{
	static FILE *null;
	if (!null)
		null = fopen("/dev/null", "w");
	return null;
}

static void do_look_or_reset(op_t *o)
{
	run_t *r = o->r;
	if (o->byte & 1) {
		if (hl_reset(r->h) == 0)
			for (int k = 0; k < NSLOTS; k++)
				r->slot[k].p = NULL;
		return;
	}
	size_t blocks = 0;
	if (hl_walk(r->h, walk_count, &blocks) != 0)
		fuzz_bug(H, "%s: op %zu: the walk reported a block of no known state", r->what, r->op);
	FILE *out = null_out();
	if (out && (hl_stats_json(r->h, out) != 0 || hl_stats_text(r->h, out) != 0))
		fuzz_bug(H, "%s: op %zu: the statistics failed", r->what, r->op);
}

static void run_op(void *arg)
{
	op_t *o = arg;
	switch (o->code) {
	case 0: do_malloc(o); break;
	case 1: release(o->r, o->slot); break;
	case 2: do_realloc(o); break;
	case 3: do_memalign(o); break;
	case 4: do_calloc(o); break;
	case 5: hl_trim(o->r->h, o->size); break;
	case 7: do_look_or_reset(o); break;
	}
}

/* ---- the worker thread ------------------------------------------------- */

static struct worker {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int state; /* 0 idle, 1 job posted, 2 quit */
	op_t *job;
	bool running;
} worker = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

static void *worker_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&worker.lock);
	for (;;) {
		while (worker.state == 0)
			pthread_cond_wait(&worker.cond, &worker.lock);
		if (worker.state == 2)
			break;
		run_op(worker.job);
		worker.state = 0;
		pthread_cond_broadcast(&worker.cond);
	}
	worker.state = 0;
	pthread_mutex_unlock(&worker.lock);
	return NULL;
}

static void worker_start(void)
{
	if (pthread_create(&worker.thread, NULL, worker_main, NULL) != 0)
		fuzz_bug(H, "cannot start the worker thread");
	worker.running = true;
}

/* The worker exits (the policies drain its caches), a new one starts. */
static void worker_restart(void)
{
	if (worker.running) {
		pthread_mutex_lock(&worker.lock);
		worker.state = 2;
		pthread_cond_broadcast(&worker.cond);
		pthread_mutex_unlock(&worker.lock);
		pthread_join(worker.thread, NULL);
	}
	worker_start();
}

static void on_worker(op_t *o)
{
	if (!worker.running)
		worker_start();
	pthread_mutex_lock(&worker.lock);
	worker.job = o;
	worker.state = 1;
	pthread_cond_broadcast(&worker.cond);
	while (worker.state == 1)
		pthread_cond_wait(&worker.cond, &worker.lock);
	pthread_mutex_unlock(&worker.lock);
}

/* ---- one input --------------------------------------------------------- */

static hl_heap_t *make_heap(run_t *r, char *what, size_t len)
{
	const char *pol = hl_policy_name(take(r) % hl_policy_count());
	unsigned flags = take(r);
	const char *base = "";
	const char *const *variants = hl_policy_variants(pol);
	for (unsigned i = 0; variants && variants[i] && i < 3; i++)
		if ((flags & 3) == i + 1)
			base = variants[i];
	char conf[256];
	snprintf(conf, sizeof conf, "%s%s%s%s", base, *base ? "," : "", flags & 4 ? "debug:on" : "debug:off",
		 flags & 8 ? ",ledger:off" : "");
	snprintf(what, len, "%s '%s'", pol, conf);
	fuzz_ran(H, "%s", what);
	r->zero_allocates = hl_policy_find(pol)->realloc_zero_allocates;
	hl_heap_t *h = hl_heap_new(pol, conf);
	if (!h)
		fuzz_bug(H, "%s: no heap: %s", what, hl_last_error());
	return h;
}

static void check_heap(run_t *r)
{
	if (hl_check(r->h, stderr) != 0)
		fuzz_bug(H, "%s: op %zu: the heap checker found problems (above)", r->what, r->op);
	for (int k = 0; k < NSLOTS; k++)
		if (r->slot[k].p)
			verify(r, &r->slot[k], "after the op");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static run_t r;
	char what[320];
	memset(&r, 0, sizeof r);
	r.in = data;
	r.left = size;
	r.what = what;
	r.h = make_heap(&r, what, sizeof what);
	while (r.left) {
		unsigned b = take(&r);
		op_t o = { .r = &r, .code = b & 7, .slot = (int)(b >> 3 & 15) };
		switch (o.code) {
		case 0: case 2: case 5: o.size = take_size(&r); break;
		case 3: o.byte = take(&r); o.size = take_size(&r); break;
		case 4: o.count = take(&r); o.size = take_size(&r) & 0xfff; break;
		case 7: o.byte = take(&r); break;
		}
		if (o.code == 6)
			worker_restart();
		else if (b & 128)
			on_worker(&o);
		else
			run_op(&o);
		check_heap(&r);
		r.op++;
	}
	for (int k = 0; k < NSLOTS; k++)
		release(&r, k);
	check_heap(&r);
	hl_heap_destroy(r.h);
	return 0;
}
