/*
 * Heap instances and dispatch: the public hl_ API.
 *
 * Everything that is the same for every policy happens here, once:
 * argument checks (calloc overflow, impossible sizes, bad alignments,
 * NULL, zero sizes), realloc's special cases, zeroing for calloc,
 * operation counters and the request ledger.  Debug mode's checks
 * (junk fills, canaries, the checker around every operation, telling a
 * double free from a foreign pointer) are the guard's (guard.c); this file
 * brackets every operation with it.  A policy sees only requests it must
 * serve.
 */
#include "config.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bits.h"
#include "heap_internal.h"

/* ---- creation and destruction ------------------------------------------ */

hl_heap_t *hl_heap_new(const char *policy, const char *conf)
{
	const hl_policy_t *pol = hl_policy_find(policy);
	if (!pol) {
		char names[256] = "";
		for (size_t i = 0; i < hl_policy_count(); i++) {
			strncat(names, i ? ", " : "", sizeof names - strlen(names) - 1);
			strncat(names, hl_policy_name(i), sizeof names - strlen(names) - 1);
		}
		hl_set_error("unknown policy '%s'; compiled in: %s", policy ? policy : "", names);
		errno = EINVAL;
		return NULL;
	}
	hl_heap_t *h = hl_os_boot_alloc(sizeof *h);
	if (!h) {
		hl_set_error("out of memory for a heap");
		return NULL;
	}
	char err[512];
	if (hl_conf_parse(&h->conf, pol->options, conf, err, sizeof err) < 0) {
		hl_set_error("%s: %s", pol->name, err);
		hl_os_boot_free(h, sizeof *h);
		errno = EINVAL;
		return NULL;
	}
	if (hl_heap_slot_acquire(h) < 0) {
		hl_set_error("too many heaps alive at once (at most %d)", HL_MAX_HEAPS);
		hl_os_boot_free(h, sizeof *h);
		errno = ENOMEM;
		return NULL;
	}
	h->policy = pol;
	h->debug = hl_conf_bool(&h->conf, "debug");
	h->ledger_on = hl_conf_bool(&h->conf, "ledger");
	h->clock_replay = hl_conf_enum(&h->conf, "clock") == 1;
	pthread_mutex_init(&h->clock_lock, NULL);
	hl_os_init(&h->os);
	hl_os_fail_plan(&h->os, (uint64_t)hl_conf_int(&h->conf, "os_fail_at"),
			(uint64_t)hl_conf_int(&h->conf, "os_fail_every"));
	hl_os_init(&h->ledger_os);
	hl_ledger_init(&h->ledger, &h->ledger_os);
	hl_meta_init_private(&h->threads_pool, &h->os, sizeof(hl_thread_t));
	pthread_mutex_init(&h->threads_lock, NULL);
	hl_guard_init(&h->guard, &h->ledger_os);
	h->plain = !h->debug && !h->ledger_on;
	h->malloc_fn = pol->malloc;
	h->free_fn = pol->free;
	hl_heap_listening(h, false);
	h->state = pol->init(h, &h->conf);
	h->call_st = h->debug ? (void *)h : h->state;
	if (!h->state) {
		hl_heap_slot_release(h);
		hl_os_release_all(&h->os);
		hl_os_release_all(&h->ledger_os);
		hl_os_boot_free(h, sizeof *h);
		return NULL;
	}
	return h;
}

hl_heap_t *hl_heap_new_replay(const char *policy, const char *conf)
{
	char text[512];
	int n = snprintf(text, sizeof text, "clock:replay%s%s", conf && *conf ? "," : "", conf ? conf : "");
	if (n < 0 || (size_t)n >= sizeof text) {
		hl_set_error("configuration too long");
		errno = EINVAL;
		return NULL;
	}
	return hl_heap_new(policy, text);
}

