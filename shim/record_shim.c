/*
 * The recording shim: libheaplab-record.so's malloc family.  Unlike the
 * preload library (shim.c), the program keeps the C library's own
 * allocator: every call goes to glibc's __libc_* entry points, and what
 * happened is written to a trace with the caller's return address (its
 * allocation site) and, every HEAPLAB_RECORD_MS milliseconds, the
 * process's resident bytes, taken by a thread of the recorder's own
 * (see recorder.h).  `heaplab diagnose` runs a
 * program under it.
 *
 * Environment: HEAPLAB_RECORD=PREFIX writes PREFIX.PID.rep (each process
 * its own file: a wrapper script and the program it starts do not mix),
 * in the binary form (trace/trace_binary.h) unless
 * HEAPLAB_RECORD_FORMAT=text; HEAPLAB_RECORD_MS=N (default 10) the
 * sampling interval; HEAPLAB_RECORD_PACE=recorder|allocator|K how the
 * program's timed waits count their time (record_pace.c: each call below
 * times what is not counted, record_pace.h); HEAPLAB_RECORD_SAMPLE=K one new block
 * in K recorded with all its ops, HEAPLAB_RECORD_MAX=BYTES the rate halved
 * as the recording nears BYTES, HEAPLAB_RECORD_SEED=N which blocks
 * (recorder.h: hl_rec_sample_blocks).
 * A child after fork stops recording: its operations continue the parent's
 * blocks, which its own trace could not name.
 *
 * Thread exit: a thread's first call sets a pthread key whose destructor
 * writes "#@exit N" (hl_rec_thread_exit), so that a replay lets go of the
 * thread as glibc does (its tcache flushed, its arena on the free list for
 * the next new thread).  glibc does that in __libc_thread_freeres, after
 * every key destructor; ours asks for one more round of destructors first,
 * so that what the other keys' destructors free in the first round is
 * recorded before the line.  Calls after the line (glibc frees the
 * thread's second-level key blocks after the last round) number the
 * thread anew, and each is followed by its own "#@exit" line: replayed,
 * the late call attaches, runs and lets go again, as the real one runs
 * on a thread whose tcache and arena are about to go.
 */
#include "config.h"
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <pthread.h>
#include <time.h>
#include "../trace/recorder.h"
#include "record_pace.h"

#define SHIM_API __attribute__((visibility("default")))

/* glibc's allocator under its other names (exported for exactly this). */
extern void *__libc_malloc(size_t n);
extern void __libc_free(void *p);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void *__libc_memalign(size_t align, size_t n);

static void stop_in_child(void) { hl_rec_forget(); }

static pthread_key_t exit_key;
static bool watching_exits;
enum { NOT_WATCHED, WATCHED, EXITED };
static __thread unsigned char exit_watch;

/* The destructor's value: the first round asks for a second one. */
#define FIRST_ROUND ((void *)1)
#define LAST_ROUND ((void *)2)

static void thread_exiting(void *round)
{
	if (round == FIRST_ROUND) {
		pthread_setspecific(exit_key, LAST_ROUND);
		return;
	}
	exit_watch = EXITED;
	hl_rec_thread_exit();
}

/* Called after each recorded call: arms the calling thread's destructor,
 * or ends a call made after the thread's exit line with one of its own. */
static inline void watch_exit(void)
{
	if (__builtin_expect(exit_watch == WATCHED, 1) || !watching_exits)
		return;
	if (exit_watch == EXITED) {
		hl_rec_thread_exit();
		return;
	}
	exit_watch = WATCHED;   /* before the call: pthread_setspecific may calloc */
	pthread_setspecific(exit_key, FIRST_ROUND);
}

/* The layers of smaps at the peak and the end, and the program's own
 * mappings named (record_layers.c, record_mmap.c). */
static void start_layers(void)
{
	hl_rec_mmap_start();
	hl_rec_pace_start();
	hl_rec_layers_start();
}

/* RSS by the clock: a thread of the recorder's own that takes a sample
 * every HEAPLAB_RECORD_MS, whether or not the program allocates (it never
 * allocates itself; its small stack is counted among the stacks). */
static void *sampler(void *arg)
{
	(void)arg;
	long ms = hl_rec_sample_ms();
	struct timespec pause = { ms / 1000, (ms % 1000) * 1000000L };
	for (;;) {
		nanosleep(&pause, NULL);
		hl_rec_sample_now();
	}
	return NULL;
}

static void start_sampler(void)
{
	if (hl_rec_sample_ms() <= 0)
		return;
	pthread_attr_t attr;
	pthread_t id;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 << 10);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	(void)pthread_create(&id, &attr, sampler, NULL);
	pthread_attr_destroy(&attr);
}

/* A whole number of 1 or more in @p s (NULL or empty: @p dflt) into *out;
 * false when it is not one. */
static bool whole_number(const char *s, unsigned long long dflt, unsigned long long *out)
{
	if (!s || !*s) {
		*out = dflt;
		return true;
	}
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (*s == '-' || *end || errno || !v)
		return false;
	*out = v;
	return true;
}

/* HEAPLAB_RECORD_SAMPLE=K (one new block in K kept, default 1),
 * HEAPLAB_RECORD_MAX=BYTES (the rate halved as the recording nears it),
 * HEAPLAB_RECORD_SEED=N (which blocks): recorder.h.  A bad value stops
 * the recording (its file removed) with one line, for a sample at a rate not asked for would
 * be read as the one asked for. */
