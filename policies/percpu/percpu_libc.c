/*
 * percpu_libc.c — the C library's malloc API as gperftools 2.10 answers
 * it (libtcmalloc_minimal.so.4, src/tcmalloc.cc: tc_mallinfo, tc_mallopt,
 * tc_malloc_stats), from percpu's tiers: the preload library's mallinfo,
 * mallopt and malloc_stats under percpu (shim/malloc_api.c).  gperftools
 * exports no mallinfo2, malloc_info nor malloc_trim: under it those reach
 * glibc's own, idle malloc, and so they do under percpu.  Google's TCMalloc
 * (the per-CPU front) is not installed here to measure; percpu answers as
 * gperftools in both fronts.
 *
 * tc_mallinfo fills four fields from its statistics, cast to int:
 *   arena     the page heap's system bytes (here: every region's committed
 *             frontier, grown 1 MiB at least, as gperftools grows)
 *   fsmblks   bytes in the thread (here also per-CPU), central and
 *             transfer caches
 *   fordblks  the page heap's free and unmapped (released) bytes
 *   uordblks  arena less the two above
 * and leaves the others 0.  tc_mallopt does nothing and returns 1.
 */
#include "config.h"
#include "percpu.h"
#include "../../core/malloc_api.h"
#include <string.h>

/** The figures tc_mallinfo and tc_malloc_stats read. */
typedef struct pc_libc_sums {
	size_t system, front, central, transfer, free, unmapped, spans, threads;
} pc_libc_sums_t;

static void pc_libc_sums(pc_state_t *s, pc_libc_sums_t *o)
{
	memset(o, 0, sizeof *o);
	if (s->mode == PC_MODE_THREAD) {
		pthread_mutex_lock(&s->threads_lock);
		for (pc_tcache_t *tc = s->tcaches; tc; tc = tc->next, o->threads++)
			o->front += tc->size;
		pthread_mutex_unlock(&s->threads_lock);
	} else {
		for (unsigned cpu = 0; cpu < s->ncpus; cpu++)
			o->front += pc_cpu_cached_bytes(s, cpu);
	}
	for (unsigned cls = 1; cls < s->cl.n; cls++) {
		size_t size = s->cl.size[cls];
		pthread_mutex_lock(&s->transfer[cls].lock);
		o->transfer += (size_t)s->transfer[cls].count * size;
		pthread_mutex_unlock(&s->transfer[cls].lock);
		pthread_mutex_lock(&s->central[cls].lock);
		o->central += s->central[cls].free_objects * size;
		pthread_mutex_unlock(&s->central[cls].lock);
	}
	pthread_mutex_lock(&s->ph.lock);
	for (unsigned i = 0; i < s->ph.nregions; i++)
		o->system += s->ph.regions[i].frontier;
	o->free = s->ph.free_pages * PC_PAGE;
	o->unmapped = s->ph.returned_pages * PC_PAGE;
	o->spans = s->ph.small_spans + s->ph.large_spans;
	pthread_mutex_unlock(&s->ph.lock);
}

static void pc_mallinfo(void *st, struct mallinfo2 *m)
{
	pc_libc_sums_t o;
	pc_libc_sums(st, &o);
	memset(m, 0, sizeof *m);
	m->arena = o.system;
	m->fsmblks = o.front + o.central + o.transfer;
	m->fordblks = o.free + o.unmapped;
	m->uordblks = o.system - m->fsmblks - m->fordblks;
}

static int pc_mallopt(void *st, int param, int value)
{
	(void)st, (void)param, (void)value;
	return 1;
}

/* One line of tc_malloc_stats: bytes, MiB, what. */
static void pc_stats_line(FILE *err, const char *op, size_t bytes, const char *what)
{
	fprintf(err, "MALLOC: %s %12zu (%7.1f MiB) %s\n", op, bytes, (double)bytes / 1048576.0, what);
}

/* tc_malloc_stats' text (MallocExtension::GetStats at level 1), its
 * lines in gperftools' order; the metadata line is the page source's
 * metadata regions. */
static void pc_malloc_stats(void *st, FILE *err)
{
	pc_state_t *s = st;
	pc_libc_sums_t o;
	pc_libc_sums(s, &o);
	size_t meta = (size_t)__atomic_load_n(&s->ph.os->meta_bytes, __ATOMIC_RELAXED);
	size_t in_use = o.system - o.front - o.central - o.transfer - o.free - o.unmapped;
	fprintf(err, "------------------------------------------------\n");
	pc_stats_line(err, " ", in_use, "Bytes in use by application");
	pc_stats_line(err, "+", o.free, "Bytes in page heap freelist");
	pc_stats_line(err, "+", o.central, "Bytes in central cache freelist");
	pc_stats_line(err, "+", o.transfer, "Bytes in transfer cache freelist");
	pc_stats_line(err, "+", o.front, "Bytes in thread cache freelists");
	pc_stats_line(err, "+", meta, "Bytes in malloc metadata");
	fprintf(err, "MALLOC:   ------------\n");
	pc_stats_line(err, "=", o.system - o.unmapped + meta, "Actual memory used (physical + swap)");
	pc_stats_line(err, "+", o.unmapped, "Bytes released to OS (aka unmapped)");
	fprintf(err, "MALLOC:   ------------\n");
	pc_stats_line(err, "=", o.system + meta, "Virtual address space used");
	fprintf(err, "MALLOC:\n");
	fprintf(err, "MALLOC:   %12zu              Spans in use\n", o.spans);
	fprintf(err, "MALLOC:   %12zu              Thread heaps in use\n", o.threads);
	fprintf(err, "MALLOC:   %12zu              Tcmalloc page size\n", (size_t)PC_PAGE);
	fprintf(err, "------------------------------------------------\n");
	fprintf(err, "Call ReleaseFreeMemory() to release freelist memory to the OS (via madvise()).\n");
	fprintf(err, "Bytes released to the OS take up virtual address space but no physical memory.\n");
}

const hl_libc_api_t pc_libc_api = {
	.mallinfo = pc_mallinfo,
	.mallinfo2 = false,
	.mallopt = pc_mallopt,
	.malloc_stats = pc_malloc_stats,
};
