/*
 * bins_libc.c -- the C library's malloc API as glibc 2.36 answers it
 * (malloc/malloc.c: int_mallinfo, __malloc_stats, __libc_mallopt,
 * __malloc_info), computed from the model's arenas: the preload library's
 * mallinfo, mallinfo2, mallopt, malloc_stats and malloc_info under bins
 * (shim/malloc_api.c).  malloc_trim is bins' trim (bins.c, bn_trim).
 *
 * What the model's figures do not share with glibc's
 *   - a sub-heap's mprotect size (malloc_info's aspace type="mprotect")
 *     is its committed size: bins decommits what it trims, where glibc
 *     keeps the high-water mark;
 *   - mallopt(M_PERTURB) is accepted and does nothing (no perturb byte);
 *     a negative M_TOP_PAD is refused (0), where glibc takes it as a huge
 *     size_t.
 * Each arena is read under its lock into a summary and written out after
 * the lock is let go: the stream's buffer may come from this heap.
 */
#include "bins.h"
#include "../../core/malloc_api.h"
#include <errno.h>
#include <pthread.h>
#include <string.h>

/** One size range of malloc_info's <sizes>: a fastbin, then bins 1..127. */
typedef struct bn_size_row {
	size_t from, to, total, count;
} bn_size_row_t;

/** What glibc reads of one arena for mallinfo, malloc_stats, malloc_info. */
typedef struct bn_arena_sum {
	size_t top;                     /**< the top chunk's size (0 before any) */
	size_t nfast, fastavail;        /**< fastbin chunks and their bytes */
	size_t nblocks;                 /**< top + binned chunks */
	size_t avail;                   /**< their bytes (mallinfo: sizes alone) */
	size_t avail_info;              /**< the same with the size words' flags
					     (malloc_info: chunksize_nomask) */
	size_t system, max_system;      /**< committed for the arena, and its peak */
	size_t heap_size, heap_count;   /**< secondary: sub-heaps' bytes and count */
	bn_size_row_t rows[BN_NFAST + BN_NBINS - 1];
} bn_arena_sum_t;

/** Reads arena @p a as glibc's int_mallinfo and __malloc_info do. */
static void bn_arena_sum(bn_arena_t *a, bn_arena_sum_t *s)
{
	memset(s, 0, sizeof *s);
	bn_lock(a);
	s->top = a->top ? bn_csize(a->top) : 0;
	s->nblocks = 1;                 /* the top always counts */
	for (unsigned i = 0; i < BN_NFAST; i++) {
		bn_size_row_t *r = &s->rows[i];
		for (bn_chunk_t *c = a->fast[i]; c; c = c->fd) {
			r->to = bn_csize(c);
			r->count++;
		}
		if (r->count)
			r->from = r->to - 15;
		r->total = r->count * r->to;
		s->nfast += r->count;
		s->fastavail += r->total;
	}
	for (unsigned i = 1; i < BN_NBINS; i++) {
		bn_size_row_t *r = &s->rows[BN_NFAST - 1 + i];
		bn_chunk_t *b = bn_bin(a, i);
		r->from = ~(size_t)0;
		for (bn_chunk_t *c = b->fd; c && c != b; c = c->fd) {
			size_t w = bn_size_word(c);   /* glibc: flags and all */
			r->count++;
			r->total += w;
			s->avail += w & ~(size_t)BN_FLAGS;
			r->from = w < r->from ? w : r->from;
			r->to = w > r->to ? w : r->to;
		}
		if (!r->count)
			r->from = 0;
		s->nblocks += r->count;
		s->avail_info += r->total;
	}
	s->avail += s->top;
	s->avail_info += s->top;
	s->system = a->system;
	s->max_system = a->peak_system;
	for (bn_heap_t *hp = a->index ? a->heap : NULL; hp; hp = hp->prev) {
		s->heap_size += hp->size;
		s->heap_count++;
	}
	bn_unlock(a);
}

/** int_mallinfo's sums of one arena into @p m (the main arena's also
 *  sets the fields only it has). */
static void bn_add_mallinfo(bn_state_t *st, bn_arena_t *a, const bn_arena_sum_t *s, struct mallinfo2 *m)
{
	m->smblks += s->nfast;
	m->ordblks += s->nblocks;
	m->fordblks += s->avail + s->fastavail;
	m->uordblks += s->system - s->avail - s->fastavail;
	m->arena += s->system;
	m->fsmblks += s->fastavail;
	if (a == &st->main) {
		pthread_mutex_lock(&st->mmap_lock);
		m->hblks = st->n_mmaps;
		m->hblkhd = st->mmapped_bytes;
		pthread_mutex_unlock(&st->mmap_lock);
		m->usmblks = 0;
		m->keepcost = s->top;
	}
}

