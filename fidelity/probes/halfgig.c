/* halfgig COUNT SIZE [late]: the demo's program, step by step.  Allocates
 * COUNT blocks of SIZE bytes and touches each, frees nine in ten, frees the
 * rest; prints the resident MiB above the probe's start after each step:
 *   rss_alloc_mb=  rss_free90_mb=  rss_free_all_mb=
 * With "late", one 16-byte block is allocated after all the others and
 * stays live to the end: an allocator that gives memory back only from
 * the top of its heap then keeps everything below it. */
#include "probe.h"

static double rss_mb(long base)
{
	return (double)(probe_rss_bytes() - base) / (1024.0 * 1024.0);
}

int main(int argc, char **argv)
{
	probe_static_stdout();
	long count = probe_arg(argc, argv, 1, 500000), size = probe_arg(argc, argv, 2, 1024);
	int late = argc > 3 && !strcmp(argv[3], "late");
	char **p = malloc((size_t)count * sizeof *p);
	if (!p)
		probe_die("malloc failed");
	long base = probe_rss_bytes();
	for (long i = 0; i < count; i++) {
		if (!(p[i] = malloc((size_t)size)))
			probe_die("malloc failed");
		p[i][0] = 1;
	}
	char *pin = late ? malloc(16) : NULL;
	double alloc = rss_mb(base);
	for (long i = 0; i < count; i++)
		if (i % 10) {
			free(p[i]);
			p[i] = NULL;
		}
	double free90 = rss_mb(base);
	for (long i = 0; i < count; i++)
		free(p[i]);
	double free_all = rss_mb(base);
	printf("rss_alloc_mb=%.1f\nrss_free90_mb=%.1f\nrss_free_all_mb=%.1f\n", alloc, free90, free_all);
	free(pin);
	free(p);
	return 0;
}
