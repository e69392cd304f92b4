/* claims_realloc RULE STEP MAX: the cost of a growth rule.  A block starts
 * at STEP bytes and is grown with realloc until it reaches MAX, by adding
 * STEP each time (RULE add) or by doubling (RULE double).  After every
 * realloc a small block is allocated and kept, as a program's other data
 * would be, so the grown block cannot always stretch into the free space
 * above it.
 *
 * A realloc whose address changes moved the block.  Read from glibc's
 * chunk header (bins keeps the same), a move of a heap chunk is a copy of
 * its contents; a move of a mapped chunk is the kernel's mremap, which
 * remaps the pages and copies nothing.  Prints "move=SIZE copy|mremap" for
 * each move, then reallocs=, moves=, copies=, copied_kb= (the bytes the
 * copies carried), mremaps=, mapped_from= (the size at which the block
 * first was a mapped chunk, 0 if never). */
#include "probe.h"
#include "glibc_chunk.h"

typedef struct {
	size_t reallocs, moves, copies, copied, mremaps, mapped_from;
} growth_t;

/* Grows *p from @p size to @p next, counting what the realloc did. */
static void grow(char **p, size_t size, size_t next, growth_t *g)
{
	int was_mapped = chunk_is_mmapped(*p);
	char *q = realloc(*p, next);
	if (!q)
		probe_die("realloc failed");
	g->reallocs++;
	if (q != *p) {
		g->moves++;
		if (was_mapped)
			g->mremaps++;
		else
			g->copies++, g->copied += size;
		printf("move=%zu %s\n", size, was_mapped ? "mremap" : "copy");
	}
	if (!g->mapped_from && chunk_is_mmapped(q))
		g->mapped_from = next;
	*p = q;
}

int main(int argc, char **argv)
{
	probe_static_stdout();
	if (argc < 4 || (strcmp(argv[1], "add") && strcmp(argv[1], "double")))
		probe_die("usage: claims_realloc add|double STEP MAX [BUFFERS]");
	int doubling = !strcmp(argv[1], "double");
	size_t step = (size_t)probe_arg(argc, argv, 2, 1024), max = (size_t)probe_arg(argc, argv, 3, 1 << 20);
	size_t nbuf = (size_t)probe_arg(argc, argv, 4, 1);
	if (!step || step > max || nbuf < 1 || nbuf > 8)
		probe_die("STEP must be 1..MAX and BUFFERS 1..8");
	char *bufs[8];
	for (size_t b = 0; b < nbuf; b++)
		if (!(bufs[b] = malloc(step)))
			probe_die("malloc failed");
	growth_t g = { 0 };
	for (size_t size = step; size < max;) {
		size_t next = doubling ? size * 2 : size + step;
		next = next > max ? max : next;
		for (size_t b = 0; b < nbuf; b++)
			grow(&bufs[b], size, next, &g);
		size = next;
	}
	printf("reallocs=%zu\nmoves=%zu\ncopies=%zu\ncopied_kb=%zu\nmremaps=%zu\nmapped_from=%zu\n",
		g.reallocs, g.moves, g.copies, g.copied / 1024, g.mremaps, g.mapped_from);
	for (size_t b = 0; b < nbuf; b++)
		free(bufs[b]);
	return 0;
}
