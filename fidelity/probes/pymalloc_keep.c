/* pymalloc keep N SIZE every|first K: N blocks of SIZE bytes, then all
 * freed but every K-th (every) or but the first K (first).  Arenas are
 * counted over what the process had before (the interpreter's own on the
 * real side).
 *   arenas_grown=A   arenas the N blocks added
 *   arenas_kept=A    of those, arenas still allocated after the frees
 *   kept_pct=P       arenas_kept in % of arenas_grown */
#include <Python.h>
#include "pymalloc_side.h"

enum { MAXN = 2000000 };

int pymalloc_keep(int argc, char **argv)
{
	long n = probe_arg(argc, argv, 1, 0), size = probe_arg(argc, argv, 2, 0);
	long k = probe_arg(argc, argv, 4, 0);
	int every = argc > 3 && strcmp(argv[3], "every") == 0;
	if (argc != 5 || n < 1 || n > MAXN || size < 1 || size > 512 || k < 1 ||
	    (!every && strcmp(argv[3], "first") != 0))
		probe_die("usage: pymalloc keep N SIZE every|first K (N <= 2000000, SIZE <= 512)");
	static void *v[MAXN];
	static py_stats_t start, full, end;
	py_stats(&start);
	for (long i = 0; i < n; i++)
		v[i] = py_alloc((size_t)size);
	py_stats(&full);
	for (long i = 0; i < n; i++)
		if (every ? i % k != 0 : i >= k)
			py_free(v[i]);
	py_stats(&end);
	long grown = full.arenas - start.arenas, kept = end.arenas - start.arenas;
	printf("arenas_grown=%ld\narenas_kept=%ld\nkept_pct=%ld\n", grown, kept, grown > 0 ? kept * 100 / grown : 0);
	return 0;
}
