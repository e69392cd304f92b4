/*
 * percpu_thread.c — the per-thread front end of front:thread, as
 * gperftools' ThreadCache (the tcmalloc Debian ships) keeps it.
 *
 * Each thread has, per class, a singly linked list through the free
 * objects themselves, with a max_length that starts at 1 and grows with
 * use (slow start: by one up to a batch, then by batches up to 8192).  An
 * empty list fetches min(max_length, batch) objects from the transfer
 * cache; a list longer than max_length gives a batch back, and after the
 * third time shrinks max_length by a batch.  Objects go back a batch at a
 * time, and only a whole batch goes to the transfer cache: the rest of a
 * list given back goes straight to its spans (ReleaseToCentralCache and
 * CentralFreeList::InsertRange, src/thread_cache.cc and
 * src/central_freelist.cc).  When the thread's cached bytes pass max_size,
 * a scavenge gives back half of each list's low-water mark (objects unused
 * since the last scavenge) and lets the cache grow: max_size starts at
 * 64 KiB (kStealAmount) and takes 64 KiB more at each scavenge while the
 * caches' common budget (thread_cache_bytes, gperftools' overall thread
 * cache size, 32 MiB) has any left (IncreaseCacheLimitLocked); a thread
 * that finds it spent starts at 512 KiB (kMinThreadCacheSize), and a
 * thread that ends gives its max_size back.  gperftools then steals 64 KiB
 * from another thread's cache; the model does not (a cache's max_size is
 * written by its own thread only).  A thread that ends gives everything
 * back.  The lists are the thread's own: no lock, no atomic, but nothing
 * shared between the threads on one CPU either.
 */
#include "config.h"
#include "percpu_fast.h"

const pc_tcache_t pc_no_cache;

pc_tcache_t *pc_thread_cache(pc_state_t *s, hl_thread_t *t)
{
	pc_tcache_t *tc = pc_thread_cache_made(t);
	if (HL_LIKELY(tc != NULL))
		return tc;
	tc = hl_meta_alloc(&s->tc_pool);
	if (!tc)
		return NULL;
	for (unsigned cls = 1; cls < s->cl.n; cls++)
		tc->max_length[cls] = 1;
	tc->owner = pthread_self();
	pthread_mutex_lock(&s->threads_lock);
	tc->max_size = s->tc_unclaimed > 0 ? PC_TC_STEAL : PC_TC_MIN;
	s->tc_unclaimed -= (ptrdiff_t)tc->max_size;
	tc->next = s->tcaches;
	if (tc->next)
		tc->next->prev = tc;
	s->tcaches = tc;
	pthread_mutex_unlock(&s->threads_lock);
	t->policy_tls = tc;
	return tc;
}

/* Gives the first @n objects of list @cls back a batch at a time: a whole
 * batch to the transfer cache, a smaller rest to the spans. */
static void pc_thread_release(pc_state_t *s, pc_tcache_t *tc, unsigned cls, unsigned n)
{
	void *batch[512];
	unsigned most = s->cl.batch[cls];
	while (n) {
		unsigned k = 0;
		for (; k < n && k < most && tc->head[cls]; k++) {
			batch[k] = tc->head[cls];
			tc->head[cls] = tc->head[cls]->next;
		}
		if (!k)
			break;
		HL_EV_COUNT(s->heap, HL_EV_CACHE_FLUSH, "thread cache to the transfer cache, class", cls, tc->length[cls],
			    tc->length[cls] - k, NULL);
		tc->length[cls] -= k;
		tc->size -= (size_t)k * s->cl.size[cls];
		if (k == most)
			pc_transfer_insert(s, cls, batch, k);
		else
			pc_central_insert(s, cls, batch, k);
		n -= k;
	}
	if (tc->low_water[cls] > tc->length[cls])
		tc->low_water[cls] = tc->length[cls];
}

static void *pc_thread_fetch(pc_state_t *s, pc_tcache_t *tc, unsigned cls)
{
	uint32_t *max_length = &tc->max_length[cls];
	unsigned batch = s->cl.batch[cls];
	unsigned n = *max_length < batch ? *max_length : batch;
	void *objs[512];
	n = pc_transfer_remove(s, cls, objs, n);
	if (!n)
		return NULL;
	HL_EV_COUNT(s->heap, HL_EV_CACHE_FILL, "thread cache from the transfer cache, class", cls, 0, n - 1, objs[0]);
	for (unsigned k = n; k-- > 1;) { /* the lowest address on top, as gperftools */
		pc_link_t *o = objs[k];
		o->next = tc->head[cls];
		tc->head[cls] = o;
	}
	tc->length[cls] += n - 1;
	tc->size += (size_t)(n - 1) * s->cl.size[cls];
	if (*max_length < batch)
		(*max_length)++;
	else if (*max_length + batch <= PC_THREAD_MAX_LENGTH)
		*max_length = (*max_length + batch) / batch * batch;
	return objs[0];
}

