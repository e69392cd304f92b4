/* pymalloc arenas: 300,000 blocks of 64 bytes (about 19 arenas), then
 * CPython's own accounting of the arenas.
 *   unaligned_pct=P        % of the arenas whose mapping was not pool-aligned
 *                          (bytes lost to arena alignment / 16 KiB / arenas)
 *   lost_per_unaligned=B   bytes lost per such arena (one pool: 16384)
 *   pools_add_up=1|0       pools in use + unused pools == 64 per arena less
 *                          one per unaligned arena */
#include <Python.h>
#include "pymalloc_side.h"

enum { N = 300000, SIZE = 64 };

int pymalloc_arenas(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	static void *v[N];
	static py_stats_t st;
	for (long i = 0; i < N; i++)
		v[i] = py_alloc(SIZE);
	py_stats(&st);
	long unaligned = st.lost_alignment / PY_POOL;
	printf("arenas=%ld\n", st.arenas);
	printf("unaligned_pct=%ld\n", st.arenas ? unaligned * 100 / st.arenas : 0);
	if (unaligned)
		printf("lost_per_unaligned=%ld\n", st.lost_alignment / unaligned);
	else
		printf("lost_per_unaligned=none\n");
	printf("pools_add_up=%d\n", py_total_pools(&st) == PY_POOLS_PER_ARENA * st.arenas - unaligned);
	for (long i = 0; i < N; i++)
		py_free(v[i]);
	return 0;
}
