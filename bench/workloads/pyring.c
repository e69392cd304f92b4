/* pyring OPS MAXSIZE: the ring workload of ring.c (one thread, a ring of
 * 1000 live blocks, the oldest replaced by one of a random size in
 * [1, MAXSIZE], its first byte written) on the real CPython pymalloc of an
 * embedded libpython (PyObject_Malloc / PyObject_Free, GIL held) and, in
 * the same process, on the C library's malloc / free.  The two alternate
 * for ROUNDS rounds each; the medians and their ratio are printed as
 * "key value" lines.  Built only when configure finds libpython. */
#include <Python.h>
#include "bench_util.h"

enum { RING = 1000, ROUNDS = 5 };

/* One round: ns per (free + malloc) pair on the given allocator.  Inlined
 * into each caller below, so both loops make direct calls. */
static inline double ring_round(void *(*alloc)(size_t), void (*release)(void *), long ops, long maxsize)
{
	uint64_t s = 0x9e3779b97f4a7c15ull;   /* ring.c's seed for thread 0 */
	char *slots[RING] = { NULL };
	double t0 = bench_now();
	for (long i = 0; i < ops; i++) {
		long k = i % RING;
		release(slots[k]);
		size_t n = 1 + bench_rand(&s) % (uint64_t)maxsize;
		slots[k] = alloc(n);
		if (!slots[k]) {
			fprintf(stderr, "pyring: out of memory\n");
			exit(1);
		}
		slots[k][0] = (char)i;
	}
	double dt = bench_now() - t0;
	for (long k = 0; k < RING; k++)
		release(slots[k]);
	return dt * 1e9 / (double)ops;
}

static double ring_libc(long ops, long maxsize) { return ring_round(malloc, free, ops, maxsize); }

static double ring_pymalloc(long ops, long maxsize)
{
	return ring_round(PyObject_Malloc, PyObject_Free, ops, maxsize);
}

/* Starts an isolated interpreter (no environment variables, so a
 * PYTHONMALLOC setting cannot swap the allocator) with pymalloc asked for
 * explicitly.  The main thread holds the GIL from then on. */
static void start_python(void)
{
	PyPreConfig pre;
	PyPreConfig_InitIsolatedConfig(&pre);
	pre.allocator = PYMEM_ALLOCATOR_PYMALLOC;
	PyStatus st = Py_PreInitialize(&pre);
	PyConfig config;
	if (!PyStatus_Exception(st)) {
		PyConfig_InitIsolatedConfig(&config);
		st = Py_InitializeFromConfig(&config);
		PyConfig_Clear(&config);
	}
	if (PyStatus_Exception(st)) {
		fprintf(stderr, "pyring: cannot start the embedded Python: %s\n", st.err_msg ? st.err_msg : "?");
		exit(1);
	}
}

static long positive_arg(int argc, char **argv, int i, long def, long max)
{
	long v = bench_arg(argc, argv, i, def);
	if (v < 1 || v > max) {
		fprintf(stderr, "pyring: argument %d must be 1..%ld (usage: pyring [OPS [MAXSIZE]])\n", i, max);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	long ops = positive_arg(argc, argv, 1, 4000000, 1L << 40);
	long maxsize = positive_arg(argc, argv, 2, 512, 1L << 30);
	start_python();
	double libc[ROUNDS], py[ROUNDS];
	for (int r = 0; r < ROUNDS; r++) {
		libc[r] = ring_libc(ops, maxsize);
		py[r] = ring_pymalloc(ops, maxsize);
	}
	double l = bench_median(libc, ROUNDS), p = bench_median(py, ROUNDS);
	printf("python_version %d.%d\n", PY_MAJOR_VERSION, PY_MINOR_VERSION);
	printf("rounds %d\nlibc_ns_per_op %.2f\npymalloc_ns_per_op %.2f\nratio %.2f\n", ROUNDS, l, p, p / l);
	if (Py_FinalizeEx() < 0)
		return 1;
	return 0;
}
