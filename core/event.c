/*
 * Decision events: the listeners of every heap, and the words for each step.
 *
 * A table of at most HL_MAX_HEAPS listening heaps, each with its callback
 * and, when asked, a buffer of kept events (hl_events_take).  hl_event_on
 * says whether the table has anyone in it: the one flag every emission
 * point tests (event.h); a heap in the table runs its policy's malloc and
 * free with every point, the others their quiet copies (hl_heap_listening).  Emission is rare by construction (only while
 * someone listens), so it takes the entry's lock and may look the heap up
 * in a loop.
 */
#include "config.h"
#include <string.h>
#include "event.h"
#include "heap_internal.h"

unsigned char hl_event_on;
__thread hl_event_call_t hl_event_slot;

/** Events one take can hold; a call that makes more loses the rest. */
#define KEEP_MAX 1024

typedef struct listener {
	hl_heap_t *h;            /**< NULL: free slot (table_lock) */
	hl_listener_fn fn;       /**< may be NULL when only keeping */
	void *arg;
	bool keep;               /**< events go to kept[] too */
	pthread_mutex_t lock;    /**< guards kept[] and nkept */
	size_t nkept;            /**< events since the last take (may exceed KEEP_MAX) */
	hl_event_t kept[KEEP_MAX];
} listener_t;

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static listener_t *table[HL_MAX_HEAPS]; /* indexed by nothing: scanned */
static unsigned listening;               /* entries in use (table_lock) */

static listener_t *find(const hl_heap_t *h)
{
	for (unsigned i = 0; i < HL_MAX_HEAPS; i++)
		if (table[i] && __atomic_load_n(&table[i]->h, __ATOMIC_ACQUIRE) == h)
			return table[i];
	return NULL;
}

/* The entry of h, made when absent (table_lock held). */
static listener_t *entry(hl_heap_t *h)
{
	listener_t *l = find(h);
	if (l)
		return l;
	for (unsigned i = 0; i < HL_MAX_HEAPS; i++) {
		if (table[i] && table[i]->h)
			continue;
		if (!table[i]) {
			table[i] = hl_os_boot_alloc(sizeof *table[i]);
			if (!table[i])
				return NULL;
			pthread_mutex_init(&table[i]->lock, NULL);
		}
		l = table[i];
		l->fn = NULL;
		l->keep = false;
		l->nkept = 0;
		__atomic_store_n(&l->h, h, __ATOMIC_RELEASE);
		listening++;
		hl_event_on = 1;
		hl_heap_listening(h, true);   /* the copies with every point */
		return l;
	}
	hl_set_error("too many heaps listening at once (at most %d)", HL_MAX_HEAPS);
	return NULL;
}

/* Drops the entry when it has no more use (table_lock held).  The slot is
 * kept allocated: an emitter may still be reading it. */
static void settle(listener_t *l)
{
	if (l->fn || l->keep)
		return;
	hl_heap_listening(l->h, false);
	__atomic_store_n(&l->h, NULL, __ATOMIC_RELEASE);
	if (--listening == 0)
		hl_event_on = 0;
}

int hl_set_listener(hl_heap_t *h, hl_listener_fn fn, void *arg)
{
	pthread_mutex_lock(&table_lock);
	listener_t *l = fn ? entry(h) : find(h);
	if (l) {
		l->arg = arg;
		l->fn = fn;
		settle(l);
	}
	pthread_mutex_unlock(&table_lock);
	return l || !fn ? 0 : -1;
}

int hl_events_keep(hl_heap_t *h, bool on)
{
	pthread_mutex_lock(&table_lock);
	listener_t *l = on ? entry(h) : find(h);
	if (l) {
		pthread_mutex_lock(&l->lock);
		l->keep = on;
		l->nkept = 0;
		pthread_mutex_unlock(&l->lock);
		settle(l);
	}
	pthread_mutex_unlock(&table_lock);
	return l || !on ? 0 : -1;
}

size_t hl_events_take(hl_heap_t *h, hl_event_t *out, size_t max)
{
	pthread_mutex_lock(&table_lock);
	listener_t *l = find(h);
	size_t n = 0;
	if (l) {
		pthread_mutex_lock(&l->lock);
		n = l->nkept;
		size_t copy = n < max ? n : max;
		if (copy > KEEP_MAX)
			copy = KEEP_MAX;
		memcpy(out, l->kept, copy * sizeof *out);
		l->nkept = 0;
		pthread_mutex_unlock(&l->lock);
	}
	pthread_mutex_unlock(&table_lock);
	return n;
}

