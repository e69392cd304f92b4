/* calloc_fresh: how many MiB of RSS calloc(1, 64 MiB) adds.  An allocator
 * that knows the block's memory is a fresh mapping (zero already) leaves
 * it untouched (glibc: an mmapped chunk; jemalloc: a zeroed extent); one
 * that clears every block it hands out makes all 64 MiB resident.
 * Prints "calloc_64m_rss_mib=N" (rounded to a MiB). */
#include "probe.h"

int main(void)
{
	probe_static_stdout();
	void *warm = malloc(100);   /* the allocator started before the count */
	long before = probe_rss_bytes();
	void *(*volatile zeroed)(size_t, size_t) = calloc;
	char *p = zeroed(1, (size_t)64 << 20);
	if (!p)
		probe_die("calloc failed");
	long after = probe_rss_bytes();
	printf("calloc_64m_rss_mib=%ld\n", (after - before + (512L << 10)) >> 20);
	free(p);
	free(warm);
	return 0;
}
