/* pymalloc route SIZE: does a request of SIZE bytes go to pymalloc's
 * pools or to the fallback (glibc's malloc in CPython)?  100 blocks of
 * SIZE are allocated and the pools' blocks in use counted before and after.
 *   pooled=1|0   the pools serve SIZE
 *   class=C      the size class whose blocks in use grew (none: fallback) */
#include <Python.h>
#include "pymalloc_side.h"

enum { N = 100 };

int pymalloc_route(int argc, char **argv)
{
	size_t size = (size_t)probe_arg(argc, argv, 1, 0);
	if (size < 1)
		probe_die("usage: pymalloc route SIZE");
	int pooled = 0, cls = py_class_of(size, N, &pooled);
	printf("pooled=%d\n", pooled);
	if (cls < 0)
		printf("class=none\n");
	else
		printf("class=%d\n", cls);
	return 0;
}
