/* Traces built to defeat a policy (adversary.h): draw a family and its
 * parameters, write the trace, measure it against its bound, keep the
 * worst. */
#include "config.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "adversary.h"
#include "bound.h"
#include "error.h"

/* Blocks in one wave, at most: keeps every candidate a short trace. */
enum { AD_MAX_WAVE = 16384, AD_MAX_THREADS = 8 };

typedef struct ad_rng {
	uint64_t s;
} ad_rng_t;

static unsigned ad_pick(ad_rng_t *r, unsigned n)
{
	r->s ^= r->s << 13;
	r->s ^= r->s >> 7;
	r->s ^= r->s << 17;
	return (unsigned)(r->s % n);
}

/* A trace being written: its text and the next block id. */
typedef struct ad_trace {
	FILE *out;
	long next_id;
} ad_trace_t;

static size_t wave_of(size_t live, size_t size)
{
	size_t n = live / size;
	return n > AD_MAX_WAVE ? AD_MAX_WAVE : n < 4 ? 4 : n;
}

/* One phase: @p n blocks of @p size, then all freed but every @p keep-th. */
static void phase(ad_trace_t *t, size_t n, size_t size, size_t keep)
{
	long first = t->next_id;
	for (size_t i = 0; i < n; i++)
		fprintf(t->out, "a %ld %zu\n", t->next_id++, size);
	for (size_t i = 0; i < n; i++)
		if (i % keep)
			fprintf(t->out, "f %ld\n", first + (long)i);
}

/* ladder: sizes grow k-fold a phase; every k-th block survives. */
static void ladder(ad_trace_t *t, ad_rng_t *r, size_t live)
{
	static const size_t firsts[] = { 16, 24, 40, 64, 100 };
	size_t k = 2 + ad_pick(r, 3), size = firsts[ad_pick(r, 5)];
	fprintf(t->out, "# family ladder: sizes from %zu bytes, x%zu a phase; every %zu-th block of a phase\n"
			"# survives it, so each hole between survivors is too small for any later block\n",
		size, k, k);
	for (; size <= 64 * 1024; size *= k) {
		size_t n = wave_of(live, size);
		fprintf(t->out, "# phase: %zu blocks of %zu bytes\n", n, size);
		phase(t, n, size, k);
	}
}

/* pin: one phase a size class, one survivor every `stride` bytes. */
static void pin(ad_trace_t *t, ad_rng_t *r, size_t live)
{
	static const size_t classes[] = { 8, 16, 32, 48, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384, 448, 512,
					  640, 768, 1024, 1280, 1536, 2048, 3072, 4096 };
	static const size_t strides[] = { 4096, 8192, 16384, 65536 };
	size_t stride = strides[ad_pick(r, 4)], phases = 4 + ad_pick(r, 12), from = ad_pick(r, 8);
	fprintf(t->out, "# family pin: %zu size classes one after another; one block in every %zu bytes\n"
			"# survives its phase, so every page, slab, span or pool of the class keeps one\n",
		phases, stride);
	for (size_t j = 0; j < phases && from + j < sizeof classes / sizeof *classes; j++) {
		size_t size = classes[from + j], n = wave_of(live, size), keep = stride > size ? stride / size : 1;
		fprintf(t->out, "# phase: %zu blocks of %zu bytes, every %zu-th kept\n", n, size, keep);
		phase(t, n, size, keep);
	}
}

/* strand: each thread a wave, all freed but its last block. */
static void strand(ad_trace_t *t, ad_rng_t *r, size_t live)
{
	static const size_t sizes[] = { 32, 64, 200, 1024, 4000 };
	size_t threads = 2 + ad_pick(r, AD_MAX_THREADS - 1), size = sizes[ad_pick(r, 5)], n = wave_of(live, size);
	fprintf(t->out, "# family strand: %zu threads one after another, each allocating %zu blocks of %zu bytes\n"
			"# and freeing all but its last, which stays live: what a thread frees stays where\n"
			"# it freed it (its arena, heap or cache), and the next thread cannot use it\n",
		threads, n, size);
	for (size_t th = 0; th < threads; th++) {
		long first = t->next_id;
		fprintf(t->out, "t %zu\n", th);
		for (size_t i = 0; i < n; i++)
			fprintf(t->out, "a %ld %zu\n", t->next_id++, size);
		for (size_t i = 0; i + 1 < n; i++)
			fprintf(t->out, "f %ld\n", first + (long)i);
	}
}

