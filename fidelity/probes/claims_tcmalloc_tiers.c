/* claims_tcmalloc_tiers [COUNT SIZE]: where does gperftools' tcmalloc keep
 * the small blocks a program frees?  Allocates COUNT blocks of SIZE bytes
 * (default 200,000 x 64), frees them all, and prints the free bytes of
 * each tier as tcmalloc's MallocExtension reports them, before the
 * allocation (before_TIER=) and after the frees (TIER=):
 *
 *   thread   the freeing thread's cache   tcmalloc.thread_cache_free_bytes
 *   transfer the transfer cache           tcmalloc.transfer_cache_free_bytes
 *   central  the central free lists       tcmalloc.central_cache_free_bytes
 *   pageheap whole free spans             tcmalloc.pageheap_free_bytes
 *
 * then freed= (COUNT x SIZE).  Exit 77 when malloc is not tcmalloc. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

typedef int (*property_fn)(const char *, size_t *);

static const struct { const char *tier, *property; } tiers[] = {
	{ "thread", "tcmalloc.thread_cache_free_bytes" },
	{ "transfer", "tcmalloc.transfer_cache_free_bytes" },
	{ "central", "tcmalloc.central_cache_free_bytes" },
	{ "pageheap", "tcmalloc.pageheap_free_bytes" },
};
enum { NTIERS = sizeof tiers / sizeof tiers[0] };

static void read_tiers(property_fn get, size_t out[NTIERS])
{
	for (int i = 0; i < NTIERS; i++)
		if (!get(tiers[i].property, &out[i])) {
			fprintf(stderr, "claims_tcmalloc_tiers: tcmalloc has no property %s\n", tiers[i].property);
			exit(2);
		}
}

int main(int argc, char **argv)
{
	size_t count = argc > 1 ? strtoul(argv[1], NULL, 10) : 200000;
	size_t size = argc > 2 ? strtoul(argv[2], NULL, 10) : 64;
	property_fn get = (property_fn)dlsym(RTLD_DEFAULT, "MallocExtension_GetNumericProperty");
	if (!get) {
		fprintf(stderr, "claims_tcmalloc_tiers: malloc is not tcmalloc (no MallocExtension)\n");
		return 77;
	}
	size_t before[NTIERS], after[NTIERS];
	void **blocks = malloc(count * sizeof *blocks);
	if (!blocks)
		return 2;
	read_tiers(get, before);
	for (size_t i = 0; i < count; i++)
		if (!(blocks[i] = malloc(size)))
			return 2;
	for (size_t i = 0; i < count; i++)
		free(blocks[i]);
	read_tiers(get, after);
	for (int i = 0; i < NTIERS; i++)
		printf("before_%s=%zu\n", tiers[i].tier, before[i]);
	for (int i = 0; i < NTIERS; i++)
		printf("%s=%zu\n", tiers[i].tier, after[i]);
	printf("freed=%zu\n", count * size);
	free(blocks);
	return 0;
}
