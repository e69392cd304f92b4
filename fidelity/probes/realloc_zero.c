/* realloc_zero: what realloc(p, 0) gives back for a live 100-byte block.
 * Prints "realloc_zero=block" (a new block, usable as malloc(0)'s) or
 * "realloc_zero=null" (p freed, NULL returned), and "errno_after=" the
 * errno it left (set to 0 before the call). */
#include <errno.h>
#include "probe.h"

int main(void)
{
	probe_static_stdout();
	void *p = malloc(100);
	if (!p)
		probe_die("malloc failed");
	/* through a volatile pointer, so the compiler keeps the call */
	void *(*volatile re)(void *, size_t) = realloc;
	errno = 0;
	void *q = re(p, 0);
	int e = errno;
	printf("realloc_zero=%s\n", q ? "block" : "null");
	printf("errno_after=%d\n", e);
	free(q);
	return 0;
}
