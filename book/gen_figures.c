/*
 * gen_figures: draws the book's diagrams from real heaps.
 *
 *   gen_figures OUTDIR
 *
 * For every figure a chapter shows, builds a fresh heap of the chapter's
 * policy with the public API (core/heaplab.h), performs a short scripted
 * sequence of allocations and frees, and writes the heap as Graphviz DOT
 * with hl_snapshot_dot() to OUTDIR/<figure>.dot, then renders it to
 * OUTDIR/<figure>.svg through the visualize library (Graphviz's dot).  A figure whose policy is not compiled in gets a
 * small DOT note saying so, so the book still builds (and says why the
 * picture is missing).  A snapshot that fails is an error: the book must
 * never show a picture that did not come from the code.
 */
#include "config.h"
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "heaplab.h"
#include "../visualize/vis.h"

/** Enough slots for the largest script below. */
enum { FIG_SLOTS = 512 };

/** A script: allocations and frees on @p h, keeping pointers in @p p. */
typedef void (*fig_script_fn)(hl_heap_t *h, void **p);

/** One figure of the book. */
typedef struct fig {
	const char *file;     /**< output name without .dot (the chapter's image) */
	const char *policy;   /**< policy it needs */
	const char *conf;     /**< options that make the point (NULL = defaults) */
	const char *title;    /**< title drawn in the picture */
	fig_script_fn run;    /**< the scripted sequence */
} fig_t;

/* ---- helpers shared by the scripts ---------------------------------- */

/** Allocates sizes[0..n) into p[first..], touching each block. */
static void fig_alloc(hl_heap_t *h, void **p, size_t first, const size_t *sizes, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		p[first + i] = hl_malloc(h, sizes[i]);
		if (p[first + i])
			memset(p[first + i], 0x5a, sizes[i]);
	}
}

/** Allocates @p n blocks of @p size into p[first..]. */
static void fig_alloc_same(hl_heap_t *h, void **p, size_t first, size_t n, size_t size)
{
	for (size_t i = 0; i < n; i++) {
		p[first + i] = hl_malloc(h, size);
		if (p[first + i])
			memset(p[first + i], 0x5a, size);
	}
}

/** Frees p[i] for each listed index and forgets it. */
static void fig_free(hl_heap_t *h, void **p, const size_t *ix, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		hl_free(h, p[ix[i]]);
		p[ix[i]] = NULL;
	}
}

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* ---- single-threaded scripts ----------------------------------------- */

/* ch01, ch15: a few blocks, two holes */
static void fig_few_holes(hl_heap_t *h, void **p)
{
	static const size_t sz[] = { 64, 100, 200, 48, 300 };
	static const size_t fr[] = { 1, 3 };
	fig_alloc(h, p, 0, sz, N_OF(sz));
	fig_free(h, p, fr, N_OF(fr));
}

/* ch02: three small chunks on the break, one block above the threshold */
static void fig_break_and_map(hl_heap_t *h, void **p)
{
	static const size_t sz[] = { 40, 100, 200, 256 << 10 };
	fig_alloc(h, p, 0, sz, N_OF(sz));
}

/* ch03: bump keeps freed blocks */
static void fig_bump(hl_heap_t *h, void **p)
{
	static const size_t sz[] = { 40, 16, 100, 64, 200 };
	static const size_t fr[] = { 1, 3 };
	fig_alloc(h, p, 0, sz, N_OF(sz));
	fig_free(h, p, fr, N_OF(fr));
}

/* ch04: holes of 200, 120, 300 and 80 bytes between 64-byte blocks */
static void fig_freelist(hl_heap_t *h, void **p)
{
	static const size_t sz[] = { 64, 200, 64, 120, 64, 300, 64, 80, 64 };
	static const size_t fr[] = { 1, 3, 5, 7 };
	fig_alloc(h, p, 0, sz, N_OF(sz));
	fig_free(h, p, fr, N_OF(fr));
}

/* ch05: one request per interesting class */
static void fig_classes(hl_heap_t *h, void **p)
{
	static const size_t sz[] = { 1, 9, 17, 100, 129, 129, 1025 };
	fig_alloc(h, p, 0, sz, N_OF(sz));
}

