/* reuse SIZE COUNT [guarded]: the order in which freed blocks come back.
 * Allocates COUNT blocks of SIZE bytes (with "guarded", a small block that
 * is never freed after each, so no two of them are neighbours), frees them
 * in allocation order, allocates COUNT again and prints which of the old
 * blocks each new one is:
 *   order=6 5 4 ...   index of the freed block returned, "new" for another
 *   tcache_depth=N    length of the opening run N-1 ... 1 0, the last
 *                     blocks into a LIFO cache coming back first (-1: none) */
#include "probe.h"

enum { MAX_COUNT = 256 };

static int index_of(char *const *blocks, long count, const char *p)
{
	for (long i = 0; i < count; i++)
		if (blocks[i] == p)
			return (int)i;
	return -1;
}

/* N when order opens with N-1 ... 0, else -1. */
static int lifo_depth(const int *order, long count)
{
	for (long pos = 0; pos < count; pos++)
		if (order[pos] == 0) {
			for (long i = 0; i <= pos; i++)
				if (order[i] != pos - i)
					return -1;
			return (int)pos + 1;
		}
	return -1;
}

int main(int argc, char **argv)
{
	probe_static_stdout();
	long size = probe_arg(argc, argv, 1, 32), count = probe_arg(argc, argv, 2, 20);
	int guarded = argc > 3 && !strcmp(argv[3], "guarded");
	if (count < 1 || count > MAX_COUNT)
		probe_die("COUNT must be 1..256");
	static char *blocks[MAX_COUNT], *again[MAX_COUNT], *guards[MAX_COUNT];
	static int order[MAX_COUNT];
	for (long i = 0; i < count; i++) {
		blocks[i] = malloc((size_t)size);
		if (guarded)
			guards[i] = malloc(1);
		if (!blocks[i] || (guarded && !guards[i]))
			probe_die("malloc failed");
	}
	for (long i = 0; i < count; i++)
		free(blocks[i]);
	for (long i = 0; i < count; i++)
		again[i] = malloc((size_t)size);
	for (long i = 0; i < count; i++)
		order[i] = index_of(blocks, count, again[i]);
	fputs("order=", stdout);
	for (long i = 0; i < count; i++)
		order[i] < 0 ? printf("%snew", i ? " " : "") : printf("%s%d", i ? " " : "", order[i]);
	printf("\ntcache_depth=%d\n", lifo_depth(order, count));
	return 0;
}
