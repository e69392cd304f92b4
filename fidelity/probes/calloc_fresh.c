/* calloc_fresh: how many MiB of RSS calloc adds.
 *
 * calloc_fresh: calloc(1, 64 MiB) on a fresh heap.  An allocator that
 * knows the block's memory is a fresh mapping (zero already) leaves it
 * untouched (glibc: an mmapped chunk; jemalloc: a zeroed extent); one that
 * clears every block it hands out makes all 64 MiB resident.  Prints
 * "calloc_64m_rss_mib=N".
 *
 * calloc_fresh reused MIB: malloc(MIB MiB), every page written, free, then
 * calloc(1, MIB MiB), which may get the same memory back: dirty, so it must
 * be cleared.  A memset leaves the RSS as it was (the pages were resident);
 * jemalloc zeroes a reused extent by giving its pages back (MADV_DONTNEED),
 * so the RSS drops by the block; a zeroed extent (purged since the free)
 * needs nothing.  Prints "calloc_reused_rss_mib=N", N signed, then
 * "calloc_reused_zero=1" when every byte of the block reads zero.
 *
 * MiB are rounded to the nearest. */
#include "probe.h"

/* @p bytes in MiB, rounded to the nearest (either sign). */
static long mib_rounded(long bytes)
{
	long half = 512L << 10;
	return bytes >= 0 ? (bytes + half) >> 20 : -((-bytes + half) >> 20);
}

static void reused(size_t n)
{
	char *old = malloc(n);
	if (!old)
		probe_die("malloc failed");
	memset(old, 0xa5, n);
	free(old);
	long before = probe_rss_bytes();
	void *(*volatile zeroed)(size_t, size_t) = calloc;
	char *p = zeroed(1, n);
	if (!p)
		probe_die("calloc failed");
	long after = probe_rss_bytes();
	size_t nonzero = 0;
	for (size_t i = 0; i < n; i++)
		nonzero += p[i] != 0;
	printf("calloc_reused_rss_mib=%ld\n", mib_rounded(after - before));
	printf("calloc_reused_zero=%d\n", nonzero == 0);
	free(p);
}

int main(int argc, char **argv)
{
	probe_static_stdout();
	void *warm = malloc(100);   /* the allocator started before the count */
	if (argc > 1) {
		if (strcmp(argv[1], "reused") != 0)
			probe_die("usage: calloc_fresh [reused MIB]");
		long mib = probe_arg(argc, argv, 2, 4);
		if (mib < 1 || mib > 1024)
			probe_die("MIB must be 1..1024");
		reused((size_t)mib << 20);
		free(warm);
		return 0;
	}
	long before = probe_rss_bytes();
	void *(*volatile zeroed)(size_t, size_t) = calloc;
	char *p = zeroed(1, (size_t)64 << 20);
	if (!p)
		probe_die("calloc failed");
	long after = probe_rss_bytes();
	printf("calloc_64m_rss_mib=%ld\n", mib_rounded(after - before));
	free(p);
	free(warm);
	return 0;
}
