/*
 * Policy `percpu`: a working model of TCMalloc (google/tcmalloc), and in
 * front:thread of gperftools 2.10 (the tcmalloc Debian ships as
 * libtcmalloc_minimal.so.4).
 *
 * What it models
 *   TCMalloc's three tiers.  Front: a slab per CPU holding, per size
 *   class, a stack of free objects whose capacity grows on misses and is
 *   stolen by other classes when the CPU's budget is spent; push and pop
 *   run in a Linux restartable sequence (x86-64 assembly, percpu_rseq.c),
 *   or, when rseq or the membarrier fence is unavailable or rseq:off,
 *   under a per-CPU mutex after sched_getcpu() ("lock" mode; stats say
 *   which).  Middle: a transfer cache per class moving whole batches and a
 *   central free list per class whose spans are ordered by fullness, the
 *   fullest used first.  Back: a page heap of 8 KiB pages handing out
 *   spans, merging free neighbours, releasing free pages with
 *   MADV_DONTNEED on hl_trim and at release_rate bytes per second;
 *   with hugepage:on, placement and release of a model of Temeraire, the
 *   hugepage-aware allocator (percpu_hugepage.c).
 *   Requests above 256 KiB are spans of their own.  front:thread swaps the
 *   front for gperftools' per-thread lists (slow-start max_length,
 *   scavenging) and the size classes for gperftools'.  See percpu.h for
 *   the structures and the invariants.
 *
 * Overhead and alignment
 *   No header: an object is exactly its class size (the 8-byte class sits
 *   16 bytes apart for heaplab's 16-byte promise; TCMalloc packs it at 8),
 *   so malloc_usable_size is the class size, at most 12.5% above the
 *   request past 128 bytes.  A large block is its page count * 8 KiB.
 *   Metadata out of band: a span descriptor (about 300 bytes, it carries
 *   two bitmaps), the pagemap's leaves, a slab per CPU, a thread cache
 *   (about 2 KiB) per thread in front:thread.
 *
 * Complexity
 *   malloc/free on a front hit: O(1), no lock, no atomic read-modify-write
 *   (rseq); a miss moves half a stack (at most 2^k batches for the k-th
 *   miss in a row) under the CPU's mutex, one transfer-cache lock per 128
 *   objects and, behind it, central locks.  The page heap is O(128) to
 *   find a span plus best fit among the long free spans.
 *
 * Options: described once, in the table below; `heaplab options percpu`
 * prints them.
 *
 * Left out
 *   Most of the hugepage-aware page heap (Temeraire; percpu_hugepage.c
 *   says which rules hugepage:on keeps), sampling and profiling,
 *   NUMA partitions, the per-CPU cache resize across CPUs by miss counts
 *   (a CPU's classes steal from each other only, at once, where Google's
 *   Grow of fce3f55 falls short and a background step moves capacity
 *   between classes later), the background thread
 *   (release_rate is paid from the free path), size-class-specific
 *   "sparse" central lists, and guarded allocations.
 *
 * Misuse detected (debug:off)
 *   A pointer whose page holds no span of this heap, one that is not the
 *   start of an object or of a large block, and the free of an object that
 *   is already free in its span abort.  A double free that lands in a
 *   front cache passes, as in TCMalloc, and the checker finds it later
 *   (the object is then cached twice).
 */
#include "config.h"
#include <string.h>
#include <unistd.h>
#include "percpu_fast.h"

static const hl_option_t pc_options[] = {
	{ "front", HL_OPT_ENUM, "percpu", 0, 0, "percpu|thread",
	  "per-CPU caches (TCMalloc) or per-thread caches and size classes (gperftools 2.10)" },
	{ "rseq", HL_OPT_BOOL, "on", 0, 0, NULL,
	  "restartable sequences for the per-CPU stacks; off forces sched_getcpu() and a per-CPU lock" },
	{ "cpu_cache_bytes", HL_OPT_SIZE, "1536K", 0, (int64_t)1 << 30, NULL,
	  "capacity the stacks of one CPU may add up to" },
	{ "thread_cache_bytes", HL_OPT_SIZE, "32M", 0, (int64_t)1 << 30, NULL,
	  "front:thread: what all thread caches may hold together; each starts at 64K and grows by 64K a scavenge" },
	{ "release_rate", HL_OPT_SIZE, "0", 0, (int64_t)1 << 40, NULL,
	  "bytes per second of free pages released to the OS; 0 = only on hl_trim" },
	{ "hugepage", HL_OPT_BOOL, "off", 0, 0, NULL,
	  "spans up to 1 MiB fill the most used 2 MiB hugepage with room; release takes the least used first (Temeraire)" },
	{ NULL, 0, NULL, 0, 0, NULL, NULL }
};

