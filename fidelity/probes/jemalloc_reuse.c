/* jemalloc_reuse [SIZE]: the first blocks of a class.  Allocates a block of
 * SIZE bytes (default 448, a class nothing else in the probe uses), frees
 * it and asks again: just_freed=1 when the same address comes back (the
 * thread cache hands out what it got last).  Then allocates three more:
 * stride= is the distance between the second and third, which is the
 * class size when regions sit side by side with no header between them.
 * (The generic probe reuse shows the order of longer runs.) */
#include "probe.h"

int main(int argc, char **argv)
{
	probe_static_stdout();
	long size = probe_arg(argc, argv, 1, 448);
	if (size < 1 || size > (1L << 20))
		probe_die("SIZE must be from 1 to 1048576");
	char *p = malloc((size_t)size);
	free(p);
	char *q = malloc((size_t)size);
	printf("just_freed=%d\n", p == q);
	char *r[3];
	for (int i = 0; i < 3; i++)
		if (!(r[i] = malloc((size_t)size)))
			probe_die("malloc failed");
	printf("stride=%td\n", r[2] - r[1]);
	for (int i = 0; i < 3; i++)
		free(r[i]);
	free(q);
	return 0;
}