static void bn_mallinfo(void *stp, struct mallinfo2 *m)
{
	bn_state_t *st = stp;
	bn_arena_sum_t s;
	memset(m, 0, sizeof *m);
	bn_arena_t *a = &st->main;
	do {
		bn_arena_sum(a, &s);
		bn_add_mallinfo(st, a, &s, m);
		a = bn_ring_next(a);
	} while (a != &st->main);
}

/* __malloc_stats: each arena's system and in-use bytes, then the totals
 * with the mapped chunks, as unsigned int (glibc's casts).  Written whole,
 * as glibc's is (it marks stderr not-cancellable and holds its lock): a
 * thread cancelled meanwhile ends after the last line, not inside the
 * report (glibc's tst-malloc-stats-cancellation). */
static void bn_malloc_stats(void *stp, FILE *err)
{
	int was;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &was);
	flockfile(err);
	bn_state_t *st = stp;
	pthread_mutex_lock(&st->mmap_lock);
	size_t mapped = st->mmapped_bytes, peak_mapped = st->peak_mmapped, peak_n = st->peak_n_mmaps;
	pthread_mutex_unlock(&st->mmap_lock);
	unsigned int in_use_b = (unsigned int)mapped, system_b = in_use_b;
	bn_arena_sum_t s;
	bn_arena_t *a = &st->main;
	int i = 0;
	do {
		struct mallinfo2 mi;
		memset(&mi, 0, sizeof mi);
		bn_arena_sum(a, &s);
		bn_add_mallinfo(st, a, &s, &mi);
		fprintf(err, "Arena %d:\n", i++);
		fprintf(err, "system bytes     = %10u\n", (unsigned int)mi.arena);
		fprintf(err, "in use bytes     = %10u\n", (unsigned int)mi.uordblks);
		system_b += (unsigned int)mi.arena;
		in_use_b += (unsigned int)mi.uordblks;
		a = bn_ring_next(a);
	} while (a != &st->main);
	fprintf(err, "Total (incl. mmap):\n");
	fprintf(err, "system bytes     = %10u\n", system_b);
	fprintf(err, "in use bytes     = %10u\n", in_use_b);
	fprintf(err, "max mmap regions = %10u\n", (unsigned int)peak_n);
	fprintf(err, "max mmap bytes   = %10lu\n", (unsigned long)peak_mapped);
	funlockfile(err);
	pthread_setcancelstate(was, NULL);
}

/* __malloc_info's XML: per arena the non-empty fastbins and bins (the
 * unsorted bin last), the totals, the system bytes and the address space;
 * then the totals of every arena and the mapped chunks.  glibc 2.43 has no
 * fastbins and writes no "fast" total (its malloc/malloc.c, the bminor/glibc
 * mirror's master of 2026-01-20: "malloc: remove fastbin code from
 * malloc_info"); up to 2.42 every heap and the totals have one. */
static int bn_malloc_info(void *stp, int options, FILE *fp)
{
	bn_state_t *st = stp;
	if (options != 0)
		return EINVAL;
	bool fast_total = st->glibc_minor < 43;
	size_t t_nblocks = 0, t_nfast = 0, t_avail = 0, t_fastavail = 0;
	size_t t_system = 0, t_max_system = 0, t_aspace = 0, t_mprotect = 0;
	bn_arena_sum_t s;
	fputs("<malloc version=\"1\">\n", fp);
	bn_arena_t *a = &st->main;
	int n = 0;
	do {
		fprintf(fp, "<heap nr=\"%d\">\n<sizes>\n", n++);
		bn_arena_sum(a, &s);
		t_nfast += s.nfast;
		t_fastavail += s.fastavail;
		t_nblocks += s.nblocks;
		t_avail += s.avail_info;
		for (size_t i = 0; i < sizeof s.rows / sizeof s.rows[0]; i++)
			if (s.rows[i].count && i != BN_NFAST)
				fprintf(fp, "  <size from=\"%zu\" to=\"%zu\" total=\"%zu\" count=\"%zu\"/>\n",
					s.rows[i].from, s.rows[i].to, s.rows[i].total, s.rows[i].count);
		const bn_size_row_t *u = &s.rows[BN_NFAST];
		if (u->count)
			fprintf(fp, "  <unsorted from=\"%zu\" to=\"%zu\" total=\"%zu\" count=\"%zu\"/>\n",
				u->from, u->to, u->total, u->count);
		t_system += s.system;
		t_max_system += s.max_system;
		fputs("</sizes>\n", fp);
		if (fast_total)
			fprintf(fp, "<total type=\"fast\" count=\"%zu\" size=\"%zu\"/>\n", s.nfast, s.fastavail);
		fprintf(fp,
			"<total type=\"rest\" count=\"%zu\" size=\"%zu\"/>\n"
			"<system type=\"current\" size=\"%zu\"/>\n"
			"<system type=\"max\" size=\"%zu\"/>\n",
			s.nblocks, s.avail_info, s.system, s.max_system);
		if (a != &st->main) {
			fprintf(fp,
				"<aspace type=\"total\" size=\"%zu\"/>\n"
				"<aspace type=\"mprotect\" size=\"%zu\"/>\n"
				"<aspace type=\"subheaps\" size=\"%zu\"/>\n",
				s.heap_size, s.heap_size, s.heap_count);
			t_aspace += s.heap_size;
			t_mprotect += s.heap_size;
		} else {
			fprintf(fp,
				"<aspace type=\"total\" size=\"%zu\"/>\n"
				"<aspace type=\"mprotect\" size=\"%zu\"/>\n",
				s.system, s.system);
			t_aspace += s.system;
			t_mprotect += s.system;
		}
		fputs("</heap>\n", fp);
		a = bn_ring_next(a);
	} while (a != &st->main);
	pthread_mutex_lock(&st->mmap_lock);
	size_t n_mmaps = st->n_mmaps, mapped = st->mmapped_bytes;
	pthread_mutex_unlock(&st->mmap_lock);
	if (fast_total)
		fprintf(fp, "<total type=\"fast\" count=\"%zu\" size=\"%zu\"/>\n", t_nfast, t_fastavail);
	fprintf(fp,
		"<total type=\"rest\" count=\"%zu\" size=\"%zu\"/>\n"
		"<total type=\"mmap\" count=\"%d\" size=\"%zu\"/>\n"
		"<system type=\"current\" size=\"%zu\"/>\n"
		"<system type=\"max\" size=\"%zu\"/>\n"
		"<aspace type=\"total\" size=\"%zu\"/>\n"
		"<aspace type=\"mprotect\" size=\"%zu\"/>\n"
		"</malloc>\n",
		t_nblocks, t_avail, (int)n_mmaps, mapped, t_system, t_max_system, t_aspace, t_mprotect);
	return 0;
}