/* ch06: free chunks of small and large sizes, sorted out of the unsorted bin */
static void fig_bins(hl_heap_t *h, void **p)
{
	static const size_t sz[] = { 100, 200, 100, 600, 100, 1500, 100, 40, 100 };
	static const size_t fr1[] = { 1, 3, 5 };
	static const size_t fr2[] = { 7 };
	fig_alloc(h, p, 0, sz, N_OF(sz));
	fig_free(h, p, fr1, N_OF(fr1));
	p[20] = hl_malloc(h, 24);   /* walks the unsorted bin, sorting it */
	fig_free(h, p, fr2, N_OF(fr2));
}

/* ch08: slabs of three classes, some regions freed, one freed large extent */
static void fig_slabs(hl_heap_t *h, void **p)
{
	fig_alloc_same(h, p, 0, 40, 64);
	fig_alloc_same(h, p, 40, 20, 200);
	fig_alloc_same(h, p, 60, 8, 1024);
	p[70] = hl_malloc(h, 64 << 10);
	for (size_t i = 0; i < 70; i += 3) {
		hl_free(h, p[i]);
		p[i] = NULL;
	}
	hl_free(h, p[70]);
	p[70] = NULL;
}

/* ch10: three pool classes and one request for the fallback */
static void fig_pools(hl_heap_t *h, void **p)
{
	fig_alloc_same(h, p, 0, 60, 32);
	fig_alloc_same(h, p, 60, 30, 100);
	fig_alloc_same(h, p, 90, 10, 500);
	p[100] = hl_malloc(h, 600);
	for (size_t i = 0; i < 60; i += 2) {
		hl_free(h, p[i]);
		p[i] = NULL;
	}
}

/* ch11: many chunks freed below one live chunk at the top */
static void fig_pinned(hl_heap_t *h, void **p)
{
	fig_alloc_same(h, p, 0, 200, 1000);
	p[200] = hl_malloc(h, 64);
	for (size_t i = 0; i < 200; i++) {
		hl_free(h, p[i]);
		p[i] = NULL;
	}
}

/* ch12: a burst with a few scattered survivors */
static void fig_bloat(hl_heap_t *h, void **p)
{
	fig_alloc_same(h, p, 0, 400, 200);
	for (size_t i = 0; i < 400; i++)
		if (i % 50 != 49) {
			hl_free(h, p[i]);
			p[i] = NULL;
		}
}

/* ch13: a few blocks in secure mode */
static void fig_secure(hl_heap_t *h, void **p)
{
	static const size_t fr[] = { 2, 5, 9, 14 };
	fig_alloc_same(h, p, 0, 20, 64);
	fig_free(h, p, fr, N_OF(fr));
}

/* ch14: the same mixed script for every policy */
static void fig_compare(hl_heap_t *h, void **p)
{
	static const size_t sz[] = { 24, 64, 100, 40, 512, 64, 200, 24 };
	static const size_t fr[] = { 1, 3, 6 };
	fig_alloc(h, p, 0, sz, N_OF(sz));
	fig_free(h, p, fr, N_OF(fr));
}

/* ---- scripts with a second thread ------------------------------------ */

/** What the second thread does, and on which heap. */
typedef struct fig_thread_job {
	hl_heap_t *h;
	void **p;
} fig_thread_job_t;

static void fig_in_thread(void *(*fn)(void *), hl_heap_t *h, void **p)
{
	fig_thread_job_t job = { h, p };
	pthread_t t;
	if (pthread_create(&t, NULL, fn, &job) == 0)
		pthread_join(t, NULL);
	else
		fprintf(stderr, "gen_figures: cannot start a thread: %s\n", strerror(errno));
}

/* ch07: the second thread binds to an arena of its own */
static void *fig_arena_thread(void *arg)
{
	fig_thread_job_t *j = arg;
	static const size_t fr[] = { 101, 103 };
	fig_alloc_same(j->h, j->p, 100, 6, 100);
	fig_free(j->h, j->p, fr, N_OF(fr));
	return NULL;
}

static void fig_arenas(hl_heap_t *h, void **p)
{
	fig_alloc_same(h, p, 0, 10, 48);
	for (size_t i = 0; i < 8; i++) {
		hl_free(h, p[i]);
		p[i] = NULL;
	}
	fig_in_thread(fig_arena_thread, h, p);
}

