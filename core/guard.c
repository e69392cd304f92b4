/*
 * Debug mode's misuse guard (see guard.h): one mechanism for every
 * policy.  The guard keeps its own maps of live and freed blocks, so it
 * can tell a double free from an interior or foreign pointer without
 * reading any memory the pointer names, and it checks the program's
 * writes between two calls: slack canaries of live blocks, hashes of
 * recently freed blocks, the policy's own checker.
 */
#include "config.h"
#include <stdio.h>
#include <string.h>
#include "heap_internal.h"

enum {
	JUNK_FRESH = 0xAA,  /* a block just handed out */
	JUNK_FREED = 0xDD,  /* a block just freed */
	CANARY = 0xCB,      /* between the request and the usable end */
};

/* A live block's record: the request, and how many slack bytes after it
 * carry the canary (capped: a huge block's page slack is not all checked). */
#define REQUEST_BITS 47
#define CANARY_MAX ((((size_t)1) << (64 - REQUEST_BITS)) - 1)

static size_t record(size_t n, size_t canary) { return n | (canary << REQUEST_BITS); }
static size_t record_request(size_t v) { return v & ((((size_t)1) << REQUEST_BITS) - 1); }
static size_t record_canary(size_t v) { return v >> REQUEST_BITS; }

/* The heap this thread is running an operation of, if any: end() after an
 * early failure (no begin) must not release a lock it does not hold. */
static __thread hl_heap_t *held;

void hl_guard_init(hl_guard_t *g, hl_os_t *bookkeeping)
{
	pthread_mutex_init(&g->lock, NULL);
	hl_ledger_init(&g->live, bookkeeping);
	hl_ledger_init(&g->freed, bookkeeping);
	memset(g->watch, 0, sizeof g->watch);
	g->next_watch = 0;
	g->os_mark = 0;
}

static __attribute__((noreturn)) void misuse(hl_heap_t *h, const char *what, const void *p)
{
	held = NULL;
	hl_fatal(h->policy, what, p);
}

/* Page source calls that can take memory away (unmap, protect, move): a
 * freed block the guard watches may have gone with them. */
static uint64_t os_mark(hl_heap_t *h)
{
	const uint64_t *c = h->os.calls;
	return __atomic_load_n(&c[HL_OS_MUNMAP], __ATOMIC_RELAXED) +
	       __atomic_load_n(&c[HL_OS_MPROTECT], __ATOMIC_RELAXED) +
	       __atomic_load_n(&c[HL_OS_MREMAP], __ATOMIC_RELAXED) +
	       __atomic_load_n(&c[HL_OS_BRK], __ATOMIC_RELAXED) +
	       __atomic_load_n(&c[HL_OS_MADVISE_DONTNEED], __ATOMIC_RELAXED) +
	       __atomic_load_n(&c[HL_OS_MADVISE_FREE], __ATOMIC_RELAXED);
}

/* ---- freed blocks: hashed after each call, verified before the next ----- */

/* FNV-1a over 8-byte words (blocks are 8-byte aligned at least, lengths are not
 * always multiples of 8: the tail goes byte by byte). */
