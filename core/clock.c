/*
 * The clock seam (see clock.h): the one file that reads the system clock
 * for a heap, and runs policies' background tasks, as threads on the real
 * clock and as passes the replay's clock sets off on a replay heap.
 */
#include "config.h"
#include <errno.h>
#include <time.h>
#include "bits.h"
#include "heap_internal.h"

static uint64_t real_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t hl_clock_now_ns(const hl_heap_t *h)
{
	if (!h->clock_replay)
		return real_ns();
	return __atomic_load_n(&h->clock_ns, __ATOMIC_ACQUIRE);
}

uint64_t hl_clock_seed(const hl_heap_t *h)
{
	return h->clock_replay ? hl_mix64(0x5eedull + h->id) : real_ns() ^ ((uint64_t)h->id << 40);
}

/* ---- the replay clock ---------------------------------------------------- */

bool hl_heap_replay_clock(const hl_heap_t *h) { return h->clock_replay; }
uint64_t hl_heap_time(const hl_heap_t *h) { return hl_clock_now_ns(h); }

/* The replay heap's task due first at or before @p until, or NULL. */
static hl_background_t *first_due(hl_heap_t *h, uint64_t until)
{
	hl_background_t *best = NULL;
	for (hl_background_t *bg = h->tasks; bg; bg = bg->next)
		if (bg->running && bg->due_ns <= until && (!best || bg->due_ns < best->due_ns))
			best = bg;
	return best;
}

int hl_heap_set_time(hl_heap_t *h, uint64_t ns)
{
	if (!h->clock_replay) {
		hl_set_error("the heap runs on the real clock (make it with clock:replay)");
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&h->clock_lock);
	uint64_t now = h->clock_ns;
	if (ns > now) {
		hl_background_t *bg;
		while ((bg = first_due(h, ns))) {
			if (bg->due_ns > now)
				__atomic_store_n(&h->clock_ns, now = bg->due_ns, __ATOMIC_RELEASE);
			uint64_t wait = bg->fn(bg->arg);
			bg->runs++;
			bg->due_ns = now + (wait ? wait : 1);
		}
		__atomic_store_n(&h->clock_ns, ns, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&h->clock_lock);
	return 0;
}

/* ---- background tasks ------------------------------------------------------ */

static void init_locks(hl_background_t *bg)
{
	pthread_condattr_t ca;
	pthread_mutex_init(&bg->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&bg->cond, &ca);
	pthread_condattr_destroy(&ca);
}

static void *task_main(void *arg)
{
	hl_background_t *bg = arg;
	pthread_mutex_lock(&bg->lock);
	while (!bg->stop) {
		bg->runs++;
		uint64_t seen = bg->kicks;
		pthread_mutex_unlock(&bg->lock);
		uint64_t until = real_ns() + bg->fn(bg->arg);
		pthread_mutex_lock(&bg->lock);
		struct timespec ts = { .tv_sec = (time_t)(until / 1000000000u), .tv_nsec = (long)(until % 1000000000u) };
		while (!bg->stop && bg->kicks == seen && real_ns() < until)
			pthread_cond_timedwait(&bg->cond, &bg->lock, &ts);
	}
	pthread_mutex_unlock(&bg->lock);
	return NULL;
}

int hl_background_start(hl_background_t *bg, hl_heap_t *h, hl_background_fn fn, void *arg)
{
	bg->heap = h;
	bg->fn = fn;
	bg->arg = arg;
	bg->stop = false;
	init_locks(bg);
	if (h->clock_replay) {
		pthread_mutex_lock(&h->clock_lock);
		bg->due_ns = h->clock_ns;
		bg->running = true;
		bg->next = h->tasks;
		h->tasks = bg;
		pthread_mutex_unlock(&h->clock_lock);
		return 0;
	}
	bg->running = pthread_create(&bg->thread, NULL, task_main, bg) == 0;
	return bg->running ? 0 : -1;
}

void hl_background_kick(hl_background_t *bg)
{
	if (bg->heap->clock_replay) {
		/* the replay's thread holds the clock lock while a pass runs:
		 * a pass that kicks itself changes nothing */
		uint64_t now = hl_clock_now_ns(bg->heap);
		if (bg->due_ns > now)
			bg->due_ns = now;
		return;
	}
	pthread_mutex_lock(&bg->lock);
	bg->kicks++;
	pthread_cond_signal(&bg->cond);
	pthread_mutex_unlock(&bg->lock);
}

void hl_background_stop(hl_background_t *bg)
{
	if (!bg->running)
		return;
	if (bg->heap->clock_replay) {
		hl_heap_t *h = bg->heap;
		pthread_mutex_lock(&h->clock_lock);
		for (hl_background_t **p = &h->tasks; *p; p = &(*p)->next)
			if (*p == bg) {
				*p = bg->next;
				break;
			}
		bg->running = false;
		pthread_mutex_unlock(&h->clock_lock);
		return;
	}
	pthread_mutex_lock(&bg->lock);
	bg->stop = true;
	pthread_cond_signal(&bg->cond);
	pthread_mutex_unlock(&bg->lock);
	pthread_join(bg->thread, NULL);
	bg->running = false;
}

uint64_t hl_background_runs(hl_background_t *bg)
{
	pthread_mutex_lock(&bg->lock);
	uint64_t n = bg->runs;
	pthread_mutex_unlock(&bg->lock);
	return n;
}

bool hl_background_running(hl_background_t *bg)
{
	pthread_mutex_lock(&bg->lock);
	bool on = bg->running;
	pthread_mutex_unlock(&bg->lock);
	return on;
}

void hl_background_fork_prepare(hl_background_t *bg) { pthread_mutex_lock(&bg->lock); }
void hl_background_fork_parent(hl_background_t *bg) { pthread_mutex_unlock(&bg->lock); }

void hl_background_fork_child(hl_background_t *bg)
{
	init_locks(bg);
	if (bg->running && bg->heap->clock_replay)
		hl_background_stop(bg);
	bg->running = false;
}
