/* jemalloc_dirty_fit BIG_KIB SIZE COUNT: is a big freed block cut up for
 * small requests?  Allocates a block of BIG_KIB KiB, writes it and frees
 * it (its pages stay resident as a dirty extent below the oversize
 * threshold), then allocates COUNT blocks of SIZE bytes and writes them.
 * Prints inside: how many of the COUNT blocks lie in the freed block's
 * pages, and grown_mb: how much the RSS grew with them (MiB, rounded).
 * jemalloc 5.3 cuts a dirty extent only for a request of at least 1/64 of
 * it (opt_lg_extent_max_active_fit); a smaller one, such as a slab of a
 * page, takes fresh pages and the RSS grows. */
#include <stdint.h>
#include "probe.h"

enum { MAX_COUNT = 1 << 20 };

static volatile int fill_byte = 1;

/* Makes the writes to @p p observable, so the compiler cannot drop them as
 * dead stores before free(). */
static void touched(void *p)
{
	__asm__ __volatile__("" : : "r"(p) : "memory");
}

static char *blocks[MAX_COUNT];

int main(int argc, char **argv)
{
	probe_static_stdout();
	if (argc != 4)
		probe_die("usage: jemalloc_dirty_fit BIG_KIB SIZE COUNT");
	long big_kib = probe_arg(argc, argv, 1, 0);
	long size = probe_arg(argc, argv, 2, 0);
	long count = probe_arg(argc, argv, 3, 0);
	if (big_kib < 64 || big_kib > (1L << 20) || size < 1 || size > (1L << 30) || count < 1 || count > MAX_COUNT)
		probe_die("BIG_KIB must be from 64 to 1048576, SIZE from 1 to 2^30, COUNT from 1 to 2^20");
	void *volatile warm = malloc(64);   /* the allocator's own start-up is not */
	free(warm);                         /* part of what is measured */
	size_t big_size = (size_t)big_kib << 10;
	char *big = malloc(big_size);
	if (!big)
		probe_die("malloc failed");
	memset(big, fill_byte, big_size);
	touched(big);
	/* the block's pages: jemalloc starts a large block at a random cache
	 * line of its first page (cache_oblivious), and a block cut from the
	 * same extent later may start lower in that page */
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = (uintptr_t)big & ~(page - 1), hi = (uintptr_t)big + big_size;
	free(big);
	long base = probe_rss_bytes();
	long inside = 0;
	for (long i = 0; i < count; i++) {
		if (!(blocks[i] = malloc((size_t)size)))
			probe_die("malloc failed");
		memset(blocks[i], fill_byte, (size_t)size);
		touched(blocks[i]);
		if ((uintptr_t)blocks[i] >= lo && (uintptr_t)blocks[i] < hi)
			inside++;
	}
	long grown = probe_rss_bytes() - base;
	printf("inside=%ld\n", inside);
	printf("grown_mb=%ld\n", (grown + (1L << 19)) >> 20);
	for (long i = 0; i < count; i++)
		free(blocks[i]);
	return 0;
}