/* ---- malloc and free -------------------------------------------------------- */

static void *pc_large(pc_state_t *s, size_t n, size_t align_pages)
{
	size_t npages = (n + PC_PAGE - 1) >> PC_PAGE_SHIFT;
	pc_span_t *sp = pc_ph_alloc(&s->ph, npages, align_pages, PC_SPAN_LARGE, 0);
	if (!sp)
		return NULL;
	HL_EV(s->heap, HL_EV_NEW, "span of its own from the page heap (above 256 KiB)", -1, npages * PC_PAGE,
	      (void *)sp->start);
	return (void *)sp->start;
}

/* An object of class @p cls from the front; the per-CPU front's hit
 * without its event unless @p listening (event.h, "Quiet copies"). */
HL_EV_BODY void *pc_alloc_class(pc_state_t *s, hl_thread_t *t, unsigned cls, bool listening)
{
	if (s->mode != PC_MODE_THREAD)
		return listening ? pc_cpu_alloc(s, cls) : pc_cpu_alloc_quiet(s, cls);
	pc_tcache_t *tc = pc_thread_cache(s, t);
	return tc ? pc_thread_alloc(s, tc, cls) : NULL;
}

/* Built twice: pc_malloc with the per-CPU front's events, pc_malloc_quiet
 * without them. */
HL_EV_BODY void *pc_malloc_body(void *st, hl_thread_t *t, size_t n, bool listening)
{
	pc_state_t *s = st;
	if (HL_LIKELY(n <= PC_MAX_SMALL))
		return pc_alloc_class(s, t, pc_class_of(&s->cl, n), listening);
	return pc_large(s, n, 1);
}
HL_EV_MALLOC_TWICE(pc_malloc)

/* Alignment up to a page: the first class at least n whose size is a
 * multiple of align (objects of a page-aligned span are then aligned);
 * beyond, or with no such class, an aligned large span. */
static void *pc_memalign(void *st, hl_thread_t *t, size_t align, size_t n)
{
	pc_state_t *s = st;
	if (align <= PC_PAGE && n <= PC_MAX_SMALL)
		for (unsigned cls = pc_class_of(&s->cl, n); cls < s->cl.n; cls++)
			if (s->cl.size[cls] % align == 0)
				return pc_alloc_class(s, t, cls, true);
	return pc_large(s, n, align > PC_PAGE ? align / PC_PAGE : 1);
}

/* The span that holds @p, when p lies inside it. */
static pc_span_t *pc_span_holding(pc_state_t *s, const void *p)
{
	pc_span_t *sp = pc_ph_span_of(&s->ph, p);
	if (!sp || (uintptr_t)p < sp->start || (uintptr_t)p >= sp->start + sp->npages * PC_PAGE)
		return NULL;
	return sp;
}

/* A pointer free's hit refused (pc_free_check): a large block, which goes
 * back to the page heap (0), or misuse, which aborts.  Returns the class
 * of a small object that passes the checks (not reached in practice:
 * pc_free_check takes every such object). */
static __attribute__((noinline)) unsigned pc_free_checked(pc_state_t *s, void *p)
{
	pc_span_t *sp = pc_span_holding(s, p);
	if (HL_UNLIKELY(!sp))
		pc_fatal("free of a pointer this heap does not own", p);
	if (sp->state == PC_SPAN_SMALL) {
		long i = pc_obj_index(s, sp, p);
		if (HL_UNLIKELY(i < 0))
			pc_fatal("free of a pointer that is not the start of an object", p);
		if (HL_UNLIKELY(hl_bit_get(sp->free_bits, (size_t)i)))
			pc_fatal("double free (object is already free in its span)", p);
		return sp->cls;
	}
	if (sp->state != PC_SPAN_LARGE)
		pc_fatal("free of a pointer that is not allocated", p);
	if ((uintptr_t)p != sp->start)
		pc_fatal("free of a pointer inside a large block", p);
	HL_EV(s->heap, HL_EV_RETIRE, "large span back to the page heap", -1, sp->npages * PC_PAGE, p);
	pc_ph_free(&s->ph, sp);
	return 0;
}

/* Built twice, as pc_malloc: pc_free and pc_free_quiet.  A small object
 * is found by the hit's checks (percpu_fast.h), everything else by
 * pc_free_checked. */
