/* What a glibc-family probe reads from a chunk's header, the same way on
 * glibc and on bins (which keeps glibc's layout): the size word before the
 * payload with its flag bits, and the sub-heap a secondary arena's chunk
 * lives in (64 MiB aligned, its first word the arena). */
#ifndef HL_FIDELITY_GLIBC_CHUNK_H
#define HL_FIDELITY_GLIBC_CHUNK_H

#include <stdint.h>
#include <stddef.h>

enum { CHUNK_IS_MMAPPED = 2, CHUNK_NON_MAIN_ARENA = 4 };
#define CHUNK_HEAP_MAX ((uintptr_t)64 << 20)

/* (through an integer: the word lies before what malloc returned, which
 * the compiler would otherwise call out of bounds) */
static inline size_t chunk_size_word(const void *mem)
{
	return *(const size_t *)((uintptr_t)mem - sizeof(size_t));
}

static inline int chunk_is_mmapped(const void *mem)
{
	return (chunk_size_word(mem) & CHUNK_IS_MMAPPED) != 0;
}

/* The arena of a heap chunk: NULL for the main arena, else the address the
 * sub-heap's header names. */
static inline const void *chunk_arena(const void *mem)
{
	if (!(chunk_size_word(mem) & CHUNK_NON_MAIN_ARENA))
		return NULL;
	return *(void *const *)((uintptr_t)mem & ~(CHUNK_HEAP_MAX - 1));
}
#endif