void hl_heap_listening(hl_heap_t *h, bool on)
{
	const hl_policy_t *pol = h->policy;
#ifdef HL_EVENTS_COMPILED_OUT
	on = true;  /* both copies are the same code: no identical-code-folding jump */
#endif
	void *(*m)(void *, hl_thread_t *, size_t) = !on && pol->malloc_quiet ? pol->malloc_quiet : pol->malloc;
	void (*f)(void *, hl_thread_t *, void *) = !on && pol->free_quiet ? pol->free_quiet : pol->free;
	if (h->debug)
		m = hl_guard_malloc;  /* which calls the policy's malloc */
	__atomic_store_n(&h->malloc_fn, m, __ATOMIC_RELAXED);
	__atomic_store_n(&h->free_fn, f, __ATOMIC_RELAXED);
	if (h == hl_fast_heap) {
		__atomic_store_n(&hl_fast_calls.malloc_fn, m, __ATOMIC_RELAXED);
		__atomic_store_n(&hl_fast_calls.free_fn, f, __ATOMIC_RELAXED);
		/* the inline fast paths are the quiet copies' hits */
		__atomic_store_n(&hl_fast_calls.path, on ? 0 : hl_fast_calls.quiet_path, __ATOMIC_RELAXED);
		if (hl_fast_calls.repath)
			hl_fast_calls.repath();
	}
}

void hl_heap_destroy(hl_heap_t *h)
{
	if (!h)
		return;
	hl_heap_slot_release(h);
	hl_event_forget(h);
	if (h->policy->destroy)
		h->policy->destroy(h->state);
	hl_os_release_all(&h->os);
	hl_os_release_all(&h->ledger_os);
	hl_os_boot_free(h, sizeof *h);
}

const char *hl_heap_policy(const hl_heap_t *h) { return h->policy->name; }
struct hl_os *hl_heap_os(hl_heap_t *h) { return &h->os; }

void *hl_policy_state_new(hl_heap_t *h, size_t size)
{
	void *st = hl_os_reserve_meta(&h->os, hl_align_up(size, hl_os_page(&h->os)));
	if (!st)
		hl_set_error("%s: out of memory for the policy state", h->policy->name);
	return st; /* fresh anonymous pages: already zero */
}
bool hl_heap_debug(const hl_heap_t *h) { return h->debug; }
unsigned hl_heap_id(const hl_heap_t *h) { return h->id; }

/* ---- bookkeeping around every operation -------------------------------- */

static inline void add_usable(hl_thread_t *t, int64_t delta)
{
	__atomic_store_n(&t->live_usable, t->live_usable + delta, __ATOMIC_RELAXED);
}

static const char *const op_names[HL_OP_NOPS] = {
	"malloc", "free", "calloc", "realloc", "memalign", "failed", "trim",
};

/* Accounts a block the policy has just handed out (the careful path: the
 * fast paths below skip it when the heap is plain).  In debug mode it
 * closes the operation the guard opened. */
static __attribute__((noinline)) void *handed_out(hl_heap_t *h, hl_thread_t *t, void *p, size_t asked, enum hl_op op)
{
	if (HL_UNLIKELY(!p)) {
		count(t, HL_OP_FAILED);
		if (HL_UNLIKELY(h->debug))
			hl_guard_end(h, op_names[op]);
		errno = ENOMEM;
		return NULL;
	}
	if (h->ledger_on) {
		if (HL_UNLIKELY(!hl_ledger_add(&h->ledger, p, asked))) {
			/* no memory to remember it: the block goes back */
			h->policy->free(h->state, t, p);
			return handed_out(h, t, NULL, asked, op);
		}
		add_usable(t, (int64_t)h->policy->usable_size(h->state, p));
	}
	count(t, op);
	if (HL_UNLIKELY(h->debug)) {
		hl_guard_handout(h, p, asked, true);
		hl_guard_end(h, op_names[op]);
	}
	return p;
}

/* Accounts a block about to go back to the policy.  When the ledger does
 * not know the pointer it is not live: the policy gets the first chance to
 * say what is wrong, then the core does. */
static bool taking_back(hl_heap_t *h, hl_thread_t *t, void *p)
{
	if (!h->ledger_on)
		return true;
	if (hl_ledger_remove(&h->ledger, p) == (size_t)-1)
		return false;
	add_usable(t, -(int64_t)h->policy->usable_size(h->state, p));
	return true;
}

