/*
 * Per-thread records, keyed by heap instance.
 *
 * Each live heap holds a slot 0..HL_MAX_HEAPS-1 and a generation number.
 * Every thread has a thread-local table with, per slot, its record for
 * that heap and the generation it was made for.  So "this thread's state
 * in heap h" is one thread-local load and one compare, and a record of a
 * destroyed heap is never touched (its generation no longer matches).
 *
 * A pthread key destructor tells every heap when a thread exits; a
 * pthread_atfork handler takes every heap's locks around fork(), as
 * glibc's fork takes its malloc's: only once the process has had a second
 * thread, and after the C library's list of open files (see fork_prepare).
 * hl_thread_detach does for one heap what exit does (a replayed trace's
 * "#@exit N" line): the thread's next call there attaches it anew.
 */
#include "config.h"
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/single_threaded.h>
#include "heap_internal.h"

/* glibc's lock on its list of open files (exported, no longer declared in
 * its headers); weak, so a C library without them leaves the order as the
 * handler's own. */
extern void _IO_list_lock(void) __attribute__((weak));
extern void _IO_list_unlock(void) __attribute__((weak));
extern void _IO_list_resetlock(void) __attribute__((weak));

__thread hl_tls_slot_t hl_tls[HL_MAX_HEAPS];
hl_thread_t hl_no_thread = {.exited = true};
__thread hl_thread_t *hl_tls_fast = &hl_no_thread;
hl_heap_t *hl_fast_heap;
hl_fast_calls_t hl_fast_calls;
static __thread bool tls_registered;

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static hl_heap_t *heaps[HL_MAX_HEAPS];
static unsigned slot_gen[HL_MAX_HEAPS];
static pthread_key_t exit_key;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void on_thread_exit(void *arg);
static void fork_prepare(void);
static void fork_parent(void);
static void fork_child(void);

static void setup(void)
{
	pthread_key_create(&exit_key, on_thread_exit);
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

int hl_heap_slot_acquire(hl_heap_t *h)
{
	pthread_once(&once, setup);
	pthread_mutex_lock(&registry_lock);
	int id = -1;
	for (int i = 0; i < HL_MAX_HEAPS && id < 0; i++)
		if (!heaps[i])
			id = i;
	if (id >= 0) {
		heaps[id] = h;
		h->id = (unsigned)id;
		h->gen = ++slot_gen[id];
		if (h->gen == 0)
			h->gen = ++slot_gen[id];
	}
	pthread_mutex_unlock(&registry_lock);
	return id;
}

void hl_heap_slot_release(hl_heap_t *h)
{
	pthread_mutex_lock(&registry_lock);
	heaps[h->id] = NULL;
	slot_gen[h->id]++;
	pthread_mutex_unlock(&registry_lock);
}

/* Reuses an exited thread's record (its counts stay: totals are sums). */
static hl_thread_t *take_exited(hl_heap_t *h)
{
	for (hl_thread_t *t = h->threads; t; t = t->next)
		if (t->exited) {
			t->exited = false;
			t->policy_tls = (void *)h->policy->tls_empty;
			/* atomic: a thread that waits on the record's last owner
			 * (pools_lock.c) may still be reading it */
			__atomic_store_n(&t->lock_busy, 0, __ATOMIC_RELEASE);
			return t;
		}
	return NULL;
}

hl_thread_t *hl_thread_attach(hl_heap_t *h)
{
	pthread_mutex_lock(&h->threads_lock);
	hl_thread_t *t = take_exited(h);
	if (!t) {
		t = hl_meta_alloc(&h->threads_pool);
		if (!t) {
			pthread_mutex_unlock(&h->threads_lock);
			errno = ENOMEM;  /* the call fails; the next one tries again */
			return NULL;
		}
		t->index = h->nthreads++;
		t->policy_tls = (void *)h->policy->tls_empty;
		t->next = h->threads;
		h->threads = t;
	}
	pthread_mutex_unlock(&h->threads_lock);
	hl_tls[h->id].rec = t;
	hl_tls[h->id].gen = h->gen;
	if (h == hl_fast_heap)
		hl_tls_fast = t;
	if (!tls_registered) {
		tls_registered = true;
		pthread_setspecific(exit_key, (void *)1);
	}
	return t;
}

void hl_thread_none(hl_heap_t *h)
{
	hl_fatal(h->policy, "out of memory for a thread record", NULL);
}

hl_thread_t *hl_thread_get(hl_heap_t *h)
{
	return hl_thread_fast(h);
}

/* The calling thread leaves heap slot @p i, as it does at exit: the
 * policy's thread_exit, then its record is free for the next new thread.
 * Called with the registry lock held. */
static void leave_heap(int i)
{
	hl_heap_t *h = heaps[i];
	hl_tls_slot_t *s = &hl_tls[i];
	if (!h || !s->rec || s->gen != h->gen)
		return;
	hl_thread_t *t = s->rec;
	if (h->policy->thread_exit) {
		/* draining caches rewrites freed blocks: a guarded call */
		if (h->debug)
			hl_guard_begin(h, "thread exit");
		h->policy->thread_exit(h->state, t);
		if (h->debug)
			hl_guard_end(h, "thread exit");
	}
	if (h == hl_fast_heap)
		hl_tls_fast = &hl_no_thread;
	pthread_mutex_lock(&h->threads_lock);
	t->exited = true;
	t->policy_tls = (void *)h->policy->tls_empty;
	pthread_mutex_unlock(&h->threads_lock);
	s->rec = NULL;
	s->gen = 0;
}

static void on_thread_exit(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&registry_lock);
	for (int i = 0; i < HL_MAX_HEAPS; i++)
		leave_heap(i);
	tls_registered = false;
	pthread_mutex_unlock(&registry_lock);
}

