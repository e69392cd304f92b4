/* jemalloc_ladder [MAX]: the request -> usable size ladder for requests of
 * 1..MAX bytes (default 70000).  Prints the distinct usable sizes met
 * (the size classes, in order), how many there are, and a hash of every
 * (request, usable size) pair, so one differing step shows. */
#include <malloc.h>
#include <stdint.h>
#include "probe.h"

int main(int argc, char **argv)
{
	long max = argc > 1 ? atol(argv[1]) : 70000;
	if (max < 1 || max > (1L << 24))
		probe_die("MAX must be from 1 to 16777216");
	uint64_t hash = 1469598103934665603ull;
	size_t last = 0, nclasses = 0;
	printf("classes=");
	for (long n = 1; n <= max; n++) {
		void *p = malloc((size_t)n);
		if (!p)
			probe_die("malloc failed");
		size_t u = malloc_usable_size(p);
		free(p);
		if (u < (size_t)n)
			probe_die("usable size below the request");
		hash = (hash ^ (uint64_t)u) * 1099511628211ull;
		if (u != last) {
			printf("%s%zu", nclasses ? "," : "", u);
			last = u;
			nclasses++;
		}
	}
	printf("\nnclasses=%zu\nladder_hash=%016llx\n", nclasses, (unsigned long long)hash);
	return 0;
}