void hl_event_forget(hl_heap_t *h)
{
	pthread_mutex_lock(&table_lock);
	listener_t *l = find(h);
	if (l) {
		l->fn = NULL;
		l->keep = false;
		settle(l);
	}
	pthread_mutex_unlock(&table_lock);
}

static void deliver(hl_heap_t *h, const hl_event_t *e)
{
	listener_t *l = find(h);
	if (!l)
		return;
	hl_listener_fn fn = l->fn;
	if (fn)
		fn(h, e, l->arg);
	if (l->keep) {
		pthread_mutex_lock(&l->lock);
		if (l->nkept < KEEP_MAX)
			l->kept[l->nkept] = *e;
		l->nkept++;
		pthread_mutex_unlock(&l->lock);
	}
}

void hl_event_emit(hl_heap_t *h, hl_event_kind_t kind, const char *what, long index, size_t size,
		   size_t size2, long before, long after, const void *addr)
{
	if (!h)
		return;
	hl_event_t e = { kind, what ? what : "", index, size, size2, before, after, addr, "" };
	if (addr && hl_os_locate(&h->os, addr, NULL) >= 0)
		hl_addr_name(h, addr, e.where, sizeof e.where);
	deliver(h, &e);
}

void hl_event_emit_call(const hl_event_call_t *c)
{
	hl_event_call_t e = *c;     /* the slot is free again from here on */
	hl_event_emit(e.heap, e.e.kind, e.e.what, e.e.index, e.e.size, e.e.size2, e.e.before, e.e.after, e.e.addr);
}

#if defined(__x86_64__) && defined(__GNUC__)
/* The trampoline HL_EVENT calls (event.h says why): saves the registers a C
 * function may change and the SSE/x87 state (fxsave), aligns the stack,
 * calls hl_event_emit_call(%rax), restores everything. */
__asm__(".text\n"
	".globl hl_event_trampoline\n"
	".hidden hl_event_trampoline\n"
	".type hl_event_trampoline, @function\n"
	"hl_event_trampoline:\n"
	"	push %rbp\n"
	"	mov %rsp, %rbp\n"
	"	push %rax\n	push %rcx\n	push %rdx\n	push %rsi\n	push %rdi\n"
	"	push %r8\n	push %r9\n	push %r10\n	push %r11\n"
	"	pushfq\n"
	"	and $-64, %rsp\n"
	"	sub $512, %rsp\n"
	"	fxsave64 (%rsp)\n"
	"	mov %rax, %rdi\n"
	"	cld\n"
	"	call hl_event_emit_call\n"
	"	fxrstor64 (%rsp)\n"
	"	lea -80(%rbp), %rsp\n"
	"	popfq\n"
	"	pop %r11\n	pop %r10\n	pop %r9\n	pop %r8\n"
	"	pop %rdi\n	pop %rsi\n	pop %rdx\n	pop %rcx\n	pop %rax\n"
	"	pop %rbp\n"
	"	ret\n"
	".size hl_event_trampoline, .-hl_event_trampoline\n");
#endif

void hl_event_emit_os(struct hl_os *os, hl_event_kind_t kind, const char *what, long index, size_t size,
		      const void *addr)
{
	for (unsigned i = 0; i < HL_MAX_HEAPS; i++) {
		hl_heap_t *h = table[i] ? __atomic_load_n(&table[i]->h, __ATOMIC_ACQUIRE) : NULL;
		if (h && &h->os == os) {
			hl_event_emit(h, kind, what, index, size, 0, -1, -1, addr);
			return;
		}
	}
}

/* ---- words -------------------------------------------------------------- */

