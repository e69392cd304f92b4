/*
 * Which recorded calls reach pymalloc (heaplab.h, hl_trace_past_pymalloc).
 *
 * A CPython program is recorded with PYTHONMALLOC=malloc, so every call
 * the interpreter would give pymalloc reaches malloc, and the replay puts
 * pools (the model of pymalloc) in front again.  But not every malloc of
 * the process came from the interpreter: the loader's (a new thread's
 * dynamic thread vector, calloc(18, 16)), the C library's (stdio buffers,
 * locale, the resolver) and those of libraries the program loads (libz,
 * libexpat, libsqlite3) go to the C library's malloc in the real process
 * too, with or without PYTHONMALLOC.  Replayed through pools by their
 * size, three 288-byte thread vectors held three 1 MiB pymalloc arenas of
 * the seed's repro to its end.  hl_replay uses the table for a recording
 * that says it went past pymalloc ("#@front pymalloc") replayed under the
 * model of pymalloc, so every command replays it as diagnose does.
 *
 * What this rests on.  pymalloc is reached only through CPython's own
 * allocator tables (the PyMem and PyObject domains, CPython 3.11
 * Objects/obmalloc.c); the loader's calls go through __rtld_calloc and
 * its kin, which glibc 2.36 points at the malloc symbols the program's
 * link map resolves (elf/dl-minimal.c, __rtld_malloc_init_real), and the C
 * library calls malloc itself.  Measured here: a recording of
 * /usr/bin/python3.11 (3.11.2) under PYTHONMALLOC=malloc has 271 sites in
 * the executable, resolved to the interpreter's callers (PyNumber_Multiply,
 * _PyObject_GC_New, ...) and not to one wrapper, so the wrappers do end in
 * tail calls; and routing by site took the four finals of the seed's repro
 * from +28..+42 % to -11..-5 % of the real runs' (bench/ACCURACY.md,
 * 2026-12-05 04:00).
 *
 * The recorder's site is the return address of the call to malloc, and
 * CPython's allocator wrappers end in tail calls, so a call the
 * interpreter made through PyMem_Malloc or PyObject_Malloc has its site in
 * the interpreter (the python executable, libpython, an extension module
 * "*.cpython-*.so"), and a library's own call has its site in that
 * library.  What this cannot see: a library handed CPython's allocator as
 * a function pointer (pyexpat gives expat PyObject_Malloc) has its calls
 * counted as its own; and the interpreter's PyMem_RawMalloc calls (its
 * thread states, locks) look like its others, so they still go to pools.
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "heaplab.h"

bool hl_cpython_file(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	return !strncmp(base, "python", 6) || !strncmp(base, "libpython", 9) || strstr(base, ".cpython-");
}

bool *hl_trace_past_pymalloc(const hl_trace_t *t)
{
	unsigned n = hl_trace_sites(t);
	bool *past = calloc((size_t)n + 1, sizeof *past);
	bool any_cpython = false;
	for (unsigned s = 1; past && s <= n; s++) {
		const char *module;
		hl_trace_site(t, s, &module, NULL);
		bool ours = module && hl_cpython_file(module);
		any_cpython |= ours;
		past[s] = module && !ours;   /* a site no module covers: as before */
	}
	if (!any_cpython) {              /* not CPython: pools is its malloc */
		free(past);
		return NULL;
	}
	return past;
}