static int sample_setup(const char *path)
{
	unsigned long long k, max, seed;
	const char *bad = !whole_number(getenv("HEAPLAB_RECORD_SAMPLE"), 1, &k) ? "HEAPLAB_RECORD_SAMPLE"
			  : !whole_number(getenv("HEAPLAB_RECORD_MAX"), ~0ull, &max) ? "HEAPLAB_RECORD_MAX"
			  : !whole_number(getenv("HEAPLAB_RECORD_SEED"), 1, &seed) ? "HEAPLAB_RECORD_SEED" : NULL;
	if (!bad && k > 1ul << 30)
		bad = "HEAPLAB_RECORD_SAMPLE";
	if (bad) {
		char msg[160];
		int n = snprintf(msg, sizeof msg, "heaplab: %s is a whole number from 1: not recording\n", bad);
		(void)!write(2, msg, (size_t)n);
		hl_rec_forget();
		unlink(path);
		return -1;
	}
	return hl_rec_sample_blocks((unsigned long)k, max == ~0ull ? 0 : max, seed);
}

__attribute__((constructor)) static void record_start(void)
{
	const char *prefix = getenv("HEAPLAB_RECORD");
	if (!prefix || !*prefix)
		return;
	start_layers();
	char path[4096];
	snprintf(path, sizeof path, "%s.%ld.rep", prefix, (long)getpid());
	const char *format = getenv("HEAPLAB_RECORD_FORMAT");
	bool text = format && !strcmp(format, "text");
	if (format && *format && !text && strcmp(format, "binary")) {
		const char msg[] = "heaplab: HEAPLAB_RECORD_FORMAT is text or binary: recording in binary\n";
		(void)!write(2, msg, sizeof msg - 1);
	}
	if ((text ? hl_rec_open(path) : hl_rec_open_binary(path)) < 0) {
		const char msg[] = "heaplab: cannot write the recording\n";
		(void)!write(2, msg, sizeof msg - 1);
		return;
	}
	if (sample_setup(path) < 0)
		return;
	hl_rec_front(getenv("HEAPLAB_RECORD_FRONT"));   /* what the program has in front of malloc as it runs */
	const char *ms = getenv("HEAPLAB_RECORD_MS");
	hl_rec_sample_every(ms ? strtol(ms, NULL, 10) : 10);
	start_sampler();
	pthread_atfork(NULL, NULL, stop_in_child);
	watching_exits = pthread_key_create(&exit_key, thread_exiting) == 0;
}

__attribute__((destructor)) static void record_end(void) { hl_rec_finish(); }

SHIM_API void *malloc(size_t n)
{
	long long t = hl_pace_from(HL_PACE_ALLOCATOR, 0);
	void *p = __libc_malloc(n);
	t = hl_pace_from(HL_PACE_RECORDER, t);
	hl_rec_malloc_at(p, n, __builtin_return_address(0));
	watch_exit();
	hl_pace_to(t);
	return p;
}

SHIM_API void free(void *p)
{
	long long t = hl_pace_from(HL_PACE_ALLOCATOR, hl_pace_from(HL_PACE_RECORDER, 0));
	if (p)
		hl_rec_free(p);
	if (hl_pace_mode == HL_PACE_RECORDER)
		t = hl_pace_to(t);
	__libc_free(p);
	watch_exit();
	hl_pace_to(t);
}

SHIM_API void *calloc(size_t count, size_t size)
{
	long long t = hl_pace_from(HL_PACE_ALLOCATOR, 0);
	void *p = __libc_calloc(count, size);
	t = hl_pace_from(HL_PACE_RECORDER, t);
	hl_rec_calloc_at(p, count, size, __builtin_return_address(0));
	watch_exit();
	hl_pace_to(t);
	return p;
}

SHIM_API void *realloc(void *p, size_t n)
{
	long long t = hl_pace_from(HL_PACE_ALLOCATOR, 0);
	void *q = __libc_realloc(p, n);
	t = hl_pace_from(HL_PACE_RECORDER, t);
	if (q || !n)
		hl_rec_realloc_at(p, q, n, __builtin_return_address(0));
	watch_exit();
	hl_pace_to(t);
	return q;
}

SHIM_API void *reallocarray(void *p, size_t count, size_t size)
{
	size_t n;
	if (__builtin_mul_overflow(count, size, &n)) {
		errno = ENOMEM;
		return NULL;
	}
	void *q = __libc_realloc(p, n);
	if (q || !n)
		hl_rec_realloc_at(p, q, n, __builtin_return_address(0));
	watch_exit();
	return q;
}

static void *aligned(size_t align, size_t n, const void *site)
{
	void *p = __libc_memalign(align, n);
	if (align <= 16)   /* what malloc gives anyway: a plain allocation */
		hl_rec_malloc_at(p, n, site);
	else
		hl_rec_memalign_at(p, align, n, site);
	watch_exit();
	return p;
}

SHIM_API int posix_memalign(void **out, size_t align, size_t n)
{
	if (!align || (align & (align - 1)) || align % sizeof(void *))
		return EINVAL;
	int saved = errno;
	void *p = aligned(align, n, __builtin_return_address(0));
	int rc = p ? 0 : errno;
	errno = saved;
	if (p)
		*out = p;
	return rc;
}

SHIM_API void *aligned_alloc(size_t align, size_t n) { return aligned(align, n, __builtin_return_address(0)); }
SHIM_API void *memalign(size_t align, size_t n) { return aligned(align, n, __builtin_return_address(0)); }

SHIM_API void *valloc(size_t n)
{
	return aligned((size_t)sysconf(_SC_PAGESIZE), n, __builtin_return_address(0));
}