HL_EV_BODY void pc_free_body(void *st, hl_thread_t *t, void *p, bool listening)
{
	pc_state_t *s = st;
	unsigned cls;
	if (HL_UNLIKELY(!pc_free_check(s, p, &cls)) && !(cls = pc_free_checked(s, p)))
		return;
	if (s->mode != PC_MODE_THREAD) {
		if (listening)
			pc_cpu_free(s, cls, p);
		else
			pc_cpu_free_quiet(s, cls, p);
		return;
	}
	pc_tcache_t *tc = pc_thread_cache(s, t);
	if (tc) {
		pc_thread_free(s, tc, cls, p);
	} else {
		HL_EV(s->heap, HL_EV_LIST_PUSH, "transfer cache (no thread cache), class", cls, s->cl.size[cls], p);
		pc_transfer_insert(s, cls, &p, 1);
	}
}
HL_EV_FREE_TWICE(pc_free)

/* ---- queries -------------------------------------------------------------- */

static size_t pc_usable_size(void *st, const void *p)
{
	pc_state_t *s = st;
	pc_span_t *sp = pc_span_holding(s, p);
	if (!sp)
		return 0;
	if (sp->state == PC_SPAN_SMALL)
		return s->cl.size[sp->cls];
	return sp->state == PC_SPAN_LARGE ? sp->npages * PC_PAGE : 0;
}

static bool pc_owns(void *st, const void *p)
{
	pc_state_t *s = st;
	return hl_os_contains(s->os, p);
}

/* hl_trim (MallocExtension::ReleaseMemoryToSystem after draining the
 * caches): every front and transfer cache empties into the spans, and
 * the free pages are released but for @pad bytes of them. */
static size_t pc_trim(void *st, size_t pad)
{
	pc_state_t *s = st;
	if (s->mode == PC_MODE_THREAD) {
		hl_thread_t *t = hl_thread_get(s->heap);
		pc_tcache_t *tc = t ? pc_thread_cache_made(t) : NULL;
		if (tc)
			pc_thread_flush(s, tc);
	} else {
		pc_cpu_drain_all(s);
	}
	pc_transfer_drain(s);
	pthread_mutex_lock(&s->ph.lock);
	size_t free_bytes = pc_ph_free_bytes(&s->ph);
	size_t done = free_bytes > pad ? pc_ph_release_locked(&s->ph, free_bytes - pad) : 0;
	pthread_mutex_unlock(&s->ph.lock);
	return done;
}

/* ---- life cycle ------------------------------------------------------------ */

/* Slab layout: header, then each class's slots; stride a page multiple. */
static int pc_layout_slabs(pc_state_t *s)
{
	size_t off = hl_align_up(sizeof(pc_slab_t), 64);
	for (unsigned cls = 1; cls < s->cl.n; cls++) {
		size_t by_bytes = ((size_t)64 << 10) / s->cl.size[cls];
		size_t cap = 2 * (size_t)s->cl.batch[cls];
		cap = by_bytes > cap ? by_bytes : cap;
		s->max_cap[cls] = (uint32_t)(cap > PC_CPU_MAX_SLOTS ? PC_CPU_MAX_SLOTS : cap);
		s->slot_off[cls] = (uint32_t)off;
		off += s->max_cap[cls] * sizeof(void *);
	}
	if (off > (size_t)1 << PC_SLAB_SHIFT)
		return -1; /* no table in percpu_size.c comes near */
	s->slab_stride = (size_t)1 << PC_SLAB_SHIFT;
	long n = sysconf(_SC_NPROCESSORS_CONF);
	s->ncpus = n < 1 ? 1 : n > PC_MAX_CPUS ? PC_MAX_CPUS : (unsigned)n;
	s->slabs = hl_os_reserve_meta(s->os, s->ncpus * s->slab_stride);
	s->cpus = hl_os_reserve_meta(s->os, hl_align_up(s->ncpus * sizeof(pc_cpu_t), 4096));
	if (!s->slabs || !s->cpus)
		return -1;
	for (unsigned cpu = 0; cpu < s->ncpus; cpu++) {
		pthread_mutex_init(&s->cpus[cpu].lock, NULL);
		atomic_store(&s->open_slab[cpu], pc_slab(s, cpu));
	}
	return 0;
}

/* Transfer caches: PC_TC_BATCHES batches, at most 1 MiB of a class.
 * front:thread: slots of a batch as gperftools 2.10 (CentralFreeList::Init,
 * src/central_freelist.cc): at most 64 and 1 MiB of objects but at least
 * one, 16 of them at first; class 0 has its 16 and never uses them. */
