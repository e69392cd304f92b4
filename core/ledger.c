/* The request ledger (see ledger.h): pointer -> requested size, in 64
 * stripes of open-addressing tables so threads rarely share a lock. */
#include "config.h"
#include <string.h>
#include "bits.h"
#include "ledger.h"

enum { EMPTY = 0, TOMB = 1 };

void hl_ledger_init(hl_ledger_t *l, hl_os_t *os)
{
	memset(l, 0, sizeof *l);
	l->os = os;
	for (int i = 0; i < HL_LEDGER_STRIPES; i++)
		pthread_mutex_init(&l->stripe[i].lock, NULL);
}

static inline uint64_t key_hash(uintptr_t k) { return hl_mix64(k >> 3); }

static hl_ledger_stripe_t *stripe_of(hl_ledger_t *l, uintptr_t k)
{
	return &l->stripe[key_hash(k) >> 58];
}

/* Places k in a table known to have room (no duplicates present). */
static void place(uintptr_t *keys, size_t *vals, size_t cap, uintptr_t k, size_t v)
{
	size_t i = key_hash(k) & (cap - 1);
	while (keys[i] > TOMB)
		i = (i + 1) & (cap - 1);
	keys[i] = k;
	vals[i] = v;
}

static bool rehash(hl_ledger_t *l, hl_ledger_stripe_t *s)
{
	size_t ncap = !s->cap ? 1024 : (s->used * 2 > s->cap ? s->cap * 2 : s->cap);
	size_t bytes = ncap * (sizeof(uintptr_t) + sizeof(size_t));
	char *mem = hl_os_reserve_meta(l->os, bytes);
	if (!mem)
		return false;
	uintptr_t *keys = (uintptr_t *)mem;
	size_t *vals = (size_t *)(mem + ncap * sizeof(uintptr_t));
	for (size_t i = 0; i < s->cap; i++)
		if (s->keys[i] > TOMB)
			place(keys, vals, ncap, s->keys[i], s->vals[i]);
	if (s->keys)
		hl_os_release(l->os, s->keys, 0);
	s->keys = keys;
	s->vals = vals;
	s->cap = ncap;
	s->tomb = 0;
	return true;
}

static size_t find(const hl_ledger_stripe_t *s, uintptr_t k)
{
	if (!s->cap)
		return (size_t)-1;
	size_t i = key_hash(k) & (s->cap - 1);
	for (size_t n = 0; n < s->cap && s->keys[i] != EMPTY; n++, i = (i + 1) & (s->cap - 1))
		if (s->keys[i] == k)
			return i;
	return (size_t)-1;
}

/* Adds or takes away @p n.  The atomic builtins wrap, so a table whose
 * values are not byte counts (the debug guard packs a canary length into the
 * top bits) only makes its own totals meaningless, never undefined. */
static void account(hl_ledger_t *l, size_t n, bool add)
{
	int64_t now = add ? __atomic_add_fetch(&l->live, (int64_t)n, __ATOMIC_RELAXED)
			  : __atomic_sub_fetch(&l->live, (int64_t)n, __ATOMIC_RELAXED);
	int64_t peak = __atomic_load_n(&l->peak, __ATOMIC_RELAXED);
	while (now > peak && !__atomic_compare_exchange_n(&l->peak, &peak, now, true,
							   __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

bool hl_ledger_add(hl_ledger_t *l, const void *p, size_t n)
{
	uintptr_t k = (uintptr_t)p;
	hl_ledger_stripe_t *s = stripe_of(l, k);
	pthread_mutex_lock(&s->lock);
	/* a table that cannot grow (no memory) takes entries while it has a
	 * slot left: probes get longer, nothing is lost, and a block taken
	 * out and put back (a failed realloc) always finds its slot again */
	if ((s->used + s->tomb + 1) * 4 >= s->cap * 3 && !rehash(l, s) && s->used + 1 >= s->cap) {
		pthread_mutex_unlock(&s->lock);
		return false;
	}
	size_t at = find(s, k);
	if (at != (size_t)-1) {
		size_t old = s->vals[at];
		account(l, n >= old ? n - old : old - n, n >= old);
		s->vals[at] = n;
	} else {
		size_t i = key_hash(k) & (s->cap - 1);
		while (s->keys[i] > TOMB)
			i = (i + 1) & (s->cap - 1);
		if (s->keys[i] == TOMB)
			s->tomb--;
		s->keys[i] = k;
		s->vals[i] = n;
		s->used++;
		account(l, n, true);
	}
	pthread_mutex_unlock(&s->lock);
	return true;
}

size_t hl_ledger_remove(hl_ledger_t *l, const void *p)
{
	uintptr_t k = (uintptr_t)p;
	hl_ledger_stripe_t *s = stripe_of(l, k);
	pthread_mutex_lock(&s->lock);
	size_t at = find(s, k), n = (size_t)-1;
	if (at != (size_t)-1) {
		n = s->vals[at];
		s->keys[at] = TOMB;
		s->used--;
		s->tomb++;
		account(l, n, false);
	}
	pthread_mutex_unlock(&s->lock);
	return n;
}

size_t hl_ledger_get(hl_ledger_t *l, const void *p)
{
	uintptr_t k = (uintptr_t)p;
	hl_ledger_stripe_t *s = stripe_of(l, k);
	pthread_mutex_lock(&s->lock);
	size_t at = find(s, k);
	size_t n = at == (size_t)-1 ? (size_t)-1 : s->vals[at];
	pthread_mutex_unlock(&s->lock);
	return n;
}

int hl_ledger_foreach(hl_ledger_t *l, int (*fn)(uintptr_t p, size_t v, void *arg), void *arg)
{
	int stop = 0;
	for (int i = 0; i < HL_LEDGER_STRIPES && !stop; i++) {
		hl_ledger_stripe_t *s = &l->stripe[i];
		pthread_mutex_lock(&s->lock);
		for (size_t k = 0; k < s->cap && !stop; k++)
			if (s->keys[k] > TOMB)
				stop = fn(s->keys[k], s->vals[k], arg);
		pthread_mutex_unlock(&s->lock);
	}
	return stop;
}

void hl_ledger_fork_prepare(hl_ledger_t *l)
{
	for (int i = 0; i < HL_LEDGER_STRIPES; i++)
		pthread_mutex_lock(&l->stripe[i].lock);
}

void hl_ledger_fork_parent(hl_ledger_t *l)
{
	for (int i = 0; i < HL_LEDGER_STRIPES; i++)
		pthread_mutex_unlock(&l->stripe[i].lock);
}

void hl_ledger_fork_child(hl_ledger_t *l)
{
	for (int i = 0; i < HL_LEDGER_STRIPES; i++)
		pthread_mutex_init(&l->stripe[i].lock, NULL);
}

void hl_ledger_clear(hl_ledger_t *l)
{
	for (int i = 0; i < HL_LEDGER_STRIPES; i++) {
		hl_ledger_stripe_t *s = &l->stripe[i];
		pthread_mutex_lock(&s->lock);
		for (size_t k = 0; k < s->cap; k++)
			s->keys[k] = EMPTY;
		s->used = s->tomb = 0;
		pthread_mutex_unlock(&s->lock);
	}
	__atomic_store_n(&l->live, 0, __ATOMIC_RELAXED);
}
