/* glibc_top_first SIZE: where a request at or above the mmap threshold goes
 * when the top chunk could serve it.  First a top of about 1 MiB is made
 * (512 blocks of 2 KiB — above the tcache's sizes — allocated, then freed,
 * so they merge into the top; the row raises the trim threshold so the top
 * stays), then SIZE bytes are asked for.  glibc decides on a mapping of its
 * own only in sysmalloc, after the bins and the top have failed, so a top
 * that is big enough serves it.  Prints
 *   mapped=0   carved from the top
 *   mapped=1   a mapping of its own */
#include "glibc_chunk.h"
#include "probe.h"

enum { BLOCKS = 512, BLOCK = 2048 };

int main(int argc, char **argv)
{
	probe_static_stdout();
	size_t size = (size_t)probe_arg(argc, argv, 1, 200 * 1024);
	static char *p[BLOCKS];
	for (int i = 0; i < BLOCKS; i++)
		if (!(p[i] = malloc(BLOCK)))
			probe_die("malloc failed");
	for (int i = BLOCKS - 1; i >= 0; i--)
		free(p[i]);
	char *big = malloc(size);
	if (!big)
		probe_die("malloc failed");
	printf("mapped=%d\n", chunk_is_mmapped(big));
	free(big);
	return 0;
}
