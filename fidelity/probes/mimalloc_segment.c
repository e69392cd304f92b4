/* mimalloc_segment: where blocks sit inside 32 MiB-aligned stretches of
 * address space.  200,000 blocks of 1 KiB span several segments; the
 * lowest offset any of them has from a 32 MiB boundary is the room the
 * segment header (mimalloc's info slice) takes.  Were segments 64 MiB,
 * blocks would also start right at odd 32 MiB boundaries.
 *   header_kib=K   lowest offset of a block from a 32 MiB boundary, KiB */
#include <stdint.h>
#include "probe.h"

enum { N = 200000, SIZE = 1024 };

int main(void)
{
	probe_static_stdout();
	static void *p[N];
	uintptr_t low = UINTPTR_MAX, span = (uintptr_t)32 << 20;
	for (int i = 0; i < N; i++) {
		if (!(p[i] = malloc(SIZE)))
			probe_die("malloc failed");
		uintptr_t off = (uintptr_t)p[i] % span;
		low = off < low ? off : low;
	}
	printf("header_kib=%lu\n", (unsigned long)(low / 1024));
	for (int i = 0; i < N; i++)
		free(p[i]);
	return 0;
}
