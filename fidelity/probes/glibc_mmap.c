/* glibc_mmap SIZE: the mmap threshold moving.  Allocates SIZE bytes (at or
 * above the threshold: a mapping of its own) and frees it; allocates SIZE
 * again; then 2*SIZE.  Prints whether each had its own mapping (the
 * chunk's IS_MMAPPED bit):
 *   mapped=1,0,1   the free raised the threshold past SIZE (glibc's
 *                  self-tuning), not past 2*SIZE
 *   mapped=1,1,1   a threshold that was set stays where it was */
#include "glibc_chunk.h"
#include "probe.h"

static int mapped_then_freed(size_t size)
{
	char *p = malloc(size);
	if (!p)
		probe_die("malloc failed");
	int m = chunk_is_mmapped(p);
	free(p);
	return m;
}

int main(int argc, char **argv)
{
	probe_static_stdout();
	size_t size = (size_t)probe_arg(argc, argv, 1, 256 * 1024);
	int first = mapped_then_freed(size);
	int second = mapped_then_freed(size);
	int third = mapped_then_freed(2 * size);
	printf("mapped=%d,%d,%d\n", first, second, third);
	return 0;
}