/* __libc_mallopt: the main arena's fastbins merged first, then the knob
 * set; 1 when done (every parameter glibc does not know included), 0 when
 * refused.  Each knob is one of bins' options (bins.c), changed while the
 * program runs as glibc's mp_ is: a relaxed store, read by the next call
 * that looks. */
static int bn_mallopt(void *stp, int param, int value)
{
	bn_state_t *st = stp;
	int res = 1;
	bn_lock(&st->main);
	if (st->main.have_fast)
		bn_consolidate(st, &st->main);
	bn_unlock(&st->main);
	switch (param) {
	case M_MXFAST:
		/* glibc 2.43 has no fastbins and accepts anything; so does bins
		 * with fastbins off.  Before: at most 160 (MAX_FAST_SIZE), and 0
		 * leaves room for no chunk (set_max_fast) */
		if (!__atomic_load_n(&st->max_fast, __ATOMIC_RELAXED))
			break;
		if ((size_t)(unsigned)value > 160 || value < 0)
			res = 0;
		else
			__atomic_store_n(&st->max_fast, value ? ((size_t)value + BN_SIZE_SZ) & ~(size_t)15 : 16,
					 __ATOMIC_RELAXED);
		break;
	case M_TRIM_THRESHOLD:
		__atomic_store_n(&st->trim_threshold, (size_t)(long)value, __ATOMIC_RELAXED);
		__atomic_store_n(&st->dyn_threshold, false, __ATOMIC_RELAXED);
		break;
	case M_TOP_PAD:
		if (value < 0) {
			res = 0;
			break;
		}
		__atomic_store_n(&st->top_pad, (size_t)value, __ATOMIC_RELAXED);
		__atomic_store_n(&st->dyn_threshold, false, __ATOMIC_RELAXED);
		break;
	case M_MMAP_THRESHOLD:
		__atomic_store_n(&st->mmap_threshold, (size_t)(long)value, __ATOMIC_RELAXED);
		__atomic_store_n(&st->dyn_threshold, false, __ATOMIC_RELAXED);
		break;
	case M_MMAP_MAX:
		/* glibc compares n_mmaps with an int: a negative cap maps nothing */
		__atomic_store_n(&st->mmap_max, value < 0 ? 0 : (size_t)value, __ATOMIC_RELAXED);
		__atomic_store_n(&st->dyn_threshold, false, __ATOMIC_RELAXED);
		break;
	case M_ARENA_TEST:
	case M_ARENA_MAX:
		/* read when the arena cap is first computed (bn_under_limit),
		 * as glibc reads them for narenas_limit */
		if (value > 0) {
			pthread_mutex_lock(&st->list_lock);
			*(param == M_ARENA_MAX ? &st->arena_max : &st->arena_test) = (unsigned)value;
			pthread_mutex_unlock(&st->list_lock);
		}
		break;
	default:                /* M_CHECK_ACTION, M_PERTURB, unknown: 1 */
		break;
	}
	return res;
}

const hl_libc_api_t bn_libc_api = {
	.mallinfo = bn_mallinfo,
	.mallinfo2 = true,
	.mallopt = bn_mallopt,
	.malloc_stats = bn_malloc_stats,
	.malloc_info = bn_malloc_info,
	.trims = true,
};