void hl_thread_detach(hl_heap_t *h)
{
	pthread_mutex_lock(&registry_lock);
	if (heaps[h->id] == h)
		leave_heap((int)h->id);
	pthread_mutex_unlock(&registry_lock);
}

void hl_heaps_foreach(void (*fn)(hl_heap_t *h))
{
	for (int i = 0; i < HL_MAX_HEAPS; i++)
		if (heaps[i])
			fn(heaps[i]);
}

static void prepare_one(hl_heap_t *h)
{
	hl_guard_fork_prepare(&h->guard);
	if (h->policy->fork_prepare)
		h->policy->fork_prepare(h->state);
	pthread_mutex_lock(&h->threads_lock);
	pthread_mutex_lock(&h->threads_pool.lock);
	hl_ledger_fork_prepare(&h->ledger);
	pthread_mutex_lock(&h->ledger_os.lock);
	pthread_mutex_lock(&h->os.lock);
}

static void parent_one(hl_heap_t *h)
{
	pthread_mutex_unlock(&h->os.lock);
	pthread_mutex_unlock(&h->ledger_os.lock);
	hl_ledger_fork_parent(&h->ledger);
	pthread_mutex_unlock(&h->threads_pool.lock);
	pthread_mutex_unlock(&h->threads_lock);
	if (h->policy->fork_parent)
		h->policy->fork_parent(h->state);
	hl_guard_fork_parent(&h->guard);
}

static void child_one(hl_heap_t *h)
{
	pthread_mutex_init(&h->os.lock, NULL);
	pthread_mutex_init(&h->ledger_os.lock, NULL);
	hl_ledger_fork_child(&h->ledger);
	hl_meta_fork_child(&h->threads_pool);
	pthread_mutex_init(&h->threads_lock, NULL);
	hl_guard_fork_child(&h->guard);
	/* Only the forking thread survives: the others' records are exited. */
	for (hl_thread_t *t = h->threads; t; t = t->next)
		if (hl_tls[h->id].rec != t)
			t->exited = true;
	if (h->policy->fork_child)
		h->policy->fork_child(h->state);
}

/*
 * glibc 2.36's fork (posix/fork.c) runs the pthread_atfork handlers, then
 * takes the list of open files' lock (_IO_list_lock), then its malloc's
 * locks, and only while the process has had a second thread; with one,
 * it takes neither, so a signal handler may fork even while the one
 * thread is inside malloc, free or fork.  The handler does both the same:
 *  - with one thread (glibc's __libc_single_threaded) nobody else can
 *    hold a lock, and a lock the thread itself holds is released by the
 *    same thread in the child as in the parent: nothing is taken or reset;
 *  - otherwise the list's lock (a recursive lock: glibc's fork takes it
 *    again) comes before every heap's, so a thread that holds a FILE and
 *    waits for a heap lock in getline's realloc never waits on a fork
 *    that holds that heap lock and waits for the list (held by fflush,
 *    which waits for the FILE).  Handlers that take their allocator's
 *    locks before the list, as jemalloc's and gperftools' do, make that
 *    cycle (tests/programs/fork_faults.sh runs both cases on every policy beside
 *    its real allocator).
 * The choice is made once per fork, in prepare, and parent and child
 * follow it (a fork nested in a signal handler sees the same answer).
 */
static bool fork_locked;

static void fork_prepare(void)
{
	fork_locked = !__libc_single_threaded;
	if (!fork_locked)
		return;
	if (_IO_list_lock)
		_IO_list_lock();
	pthread_mutex_lock(&registry_lock);
	hl_heaps_foreach(prepare_one);
}

static void fork_parent(void)
{
	if (!fork_locked)
		return;
	hl_heaps_foreach(parent_one);
	pthread_mutex_unlock(&registry_lock);
	if (_IO_list_unlock)
		_IO_list_unlock();
}

static void fork_child(void)
{
	if (!fork_locked)
		return;
	hl_heaps_foreach(child_one);
	pthread_mutex_init(&registry_lock, NULL);
	if (_IO_list_resetlock)
		_IO_list_resetlock();
}