static __attribute__((noreturn)) void not_live(hl_heap_t *h, hl_thread_t *t, void *p)
{
	h->policy->free(h->state, t, p);
	hl_fatal(h->policy, "free of a pointer that is not live (double free or not from this heap)", p);
}

/* ---- the allocation API ------------------------------------------------ */

void *hl_malloc(hl_heap_t *h, size_t n)
{
	return hl_malloc_inline(h, n);
}

void *hl_malloc_careful(hl_heap_t *h, hl_thread_t *t, void *p, size_t n)
{
	return handed_out(h, t, p, n, HL_OP_MALLOC);
}

void *hl_calloc(hl_heap_t *h, size_t count_, size_t size)
{
	hl_thread_t *t = hl_thread_fast(h);
	size_t n;
	if (!t)
		return NULL;    /* ENOMEM: no record for this thread */
	if (__builtin_mul_overflow(count_, size, &n) || n > HL_MAX_REQUEST)
		return handed_out(h, t, NULL, 0, HL_OP_CALLOC);
	void *p = handed_out(h, t, __atomic_load_n(&h->malloc_fn, __ATOMIC_RELAXED)(h->call_st, t, n ? n : 1), n,
			     HL_OP_CALLOC);
	if (p && (h->debug || !h->policy->fresh_zero || !h->policy->fresh_zero(h->state, p)))
		memset(p, 0, n);
	return p;
}

void hl_free(hl_heap_t *h, void *p)
{
	hl_free_inline(h, p);
}

/* Debug mode's free: the guard decides whether p may be freed at all
 * before the policy reads anything of it. */
static void guarded_free(hl_heap_t *h, hl_thread_t *t, void *p)
{
	hl_guard_begin(h, "free");
	hl_guard_takeback(h, p, "free");
	taking_back(h, t, p);
	count(t, HL_OP_FREE);
	hl_guard_freeing(h, p, h->policy->usable_size(h->state, p));
	h->policy->free(h->state, t, p);
	hl_guard_end(h, "free");
}

void hl_free_careful(hl_heap_t *h, hl_thread_t *t, void *p)
{
	if (HL_UNLIKELY(h->debug)) {
		guarded_free(h, t, p);
		return;
	}
	if (HL_UNLIKELY(!taking_back(h, t, p)))
		not_live(h, t, p);
	count(t, HL_OP_FREE);
	h->policy->free(h->state, t, p);
}

/* realloc for policies without their own: keep the block while the new
 * size fits, otherwise move it. */
void *hl_realloc_move(void *st, hl_thread_t *t, void *p, size_t old, size_t n,
		      void *(*alloc)(void *st, hl_thread_t *t, size_t n),
		      void (*release)(void *st, hl_thread_t *t, void *p))
{
	void *q = alloc(st, t, n);
	if (!q)
		return NULL;
	memcpy(q, p, old < n ? old : n);
	release(st, t, p);
	return q;
}

static void *generic_realloc(hl_heap_t *h, hl_thread_t *t, void *p, size_t n)
{
	size_t old = h->policy->usable_size(h->state, p);
	if (n <= old)
		return p;
	return hl_realloc_move(h->state, t, p, old, n, h->policy->malloc, h->policy->free);
}