/* ch09: the owner frees some blocks, another thread frees others */
static void *fig_remote_thread(void *arg)
{
	fig_thread_job_t *j = arg;
	for (size_t i = 10; i < 20; i++) {
		hl_free(j->h, j->p[i]);
		j->p[i] = NULL;
	}
	return NULL;
}

static void fig_sharded(hl_heap_t *h, void **p)
{
	fig_alloc_same(h, p, 0, 30, 48);
	for (size_t i = 0; i < 10; i++) {
		hl_free(h, p[i]);
		p[i] = NULL;
	}
	fig_in_thread(fig_remote_thread, h, p);
}

/* ch16: blocks of two classes, every other one freed: the freed ones sit
 * in the front (a CPU's slab, or the thread's lists), the rest are live */
static void fig_percpu_script(hl_heap_t *h, void **p, size_t first)
{
	fig_alloc_same(h, p, first, 40, 48);
	fig_alloc_same(h, p, first + 40, 12, 200);
	for (size_t i = first; i < first + 52; i += 2) {
		hl_free(h, p[i]);
		p[i] = NULL;
	}
}

static void *fig_percpu_thread(void *arg)
{
	fig_thread_job_t *j = arg;
	fig_percpu_script(j->h, j->p, 100);
	return NULL;
}

/* ch16: the same script on the main thread and on a second one */
static void fig_percpu(hl_heap_t *h, void **p)
{
	fig_percpu_script(h, p, 0);
	fig_in_thread(fig_percpu_thread, h, p);
}

/* ---- the figures ------------------------------------------------------ */

/* ch17: three 32-byte blocks, the middle one freed: where one free of a
 * malloc/free pair lands (the tcache, a fastbin, the unsorted bin) */
static void fig_one_free(hl_heap_t *h, void **p)
{
	static const size_t fr[] = { 1 };
	fig_alloc_same(h, p, 0, 3, 32);
	fig_free(h, p, fr, N_OF(fr));
}

static const fig_t figures[] = {
	{ "ch01-layers", "firstfit", "fit:first", "firstfit: five blocks, two freed", fig_few_holes },
	{ "ch02-break-and-map", "bins", NULL, "bins: small chunks on the break, 256 KiB mapped", fig_break_and_map },
	{ "ch03-bump", "bump", NULL, "bump: five blocks, two of them freed", fig_bump },
	{ "ch04-freelist", "firstfit", "fit:best,order:address", "firstfit (best fit, address order): four holes", fig_freelist },
	{ "ch05-classes", "slab", "tcache:off", "slab: requests of 1, 9, 17, 100, 129, 129, 1025 bytes", fig_classes },
	{ "ch06-bins", "bins", "tcache_count:0", "bins without tcache: unsorted, small and large bins", fig_bins },
	{ "ch07-arenas", "bins", NULL, "bins: two threads, two arenas, a tcache", fig_arenas },
	{ "ch08-slabs", "slab", "dirty_decay_ms:-1", "slab: three classes, every third region freed", fig_slabs },
	{ "ch09-sharded", "sharded", NULL, "sharded: local and remote frees", fig_sharded },
	{ "ch10-pools", "pools", NULL, "pools: 32-, 100- and 500-byte blocks, one 600-byte fallback", fig_pools },
	{ "ch11-pinned", "bins", "tcache_count:0", "bins: 200 chunks freed under one live chunk", fig_pinned },
	{ "ch12-bloat", "bins", NULL, "bins: 400 blocks of 200 bytes, one in 50 kept", fig_bloat },
	{ "ch13-secure", "sharded", "secure:on", "sharded, secure mode", fig_secure },
	{ "ch14-bump", "bump", NULL, "bump: the comparison script", fig_compare },
	{ "ch14-firstfit", "firstfit", NULL, "firstfit: the comparison script", fig_compare },
	{ "ch14-bins", "bins", NULL, "bins: the comparison script", fig_compare },
	{ "ch14-slab", "slab", NULL, "slab: the comparison script", fig_compare },
	{ "ch14-sharded", "sharded", NULL, "sharded: the comparison script", fig_compare },
	{ "ch14-pools", "pools", NULL, "pools: the comparison script", fig_compare },
	{ "ch16-percpu", "percpu", NULL, "percpu: two threads' blocks, every other one freed", fig_percpu },
	{ "ch16-thread", "percpu", "front:thread", "percpu front:thread: the same on per-thread caches", fig_percpu },
	{ "ch17-tcache", "bins", "version:2.36", "bins as glibc 2.36: the freed chunk in the tcache", fig_one_free },
	{ "ch17-fastbin", "bins", "version:2.36,tcache_count:0", "bins as glibc 2.36, tcache off: the chunk on a fastbin", fig_one_free },
	{ "ch17-unsorted", "bins", "version:2.43,tcache_count:0", "bins as glibc 2.43, tcache off: the chunk in the unsorted bin", fig_one_free },
	{ "ch18-held", "bins", "version:2.36", "bins as glibc 2.36: 200 chunks freed under one live chunk, still resident", fig_pinned },
	{ "ch15-grade", "firstfit", "fit:first,order:lifo", "firstfit (first fit, LIFO): a student's view", fig_freelist },
};

