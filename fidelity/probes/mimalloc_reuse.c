/* mimalloc_reuse SIZE: what the next mallocs of SIZE bytes return after
 * frees on a page that still has never-used blocks.
 *   immediate=0|1   a block freed and asked for again at once comes back
 *   until_reuse=N   mallocs made before the first freed block came back
 *   order=i,j,k     which of the three freed blocks (1st, 2nd, 3rd freed)
 *                   came back, in the order they came back */
#include "probe.h"

enum { LIVE = 8, LOOK = 100000 };

static void *must_malloc(size_t n)
{
	void *p = malloc(n);
	if (!p)
		probe_die("malloc failed");
	return p;
}

static int which_of(void *const *freed, void *p)
{
	for (int k = 0; k < 3; k++)
		if (freed[k] == p)
			return k + 1;
	return 0;
}

int main(int argc, char **argv)
{
	probe_static_stdout();
	if (argc != 2)
		probe_die("usage: mimalloc_reuse SIZE");
	size_t size = (size_t)probe_arg(argc, argv, 1, 0);
	if (size < 1 || size > 1024)
		probe_die("SIZE must be 1..1024");
	void *live[LIVE];
	for (int i = 0; i < LIVE; i++)
		live[i] = must_malloc(size);
	void *once = must_malloc(size);
	free(once);
	void *again = must_malloc(size);
	printf("immediate=%d\n", again == once);

	void *freed[3] = { live[2], live[5], live[3] };
	for (int k = 0; k < 3; k++)
		free(freed[k]);
	static void *taken[LOOK];
	int got = 0, n = 0, until = -1;
	char order[32] = "";
	while (got < 3 && n < LOOK) {
		void *p = taken[n++] = must_malloc(size);
		int k = which_of(freed, p);
		if (!k)
			continue;
		if (until < 0)
			until = n - 1;
		snprintf(order + strlen(order), sizeof order - strlen(order), "%s%d", got ? "," : "", k);
		got++;
	}
	printf("until_reuse=%d\norder=%s\n", until, got ? order : "none");
	return 0;
}