static int pc_layout_transfer(pc_state_t *s)
{
	size_t total = 0;
	s->transfer[0].slots_now = PC_TC_BATCHES;
	s->transfer[0].slots_max = PC_TC_MAX_SLOTS;
	for (unsigned cls = 1; cls < s->cl.n; cls++) {
		pc_transfer_t *t = &s->transfer[cls];
		size_t batch = s->cl.batch[cls], cap = PC_TC_BATCHES * batch, by_bytes = ((size_t)1 << 20) / s->cl.size[cls];
		cap = cap < by_bytes ? cap : by_bytes;
		t->capacity = (unsigned)(cap < batch ? batch : cap);
		if (s->mode == PC_MODE_THREAD) {
			size_t most = ((size_t)1 << 20) / (s->cl.size[cls] * batch);
			t->slots_max = most < 1 ? 1 : most > PC_TC_MAX_SLOTS ? PC_TC_MAX_SLOTS : (unsigned)most;
			t->slots_now = t->slots_max < PC_TC_BATCHES ? t->slots_max : PC_TC_BATCHES;
			t->capacity = (unsigned)(t->slots_max * batch);
		}
		total += t->capacity;
	}
	void **slots = hl_os_reserve_meta(s->os, hl_align_up(total * sizeof(void *), 4096));
	if (!slots)
		return -1;
	for (unsigned cls = 1; cls < s->cl.n; cls++) {
		s->transfer[cls].slots = slots;
		slots += s->transfer[cls].capacity;
	}
	return 0;
}

static void pc_init_locks(pc_state_t *s)
{
	pthread_mutex_init(&s->threads_lock, NULL);
	for (unsigned cls = 0; cls < PC_MAX_CLASSES; cls++) {
		pthread_mutex_init(&s->central[cls].lock, NULL);
		pthread_mutex_init(&s->transfer[cls].lock, NULL);
	}
}

static void *pc_init(hl_heap_t *h, const hl_conf_t *conf)
{
	pc_state_t *s = hl_policy_state_new(h, sizeof *s);
	if (!s)
		return NULL;
	s->heap = h;
	s->os = hl_heap_os(h);
	s->debug = hl_heap_debug(h);
	bool thread = hl_conf_enum(conf, "front") == 1;
	if (thread)
		pc_classes_gperftools(&s->cl);
	else
		pc_classes_tcmalloc(&s->cl);
	s->cpu_cache_bytes = hl_conf_size(conf, "cpu_cache_bytes");
	s->thread_cache_bytes = hl_conf_size(conf, "thread_cache_bytes");
	s->tc_unclaimed = (ptrdiff_t)s->thread_cache_bytes;
	s->rseq_usable = pc_rseq_usable();
	s->rseq_offset = pc_rseq_area_offset();
	s->mode = thread ? PC_MODE_THREAD
		  : hl_conf_bool(conf, "rseq") && s->rseq_usable ? PC_MODE_RSEQ : PC_MODE_LOCK;
	pc_init_locks(s);
	hl_meta_init_private(&s->tc_pool, s->os, sizeof(pc_tcache_t));
	pc_ph_init(&s->ph, h, hl_conf_size(conf, "release_rate"), hl_conf_bool(conf, "hugepage"), thread);
	if (pc_layout_slabs(s) < 0 || pc_layout_transfer(s) < 0) {
		hl_set_error("percpu: out of memory for the policy state");
		return NULL;
	}
	return s;
}

static void pc_thread_exit_hook(void *st, hl_thread_t *t)
{
	pc_state_t *s = st;
	if (s->mode == PC_MODE_THREAD)
		pc_thread_exit(s, t);
}

/* ---- fork ------------------------------------------------------------------ */

static void pc_fork_prepare(void *st)
{
	pc_state_t *s = st;
	pc_cpu_lock_all(s);
	pthread_mutex_lock(&s->threads_lock);
	for (unsigned cls = 0; cls < PC_MAX_CLASSES; cls++)
		pthread_mutex_lock(&s->transfer[cls].lock);
	for (unsigned cls = 0; cls < PC_MAX_CLASSES; cls++)
		pthread_mutex_lock(&s->central[cls].lock);
	pthread_mutex_lock(&s->ph.lock);
	pthread_mutex_lock(&s->ph.spans.lock);
	pthread_mutex_lock(&s->tc_pool.lock);
}

static void pc_fork_parent(void *st)
{
	pc_state_t *s = st;
	pthread_mutex_unlock(&s->tc_pool.lock);
	pthread_mutex_unlock(&s->ph.spans.lock);
	pthread_mutex_unlock(&s->ph.lock);
	for (unsigned cls = PC_MAX_CLASSES; cls-- > 0;)
		pthread_mutex_unlock(&s->central[cls].lock);
	for (unsigned cls = PC_MAX_CLASSES; cls-- > 0;)
		pthread_mutex_unlock(&s->transfer[cls].lock);
	pthread_mutex_unlock(&s->threads_lock);
	pc_cpu_unlock_all(s);
}

