/* pymalloc classes: the size classes of the pools.  Requests of 16k + 1,
 * 16k + 8 and 16k + 16 bytes (k = 0..31: each side of every 16-byte
 * boundary, and the middle, where an 8-byte ladder would step) are each
 * allocated 64 times, and the class whose blocks in use grew is the
 * request's class; then blocks per pool of each class, from the pools'
 * in-use and available blocks.
 *   step=N C          requests from N on go to class C (one line a change)
 *   classes=digest    of those runs
 *   bpp=C:B           blocks per pool of class C
 *   blocks_per_pool=B0,B1,...  every class's */
#include <Python.h>
#include "pymalloc_side.h"

enum { N = 64 };

int pymalloc_classes(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	unsigned long digest = 5381;
	static const int offsets[] = { 1, 8, 16 };
	for (int i = 0, prev = -2; i < 32 * 3; i++) {
		int n = 16 * (i / 3) + offsets[i % 3];
		int c = py_class_of((size_t)n, N, NULL);
		if (c == prev)
			continue;
		printf("step=%d %d\n", n, c);
		digest = digest * 33 + (unsigned long)n * 1000003u + (unsigned long)(c + 1);
		prev = c;
	}
	printf("classes=%016lx\n", digest);
	static py_stats_t st;
	void *keep[PY_CLASSES];
	for (int c = 0; c < PY_CLASSES; c++)
		keep[c] = py_alloc((size_t)(c + 1) * 16);
	py_stats(&st);
	char all[PY_CLASSES * 8] = "";
	for (int c = 0; c < PY_CLASSES; c++) {
		long bpp = st.pools[c] ? (st.in_use[c] + st.avail[c]) / st.pools[c] : 0;
		printf("bpp=%d:%ld\n", c, bpp);
		snprintf(all + strlen(all), sizeof all - strlen(all), "%s%ld", c ? "," : "", bpp);
	}
	printf("blocks_per_pool=%s\n", all);
	for (int c = 0; c < PY_CLASSES; c++)
		py_free(keep[c]);
	return 0;
}
