/*
 * A program whose heap does not come down (tests/diagnose/diagnose.sh records it):
 * 100 rounds of 200 scratch buffers of 1000 bytes, each round followed by
 * one small block kept for good (a cache entry); then every scratch buffer
 * is freed.  The kept blocks sit above the freed ones, so glibc's main
 * arena keeps almost all of the scratch memory: 20,000 chunks of 1,008
 * bytes, held below 100 live 64-byte blocks allocated in cache_put.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ROUNDS = 100, PER_ROUND = 200, SCRATCH = 1000, ENTRY = 64 };

static void *kept[ROUNDS];
static void *scratch_blocks[ROUNDS * PER_ROUND];

__attribute__((noinline)) static void *cache_put(size_t n)
{
	void *p = malloc(n);
	if (p)
		memset(p, 1, n);
	return p;
}

__attribute__((noinline)) static void *scratch(size_t n)
{
	void *p = malloc(n);
	if (p)
		memset(p, 2, n);
	return p;
}

int main(void)
{
	for (int r = 0; r < ROUNDS; r++) {
		for (int i = 0; i < PER_ROUND; i++)
			scratch_blocks[r * PER_ROUND + i] = scratch(SCRATCH);
		kept[r] = cache_put(ENTRY);
	}
	for (int i = 0; i < ROUNDS * PER_ROUND; i++)
		free(scratch_blocks[i]);
	printf("kept %d entries\n", ROUNDS);
	return kept[0] == NULL;
}