/* ---- the driver ------------------------------------------------------- */

static void fig_path(char *path, size_t len, const char *dir, const char *name, const char *ext)
{
	snprintf(path, len, "%s/%s.%s", dir, name, ext);
}

/** Renders DIR/NAME.dot to DIR/NAME.svg; Graphviz's warnings are shown,
 *  its failure is an error. */
static int fig_render(const char *dir, const char *name)
{
	char dot[4096], svg[4096];
	fig_path(dot, sizeof dot, dir, name, "dot");
	fig_path(svg, sizeof svg, dir, name, "svg");
	char *diag = NULL;
	printf("  DOT      %s\n", svg);
	int rc = vis_dot_file(dot, "svg", svg, &diag);
	if (diag)
		fputs(diag, stderr);
	free(diag);
	if (rc == 2)
		fprintf(stderr, "gen_figures: %s: %s\n", name, hl_last_error());
	return rc == 2;
}

static FILE *fig_open(const char *dir, const char *name)
{
	char path[4096];
	fig_path(path, sizeof path, dir, name, "dot");
	FILE *f = fopen(path, "w");
	if (!f)
		fprintf(stderr, "gen_figures: %s: %s\n", path, strerror(errno));
	return f;
}

/** The stand-in for a figure whose policy is not in this build. */
static int fig_placeholder(FILE *out, const fig_t *f)
{
	fprintf(out,
		"digraph \"%s\" {\n"
		"  node [shape=note, fontname=\"Helvetica\", style=filled, fillcolor=\"#f4f4f4\"];\n"
		"  missing [label=\"The '%s' policy is not compiled into this build,\\n"
		"so this figure could not be drawn from a real heap.\\n"
		"Reconfigure with --with-policy=all (or add %s) and run make doc.\"];\n"
		"}\n",
		f->file, f->policy, f->policy);
	return 0;
}

/** Builds the heap (falling back to defaults if the options are refused). */
static hl_heap_t *fig_heap(const fig_t *f)
{
	hl_heap_t *h = hl_heap_new(f->policy, f->conf);
	if (!h && f->conf) {
		fprintf(stderr, "gen_figures: %s: options '%s' refused (%s); using defaults\n",
			f->file, f->conf, hl_last_error());
		h = hl_heap_new(f->policy, NULL);
	}
	if (!h)
		fprintf(stderr, "gen_figures: %s: %s\n", f->file, hl_last_error());
	return h;
}

static int fig_draw(FILE *out, const fig_t *f)
{
	if (!hl_policy_summary(f->policy))
		return fig_placeholder(out, f);
	hl_heap_t *h = fig_heap(f);
	if (!h)
		return -1;
	static void *p[FIG_SLOTS];
	memset(p, 0, sizeof p);
	f->run(h, p);
	int rc = hl_snapshot_dot(h, out, f->title);
	if (rc)
		fprintf(stderr, "gen_figures: %s: hl_snapshot_dot failed (%s)\n", f->file, hl_last_error());
	for (size_t i = 0; i < FIG_SLOTS; i++)
		hl_free(h, p[i]);
	hl_heap_destroy(h);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: gen_figures OUTDIR\n");
		return 2;
	}
	int bad = 0;
	for (size_t i = 0; i < N_OF(figures); i++) {
		FILE *out = fig_open(argv[1], figures[i].file);
		if (!out)
			return 1;
		if (fig_draw(out, &figures[i]))
			bad++;
		if (fclose(out))
			bad++;
		else if (fig_render(argv[1], figures[i].file))
			bad++;
	}
	return bad ? 1 : 0;
}
