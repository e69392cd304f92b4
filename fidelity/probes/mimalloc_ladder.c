/* mimalloc_ladder LO HI: the request -> usable size ladder from LO to HI
 * bytes, as malloc_usable_size reports it.
 *   steps=LO-b:u,b+1-c:v,...   every run of requests sharing a usable size
 *   classes=N                  how many runs
 *   smallest=u                 usable size of malloc(1) */
#include <malloc.h>
#include "probe.h"

/* Appends "from-to:usable," to the ladder text at @p out. */
static size_t put_step(char *out, size_t room, size_t from, size_t to, size_t usable)
{
	int n = snprintf(out, room, "%zu-%zu:%zu,", from, to, usable);
	if (n < 0 || (size_t)n >= room)
		probe_die("ladder text too long: narrow LO..HI");
	return (size_t)n;
}

static size_t usable_of(size_t n)
{
	void *p = malloc(n);
	if (!p)
		probe_die("malloc failed");
	size_t u = malloc_usable_size(p);
	free(p);
	return u;
}

int main(int argc, char **argv)
{
	probe_static_stdout();
	if (argc != 3)
		probe_die("usage: mimalloc_ladder LO HI");
	size_t lo = (size_t)probe_arg(argc, argv, 1, 0), hi = (size_t)probe_arg(argc, argv, 2, 0);
	if (lo < 1 || hi < lo)
		probe_die("need 1 <= LO <= HI");
	static char text[16384];
	size_t len = 0, classes = 0, from = lo, cur = usable_of(lo);
	for (size_t n = lo + 1; n <= hi + 1; n++) {
		size_t u = n <= hi ? usable_of(n) : 0;
		if (u == cur)
			continue;
		len += put_step(text + len, sizeof text - len, from, n - 1, cur);
		classes++;
		from = n;
		cur = u;
	}
	if (len)
		text[len - 1] = '\0';
	printf("steps=%s\nclasses=%zu\nsmallest=%zu\n", text, classes, usable_of(1));
	return 0;
}