void *hl_realloc(hl_heap_t *h, void *p, size_t n)
{
	if (!p)
		return hl_malloc(h, n);
	if (n == 0 && h->policy->realloc_zero_allocates) {
		void *q = hl_malloc(h, 0);
		if (q)
			hl_free(h, p);
		return q;
	}
	if (n == 0) {
		hl_free(h, p);
		return NULL;
	}
	hl_thread_t *t = hl_thread_fast(h);
	if (!t)
		return NULL;    /* ENOMEM: no record for this thread */
	if (HL_UNLIKELY(n > HL_MAX_REQUEST))
		return handed_out(h, t, NULL, n, HL_OP_REALLOC);
	if (HL_UNLIKELY(h->debug)) {
		hl_guard_begin(h, "realloc");
		hl_guard_takeback(h, p, "realloc");
	}
	/* The ledger forgets p before the policy may free it: once freed,
	 * another thread can be handed p and enter it in the ledger, and a
	 * removal after the call would take that thread's entry. */
	size_t old_usable = 0, old_asked = 0;
	if (h->ledger_on) {
		old_asked = hl_ledger_remove(&h->ledger, p);
		if (old_asked == (size_t)-1)
			not_live(h, t, p);
		old_usable = h->policy->usable_size(h->state, p);
	}
	void *q = h->policy->realloc ? h->policy->realloc(h->state, t, p, n) : generic_realloc(h, t, p, n);
	if (!q) {
		/* p's slot was just freed: putting it back needs no memory */
		if (h->ledger_on)
			hl_ledger_add(&h->ledger, p, old_asked);
		return handed_out(h, t, NULL, n, HL_OP_REALLOC);
	}
	count(t, HL_OP_REALLOC);
	if (h->ledger_on) {
		if (!hl_ledger_add(&h->ledger, q, n))
			hl_fatal(h->policy, "out of memory for the request ledger", q);
		add_usable(t, (int64_t)h->policy->usable_size(h->state, q) - (int64_t)old_usable);
	}
	if (HL_UNLIKELY(h->debug)) {
		if (q != p)
			hl_guard_moved(h, p);
		hl_guard_handout(h, q, n, false);
		hl_guard_end(h, "realloc");
	}
	return q;
}

void *hl_memalign(hl_heap_t *h, size_t align, size_t n)
{
	hl_thread_t *t = hl_thread_fast(h);
	if (!t)
		return NULL;    /* ENOMEM: no record for this thread */
	if (!hl_is_pow2(align)) {
		count(t, HL_OP_FAILED);
		errno = EINVAL;
		return NULL;
	}
	if (align <= HL_MIN_ALIGN)
		return hl_malloc(h, n);
	if (align <= HL_ALIGN) /* a block of more than 8 bytes is 16-byte aligned */
		return hl_malloc(h, n > HL_MIN_ALIGN ? n : HL_MIN_ALIGN + 1);
	if (n > HL_MAX_REQUEST || align > HL_MAX_REQUEST)
		return handed_out(h, t, NULL, n, HL_OP_MEMALIGN);
	if (HL_UNLIKELY(h->debug))
		hl_guard_begin(h, "memalign");
	void *p = h->policy->memalign(h->state, t, align, n ? n : 1);
	if (p && ((uintptr_t)p & (align - 1)))
		hl_fatal(h->policy, "memalign returned a misaligned block", p);
	return handed_out(h, t, p, n, HL_OP_MEMALIGN);
}

int hl_posix_memalign(hl_heap_t *h, void **out, size_t align, size_t n)
{
	if (!hl_is_pow2(align) || align % sizeof(void *))
		return EINVAL;
	int saved = errno;
	void *p = hl_memalign(h, align, n);
	int rc = p ? 0 : errno;
	errno = saved;
	if (p)
		*out = p;
	return rc;
}

size_t hl_usable_size(hl_heap_t *h, const void *p)
{
	return p ? h->policy->usable_size(h->state, p) : 0;
}

bool hl_owns(hl_heap_t *h, const void *p)
{
	return p && h->policy->owns(h->state, p);
}

size_t hl_trim(hl_heap_t *h, size_t pad)
{
	hl_thread_t *t = hl_thread_fast(h);
	if (t)
		count(t, HL_OP_TRIM);
	if (!h->policy->trim)
		return 0;
	if (HL_UNLIKELY(h->debug))
		hl_guard_begin(h, "trim");
	size_t given = h->policy->trim(h->state, pad);
	if (HL_UNLIKELY(h->debug))
		hl_guard_end(h, "trim");
	return given;
}

int hl_reset(hl_heap_t *h)
{
	if (!h->policy->reset) {
		errno = ENOTSUP;
		return -1;
	}
	if (HL_UNLIKELY(h->debug))
		hl_guard_begin(h, "reset");
	int rc = h->policy->reset(h->state);
	if (HL_UNLIKELY(h->debug)) {
		if (rc == 0)
			hl_guard_forget_all(h);
		hl_guard_end(h, "reset");
	}
	if (rc == 0 && h->ledger_on) {
		hl_ledger_clear(&h->ledger);
		pthread_mutex_lock(&h->threads_lock);
		for (hl_thread_t *t = h->threads; t; t = t->next)
			t->live_usable = 0;
		pthread_mutex_unlock(&h->threads_lock);
	}
	return rc;
}

