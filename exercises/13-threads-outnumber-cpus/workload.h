/*
 * Lab 13's workload, shared by lab.c (through heaplab's API) and real.c
 * (through malloc, for the real tcmalloc): every thread runs ROUNDS
 * rounds; a round allocates PER_SIZE objects of each size of SIZES and
 * frees them all.  All the threads are pinned to the same two CPUs, so
 * with eight threads four share each CPU and the kernel moves them
 * between the two.
 */
#ifndef LAB13_WORKLOAD_H
#define LAB13_WORKLOAD_H

#include <pthread.h>
#include <sched.h>
#include <stddef.h>

enum { ROUNDS = 20, PER_SIZE = 200, NSIZES = 3, MAX_THREADS = 32 };
static const size_t SIZES[NSIZES] = { 64, 256, 1024 };

/* The bytes one thread has out at the peak of a round. */
static inline size_t lab13_working_set(void)
{
	size_t bytes = 0;
	for (int i = 0; i < NSIZES; i++)
		bytes += PER_SIZE * SIZES[i];
	return bytes;
}

/* The first two CPUs this process may run on (one when it has only one);
 * returns how many. */
static inline int lab13_two_cpus(cpu_set_t *set)
{
	cpu_set_t mine;
	CPU_ZERO(set);
	if (sched_getaffinity(0, sizeof mine, &mine) != 0)
		return 0;
	int n = 0;
	for (int cpu = 0; cpu < CPU_SETSIZE && n < 2; cpu++)
		if (CPU_ISSET(cpu, &mine)) {
			CPU_SET(cpu, set);
			n++;
		}
	return n;
}

/* One thread's rounds, with the allocator's two calls as parameters. */
static inline void lab13_rounds(void *(*alloc)(void *, size_t), void (*release)(void *, void *), void *arg)
{
	static __thread void *held[NSIZES * PER_SIZE];
	for (int r = 0; r < ROUNDS; r++) {
		int k = 0;
		for (int i = 0; i < PER_SIZE; i++)
			for (int c = 0; c < NSIZES; c++) {
				char *p = alloc(arg, SIZES[c]);
				if (p)
					p[0] = (char)r; /* touch it */
				held[k++] = p;
			}
		for (int i = 0; i < k; i++)
			if (held[i])
				release(arg, held[i]);
	}
}
#endif
