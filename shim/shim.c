/*
 * The malloc shim: libheaplab-preload.so's malloc family, routed to one
 * default heap of the configured policy.
 *
 * What it must survive, and how:
 *  - allocation before constructors run: the default heap is built on the
 *    first call, whenever that is;
 *  - re-entry while it is being built (the thread library, the policy's
 *    own start-up): the building thread is served from a static bootstrap
 *    area, whose blocks are never freed;
 *  - other threads arriving during the build wait for it;
 *  - no stdio, no getenv after start-up, nothing that allocates on the
 *    allocation path; errors go out with write(2).
 * Environment: HEAPLAB_POLICY, HEAPLAB_CONF, HEAPLAB_STATS=1,
 * HEAPLAB_SNAPSHOT=file.dot, HEAPLAB_TRACE=file.rep,
 * HEAPLAB_SAMPLE_MS=N with HEAPLAB_SAMPLE_FILE=file (see "sampling").
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "bits.h"
#include "heap_internal.h"
#include "malloc_api.h"
#include "shim.h"
#include "../trace/recorder.h"
#include "fast_paths.h"

#define SHIM_API __attribute__((visibility("default")))

enum { READY = 2, BUILDING = 1, UNBUILT = 0 };

static hl_heap_t *heap;
static int state = UNBUILT;
static pthread_t builder;
static bool recording;
static const char *stats_env, *snapshot_env;

/* ---- the bootstrap area ------------------------------------------------ */

static _Alignas(64) char boot_area[256 * 1024];
static size_t boot_used;

typedef struct boot_header {
	size_t size;
	size_t pad;
} boot_header_t;

static bool in_boot(const void *p)
{
	return (const char *)p >= boot_area && (const char *)p < boot_area + sizeof boot_area;
}

/* Only the thread building the heap is served here; any other caller
 * found no heap because building it failed for want of memory. */
static void *boot_alloc(size_t n, size_t align)
{
	if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) != BUILDING || !pthread_equal(builder, pthread_self())) {
		errno = ENOMEM;
		return NULL;
	}
	if (align < 16)
		align = 16;
	size_t start = hl_align_up(boot_used + sizeof(boot_header_t), align);
	if (n > sizeof boot_area || start + n > sizeof boot_area) {
		errno = ENOMEM;
		return NULL;
	}
	boot_header_t *h = (boot_header_t *)(boot_area + start) - 1;
	h->size = n;
	boot_used = start + n;
	return boot_area + start;
}

static size_t boot_size(const void *p)
{
	return ((const boot_header_t *)p - 1)->size;
}

/* ---- building the default heap ----------------------------------------- */

static void say(const char *a, const char *b)
{
	(void)!write(2, a, strlen(a));
	if (b)
		(void)!write(2, b, strlen(b));
	(void)!write(2, "\n", 1);
}

/* Copies the configuration, adding ledger:off unless statistics are asked
 * for or the user chose: the ledger costs time on every call. */
static const char *shim_conf(char *buf, size_t len)
{
	const char *conf = getenv("HEAPLAB_CONF");
	bool wants_numbers = stats_env || snapshot_env || getenv("HEAPLAB_SAMPLE_MS");
	if (conf && strstr(conf, "ledger"))
		wants_numbers = true;
	snprintf(buf, len, "%s%s", wants_numbers ? "" : "ledger:off,", conf ? conf : "");
	return buf;
}

static void repath(void);