/* ---- looking inside ---------------------------------------------------- */

/* In debug mode the checker runs between two calls, under the guard,
 * like the guard's own checks: a checker that counts every block (live,
 * cached, free) needs a heap no call is changing. */
int hl_check(hl_heap_t *h, FILE *report)
{
	hl_report_t r = { .out = report, .policy = h->policy->name };
	if (h->debug)
		pthread_mutex_lock(&h->guard.lock);
	int problems = h->policy->check(h->state, &r);
	if (h->debug)
		pthread_mutex_unlock(&h->guard.lock);
	return problems;
}

int hl_heap_block_live(hl_heap_t *h, const void *p)
{
	if (!h->ledger_on)
		return -1;
	return p && hl_ledger_get(&h->ledger, p) != (size_t)-1;
}

int hl_walk(hl_heap_t *h, hl_walk_fn fn, void *arg)
{
	return h->policy->walk ? h->policy->walk(h->state, fn, arg) : 0;
}

const char *hl_addr_name(hl_heap_t *h, const void *p, char *buf, size_t len)
{
	size_t off = 0;
	int k = hl_os_locate(&h->os, p, &off);
	if (k < 0)
		snprintf(buf, len, "%s", p ? "outside" : "null");
	else
		snprintf(buf, len, "region#%d+0x%zx", k, off);
	return buf;
}

const char *hl_block_id(hl_heap_t *h, const void *p, char *buf, size_t len)
{
	char name[48];
	hl_addr_name(h, p, name, sizeof name);
	for (char *c = name; *c; c++)
		if (*c == '#' || *c == '+')
			*c = '_';
	snprintf(buf, len, "blk_%s", name);
	return buf;
}

int hl_snapshot_dot(hl_heap_t *h, FILE *out, const char *title)
{
	hl_dot_t *d = hl_os_boot_alloc(sizeof *d);
	if (!d)
		return -1;
	hl_dot_begin(d, h, title);
	h->policy->snapshot(h->state, d);    /* under the policy's locks: no I/O */
	hl_dot_end(d);
	int rc = hl_dot_write(d, out);       /* the locks are released: now write */
	hl_os_boot_free(d, sizeof *d);
	return rc < 0 || ferror(out) ? -1 : 0;
}

/* Live usable bytes without the ledger: the walker lists the live blocks
 * (a visitor must not call back into the heap: walkers may hold locks),
 * then each one's usable size is asked for after the walk. */
typedef struct live_list {
	const void **addr;
	size_t n, cap;
	bool failed;
} live_list_t;

static int collect_live(const hl_block_t *b, void *arg)
{
	live_list_t *l = arg;
	if (b->state != HL_BLOCK_LIVE)
		return 0;
	if (l->n == l->cap) {
		size_t ncap = l->cap ? l->cap * 2 : 4096;
		const void **bigger = hl_os_boot_alloc(ncap * sizeof *bigger);
		if (!bigger) {
			l->failed = true;
			return 1;
		}
		if (l->addr) {
			memcpy(bigger, l->addr, l->n * sizeof *bigger);
			hl_os_boot_free(l->addr, l->cap * sizeof *l->addr);
		}
		l->addr = bigger;
		l->cap = ncap;
	}
	l->addr[l->n++] = b->addr;
	return 0;
}

static int64_t walk_live_usable(hl_heap_t *h)
{
	live_list_t l = { 0 };
	hl_walk(h, collect_live, &l);
	int64_t sum = 0;
	for (size_t i = 0; i < l.n; i++)
		sum += (int64_t)h->policy->usable_size(h->state, l.addr[i]);
	hl_os_boot_free(l.addr, l.cap * sizeof *l.addr);
	return l.failed ? -1 : sum;
}

/* @p path: the one statistic a lookup wants, or the prefix a visit keeps
 * (NULL: all of them).  A lookup skips the figures that cost a walk of the
 * heap (live usable bytes, the policy's statistics: bins' walk every chunk)
 * or a pass over every page (resident bytes) when it does not ask for them:
 * `heaplab diagnose` reads three figures at each of thousands of samples,
 * and walked the heap four times for each (a CPython recording of 9.6
 * million ops: 80 % of its time in bins' chunk walker). */