/* Each kind: its name in JSON, and how it reads in a sentence. */
static const struct {
	const char *name, *words;
} kinds[HL_EV_NKINDS] = {
	[HL_EV_CACHE_HIT] = { "cache_hit", "cache hit" },
	[HL_EV_CACHE_MISS] = { "cache_miss", "cache miss" },
	[HL_EV_CACHE_PUT] = { "cache_put", "to cache" },
	[HL_EV_CACHE_FILL] = { "cache_fill", "cache fill" },
	[HL_EV_CACHE_FLUSH] = { "cache_flush", "cache flush" },
	[HL_EV_LIST_POP] = { "list_pop", "free list pop" },
	[HL_EV_LIST_PUSH] = { "list_push", "onto free list" },
	[HL_EV_EXACT_FIT] = { "exact_fit", "exact fit" },
	[HL_EV_BEST_FIT] = { "best_fit", "best fit" },
	[HL_EV_FIRST_FIT] = { "first_fit", "first fit" },
	[HL_EV_LOOK] = { "look", "looked at" },
	[HL_EV_REJECT] = { "reject", "rejected" },
	[HL_EV_SCAN] = { "scan", "search" },
	[HL_EV_SORT] = { "sort", "sorted" },
	[HL_EV_SPLIT] = { "split", "split" },
	[HL_EV_MERGE] = { "merge", "merge" },
	[HL_EV_NEW] = { "new", "new" },
	[HL_EV_RETIRE] = { "retire", "given up" },
	[HL_EV_MOVE] = { "move", "moved" },
	[HL_EV_BUMP] = { "bump", "bump pointer" },
	[HL_EV_GROW] = { "grow", "grow" },
	[HL_EV_SHRINK] = { "shrink", "shrink" },
	[HL_EV_MAP] = { "map", "own mapping" },
	[HL_EV_UNMAP] = { "unmap", "unmap" },
	[HL_EV_PURGE] = { "purge", "purge" },
	[HL_EV_DECAY] = { "decay", "decay" },
	[HL_EV_REMOTE_FREE] = { "remote_free", "remote free" },
	[HL_EV_COLLECT] = { "collect", "collected" },
	[HL_EV_HANDOFF] = { "handoff", "handed to" },
	[HL_EV_FAIL] = { "fail", "out of memory" },
	[HL_EV_OS] = { "os", "kernel" },
};

const char *hl_event_kind_name(hl_event_kind_t k)
{
	return (unsigned)k < HL_EV_NKINDS ? kinds[k].name : "unknown";
}

/* Appends to buf at *at, never past len. */
#define PUT(...)                                                                                               \
	do {                                                                                                   \
		if (*at < len) {                                                                               \
			int w_ = snprintf(buf + *at, len - *at, __VA_ARGS__);                                  \
			*at += w_ > 0 ? (size_t)w_ : 0;                                                        \
		}                                                                                              \
	} while (0)

static void put_sizes(const hl_event_t *e, char *buf, size_t len, size_t *at)
{
	if (e->size && e->size2 && e->kind == HL_EV_SPLIT)
		PUT(" %zu B, remainder %zu B", e->size, e->size2);
	else if (e->size && e->size2 && e->kind == HL_EV_MERGE)
		PUT(" %zu B into %zu B", e->size, e->size2);
	else if (e->size && e->size2)
		PUT(" %zu B → %zu B", e->size, e->size2);
	else if (e->size)
		PUT(" %zu B", e->size);
	else if (e->size2)
		PUT(" → %zu B", e->size2);
}

const char *hl_event_text(hl_heap_t *h, const hl_event_t *e, char *buf, size_t len)
{
	size_t at0 = 0, *at = &at0;
	if (!len)
		return buf;
	buf[0] = '\0';
	PUT("%s", (unsigned)e->kind < HL_EV_NKINDS ? kinds[e->kind].words : "?");
	/* "tcache bin (the thread's first call)" with index 1 and 48 B reads
	 * "tcache bin 1, 48 B (the thread's first call)": the number follows
	 * the noun it counts, a size after a number is set off by a comma, and
	 * a closing parenthesis of the description goes last */
	bool indexed = e->index >= 0 && e->kind != HL_EV_OS;
	size_t wl = strlen(e->what);
	const char *aside = indexed && wl && e->what[wl - 1] == ')' ? strrchr(e->what, '(') : NULL;
	size_t noun = aside ? (size_t)(aside - e->what) : wl;
	while (noun && e->what[noun - 1] == ' ')
		noun--;
	if (noun)
		PUT(": %.*s", (int)noun, e->what);
	if (indexed)
		PUT(" %ld%s", e->index, e->size || e->size2 ? "," : "");
	put_sizes(e, buf, len, at);
	if (aside)
		PUT(" %s", aside);
	if (e->before >= 0 && e->after >= 0)
		PUT(" (%ld→%ld)", e->before, e->after);
	else if (e->before >= 0)
		PUT(" (was %ld)", e->before);
	else if (e->after >= 0)
		PUT(" (now %ld)", e->after);
	(void)h;
	if (e->where[0])
		PUT(" at %s", e->where);
	return buf;
}
