/* sizes LO HI [STEP]: the ladder of request -> usable size, for every
 * request from LO to HI (every STEP-th one, when given: the large sizes).  Prints one "step=N U" line where the usable size changes (so
 * two runs' first differing line is the first differing size), then
 * "steps=" and "ladder=", a digest of all the steps. */
#include <malloc.h>
#include "probe.h"

int main(int argc, char **argv)
{
	probe_static_stdout();
	long lo = probe_arg(argc, argv, 1, 1), hi = probe_arg(argc, argv, 2, 1024);
	long step = probe_arg(argc, argv, 3, 1);
	if (step < 1)
		probe_die("STEP must be at least 1");
	unsigned long long digest = 14695981039346656037ULL; /* FNV-1a */
	size_t last = (size_t)-1, steps = 0;
	for (long n = lo; n <= hi; n += step) {
		void *p = malloc((size_t)n);
		if (!p)
			probe_die("malloc failed");
		size_t usable = malloc_usable_size(p);
		free(p);
		if (usable == last)
			continue;
		printf("step=%ld %zu\n", n, usable);
		unsigned long long words[2] = { (unsigned long long)n, usable };
		for (size_t i = 0; i < sizeof words; i++)
			digest = (digest ^ ((const unsigned char *)words)[i]) * 1099511628211ULL;
		last = usable;
		steps++;
	}
	printf("steps=%zu\nladder=%016llx\n", steps, digest);
	return 0;
}
