/* jemalloc_large_churn ITERATIONS: mimalloc-bench's malloc-large, scaled.
 * 20 live buffers of 5 to 25 MB; ITERATIONS times one of them, picked at
 * random, is replaced by a new zero-filled buffer of a random size (the
 * new one is allocated before the old one is freed, as a unique_ptr
 * reset does).  Prints the peak RSS and the page faults the run took: an
 * allocator that purges freed buffers faults their pages in again. */
#include <stdint.h>
#include <sys/resource.h>
#include "probe.h"

enum { NBUF = 20 };
#define MIN_SIZE ((size_t)5 << 20)
#define MAX_SIZE ((size_t)25 << 20)

static uint64_t rng = 42;
/* Read at run time, so the compiler cannot turn malloc + memset into calloc
 * (calloc may skip the writes on fresh pages; new char[n]() does not). */
static volatile int fill_byte = 0;

static uint64_t next_random(void)
{
	rng = rng * 6364136223846793005ull + 1442695040888963407ull;
	return rng >> 33;
}

int main(int argc, char **argv)
{
	probe_static_stdout();
	long iters = probe_arg(argc, argv, 1, 2000);
	if (iters < 1 || iters > 1000000)
		probe_die("ITERATIONS must be from 1 to 1000000");
	char *buf[NBUF] = { 0 };
	struct rusage before, after;
	getrusage(RUSAGE_SELF, &before);
	for (long i = 0; i < iters; i++) {
		unsigned k = (unsigned)(next_random() % NBUF);
		size_t size = MIN_SIZE + (size_t)(next_random() % (MAX_SIZE - MIN_SIZE + 1));
		char *p = malloc(size);
		if (!p)
			probe_die("malloc failed");
		memset(p, fill_byte, size);
		free(buf[k]);
		buf[k] = p;
	}
	getrusage(RUSAGE_SELF, &after);
	printf("peak_rss_mb=%ld\n", after.ru_maxrss / 1024);
	printf("minor_faults=%ld\n", after.ru_minflt - before.ru_minflt);
	printf("faults_per_iteration=%ld\n", (after.ru_minflt - before.ru_minflt) / iters);
	for (int k = 0; k < NBUF; k++)
		free(buf[k]);
	return 0;
}