static void build(void)
{
	static char conf[1024];
	stats_env = getenv("HEAPLAB_STATS");
	if (stats_env && (!*stats_env || !strcmp(stats_env, "0")))
		stats_env = NULL;
	snapshot_env = getenv("HEAPLAB_SNAPSHOT");
	if (snapshot_env && !*snapshot_env)
		snapshot_env = NULL;
	const char *policy = getenv("HEAPLAB_POLICY");
	errno = 0;
	hl_heap_t *h = hl_heap_new(policy && *policy ? policy : NULL, shim_conf(conf, sizeof conf));
	if (!h && errno == ENOMEM)
		return;         /* malloc returns NULL; the next call tries again */
	if (!h) {
		say("heaplab: cannot start the default heap: ", hl_last_error());
		_exit(2);
	}
	const char *trace = getenv("HEAPLAB_TRACE");
	if (trace && *trace) {
		if (hl_rec_open(trace) < 0)
			say("heaplab: cannot write the trace file ", trace);
		else
			recording = true;
	}
	if (h->plain && !recording) {
		/* what malloc and free call once hl_tls_fast is set */
		hl_fast_calls.st = h->call_st;
		hl_fast_calls.malloc_fn = h->malloc_fn;
		hl_fast_calls.free_fn = h->free_fn;
		/* the hits read policy_tls on hl_no_thread too: set before any
		 * copy with hits can be jumped to (repath's release stores) */
		hl_no_thread.policy_tls = (void *)h->policy->tls_empty;
		hl_fast_calls.quiet_path = hl_fast_path_of(h->policy, h->state);
		if (h->malloc_fn == h->policy->malloc_quiet)  /* nobody listens yet */
			hl_fast_calls.path = hl_fast_calls.quiet_path;
		hl_fast_calls.repath = repath;
		repath();
		hl_fast_heap = h;      /* before any thread has a record in h */
	}
	heap = h;
}

/* Returns the default heap, or NULL when the caller must use the
 * bootstrap area (it is the thread building the heap) or when building it
 * failed for want of memory (boot_alloc then says ENOMEM, as malloc does:
 * no _exit on the allocation path; the next call tries again). */
static inline hl_heap_t *get_heap(void)
{
	if (HL_LIKELY(__atomic_load_n(&state, __ATOMIC_ACQUIRE) == READY))
		return heap;
	int expected = UNBUILT;
	if (__atomic_compare_exchange_n(&state, &expected, BUILDING, false, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE)) {
		builder = pthread_self();
		build();
		__atomic_store_n(&state, heap ? READY : UNBUILT, __ATOMIC_RELEASE);
		return heap;
	}
	if (expected == BUILDING && pthread_equal(builder, pthread_self()))
		return NULL;
	while ((expected = __atomic_load_n(&state, __ATOMIC_ACQUIRE)) == BUILDING)
		sched_yield();
	return expected == READY ? heap : NULL;
}

/* The default heap for a program that wants to read its model's statistics
 * (see hl_default_heap in heaplab.h); NULL until the first allocation. */
SHIM_API hl_heap_t *hl_default_heap(void)
{
	return __atomic_load_n(&state, __ATOMIC_ACQUIRE) == READY ? heap : NULL;
}

/* ---- the malloc family -------------------------------------------------- */

/* The careful ways: the heap not built yet (or this thread building it),
 * a thread's first call, a heap with a ledger, debug mode or a recording,
 * sizes 0 and above HL_MAX_REQUEST, a failure. */
static __attribute__((noinline)) void *malloc_careful(size_t n)
{
	hl_heap_t *h = get_heap();
	if (HL_UNLIKELY(!h))
		return boot_alloc(n, 16);
	void *p = hl_malloc_inline(h, n);
	if (HL_UNLIKELY(recording))
		hl_rec_malloc(p, n);
	return p;
}

static __attribute__((noinline)) void free_careful(void *p)
{
	if (!p || in_boot(p))
		return;
	hl_heap_t *h = get_heap();
	if (!h)
		return;         /* no heap: p is not ours */
	if (HL_UNLIKELY(recording))
		hl_rec_free(p);
	hl_free_inline(h, p);
}

/* The policy returned NULL on the fast path: counted as a failure, not a
 * malloc (malloc counts before its call, so that nothing but the call's
 * result is needed after it). */
static __attribute__((noinline)) void *malloc_failed(void)
{
	hl_thread_t *t = hl_tls_fast;
	__atomic_store_n(&t->ops[HL_OP_MALLOC], t->ops[HL_OP_MALLOC] - 1, __ATOMIC_RELAXED);
	count(t, HL_OP_FAILED);
	errno = ENOMEM;
	return NULL;
}