/* waves: one wave allocated and freed again and again. */
static void waves(ad_trace_t *t, ad_rng_t *r, size_t live)
{
	size_t rounds = 4 + ad_pick(r, 13), size = 16u << ad_pick(r, 8), n = wave_of(live, size);
	fprintf(t->out, "# family waves: %zu blocks of %zu bytes allocated and all freed, %zu times:\n"
			"# never more live than one wave, so only an allocator that never reuses grows\n",
		n, size, rounds);
	for (size_t k = 0; k < rounds; k++) {
		long first = t->next_id;
		for (size_t i = 0; i < n; i++)
			fprintf(t->out, "a %ld %zu\n", first + (long)i, size);
		for (size_t i = 0; i < n; i++)
			fprintf(t->out, "f %ld\n", first + (long)i);
	}
	t->next_id += (long)n;
}

static const struct {
	const char *name;
	void (*write)(ad_trace_t *t, ad_rng_t *r, size_t live);
} families[] = {
	{ "ladder", ladder }, { "pin", pin }, { "strand", strand }, { "waves", waves },
};
enum { AD_FAMILIES = sizeof families / sizeof families[0] };

/* Writes candidate @p k's text into @p path; its family's index, or -1. */
static int write_candidate(const char *path, ad_rng_t *r, int k, size_t live)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	/* the first candidates try every family once; then any */
	int fam = k < AD_FAMILIES ? k : (int)ad_pick(r, AD_FAMILIES);
	ad_trace_t t = { f, 0 };
	families[fam].write(&t, r, live);
	return fclose(f) == 0 ? fam : -1;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	char buf[65536];
	size_t got;
	while (f && out && (got = fread(buf, 1, sizeof buf, f)) > 0)
		fwrite(buf, 1, got, out);
	if (f)
		fclose(f);
	if (out)
		fclose(out);
	return text;
}

/* Replays the candidate in @p path: its ratio, or -1 (error set). */
static double measure(const vis_adversary_opts_t *o, const char *path, vis_adversary_t *m)
{
	hl_trace_t *t = hl_trace_load(path);
	if (!t)
		return -1;
	vis_bound_t b;
	vis_bound_policy_t p;
	int rc = vis_bound(t, 0, false, &b);
	if (rc == 0)
		rc = vis_bound_policy(t, o->policy, o->conf, &p);
	hl_trace_free(t);
	if (rc)
		return -1;
	m->bound = b.bound;
	m->peak_committed = p.peak_committed;
	m->peak_resident = p.peak_resident;
	return b.bound ? (double)p.peak_committed / (double)b.bound : 0;
}

int vis_adversary(const vis_adversary_opts_t *o, vis_progress_fn progress, vis_adversary_t *out)
{
	memset(out, 0, sizeof *out);
	const char *dir = getenv("TMPDIR");
	char file[4096];
	snprintf(file, sizeof file, "%s/heaplab-adversary-XXXXXX", dir && *dir ? dir : "/tmp");
	int fd = mkstemp(file);
	if (fd < 0)
		return vis_fail("cannot make a temporary file for the candidates");
	close(fd);
	ad_rng_t r = { o->seed * 2654435761u + 88172645463325252ull };
	int rc = 0;
	for (int k = 0; k < o->budget && rc == 0; k++) {
		if (progress)
			progress("candidates", (size_t)k, (size_t)o->budget);
		vis_adversary_t m = { 0 };
		int fam = write_candidate(file, &r, k, o->live);
		double ratio = fam < 0 ? -1 : measure(o, file, &m);
		if (ratio < 0) {
			rc = fam < 0 ? vis_fail("cannot write a candidate trace to %s", file) : 2;
			break;
		}
		out->tried++;
		if (ratio <= out->ratio)
			continue;
		free(out->text);
		m.text = slurp(file);
		if (!m.text) {
			rc = vis_fail("out of memory for the trace");
			break;
		}
		m.ratio = ratio;
		m.tried = out->tried;
		snprintf(m.family, sizeof m.family, "%s", families[fam].name);
		*out = m;
	}
	if (progress)
		progress("candidates", (size_t)o->budget, (size_t)o->budget);
	unlink(file);
	return rc;
}