static uint64_t hash_bytes(const unsigned char *p, size_t len)
{
	uint64_t h = 0xcbf29ce484222325u;
	size_t i = 0;
	for (; i + 8 <= len; i += 8) {
		uint64_t w;
		memcpy(&w, p + i, sizeof w);
		h = (h ^ w) * 0x100000001b3u;
	}
	for (; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3u;
	return h;
}

static void forget_watches(hl_guard_t *g)
{
	memset(g->watch, 0, sizeof g->watch);
}

/* A block handed out is the program's again: stop watching any freed
 * block it overlaps (a merged neighbour's bytes may be inside it). */
static void unwatch_range(hl_guard_t *g, const void *p, size_t len)
{
	const unsigned char *lo = p, *hi = lo + len;
	for (int i = 0; i < HL_GUARD_WATCH; i++) {
		hl_guard_watch_t *w = &g->watch[i];
		if (w->p && w->p < hi && lo < w->p + w->len)
			w->p = NULL;
	}
}

static void verify_watches(hl_heap_t *h)
{
	hl_guard_t *g = &h->guard;
	if (os_mark(h) != g->os_mark) { /* memory went away outside a call */
		forget_watches(g);
		return;
	}
	for (int i = 0; i < HL_GUARD_WATCH; i++) {
		hl_guard_watch_t *w = &g->watch[i];
		if (w->p && hash_bytes(w->p, w->len) != w->sum)
			misuse(h, "write into a freed block", w->p);
	}
}

static void rehash_watches(hl_guard_t *g)
{
	for (int i = 0; i < HL_GUARD_WATCH; i++) {
		hl_guard_watch_t *w = &g->watch[i];
		if (w->p)
			w->sum = hash_bytes(w->p, w->len);
	}
}

/* ---- live blocks: the canary in their slack ----------------------------- */

/* Checked when the block goes back (free, realloc) and, when the policy's
 * checker finds damage, on every live block: an overflow that ran into a
 * neighbour's header is named by the block it came from. */

static __attribute__((noreturn)) void overflowed(hl_heap_t *h, const void *p, size_t request)
{
	char what[96];
	snprintf(what, sizeof what, "write past the end of a %zu-byte block", request);
	misuse(h, what, p);
}

static bool canary_intact(const void *p, size_t record)
{
	const unsigned char *tail = (const unsigned char *)p + record_request(record);
	size_t k = record_canary(record);
	for (size_t i = 0; i < k; i++)
		if (tail[i] != CANARY)
			return false;
	return true;
}

static int canary_broken(uintptr_t key, size_t record, void *arg)
{
	if (canary_intact((const void *)key, record))
		return 0;
	*(uintptr_t *)arg = key;
	return 1;
}

static void verify_canaries(hl_heap_t *h)
{
	uintptr_t broken = 0;
	if (hl_ledger_foreach(&h->guard.live, canary_broken, &broken))
		overflowed(h, (const void *)broken, record_request(hl_ledger_get(&h->guard.live, (void *)broken)));
}

/* ---- the policy's checker, reduced to one line -------------------------- */

static void verify_structures(hl_heap_t *h, const char *when, const char *op)
{
	char first[160] = "";
	hl_report_t r = { .out = NULL, .policy = h->policy->name, .first = first, .first_len = sizeof first };
	if (!h->policy->check(h->state, &r))
		return;
	verify_canaries(h);
	char what[224];
	snprintf(what, sizeof what, "heap damaged %s %s: %s", when, op, first);
	misuse(h, what, r.first_at);
}

/* ---- the operation bracket ---------------------------------------------- */

void hl_guard_begin(hl_heap_t *h, const char *op)
{
	pthread_mutex_lock(&h->guard.lock);
	held = h;
	verify_watches(h);
	verify_structures(h, "before", op);
}

void hl_guard_end(hl_heap_t *h, const char *op)
{
	if (held != h)
		return;
	hl_guard_t *g = &h->guard;
	verify_structures(h, "after", op);
	uint64_t mark = os_mark(h);
	if (mark != g->os_mark)
		forget_watches(g);
	g->os_mark = mark;
	rehash_watches(g);
	held = NULL;
	pthread_mutex_unlock(&g->lock);
}

/* ---- what a call may do to a block -------------------------------------- */

void hl_guard_takeback(hl_heap_t *h, const void *p, const char *op)
{
	hl_guard_t *g = &h->guard;
	size_t record = hl_ledger_get(&g->live, p);
	if (record != (size_t)-1) {
		if (!canary_intact(p, record))
			overflowed(h, p, record_request(record));
		return;
	}
	char what[96];
	if (hl_ledger_get(&g->freed, p) != (size_t)-1)
		snprintf(what, sizeof what, "%s of a freed block%s", op, !strcmp(op, "free") ? " (double free)" : "");
	else if (h->policy->owns(h->state, p))
		snprintf(what, sizeof what, "%s of an address inside the heap that is not the start of a live block", op);
	else
		snprintf(what, sizeof what, "%s of a pointer this heap never handed out", op);
	misuse(h, what, p);
}

void hl_guard_freeing(hl_heap_t *h, void *p, size_t usable)
{
	hl_guard_t *g = &h->guard;
	hl_guard_moved(h, p);
	memset(p, JUNK_FREED, usable);
	hl_guard_watch_t *w = &g->watch[g->next_watch++ % HL_GUARD_WATCH];
	w->p = p;
	w->len = usable < HL_GUARD_WATCH_BYTES ? usable : HL_GUARD_WATCH_BYTES;
}

void hl_guard_moved(hl_heap_t *h, const void *p)
{
	hl_guard_t *g = &h->guard;
	hl_ledger_remove(&g->live, p);
	if (!hl_ledger_add(&g->freed, p, 1))
		misuse(h, "out of memory for the debug guard", p);
}

void hl_guard_forget_all(hl_heap_t *h)
{
	hl_guard_t *g = &h->guard;
	hl_ledger_clear(&g->live);
	hl_ledger_clear(&g->freed);
	forget_watches(g);
}

void hl_guard_handout(hl_heap_t *h, void *p, size_t n, bool fresh)
{
	hl_guard_t *g = &h->guard;
	size_t usable = h->policy->usable_size(h->state, p);
	size_t slack = usable > n ? usable - n : 0;
	if (slack > CANARY_MAX)
		slack = CANARY_MAX;
	unwatch_range(g, p, usable);
	hl_ledger_remove(&g->freed, p);
	if (!hl_ledger_add(&g->live, p, record(n, slack)))
		misuse(h, "out of memory for the debug guard", p);
	if (fresh)
		memset(p, JUNK_FRESH, n);
	memset((char *)p + n, CANARY, slack);
}

size_t hl_guard_request(hl_heap_t *h, const void *p)
{
	size_t record = hl_ledger_get(&h->guard.live, p);
	if (record == (size_t)-1)
		hl_guard_takeback(h, p, "malloc_usable_size"); /* says what p is, and aborts */
	return record_request(record);
}

void *hl_guard_malloc(void *heap, hl_thread_t *t, size_t n)
{
	hl_heap_t *h = heap;
	hl_guard_begin(h, "malloc");
	return h->policy->malloc(h->state, t, n);
}

/* ---- fork: no call may be half done in the child ------------------------ */

void hl_guard_fork_prepare(hl_guard_t *g)
{
	pthread_mutex_lock(&g->lock);
	hl_ledger_fork_prepare(&g->live);
	hl_ledger_fork_prepare(&g->freed);
}

void hl_guard_fork_parent(hl_guard_t *g)
{
	hl_ledger_fork_parent(&g->freed);
	hl_ledger_fork_parent(&g->live);
	pthread_mutex_unlock(&g->lock);
}

void hl_guard_fork_child(hl_guard_t *g)
{
	hl_ledger_fork_child(&g->freed);
	hl_ledger_fork_child(&g->live);
	pthread_mutex_init(&g->lock, NULL);
}