/* The fast path (hacking/fast-path.md): once this thread has a
 * record in a plain default heap that nothing records (hl_tls_fast, else
 * &hl_no_thread, on which every hit misses), a call
 * is that one thread-local load, the policy's inline hit (policies/
 * fast_paths.h) while nobody listens, the operation counter, and otherwise
 * the size or pointer test and the call
 * through the policy's table (copied into hl_fast_calls when the heap was
 * built, and switched with the heap's by hl_heap_listening).  The body is
 * built once per inline path, with the path a constant, so each copy holds
 * one policy's hit and nothing of the others' (no switch, and no register
 * the other hits need saved); malloc and free jump to the copy of
 * hl_fast_calls.path, which is 0 — the copy with no hit — until the heap
 * is built and whenever someone listens. */
static inline __attribute__((always_inline)) void *malloc_body(size_t n, int path)
{
	hl_thread_t *t = hl_tls_fast;
	/* the hit takes any n and tests its own range, and misses on
	 * hl_no_thread by itself (fast_paths.h); the state is read where it
	 * is used, so a hit that does not use it (sharded's, bins') does not
	 * load it */
	void *p = hl_fast_malloc_hit(path, hl_fast_calls.st, t, n);
	if (HL_LIKELY(p != NULL)) {
		count(t, HL_OP_MALLOC);
		return p;
	}
	if (HL_LIKELY(!t->exited && n - 1 < HL_MAX_REQUEST)) {
		count(t, HL_OP_MALLOC);
		p = __atomic_load_n(&hl_fast_calls.malloc_fn, __ATOMIC_RELAXED)(hl_fast_calls.st, t, n);
		if (HL_LIKELY(p != NULL))
			return p;
		return malloc_failed();
	}
	return malloc_careful(n);
}

static inline __attribute__((always_inline)) void free_body(void *p, int path)
{
	hl_thread_t *t = hl_tls_fast;
	void *st = hl_fast_calls.st;
	/* a hit that screens (fast_paths.h) turns NULL and the bootstrap
	 * area's blocks away itself, so it runs before the test below; every
	 * hit misses on hl_no_thread by itself */
	bool screened = hl_fast_free_hit_screens(path);
	if (screened && HL_LIKELY(hl_fast_free_hit(path, st, t, p))) {
		count(t, HL_OP_FREE);
		return;
	}
	/* free(NULL) and the bootstrap area's blocks, never given back, take
	 * the careful way: one unsigned comparison tells both apart */
	if (HL_LIKELY((uintptr_t)p - (uintptr_t)boot_area >= sizeof boot_area && p)) {
		if (!screened && HL_LIKELY(hl_fast_free_hit(path, st, t, p))) {
			count(t, HL_OP_FREE);
			return;
		}
		if (HL_LIKELY(!t->exited)) {
			count(t, HL_OP_FREE);
			__atomic_load_n(&hl_fast_calls.free_fn, __ATOMIC_RELAXED)(st, t, p);
			return;
		}
	}
	free_careful(p);
}

/* One malloc and one free per inline path, in tables indexed by path
 * (a row of fast_paths.h: path first). */
#define SHIM_PATH_COPIES(path, ...)                                             \
	static void *malloc_##path(size_t n) { return malloc_body(n, path); }  \
	static void free_##path(void *p) { free_body(p, path); }
SHIM_PATH_COPIES(HL_FAST_NONE, none)
HL_FAST_EACH_PATH(SHIM_PATH_COPIES)
static void *(*const malloc_copies[HL_FAST_NPATHS])(size_t) = {
	[HL_FAST_NONE] = malloc_HL_FAST_NONE,
#define SHIM_MALLOC_COPY(path, ...) [path] = malloc_##path,
	HL_FAST_EACH_PATH(SHIM_MALLOC_COPY)
};
static void (*const free_copies[HL_FAST_NPATHS])(void *) = {
	[HL_FAST_NONE] = free_HL_FAST_NONE,
#define SHIM_FREE_COPY(path, ...) [path] = free_##path,
	HL_FAST_EACH_PATH(SHIM_FREE_COPY)
};