static bool wanted(const char *path, const char *name)
{
	return !path || !strncmp(path, name, strlen(name));
}

static void emit_common(hl_heap_t *h, hl_statw_t *w, const char *path)
{
	uint64_t ops[HL_OP_NOPS] = { 0 };
	int64_t usable = 0;
	unsigned threads = 0;
	pthread_mutex_lock(&h->threads_lock);
	for (hl_thread_t *t = h->threads; t; t = t->next) {
		for (int i = 0; i < HL_OP_NOPS; i++)
			ops[i] += __atomic_load_n(&t->ops[i], __ATOMIC_RELAXED);
		usable += __atomic_load_n(&t->live_usable, __ATOMIC_RELAXED);
		threads += !t->exited;
	}
	pthread_mutex_unlock(&h->threads_lock);
	if (!h->ledger_on && wanted(path, "live_usable_bytes"))
		usable = walk_live_usable(h);
	size_t resident = wanted(path, "resident_bytes") || wanted(path, "bloat_factor") ? hl_os_resident(&h->os) : 0;
	hl_statw_str(w, "policy", h->policy->name);
	if (h->ledger_on) {
		int64_t live = __atomic_load_n(&h->ledger.live, __ATOMIC_RELAXED);
		hl_statw_i64(w, "live_requested_bytes", live);
		hl_statw_i64(w, "peak_requested_bytes", __atomic_load_n(&h->ledger.peak, __ATOMIC_RELAXED));
		hl_statw_f64(w, "bloat_factor", live > 0 ? (double)resident / (double)live : 0.0);
	}
	hl_statw_i64(w, "live_usable_bytes", usable);
	hl_statw_u64(w, "reserved_bytes", h->os.reserved_bytes);
	hl_statw_u64(w, "committed_bytes", h->os.committed_bytes);
	hl_statw_u64(w, "resident_bytes", resident);
	hl_statw_u64(w, "threads", threads);
	hl_statw_bool(w, "ledger", h->ledger_on);
	hl_statw_u64(w, "ledger_bytes", h->ledger_os.meta_bytes);
	hl_statw_bool(w, "debug", h->debug);
	hl_statw_object(w, "ops");
	for (int i = 0; i < HL_OP_NOPS; i++)
		hl_statw_u64(w, op_names[i], ops[i]);
	hl_statw_end(w);
	hl_os_stats(&h->os, w);
	if (!wanted(path, "policy_stats") && strncmp("policy_stats", path, strlen(path)))
		return;
	hl_statw_object(w, "policy_stats");
	h->policy->stats(h->state, w);
	hl_statw_end(w);
}

int hl_stats_json(hl_heap_t *h, FILE *out)
{
	hl_statw_t w;
	hl_statw_init(&w, HL_STATW_JSON, out, NULL);
	emit_common(h, &w, NULL);
	hl_statw_finish(&w);
	return ferror(out) ? -1 : 0;
}

int hl_stats_text(hl_heap_t *h, FILE *out)
{
	hl_statw_t w;
	hl_statw_init(&w, HL_STATW_TEXT, out, NULL);
	emit_common(h, &w, NULL);
	hl_statw_finish(&w);
	return ferror(out) ? -1 : 0;
}

int hl_stat(hl_heap_t *h, const char *path, double *out)
{
	hl_statw_t w;
	hl_statw_init(&w, HL_STATW_LOOKUP, NULL, path);
	emit_common(h, &w, path);
	if (!w.found)
		return -1;
	*out = w.value;
	return 0;
}

int hl_stat_each(hl_heap_t *h, const char *prefix, void (*fn)(const char *path, double v, void *arg), void *arg)
{
	hl_statw_t w;
	hl_statw_init(&w, HL_STATW_VISIT, NULL, prefix ? prefix : "");
	w.visit = fn;
	w.visit_arg = arg;
	emit_common(h, &w, prefix && *prefix ? prefix : NULL);
	return 0;
}