/* The child: every lock made anew.  The per-CPU stacks stay as they
 * were (no thread was inside a slow path: fork_prepare held every CPU's
 * mutex), and the fence is registered again for the child's process.
 * What the parent's other threads held — their thread caches, an object
 * between the policy and the ledger — is out of its span for good: the
 * checker is told how many (fork_orphans). */
static void pc_fork_child(void *st)
{
	pc_state_t *s = st;
	hl_meta_fork_child(&s->tc_pool);
	pc_ph_fork_child(&s->ph);
	pc_init_locks(s);
	pc_cpu_fork_child(s);
	pc_thread_fork_child(s);
	if (s->mode == PC_MODE_RSEQ)
		pc_rseq_reregister();
	s->fork_orphans = pc_count_lost(s);
}

/* heaplab diagnose's candidates: knobs that change how memory comes back,
 * each with what the real allocator needs to do the same.  The TCMalloc
 * a machine can preload is gperftools' (2.10 here): per-thread caches, so
 * its model is front:thread (front:percpu, Google's, would also make a
 * replay follow whichever CPU the replaying process ran on). */
static const hl_whatif_t pc_whatif[] = {
	{ "front:thread", "LD_PRELOAD=" HL_SYSTEM_LIBDIR "libtcmalloc_minimal.so.4" },
	{ NULL, NULL },
};

/* realloc as both TCMallocs do it (gperftools 2.10, tcmalloc.cc
 * do_realloc_with_callback; google/tcmalloc's do_realloc): a block stays
 * where it is while the new size lies between half its allocated size and
 * that size; a block that grows moves to at least 1.25 times its allocated
 * size (so growing a little at a time moves it less often), one that
 * shrinks below half moves to a block of the new size.  (Google's TCMalloc
 * also moves a block its sampler picks: not modelled.) */
static void *pc_realloc(void *st, hl_thread_t *t, void *p, size_t n)
{
	size_t old = pc_usable_size(st, p);
	if (HL_UNLIKELY(!old))
		pc_fatal("realloc of a pointer this heap does not own", p);
	if (n <= old && n >= old / 2)
		return p;
	size_t grow = old + old / 4;   /* a grown block: old bytes to copy either way */
	void *q = n > old && n < grow ? hl_realloc_move(st, t, p, old, grow, pc_malloc, pc_free) : NULL;
	return q ? q : hl_realloc_move(st, t, p, old, n, pc_malloc, pc_free);
}

/* Configurations the fuzzers run beside the defaults (core/policy.h). */
static const char *const pc_variants[] = {
	"hugepage:on",
	"hugepage:on,front:thread,release_rate:1G",
	"rseq:off,cpu_cache_bytes:0",
	NULL,
};

/* The layouts the conformance suite runs every contract under
 * (core/policy.h): the per-thread front instead of the per-CPU one, the
 * per-CPU caches without rseq, and spans on huge pages. */
static const char *const pc_layouts[] = {
	"front:thread",
	"rseq:off",
	"hugepage:on",
	NULL,
};

const hl_policy_t hl_policy_percpu = {
	.name = "percpu",
	.summary = "TCMalloc: per-CPU caches on rseq, transfer cache, central free lists, page heap",
	.options = pc_options,
	.fidelity_family = "tcmalloc",
	.fidelity_conf = "front:thread", /* gperftools 2.10, installed here */
	.whatif = pc_whatif,
	.variants = pc_variants,
	.layouts = pc_layouts,
	.cells = HL_CELLS_RUNS, /* a small span of equal blocks is one cell */
	.tls_empty = &pc_no_cache,
	.init = pc_init,
	.destroy = NULL,
	.malloc = pc_malloc,
	.free = pc_free,
	.malloc_quiet = pc_malloc_quiet,
	.free_quiet = pc_free_quiet,
	.realloc = pc_realloc,
	.memalign = pc_memalign,
	.usable_size = pc_usable_size,
	.owns = pc_owns,
	.trim = pc_trim,
	.reset = NULL,
	.stats = pc_stats,
	.snapshot = pc_snapshot,
	.check = pc_check,
	.walk = pc_walk,
	.thread_exit = pc_thread_exit_hook,
	.fork_prepare = pc_fork_prepare,
	.fork_parent = pc_fork_parent,
	.fork_child = pc_fork_child,
	.libc_api = &pc_libc_api,
};
