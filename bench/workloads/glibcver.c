/* glibcver: what glibc 2.42 and 2.43 change, seen through the C library's
 * own reports, for the book's chapter 7 ("glibc after 2.36").  Only glibc
 * 2.36 runs here; under `heaplab run --policy=bins --conf=version:2.NN` the
 * same calls answer from the model of that release.
 *
 *   glibcver fast [mxfast N]
 *       allocates 100 blocks of 40 bytes (48-byte chunks, a fastbin size up
 *       to glibc 2.42) and one more that keeps them off the top, frees the
 *       100 in order, then prints mallinfo2()'s fastbin fields and
 *       malloc_info()'s XML.  Under glibc 2.36 the first 7 frees fill the
 *       tcache bin and the other 93 land in a fastbin.  With mxfast, it
 *       first calls mallopt(M_MXFAST, N) and prints what that returned.
 *   glibcver large
 *       allocates 100,000 bytes (a 100,016-byte chunk, below the mmap
 *       threshold) and a guard, frees the first, and prints mallinfo2()'s
 *       uordblks and fordblks: a chunk kept by the thread cache counts as
 *       in use, one in the bins as free.  Only a tcache_max above 100,000
 *       (glibc 2.42 and later; GLIBC_TUNABLES=glibc.malloc.tcache_max=N)
 *       caches it.
 *
 * stdout gets a buffer of its own before anything else, so that stdio
 * never calls malloc (a 4 KiB buffer is a large request, and a large
 * request makes glibc empty its fastbins first).
 *
 * Bad arguments: one line on stderr, exit 2. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NBLOCKS 100

static char out_buf[1 << 16];
/* where the large block and the guard go, so that the compiler cannot
 * drop a malloc/free pair as unused */
static void *volatile big, *volatile guard;

static int fast(void)
{
	void *blocks[NBLOCKS];
	for (int i = 0; i < NBLOCKS; i++)
		memset(blocks[i] = malloc(40), 1, 40);
	guard = malloc(40);
	for (int i = 0; i < NBLOCKS; i++)
		free(blocks[i]);
	struct mallinfo2 m = mallinfo2();
	printf("mallinfo2: smblks %zu fsmblks %zu ordblks %zu fordblks %zu\n", m.smblks, m.fsmblks, m.ordblks,
	       m.fordblks);
	malloc_info(0, stdout);
	free(guard);
	return 0;
}

static int large(void)
{
	big = malloc(100000);
	guard = malloc(16);
	free(big);
	struct mallinfo2 m = mallinfo2();
	printf("mallinfo2: uordblks %zu fordblks %zu\n", m.uordblks, m.fordblks);
	free(guard);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, out_buf, _IOFBF, sizeof out_buf);
	if (argc == 2 && strcmp(argv[1], "large") == 0)
		return large();
	if (argc == 4 && strcmp(argv[1], "fast") == 0 && strcmp(argv[2], "mxfast") == 0) {
		char *end;
		long n = strtol(argv[3], &end, 10);
		if (*argv[3] == '\0' || *end != '\0' || n < -2147483647 || n > 2147483647) {
			fprintf(stderr, "glibcver: mxfast wants an integer, not '%s'\n", argv[3]);
			return 2;
		}
		printf("mallopt(M_MXFAST, %ld) returned %d\n", n, mallopt(M_MXFAST, (int)n));
		return fast();
	}
	if (argc == 2 && strcmp(argv[1], "fast") == 0)
		return fast();
	fprintf(stderr, "usage: glibcver fast [mxfast N] | glibcver large\n");
	return 2;
}
