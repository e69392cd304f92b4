/* glibc_trim COUNT SIZE: how much the main arena keeps from the system.
 * Allocates COUNT blocks of SIZE bytes (below the mmap threshold, so they
 * come from the top of the heap), then frees them newest first, so the top
 * grows back down and the arena may trim it.  Prints the main arena's
 * bytes from the system (glibc: mallinfo2's arena; the model: its own
 * count of the same) at the start, after the allocations and after the
 * frees:  arena_start=  arena_after_alloc=  arena_after_free=
 * The break moves with it; top_pad says how much stays above the top. */
#include <malloc.h>
#include "probe.h"

static long arena_bytes(void)
{
	double v;
	if (probe_is_model()) {
		if (probe_model_stat("policy_stats.arena.0.system_current", &v) != 0)
			probe_die("the model has no policy_stats.arena.0.system_current");
		return (long)v;
	}
	return (long)mallinfo2().arena;
}

int main(int argc, char **argv)
{
	probe_static_stdout();
	long count = probe_arg(argc, argv, 1, 64), size = probe_arg(argc, argv, 2, 16000);
	static char *blocks[4096];
	if (count < 1 || count > 4096)
		probe_die("COUNT must be 1..4096");
	void *volatile first = malloc(1); /* the heap exists from here on */
	free(first);
	long start = arena_bytes();
	for (long i = 0; i < count; i++)
		if (!(blocks[i] = malloc((size_t)size)))
			probe_die("malloc failed");
	long after_alloc = arena_bytes();
	for (long i = count - 1; i >= 0; i--)
		free(blocks[i]);
	printf("arena_start=%ld\narena_after_alloc=%ld\narena_after_free=%ld\n", start, after_alloc, arena_bytes());
	return 0;
}
