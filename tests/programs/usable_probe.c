/*
 * usable_probe: prints "n usable" for malloc(n), n from FIRST to LAST by
 * STEP, through whatever malloc the process has (the system's, a real
 * allocator under LD_PRELOAD, or heaplab's preload library).
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: usable_probe FIRST LAST STEP\n");
		return 2;
	}
	size_t first = strtoul(argv[1], NULL, 10), last = strtoul(argv[2], NULL, 10);
	size_t step = strtoul(argv[3], NULL, 10);
	if (!first || !step || last < first) {
		fprintf(stderr, "usable_probe: bad range\n");
		return 2;
	}
	for (size_t n = first; n <= last; n += step) {
		void *p = malloc(n);
		if (!p)
			return 1;
		printf("%zu %zu\n", n, malloc_usable_size(p));
		free(p);
	}
	return 0;
}
