/* mimalloc_huge_remote: the main thread allocates one block and touches
 * every page of it; a second thread frees it and ends, and the main thread
 * (the block's owner) reads its resident set at once, having called no
 * allocator function since.
 *   huge_returned_pct=P   % of the growth gone after the remote free of a
 *                         48 MiB block (a huge page, a segment of its own)
 *   large_returned_pct=P  the same for an 8 MiB block (a large page of a
 *                         shared segment) */
#include <pthread.h>
#include "probe.h"
#include "probe_util.h"

static void *freeing;

static void *remote_free(void *arg)
{
	(void)arg;
	free(freeing);
	return NULL;
}

static long returned_pct(size_t size)
{
	long before = probe_rss_bytes();
	if (!(freeing = malloc(size)))
		probe_die("malloc failed");
	memset(freeing, 1, size);
	long grown = probe_rss_bytes() - before;
	pthread_t t;
	if (pthread_create(&t, NULL, remote_free, NULL) || pthread_join(t, NULL))
		probe_die("thread failed");
	long after = probe_rss_bytes();
	return probe_pct(before + grown - after, grown);
}

int main(void)
{
	probe_static_stdout();
	long large = returned_pct((size_t)8 << 20);
	long huge = returned_pct((size_t)48 << 20);
	printf("huge_returned_pct=%ld\nlarge_returned_pct=%ld\n", huge, large);
	return 0;
}