/* The copies for hl_fast_calls.path, kept as two pointers so that malloc
 * and free are one indirect jump through memory: the path's load, the
 * table's address and the indexed jump were two instructions more for
 * each (bench/HISTORY.md).  Written only by repath(), which
 * hl_heap_listening calls after changing the path (under the listener
 * table's lock, so the changes do not interleave). */
static void *(*malloc_copy)(size_t) = malloc_HL_FAST_NONE;
static void (*free_copy)(void *) = free_HL_FAST_NONE;

static void repath(void)
{
	int path = __atomic_load_n(&hl_fast_calls.path, __ATOMIC_RELAXED);
	/* release: what the copies read (hl_no_thread's policy_tls) first */
	__atomic_store_n(&malloc_copy, malloc_copies[path], __ATOMIC_RELEASE);
	__atomic_store_n(&free_copy, free_copies[path], __ATOMIC_RELEASE);
}

SHIM_API void *malloc(size_t n)
{
	return __atomic_load_n(&malloc_copy, __ATOMIC_RELAXED)(n);
}

SHIM_API void free(void *p)
{
	__atomic_load_n(&free_copy, __ATOMIC_RELAXED)(p);
}

SHIM_API void *calloc(size_t count, size_t size)
{
	hl_heap_t *h = get_heap();
	if (HL_UNLIKELY(!h)) {
		size_t n;
		if (__builtin_mul_overflow(count, size, &n)) {
			errno = ENOMEM;
			return NULL;
		}
		return boot_alloc(n, 16); /* static memory starts zeroed */
	}
	void *p = hl_calloc(h, count, size);
	if (HL_UNLIKELY(recording))
		hl_rec_calloc(p, count, size);
	return p;
}

SHIM_API void *realloc(void *p, size_t n)
{
	hl_heap_t *h = get_heap();
	if (HL_UNLIKELY(!h || in_boot(p))) {
		if (!h)
			return boot_alloc(n, 16);
		void *q = n ? hl_malloc(h, n) : NULL;
		if (q)
			memcpy(q, p, boot_size(p) < n ? boot_size(p) : n);
		return q;
	}
	void *q = hl_realloc(h, p, n);
	if (HL_UNLIKELY(recording) && (q || !n))
		hl_rec_realloc(p, q, n);
	return q;
}

SHIM_API void *reallocarray(void *p, size_t count, size_t size)
{
	size_t n;
	if (__builtin_mul_overflow(count, size, &n)) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(p, n);
}

static void *aligned(size_t align, size_t n)
{
	hl_heap_t *h = get_heap();
	if (HL_UNLIKELY(!h)) {
		if (!hl_is_pow2(align)) {
			errno = EINVAL;
			return NULL;
		}
		return boot_alloc(n, align);
	}
	void *p = hl_memalign(h, align, n);
	if (HL_UNLIKELY(recording))
		hl_rec_memalign(p, align, n);
	return p;
}

SHIM_API int posix_memalign(void **out, size_t align, size_t n)
{
	if (!hl_is_pow2(align) || align % sizeof(void *))
		return EINVAL;
	int saved = errno;
	void *p = aligned(align, n);
	if (!p) {
		/* errno stays ENOMEM, as under glibc 2.36 and gperftools 2.10
		 * (and under all four real allocators when memory runs out:
		 * their failed mmap leaves it); glibc's tst-malloc-thread-fail
		 * checks it */
		errno = ENOMEM;
		return ENOMEM;
	}
	errno = saved;
	*out = p;
	return 0;
}

SHIM_API void *aligned_alloc(size_t align, size_t n) { return aligned(align, n); }
SHIM_API void *memalign(size_t align, size_t n) { return aligned(align, n); }

SHIM_API void *valloc(size_t n)
{
	return aligned((size_t)sysconf(_SC_PAGESIZE), n);
}

SHIM_API void *pvalloc(size_t n)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t rounded = hl_align_up(n ? n : 1, page);
	if (rounded < n) {
		errno = ENOMEM;
		return NULL;
	}
	return aligned(page, rounded);
}

