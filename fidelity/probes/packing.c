/* packing SIZE COUNT UNIT: how closely an allocator packs the blocks of
 * one size class.  Allocates COUNT blocks of SIZE bytes, all kept live, and
 * prints, from their addresses alone:
 *   distance=  the most common distance between blocks allocated one after
 *              the other (the class's stride: the bytes a block costs);
 *   per_unit=  the most blocks found in one UNIT-aligned stretch of UNIT
 *              bytes (with UNIT the size of the class's slab, page or span,
 *              the blocks one of them holds once full);
 *   align=     the largest power of two (at most 4096) dividing every
 *              block's address.
 * Detail lines come first (distance= and align= before per_unit=), so an
 * `equal` row on per_unit that fails quotes the distance as well. */
#include <stdint.h>
#include "probe.h"

static int by_address(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	probe_static_stdout();
	if (argc != 4)
		probe_die("usage: packing SIZE COUNT UNIT");
	long size = probe_arg(argc, argv, 1, 0), count = probe_arg(argc, argv, 2, 0);
	long unit = probe_arg(argc, argv, 3, 0);
	if (size < 1 || count < 2 || count > 10000000 || unit < 1 || (unit & (unit - 1)))
		probe_die("SIZE must be positive, COUNT 2..10000000, UNIT a power of two");
	uintptr_t *a = malloc((size_t)count * sizeof *a);
	uintptr_t *d = malloc((size_t)count * sizeof *d);
	if (!a || !d)
		probe_die("out of memory for the address table");
	uintptr_t bits = 0;
	for (long i = 0; i < count; i++) {
		void *p = malloc((size_t)size);
		if (!p)
			probe_die("malloc failed");
		memset(p, 1, (size_t)size);
		a[i] = (uintptr_t)p;
		bits |= a[i];
	}
	/* the most common distance between consecutive blocks */
	for (long i = 1; i < count; i++)
		d[i - 1] = a[i] - a[i - 1];
	qsort(d, (size_t)count - 1, sizeof *d, by_address);
	uintptr_t distance = 0;
	long best = 0;
	for (long i = 0, j; i < count - 1; i = j) {
		for (j = i; j < count - 1 && d[j] == d[i]; j++)
			;
		if (j - i > best) {
			best = j - i;
			distance = d[i];
		}
	}
	/* the most blocks in one UNIT-aligned stretch */
	qsort(a, (size_t)count, sizeof *a, by_address);
	long per_unit = 0;
	for (long i = 0, j; i < count; i = j) {
		uintptr_t u = a[i] & ~(uintptr_t)(unit - 1);
		for (j = i; j < count && (a[j] & ~(uintptr_t)(unit - 1)) == u; j++)
			;
		if (j - i > per_unit)
			per_unit = j - i;
	}
	uintptr_t align = bits ? bits & -bits : 4096;
	printf("distance=%lu\nalign=%lu\nper_unit=%ld\n", (unsigned long)distance,
	       (unsigned long)(align > 4096 ? 4096 : align), per_unit);
	return 0;
}
