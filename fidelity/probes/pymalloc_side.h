/* What the pymalloc probes share: one allocator call and one statistics
 * reading per side.
 *
 * Real side: the probe embeds libpython, starts the interpreter, and calls
 * PyObject_Malloc / PyObject_Free itself; CPython's own figures come from
 * _PyObject_DebugMallocStats (what sys._debugmallocstats prints), parsed.
 * Model side: plain malloc / free under the preloaded `pools` policy, and
 * its statistics through probe_model_stat.  The interpreter is never
 * started there, so its own objects do not disturb the model's heap.
 *
 * Include <Python.h> before this header (Python.h must come first). */
#ifndef HL_FIDELITY_PYMALLOC_SIDE_H
#define HL_FIDELITY_PYMALLOC_SIDE_H

#include "probe.h"

/* Exported by libpython (declared in an internal header). */
PyAPI_FUNC(int) _PyObject_DebugMallocStats(FILE *out);

enum { PY_CLASSES = 32, PY_POOL = 16384, PY_POOLS_PER_ARENA = 64 };

/* The figures the probes compare, in CPython's terms. */
typedef struct py_stats {
	long arenas;                 /* arenas allocated current */
	long unused_pools;           /* free and never-carved pools */
	long lost_alignment;         /* bytes lost to arena alignment */
	long pools[PY_CLASSES];      /* pools in use per class */
	long in_use[PY_CLASSES];     /* blocks in use per class */
	long avail[PY_CLASSES];      /* available blocks in those pools */
} py_stats_t;

/* Starts the interpreter (real side), or makes the preload library create
 * its heap (model side: hl_default_heap is NULL until the first malloc). */
static inline void py_start(void)
{
	if (probe_is_model()) {
		void *volatile first = malloc(1); /* volatile: not optimised away */
		free(first);
	} else
		Py_InitializeEx(0);
}

static inline void *py_alloc(size_t n)
{
	void *p = probe_is_model() ? malloc(n) : PyObject_Malloc(n);
	if (!p)
		probe_die("allocation failed");
	return p;
}

static inline void py_free(void *p)
{
	if (probe_is_model())
		free(p);
	else
		PyObject_Free(p);
}

/* The number after the last '=' of @p line, commas skipped. */
static inline long py_number_after_equals(const char *line)
{
	const char *eq = strrchr(line, '=');
	long v = 0;
	for (const char *c = eq ? eq + 1 : line; *c; c++)
		if (*c >= '0' && *c <= '9')
			v = v * 10 + (*c - '0');
	return v;
}

static inline void py_stats_real(py_stats_t *st)
{
	FILE *f = tmpfile();
	if (!f || !_PyObject_DebugMallocStats(f))
		probe_die("no pymalloc statistics (PYTHONMALLOC set?)");
	rewind(f);
	char line[256];
	while (fgets(line, sizeof line, f)) {
		unsigned c, size;
		long pools, used, avail;
		if (sscanf(line, "%u %u %ld %ld %ld", &c, &size, &pools, &used, &avail) == 5 &&
		    c < PY_CLASSES) {
			st->pools[c] = pools;
			st->in_use[c] = used;
			st->avail[c] = avail;
		} else if (strstr(line, "# arenas allocated current")) {
			st->arenas = py_number_after_equals(line);
		} else if (strstr(line, "# bytes lost to arena alignment")) {
			st->lost_alignment = py_number_after_equals(line);
		} else if (strstr(line, " unused pools * ")) {
			st->unused_pools = strtol(line, NULL, 10);
		}
	}
	fclose(f);
}

static inline long py_model_stat(const char *path)
{
	double v = 0;
	if (probe_model_stat(path, &v) != 0) {
		fprintf(stderr, "probe: the model has no statistic %s (is HEAPLAB_POLICY pools?)\n", path);
		exit(2);
	}
	return (long)v;
}

static inline void py_stats_model(py_stats_t *st)
{
	char path[96];
	st->arenas = py_model_stat("policy_stats.arenas_allocated_current");
	st->unused_pools = py_model_stat("policy_stats.unused_pools");
	st->lost_alignment = py_model_stat("policy_stats.bytes_lost_arena_alignment");
	for (int c = 0; c < PY_CLASSES; c++) {
		snprintf(path, sizeof path, "policy_stats.classes.%d.pools", c);
		st->pools[c] = py_model_stat(path);
		snprintf(path, sizeof path, "policy_stats.classes.%d.blocks_in_use", c);
		st->in_use[c] = py_model_stat(path);
		snprintf(path, sizeof path, "policy_stats.classes.%d.avail_blocks", c);
		st->avail[c] = py_model_stat(path);
	}
}

/* Blocks in use per class only: on the model side every statistic read
 * computes all of them, so the probes that ask often read just these. */
static inline void py_stats_in_use(py_stats_t *st)
{
	char path[96];
	memset(st, 0, sizeof *st);
	if (!probe_is_model()) {
		py_stats_real(st);
		return;
	}
	for (int c = 0; c < PY_CLASSES; c++) {
		snprintf(path, sizeof path, "policy_stats.classes.%d.blocks_in_use", c);
		st->in_use[c] = py_model_stat(path);
	}
}

/* Reads the side's pymalloc figures now. */
static inline void py_stats(py_stats_t *st)
{
	memset(st, 0, sizeof *st);
	if (probe_is_model())
		py_stats_model(st);
	else
		py_stats_real(st);
}

static inline long py_blocks_in_use(const py_stats_t *st)
{
	long n = 0;
	for (int c = 0; c < PY_CLASSES; c++)
		n += st->in_use[c];
	return n;
}

/* Pools of every arena: in use, free and never carved. */
static inline long py_total_pools(const py_stats_t *st)
{
	long n = st->unused_pools;
	for (int c = 0; c < PY_CLASSES; c++)
		n += st->pools[c];
	return n;
}

/* The size class whose blocks in use grow by @p n when @p n blocks of
 * @p size bytes are allocated (-1: none, the fallback served them); the
 * blocks are freed again.  *pooled: all n counted in the pools at all. */
static inline int py_class_of(size_t size, int n, int *pooled)
{
	static py_stats_t before, after;
	void *p[128];
	if (n > 128)
		probe_die("py_class_of: at most 128 blocks");
	py_stats_in_use(&before);
	for (int i = 0; i < n; i++)
		p[i] = py_alloc(size);
	py_stats_in_use(&after);
	int cls = -1;
	for (int c = 0; c < PY_CLASSES; c++)
		if (after.in_use[c] - before.in_use[c] >= n)
			cls = c;
	if (pooled)
		*pooled = py_blocks_in_use(&after) - py_blocks_in_use(&before) >= n;
	for (int i = 0; i < n; i++)
		py_free(p[i]);
	return cls;
}

/* The probes of the pymalloc program, each given the arguments after its
 * name (pymalloc_main.c dispatches). */
int pymalloc_route(int argc, char **argv);
int pymalloc_keep(int argc, char **argv);
int pymalloc_arenas(int argc, char **argv);
int pymalloc_classes(int argc, char **argv);

#endif
