/*
 * Decay of policy `slab`: when freed pages go back to the kernel.
 *
 * A decay period (dirty_decay_ms or muzzy_decay_ms) is split into
 * SL_NSTEPS epochs.  backlog[i] counts the pages that became unused in
 * the i-th most distant epoch still remembered; pages that became unused
 * k epochs ago may stay unpurged only in the proportion h(1 - k/N) given
 * by the smootherstep curve h(x) = 6x^5 - 15x^4 + 10x^3.  So the number of
 * pages allowed to stay is
 *
 *     limit = sum_i backlog[i] * h((i + 1) / N)
 *
 * and whatever exceeds it is purged, oldest first: dirty pages with
 * MADV_FREE into muzzy (or straight to returned when muzzy_decay_ms is 0),
 * muzzy pages with MADV_DONTNEED into returned.  A purge of everything (a
 * dirty decay time of 0 after each free, an arena purge) takes dirty pages
 * straight to returned whatever muzzy_decay_ms says: jemalloc 5.3's
 * pac_decay_all with fully_decay, called by arena_handle_deferred_work and
 * arena_decay with "all".  Memory thus leaves along
 * an S-curve over one period instead of all at once when it ends.  A decay
 * time of 0 purges at once, -1 never.
 *
 * Who runs it: after every SL_DECAY_NTICKS ticks of a thread a time check
 * on the thread's arena, or, with background_thread:on, a task per heap
 * (the core's, clock.h: a thread, or a replay's passes at the recorded
 * times) that sleeps until the next epoch is due (at least 100 ms, as
 * jemalloc) and then decays every arena.  The time is the heap's clock
 * (hl_clock_now_ns), so a replay decays on the recording's time axis.  Only work that reaches an arena ticks (a
 * tcache fill, each pointer a flush gives back, an uncached or large
 * allocation or free), as in jemalloc 5.3: a program whose mallocs all hit
 * the thread cache never decays without the background thread.  jemalloc
 * draws each tick's chance (1 in 1000) at random; the model counts down.
 * A fork child has no background thread (jemalloc turns it off there).
 */
#include "config.h"
#include <errno.h>
#include <string.h>
#include "slab.h"
#include "slab_decay.h"

/* h((i + 1) / N) in fixed point with SL_SMOOTH_BFP fraction bits. */
static uint64_t sl_smooth[SL_NSTEPS];
static pthread_once_t sl_smooth_once = PTHREAD_ONCE_INIT;

static void sl_smooth_build(void)
{
	for (int i = 0; i < SL_NSTEPS; i++) {
		double x = (double)(i + 1) / SL_NSTEPS;
		double h = x * x * x * (x * (x * 6 - 15) + 10);
		sl_smooth[i] = (uint64_t)(h * (double)(1ull << SL_SMOOTH_BFP) + 0.5);
	}
}

static void sl_decay_deadline(sl_decay_t *d)
{
	d->jitter_state = hl_mix64(d->jitter_state);
	d->deadline_ns = d->epoch_ns + d->interval_ns + d->jitter_state % (d->interval_ns ? d->interval_ns : 1);
}

void sl_decay_init(sl_decay_t *d, int64_t ms, uint64_t now, uint64_t seed)
{
	pthread_once(&sl_smooth_once, sl_smooth_build);
	memset(d, 0, sizeof *d);
	d->ms = ms;
	d->interval_ns = ms > 0 ? (uint64_t)ms * 1000000ull / SL_NSTEPS : 0;
	d->epoch_ns = now;
	d->jitter_state = seed;
	sl_decay_deadline(d);
}

static size_t sl_decay_limit(const sl_decay_t *d)
{
	uint64_t sum = 0;
	for (int i = 0; i < SL_NSTEPS; i++)
		sum += (uint64_t)d->backlog[i] * sl_smooth[i];
	return (size_t)(sum >> SL_SMOOTH_BFP);
}

/* Moves the epoch forward to @p now; false when it is not due yet. */
static bool sl_decay_advance(sl_decay_t *d, uint64_t now, size_t npages)
{
	if (now < d->deadline_ns)
		return false;
	uint64_t n = (now - d->epoch_ns) / d->interval_ns;
	d->epoch_ns += n * d->interval_ns;
	if (n >= SL_NSTEPS) {
		memset(d->backlog, 0, sizeof d->backlog);
	} else if (n) {
		memmove(d->backlog, d->backlog + n, (SL_NSTEPS - n) * sizeof d->backlog[0]);
		memset(d->backlog + SL_NSTEPS - n, 0, n * sizeof d->backlog[0]);
	}
	d->backlog[SL_NSTEPS - 1] = npages > d->nunpurged ? npages - d->nunpurged : 0;
	sl_decay_deadline(d);
	return true;
}

