/* jemalloc_reuse [SIZE]: what the thread cache hands out.  Allocates three
 * blocks of SIZE bytes (default 448, a class nothing else uses), frees
 * them, and allocates three again: "lifo" says which old block each new one
 * is (cba: last freed, first reused).  "just_freed" is 1 when a block freed
 * and asked for again at once comes back at the same address; "stride" is
 * the distance between consecutive fresh blocks. */
#include "probe.h"

int main(int argc, char **argv)
{
	long size = argc > 1 ? atol(argv[1]) : 448;
	if (size < 1 || size > (1L << 20))
		probe_die("SIZE must be from 1 to 1048576");
	char *p = malloc((size_t)size);
	free(p);
	char *q = malloc((size_t)size);
	printf("just_freed=%d\n", p == q);
	free(q);

	char *old[3], *fresh[3];
	for (int i = 0; i < 3; i++)
		old[i] = malloc((size_t)size);
	printf("stride=%td\n", old[2] - old[1]);
	for (int i = 0; i < 3; i++)
		free(old[i]);
	char order[4] = "???";
	for (int i = 0; i < 3; i++) {
		fresh[i] = malloc((size_t)size);
		for (int j = 0; j < 3; j++)
			if (fresh[i] == old[j])
				order[i] = (char)('a' + j);
	}
	printf("lifo=%s\n", order);
	for (int i = 0; i < 3; i++)
		free(fresh[i]);
	return 0;
}
