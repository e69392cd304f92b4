/*
 * Which calls of a recorded CPython program reach pymalloc
 * (trace/pymalloc_sites.c) and what the replay does with the others
 * (hl_replay_opts_t.past_front: the host's fallback):
 *  - a site in the python executable, in libpython or in an extension
 *    module ("*.cpython-*.so") is the interpreter's; one in the loader or
 *    the C library is past pymalloc; one no module covers is left as it
 *    was; a recording with no site in CPython gets no table at all;
 *  - replayed under the model of pymalloc, a small block the loader
 *    allocated goes to the fallback, and so does not keep a pymalloc
 *    arena when the interpreter's blocks around it are freed: the case of
 *    a new thread's dynamic thread vector, calloc(18, 16), in the seed's
 *    repro;
 *  - a recording that says it went past pymalloc ("#@front pymalloc") is
 *    replayed so without being given the table.
 */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "testlib.h"
#include "heaplab.h"

enum { PY_LO = 0x400000, LD_LO = 0x7f0000000000, SMALL = 256, BLOCKS = 12000 };

static char path[256];

/* A new recording file to write, at `path`. */
static FILE *new_recording(void)
{
	snprintf(path, sizeof path, "%s/pymalloc-sites.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	FILE *f = fdopen(fd, "w");
	ck_assert_ptr_nonnull(f);
	return f;
}

/* The recording written to @p f, read back; the file is gone. */
static hl_trace_t *read_back(FILE *f)
{
	ck_assert_int_eq(fclose(f), 0);
	hl_trace_t *t = hl_trace_load(path);
	ck_assert_msg(t != NULL, "%s", hl_last_error());
	unlink(path);
	return t;
}

/* A recording: modules (the python executable, an extension module, the
 * loader), a site in each and one outside them all; then @p n blocks of
 * SMALL bytes from the interpreter, the loader's calloc(18, 16) among
 * them, and the interpreter's blocks freed again. */
static hl_trace_t *recording(const char *exe, int n, bool front)
{
	FILE *f = new_recording();
	if (front)
		fprintf(f, "#@front pymalloc\n");
	fprintf(f, "#@module %#x %#x 0x0 %s\n", PY_LO, PY_LO + 0x100000, exe);
	fprintf(f, "#@module %#lx %#lx %#lx /usr/lib/python3.11/lib-dynload/_json.cpython-311-x86_64-linux-gnu.so\n",
		0x7e0000000000UL, 0x7e0000010000UL, 0x7e0000000000UL);
	fprintf(f, "#@module %#lx %#lx %#lx /lib64/ld-linux-x86-64.so.2\n", (unsigned long)LD_LO,
		(unsigned long)LD_LO + 0x20000, (unsigned long)LD_LO);
	fprintf(f, "#@site 1 %#x\n#@site 2 %#lx\n#@site 3 %#lx\n#@site 4 0x1000\n", PY_LO + 0x100,
		0x7e0000000100UL, (unsigned long)LD_LO + 0xccb3);
	for (int k = 0; k < n; k++) {
		fprintf(f, "a %d %d @1\n", k, SMALL);
		if (k == n / 2)
			fprintf(f, "c %d 18 16 @3\n", n);
	}
	for (int k = 0; k < n; k++)
		fprintf(f, "f %d\n", k);
	return read_back(f);
}

START_TEST(sites_split_by_module)
{
	hl_trace_t *t = recording("/usr/bin/python3.11", 2, false);
	bool *past = hl_trace_past_pymalloc(t);
	ck_assert_ptr_nonnull(past);
	ck_assert(!past[1]);   /* the python executable */
	ck_assert(!past[2]);   /* an extension module */
	ck_assert(past[3]);    /* the loader */
	ck_assert(!past[4]);   /* no module: as before */
	free(past);
	hl_trace_free(t);

	t = recording("/opt/py/lib/libpython3.11.so.1.0", 2, false);
	past = hl_trace_past_pymalloc(t);
	ck_assert_ptr_nonnull(past);
	ck_assert(!past[1] && past[3]);
	free(past);
	hl_trace_free(t);
}
END_TEST

START_TEST(no_cpython_no_table)
{
	FILE *f = new_recording();
	fprintf(f, "#@module 0x400000 0x500000 0x0 /usr/bin/sort\n#@site 1 0x400100\na 0 100 @1\nf 0\n");
	hl_trace_t *t = read_back(f);
	ck_assert_ptr_null(hl_trace_past_pymalloc(t));
	hl_trace_free(t);
}
END_TEST

/* Arenas the model of pymalloc (@p front) still holds after replaying the
 * recording, with the table or without. */
static double arenas_left(const char *front, const hl_trace_t *t, const bool *past)
{
	hl_heap_t *h = tl_heap(front, NULL);
	hl_replay_opts_t o = { .verify = true, .past_front = past };   /* one pass, the blocks left live */
	hl_replay_result_t r;
	ck_assert_msg(hl_replay(h, t, &o, &r) == 0, "%s", r.message);
	double arenas = tl_stat(h, "policy_stats.arenas_allocated_current");
	ck_assert_int_eq(tl_stat(h, "policy_stats.fallback_mallocs"), past || hl_trace_front(t) ? 1 : 0);
	hl_heap_destroy(h);
	return arenas;
}

START_TEST(loader_block_pins_no_arena)
{
	const char *front = hl_policy_of_family("pymalloc");
	if (!front)
		return;   /* no model of pymalloc compiled in: nothing to replay behind */
	hl_trace_t *t = recording("/usr/bin/python3.11", BLOCKS, false);   /* 3 MB: three 1 MiB arenas */
	bool *past = hl_trace_past_pymalloc(t);
	ck_assert_ptr_nonnull(past);
	/* pymalloc keeps at most one empty arena (CPython 3.11 frees an empty
	 * arena unless it is the last on usable_arenas: the fidelity row
	 * pymalloc.keep-first-100, measured on the real one); by size, the
	 * loader's block keeps one more */
	double kept = arenas_left(front, t, past);
	ck_assert_double_le(kept, 1);
	ck_assert_double_eq(arenas_left(front, t, NULL), kept + 1);
	free(past);
	hl_trace_free(t);
}
END_TEST

START_TEST(front_line_brings_the_table)
{
	const char *front = hl_policy_of_family("pymalloc");
	if (!front)
		return;   /* no model of pymalloc compiled in */
	hl_trace_t *plain = recording("/usr/bin/python3.11", BLOCKS, false);
	hl_trace_t *marked = recording("/usr/bin/python3.11", BLOCKS, true);
	bool *past = hl_trace_past_pymalloc(plain);
	ck_assert_ptr_nonnull(past);
	/* no table given: the marked recording's loader block still goes past
	 * the pools (one fallback call, its arena let go), the plain one's not */
	double given = arenas_left(front, plain, past);
	ck_assert_double_eq(arenas_left(front, marked, NULL), given);
	ck_assert_double_eq(arenas_left(front, plain, NULL), given + 1);
	free(past);
	hl_trace_free(plain);
	hl_trace_free(marked);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("pymalloc_sites");
	TCase *tc = tcase_create("sites");
	tcase_add_test(tc, sites_split_by_module);
	tcase_add_test(tc, front_line_brings_the_table);
	tcase_add_test(tc, no_cpython_no_table);
	tcase_add_test(tc, loader_block_pins_no_arena);
	suite_add_tcase(s, tc);
	return tl_run(s);
}