SHIM_API size_t malloc_usable_size(void *p)
{
	if (!p)
		return 0;
	if (in_boot(p))
		return boot_size(p);
	hl_heap_t *h = get_heap();
	if (!h)
		return 0;
	/* debug mode answers the request, as AddressSanitizer does: a program
	 * that uses all it is told it may stays clear of the slack's canary */
	if (HL_UNLIKELY(h->debug))
		return hl_guard_request(h, p);
	return hl_usable_size(h, p);
}

/* For the rest of the malloc API (malloc_api.c: mallinfo, mallopt, ...). */
hl_heap_t *hl_shim_heap(void)
{
	return get_heap();
}

/* ---- sampling ------------------------------------------------------------
 * With HEAPLAB_SAMPLE_MS=N, HEAPLAB_SAMPLE_FILE=file and HEAPLAB_SAMPLE_T0
 * (`heaplab run --sample-ms N`, which creates the file), a thread started
 * once the heap is ready appends every N ms a line
 *     pid ms live_requested committed resident
 * (ms since T0 on CLOCK_MONOTONIC, bytes, integers) read with hl_stat, and
 * one more line is written at exit.  Every process that loads the shim
 * samples (a wrapper script, the program it execs, their children), each
 * line one O_APPEND write(2) with its pid, so `heaplab plot` can pick one
 * process.  Lines are formatted on the stack: no stdio, no allocation of
 * our own.
 */

static int sample_fd = -1;
static long sample_ms;
static long long sample_t0_ns;

static unsigned long long stat_u64(const char *path)
{
	double v;
	return hl_stat(heap, path, &v) == 0 && v > 0 ? (unsigned long long)v : 0;
}

static void sample_once(void)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	long long ms = (now.tv_sec * 1000000000LL + now.tv_nsec - sample_t0_ns) / 1000000;
	char line[160];
	int n = snprintf(line, sizeof line, "%ld %lld %llu %llu %llu\n", (long)getpid(), ms,
			 stat_u64("live_requested_bytes"), stat_u64("committed_bytes"), stat_u64("resident_bytes"));
	if (n > 0)
		(void)!write(sample_fd, line, (size_t)n);
}

static void *sampler(void *arg)
{
	(void)arg;
	for (;;) {
		sample_once();
		struct timespec gap = { sample_ms / 1000, (sample_ms % 1000) * 1000000 };
		while (nanosleep(&gap, &gap) != 0 && errno == EINTR)
			;
	}
	return NULL;
}

__attribute__((constructor)) static void shim_start_sampler(void)
{
	const char *ms = getenv("HEAPLAB_SAMPLE_MS"), *file = getenv("HEAPLAB_SAMPLE_FILE");
	const char *t0 = getenv("HEAPLAB_SAMPLE_T0");
	if (!ms || !file || !*file || (sample_ms = strtol(ms, NULL, 10)) <= 0 || !get_heap())
		return;
	sample_t0_ns = t0 ? strtoll(t0, NULL, 10) : 0;
	sample_fd = open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (sample_fd < 0) {
		say("heaplab: cannot write the sample file ", file);
		return;
	}
	pthread_attr_t attr;
	pthread_t thread;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&thread, &attr, sampler, NULL) != 0)
		say("heaplab: cannot start the sampling thread", NULL);
	pthread_attr_destroy(&attr);
}

/* ---- at exit ------------------------------------------------------------ */

__attribute__((destructor)) static void shim_at_exit(void)
{
	if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) != READY)
		return;
	if (sample_fd >= 0)
		sample_once();
	if (recording)
		hl_rec_flush();
	if (stats_env)
		hl_stats_text(heap, stderr);
	if (snapshot_env) {
		FILE *f = fopen(snapshot_env, "w");
		if (!f) {
			say("heaplab: cannot write the snapshot ", snapshot_env);
			return;
		}
		hl_snapshot_dot(heap, f, "heap at exit");
		fclose(f);
	}
}