void *pc_thread_alloc(pc_state_t *s, pc_tcache_t *tc, unsigned cls)
{
	void *o = pc_thread_pop(s, tc, cls);
	if (HL_LIKELY(o != NULL)) {
		HL_EV(s->heap, HL_EV_CACHE_HIT, "thread cache, class", cls, s->cl.size[cls], o);
		return o;
	}
	if (HL_UNLIKELY(tc->head[cls] != NULL))
		pc_fatal("free list link overwritten (a write after free?)", tc->head[cls]);
	tc->misses++;
	tc->low_water[cls] = 0;
	HL_EV(s->heap, HL_EV_CACHE_MISS, "thread cache, class", cls, s->cl.size[cls], NULL);
	return pc_thread_fetch(s, tc, cls);
}

/* Gives back half of each list's low-water mark (gperftools' Scavenge). */
static void pc_thread_scavenge(pc_state_t *s, pc_tcache_t *tc)
{
	tc->scavenges++;
	for (unsigned cls = 1; cls < s->cl.n; cls++) {
		if (tc->low_water[cls]) {
			pc_thread_release(s, tc, cls, tc->low_water[cls] > 1 ? tc->low_water[cls] / 2 : 1);
			unsigned batch = s->cl.batch[cls];
			uint32_t *max_length = &tc->max_length[cls];
			if (*max_length > batch)
				*max_length = *max_length - batch > batch ? *max_length - batch : batch;
		}
		tc->low_water[cls] = tc->length[cls];
	}
	pthread_mutex_lock(&s->threads_lock);
	if (s->tc_unclaimed > 0) {
		s->tc_unclaimed -= PC_TC_STEAL;
		tc->max_size += PC_TC_STEAL;
	}
	pthread_mutex_unlock(&s->threads_lock);
}

/* List too long: a batch goes back; max_length adapts. */
static void pc_thread_too_long(pc_state_t *s, pc_tcache_t *tc, unsigned cls)
{
	uint32_t *max_length = &tc->max_length[cls];
	unsigned batch = s->cl.batch[cls];
	pc_thread_release(s, tc, cls, batch < tc->length[cls] ? batch : tc->length[cls]);
	if (*max_length < batch) {
		(*max_length)++;
	} else if (*max_length > batch && ++tc->overages[cls] > 3) { /* a list at one batch counts none */
		*max_length -= batch;
		tc->overages[cls] = 0;
	}
}

void pc_thread_free(pc_state_t *s, pc_tcache_t *tc, unsigned cls, void *p)
{
	HL_EV_COUNT(s->heap, HL_EV_CACHE_PUT, "thread cache, class", cls, tc->length[cls], tc->length[cls] + 1, p);
	if (HL_LIKELY(pc_thread_push(s, tc, cls, p)))
		return;
	pc_thread_link(s, tc, cls, p);
	if (tc->length[cls] > tc->max_length[cls])
		pc_thread_too_long(s, tc, cls);
	if (tc->size > tc->max_size)
		pc_thread_scavenge(s, tc);
}

/* Removes @tc from the list of caches (threads lock held). */
static void pc_thread_unlink(pc_state_t *s, pc_tcache_t *tc)
{
	if (tc->prev)
		tc->prev->next = tc->next;
	else
		s->tcaches = tc->next;
	if (tc->next)
		tc->next->prev = tc->prev;
}

void pc_thread_exit(pc_state_t *s, hl_thread_t *t)
{
	pc_tcache_t *tc = pc_thread_cache_made(t);
	if (!tc)
		return;
	for (unsigned cls = 1; cls < s->cl.n; cls++)
		pc_thread_release(s, tc, cls, tc->length[cls]);
	pthread_mutex_lock(&s->threads_lock);
	pc_thread_unlink(s, tc);
	s->tc_unclaimed += (ptrdiff_t)tc->max_size;
	pthread_mutex_unlock(&s->threads_lock);
	hl_meta_free(&s->tc_pool, tc);
	t->policy_tls = (void *)&pc_no_cache;
}

/* hl_trim: the calling thread gives back everything it caches. */
void pc_thread_flush(pc_state_t *s, pc_tcache_t *tc)
{
	for (unsigned cls = 1; cls < s->cl.n; cls++)
		pc_thread_release(s, tc, cls, tc->length[cls]);
}

/* In a fork child only the forking thread lives on: the other threads'
 * caches are dropped as they were (one may have been halfway through a
 * push); their objects stay out of their spans for good. */
void pc_thread_fork_child(pc_state_t *s)
{
	pthread_mutex_init(&s->threads_lock, NULL);
	pc_tcache_t *tc = s->tcaches;
	while (tc) {
		pc_tcache_t *other = tc;
		tc = tc->next;
		if (!pthread_equal(other->owner, pthread_self()))
			pc_thread_unlink(s, other);
	}
}
