/*
 * Lab 5: boundary tags.
 *
 * Reads the two header words of bins' chunks straight from memory — the
 * same words glibc keeps in front of every block — to show what malloc(1)
 * costs, what the flag bits say, and how free uses them to merge a block
 * with its neighbours.  The thread cache is switched off (tcache_count:0)
 * for the merging part, then switched back on to show that a cached block
 * is not merged: it still looks in use to its neighbours.
 */
#include "config.h"
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "../lab.h"

enum { PREV_INUSE = 1, FLAGS = 7 };

static size_t size_word(const void *mem) { return ((const size_t *)mem)[-1]; }
static size_t prev_size(const void *mem) { return ((const size_t *)mem)[-2]; }
static size_t chunk_size(const void *mem) { return size_word(mem) & ~(size_t)FLAGS; }
static bool prev_inuse(const void *mem) { return size_word(mem) & PREV_INUSE; }

static void show(const char *name, const void *mem)
{
	printf("  %-6s size word %#6zx = chunk %4zu | P=%d   prev_size %zu\n", name, size_word(mem), chunk_size(mem),
	       prev_inuse(mem), prev_size(mem));
}

/* Finds the size of the free block the walker reports at or around p. */
typedef struct probe {
	const char *p;
	size_t size;
} probe_t;

static int find_free(const hl_block_t *b, void *arg)
{
	probe_t *pr = arg;
	const char *a = b->addr;
	if (b->state == HL_BLOCK_FREE && pr->p >= a - 16 && pr->p < a + b->size)
		pr->size = b->size;
	return 0;
}

static void small_requests(void)
{
	hl_heap_t *h = lab_heap("bins", "tcache_count:0");
	char *a = hl_malloc(h, 1), *b = hl_malloc(h, 1), *c = hl_malloc(h, 24), *d = hl_malloc(h, 25);
	printf("malloc(1), malloc(1), malloc(24), malloc(25):\n");
	show("a", a), show("b", b), show("c", c), show("d", d);
	printf("  a..b %td bytes apart; usable: %zu %zu %zu %zu\n", b - a, hl_usable_size(h, a), hl_usable_size(h, b),
	       hl_usable_size(h, c), hl_usable_size(h, d));
	lab_expect(b - a == 32 && chunk_size(a) == 32, "malloc(1) takes a 32-byte chunk");
	lab_expect(hl_usable_size(h, c) == 24 && chunk_size(c) == 32,
		   "malloc(24) still fits a 32-byte chunk: it borrows the next chunk's prev_size word");
	lab_expect(chunk_size(d) == 48, "malloc(25) needs a 48-byte chunk");
	lab_expect(prev_inuse(b) && prev_inuse(c), "P is set in a chunk whose lower neighbour is in use");
	hl_heap_destroy(h);
}

static void merging(void)
{
	/* glibc 2.43: no fastbins, so 112-byte chunks merge the moment they are
	 * freed (before 2.43, the default on a 2.36 machine, they wait in a
	 * fastbin) */
	hl_heap_t *h = lab_heap("bins", "version:2.43,tcache_count:0");
	char *x = hl_malloc(h, 100), *y = hl_malloc(h, 100), *z = hl_malloc(h, 100), *guard = hl_malloc(h, 100);
	size_t one = chunk_size(x);
	printf("\nfour chunks of %zu bytes: x y z guard; free(x):\n", one);
	hl_free(h, x);
	show("y", y);
	lab_expect(!prev_inuse(y) && prev_size(y) == one, "free(x) clears y's P bit and writes x's size below y's header");
	hl_free(h, z);
	printf("free(z):\n");
	show("guard", guard);
	hl_free(h, y);
	printf("free(y): y merges with both neighbours\n");
	show("guard", guard);
	lab_snapshot(h, "merged", "x, y and z merged into one free chunk");
	probe_t pr = { x, 0 };
	hl_walk(h, find_free, &pr);
	lab_expect(prev_size(guard) == 3 * one && pr.size == 3 * one, "x, y and z are one free chunk of %zu bytes",
		   3 * one);
	hl_heap_destroy(h);
}

static void cached(void)
{
	hl_heap_t *h = lab_heap("bins", NULL);
	char *x = hl_malloc(h, 100), *y = hl_malloc(h, 100);
	hl_malloc(h, 100);
	hl_free(h, x);
	printf("\nwith the tcache on, free(x) caches x:\n");
	show("y", y);
	lab_expect(prev_inuse(y), "a chunk in the tcache still looks in use to its neighbour (no merging)");
	lab_snapshot(h, "cached", "x sits in the tcache, still marked in use");
	hl_heap_destroy(h);
}

int main(int argc, char **argv)
{
	lab_begin(argc, argv, "Lab 5: boundary tags");
	if (!lab_has("bins"))
		return lab_end();
	small_requests();
	merging();
	cached();
	return lab_end();
}
