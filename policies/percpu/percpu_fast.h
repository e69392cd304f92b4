/**
 * @file percpu_fast.h
 * @brief Policy `percpu`, the hits of malloc and free: a pop from and a
 *        push onto this thread's list (front:thread) or this CPU's stack
 *        (rseq mode).  percpu.c's quiet copies and the thread front are
 *        built on them, and the malloc shim inlines them
 *        (shim/fast_paths.h).  In lock mode there is no hit: the
 *        shim calls the policy, which takes the CPU's mutex.
 *
 *   malloc(n)  n small ─► class ─► tc = t->policy_tls?
 *                                   yes: pop tc's list (pc_thread_pop)
 *                                   no, rseq mode: pop this CPU's stack
 *   free(p)    pagemap ─► small span, p the start of an object not free
 *              in its span (the checks free keeps) ─► class ─► push as above
 *
 * Each front has its own pair of hits, and the shim its own copy of malloc
 * and free for each (two rows in shim/fast_paths.h), so neither copy
 * tests the mode: t->policy_tls is the thread's cache in front:thread
 * (pc_no_cache until it is made, on which both hits miss: no NULL test),
 * and is not read in rseq mode.  Anything else — an empty list or stack, a
 * list at its max_length, a cache at its max_size, a stopped slab, a
 * pointer that free's checks would refuse — is no hit: nothing changed,
 * and the policy's own malloc or free serves it (and aborts on misuse).
 */
#ifndef HL_PERCPU_FAST_H
#define HL_PERCPU_FAST_H

#include "percpu_rseq.h"

/** The top object of @p tc's list of class @p cls, taken off, or NULL
 *  when the list is empty or its top's link is overwritten (nothing
 *  changed): the hit of the thread front. */
static inline void *pc_thread_pop(const pc_state_t *s, pc_tcache_t *tc, size_t cls)
{
	pc_link_t *o = tc->head[cls];
	if (HL_UNLIKELY(!o))
		return NULL;
	pc_link_t *next = o->next;
	/* a link no object could hold (every class is 8-aligned): the block
	 * was written after its free; no hit, and pc_thread_alloc says so
	 * rather than follow it into a crash, as gperftools 2.10 would */
	if (HL_UNLIKELY((uintptr_t)next & 7))
		return NULL;
	uint32_t length = tc->length[cls] - 1;
	tc->head[cls] = next;
	tc->length[cls] = length;
	if (length < tc->low_water[cls])
		tc->low_water[cls] = length;
	tc->size -= s->cl.size[cls];
	tc->hits++;
	return o;
}

/** Links @p p at the head of @p tc's list of class @p cls, counted. */
static inline void pc_thread_link(const pc_state_t *s, pc_tcache_t *tc, unsigned cls, void *p)
{
	pc_link_t *o = p;
	o->next = tc->head[cls];
	tc->head[cls] = o;
	tc->length[cls]++;
	tc->size += s->cl.size[cls];
}

/** @p p onto @p tc's list of class @p cls when the list stays within its
 *  max_length and the cache within its max_size; else false (nothing
 *  changed: pc_thread_free gives a batch back or scavenges). */
static inline bool pc_thread_push(const pc_state_t *s, pc_tcache_t *tc, unsigned cls, void *p)
{
	if (HL_UNLIKELY(tc->length[cls] >= tc->max_length[cls] || tc->size + s->cl.size[cls] > tc->max_size))
		return false;
	pc_thread_link(s, tc, cls, p);
	return true;
}

/** True when free may take @p p without a word: the start of an object
 *  of a small span, not free in its span; its class in *@p cls.  False
 *  for anything else (the policy's free then says what is wrong, or frees
 *  a large block).  One load of the pagemap gives the span and the class
 *  (percpu.h: a nonzero class names the live small span the page is in),
 *  so the class table's load does not wait for the span's.  The root
 *  index is masked rather than tested, and pc_exact_index gives an
 *  offset that is no object's start an index past nobjs, so one
 *  comparison refuses it. */
static inline bool pc_free_check(const pc_state_t *s, const void *p, unsigned *cls)
{
	uintptr_t e = pc_pagemap_entry_masked(&s->ph.map, (uintptr_t)p);
	unsigned c = pc_entry_class(e);
	if (HL_UNLIKELY(!c))
		return false;
	const pc_span_t *sp = pc_entry_span(e);
	uint64_t i = pc_exact_index(&s->cl, c, (uintptr_t)p - sp->start);
	if (HL_UNLIKELY(i >= sp->nobjs || hl_bit_get(sp->free_bits, i)))
		return false;
	*cls = c;
	return true;
}

/** Whether the shim may take the rseq front's hits below: rseq mode (in
 *  lock mode there is no hit; front:thread has its own pair). */
static inline bool pc_rseq_fast_allowed(const pc_state_t *s)
{
	return s->mode == PC_MODE_RSEQ;
}

/** Whether the shim may take the thread front's hits below. */
static inline bool pc_thread_fast_allowed(const pc_state_t *s)
{
	return s->mode == PC_MODE_THREAD;
}

/** malloc's hit in rseq mode: an object from this CPU's stack, or NULL
 *  (nothing changed). */
static inline void *pc_rseq_malloc_hit(void *st, hl_thread_t *t, size_t n)
{
	pc_state_t *s = st;
	if (HL_UNLIKELY(t->exited))
		return NULL;
	void *p;
	if (pc_rseq_pop(s, pc_class_of(&s->cl, n), &p) != PC_RSEQ_DONE)
		return NULL;
	if (!p) /* never: tells the shim it need not test it */
		__builtin_unreachable();
	return p;
}

/** malloc's hit in front:thread: an object from this thread's list, or
 *  NULL (nothing changed; also before the thread's cache is made). */
static inline void *pc_thread_malloc_hit(void *st, hl_thread_t *t, size_t n)
{
	pc_state_t *s = st;
	return pc_thread_pop(s, t->policy_tls, pc_class_of(&s->cl, n));
}

/** free's hit in rseq mode: @p p onto this CPU's stack, or false
 *  (nothing changed). */
static inline bool pc_rseq_free_hit(void *st, hl_thread_t *t, void *p)
{
	pc_state_t *s = st;
	unsigned cls;
	if (HL_UNLIKELY(t->exited || !pc_free_check(s, p, &cls)))
		return false;
	return pc_rseq_push(s, cls, p) == PC_RSEQ_DONE;
}

/** free's hit in front:thread: @p p onto this thread's list, or false
 *  (nothing changed). */
static inline bool pc_thread_free_hit(void *st, hl_thread_t *t, void *p)
{
	pc_state_t *s = st;
	unsigned cls;
	if (HL_UNLIKELY(!pc_free_check(s, p, &cls)))
		return false;
	return pc_thread_push(s, t->policy_tls, cls, p);
}

/* The shim's rows for this policy (shim/fast_paths.h), one per front:
 * each copy holds one front's hits and tests no mode. */
#define HL_FAST_ROWS_PERCPU(X)                                                                     \
	X(HL_FAST_PERCPU_RSEQ, hl_policy_percpu, pc_rseq, pc_rseq_fast_allowed(st), true)           \
	X(HL_FAST_PERCPU_THREAD, hl_policy_percpu, pc_thread, pc_thread_fast_allowed(st), true)
#endif