/* One decay (0 = dirty, 1 = muzzy) of arena @p a; ns until due, 0 idle. */
static uint64_t sl_decay_one(sl_state_t *s, sl_arena_t *a, int which, uint64_t now)
{
	sl_decay_t *d = &a->decay[which];
	sl_eset_t *es = &a->esets[which];
	if (d->ms <= 0)
		return 0;
	if (sl_decay_advance(d, now, es->npages)) {
		a->st.decay_epochs++;
		size_t limit = sl_decay_limit(d);
		if (es->npages > limit)
			sl_purge(s, a, which ? SL_MUZZY : SL_DIRTY, es->npages - limit, false);
		d->nunpurged = es->npages;
	}
	if (!es->npages)
		return 0;
	return d->deadline_ns > now ? d->deadline_ns - now : 1;
}

uint64_t sl_decay_run(sl_state_t *s, sl_arena_t *a, uint64_t now)
{
	uint64_t w0 = sl_decay_one(s, a, 0, now);
	uint64_t w1 = sl_decay_one(s, a, 1, now);
	if (!w0)
		return w1;
	return (!w1 || w0 < w1) ? w0 : w1;
}

void sl_decay_tick(sl_state_t *s, sl_arena_t *a)
{
	if (s->bg_on || pthread_mutex_trylock(&a->ext_lock))
		return;
	sl_decay_run(s, a, sl_now_ns(s));
	pthread_mutex_unlock(&a->ext_lock);
}

/* A thread has ended, its cache flushed and its arena unbound: jemalloc
 * 5.3's tcache_destroy ticks arena 0 (the cache's own array lived there)
 * and then the thread's arena, which it purges whole, dirty pages straight
 * to returned, when no thread is bound to it any more and no background
 * thread runs.  Whatever the decay times say: -1 purges here as well. */
void sl_decay_thread_ended(sl_state_t *s, sl_arena_t *a)
{
	sl_arena_t *a0 = sl_arena_get(s, 0);
	if (a0 && a0 != a)
		sl_decay_tick(s, a0);
	pthread_mutex_lock(&s->arenas_lock);
	bool last = a->nthreads == 0;
	pthread_mutex_unlock(&s->arenas_lock);
	if (!last || s->bg_on) {
		sl_decay_tick(s, a);
		return;
	}
	pthread_mutex_lock(&a->ext_lock);
	size_t dirty = a->esets[0].npages, muzzy = a->esets[1].npages;
	if (dirty || muzzy)
		HL_EV(s->heap, HL_EV_PURGE, "the arena's last thread ended: purged whole", (int)a->index,
		      (dirty + muzzy) << s->sc.lg_page, NULL);
	if (dirty)
		sl_purge(s, a, SL_DIRTY, dirty, true);
	if (muzzy)
		sl_purge(s, a, SL_MUZZY, muzzy, true);
	pthread_mutex_unlock(&a->ext_lock);
}

/* ---- the background thread ---------------------------------------------- */

/* One pass of the background task (clock.h): decays every arena;
 * returns how long to sleep. */
static uint64_t sl_bg_pass(void *arg)
{
	sl_state_t *s = arg;
	uint64_t sleep = 0;
	__atomic_store_n(&s->bg_idle, 1, __ATOMIC_SEQ_CST);
	for (unsigned i = 0; i <= SL_HUGE_ARENA; i++) {
		sl_arena_t *a = sl_arena_get(s, i);
		if (!a)
			continue;
		pthread_mutex_lock(&a->ext_lock);
		uint64_t w = sl_decay_run(s, a, sl_now_ns(s));
		pthread_mutex_unlock(&a->ext_lock);
		if (w && (!sleep || w < sleep))
			sleep = w;
	}
	if (sleep)
		__atomic_store_n(&s->bg_idle, 0, __ATOMIC_SEQ_CST);
	else
		sleep = SL_BG_IDLE_NS;
	return sleep < SL_BG_MIN_INTERVAL_NS ? SL_BG_MIN_INTERVAL_NS : sleep;
}

void sl_bg_kick(sl_state_t *s)
{
	__atomic_store_n(&s->bg_idle, 0, __ATOMIC_SEQ_CST);
	hl_background_kick(&s->bg);
}

int sl_bg_start(sl_state_t *s) { return hl_background_start(&s->bg, s->heap, sl_bg_pass, s); }

void sl_bg_stop(sl_state_t *s) { hl_background_stop(&s->bg); }
