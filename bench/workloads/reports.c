/* reports: the small program of the book's chapter 18 (containers,
 * allocators' own reports, transparent huge pages).  It uses the C
 * library's malloc, so one binary runs under glibc, under a real allocator
 * through LD_PRELOAD and under heaplab (`heaplab run`).
 *
 *   reports hold MIB [trim]   allocate MIB MiB in 1000-byte blocks (each
 *                             written), free all but the last one (it pins
 *                             the top of glibc's heap), optionally call
 *                             malloc_trim(0), then map and write MIB MiB
 *                             more with mmap (memory the allocator cannot
 *                             serve from what it keeps: another library's,
 *                             a thread's stack); prints the resident size
 *                             after each step.  Under a cgroup limit below
 *                             twice MIB it lives only if the freed blocks
 *                             went back to the kernel
 *   reports cache MIB FILE    write MIB MiB to FILE (the page cache, not
 *                             the heap), then print the resident size
 *   reports stats [libc]      the report workload: 10,000 blocks of 100
 *                             bytes, 100 of 4,000 and 2 of 1 MiB, every
 *                             other small block and both large ones freed;
 *                             prints the live bytes and the process's
 *                             smaps_rollup lines; with `libc`, also calls
 *                             malloc_stats(), mallinfo2() and
 *                             malloc_info() (answered by whichever malloc
 *                             family the symbols resolve to)
 *   reports thp MIB advise|none|malloc
 *                             map MIB MiB (2 MiB aligned), madvise it
 *                             MADV_HUGEPAGE or not, or take it from malloc,
 *                             write one byte a 4 KiB page, then print the
 *                             block's Rss and AnonHugePages from
 *                             /proc/self/smaps
 *
 * Bad arguments: one line on stderr, exit 2. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <malloc.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include "bench_util.h"

enum { SMALL = 1000, MIB = 1 << 20, HUGE_2M = 2 << 20, PAGE_4K = 4096 };

/* keeps the compiler from deleting a malloc whose block is only written
 * and freed (GCC may remove the pair) */
static void *keep(void *p)
{
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

static void usage(void)
{
	fputs("usage: reports hold MIB [trim] | cache MIB FILE | stats [libc] | thp MIB advise|none|malloc\n", stderr);
	exit(2);
}

static long arg_mib(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (*s == 0 || *end != 0 || v < 1 || v > 4096) {
		fprintf(stderr, "reports: '%s' is not a size in MiB (1 to 4096)\n", s);
		exit(2);
	}
	return v;
}

static void say_rss(const char *when)
{
	printf("%-28s rss %6ld KiB\n", when, bench_rss_bytes() / 1024);
	fflush(stdout);
}

/* hold: freed memory kept by the allocator, then a new block beside it */
static int run_hold(long mib, int trim)
{
	size_t n = (size_t)mib * MIB / SMALL;
	char **p = malloc(n * sizeof *p);
	if (p == NULL)
		return 1;
	for (size_t i = 0; i < n; i++) {
		p[i] = keep(malloc(SMALL));
		if (p[i] == NULL)
			return 1;
		memset(p[i], 1, SMALL);
	}
	say_rss("allocated");
	for (size_t i = 0; i + 1 < n; i++)
		free(p[i]);
	say_rss("freed all but the last");
	if (trim) {
		malloc_trim(0);
		say_rss("after malloc_trim(0)");
	}
	char *more = mmap(NULL, (size_t)mib * MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (more == MAP_FAILED)
		return 1;
	memset(more, 2, (size_t)mib * MIB);
	say_rss("a new mapping written");
	munmap(more, (size_t)mib * MIB);
	free(p[n - 1]);
	free(p);
	puts("done");
	return 0;
}

/* cache: file pages, charged to the cgroup that first touched them */
static int run_cache(long mib, const char *file)
{
	static char buf[MIB];
	memset(buf, 3, sizeof buf);
	int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0) {
		perror(file);
		return 1;
	}
	for (long i = 0; i < mib; i++)
		if (write(fd, buf, sizeof buf) != (ssize_t)sizeof buf) {
			perror(file);
			return 1;
		}
	close(fd);
	say_rss("file written");
	puts("done");
	return 0;
}

/* prints the lines of FILE that start with one of the keys */
static void print_lines(const char *file, const char *const *keys)
{
	FILE *f = fopen(file, "r");
	char line[256];
	if (f == NULL)
		return;
	while (fgets(line, sizeof line, f))
		for (const char *const *k = keys; *k; k++)
			if (strncmp(line, *k, strlen(*k)) == 0)
				fputs(line, stdout);
	fclose(f);
}

static int run_stats(int libc)
{
	enum { NSMALL = 10000, NMID = 100 };
	static void *small[NSMALL], *mid[NMID];
	void *large[2];
	size_t live = 0;
	for (int i = 0; i < NSMALL; i++)
		memset(small[i] = malloc(100), 4, 100);
	for (int i = 0; i < NMID; i++)
		memset(mid[i] = malloc(4000), 5, 4000);
	for (int i = 0; i < 2; i++)
		memset(large[i] = keep(malloc(MIB)), 6, MIB);
	for (int i = 0; i < NSMALL; i += 2)
		free(small[i]);
	free(large[0]);
	free(large[1]);
	live = NSMALL / 2 * 100 + NMID * 4000;
	printf("live requested bytes: %zu\n", live);
	static const char *const keys[] = { "Rss:", "Anonymous:", "AnonHugePages:", NULL };
	print_lines("/proc/self/smaps_rollup", keys);
	fflush(stdout);
	if (libc) {
		struct mallinfo2 mi = mallinfo2();
		printf("mallinfo2: arena %zu uordblks %zu fordblks %zu hblkhd %zu keepcost %zu\n",
		       mi.arena, mi.uordblks, mi.fordblks, mi.hblkhd, mi.keepcost);
		fflush(stdout);
		malloc_stats();
		malloc_info(0, stdout);
	}
	/* the blocks stay live to the end, so an at-exit report sees them */
	return 0;
}

/* the Rss and AnonHugePages lines of the mapping that holds ADDR */
static void print_mapping(void *addr)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[256];
	int in = 0;
	uintptr_t a = (uintptr_t)addr;
	if (f == NULL)
		return;
	while (fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			in = a >= lo && a < hi;
			continue;
		}
		if (in && (strncmp(line, "Rss:", 4) == 0 || strncmp(line, "AnonHugePages:", 14) == 0))
			fputs(line, stdout);
	}
	fclose(f);
}

static int run_thp(long mib, const char *how)
{
	size_t len = (size_t)mib * MIB;
	char *p;
	if (strcmp(how, "malloc") == 0) {
		p = malloc(len);
		if (p == NULL)
			return 1;
	} else if (strcmp(how, "advise") == 0 || strcmp(how, "none") == 0) {
		/* map 2 MiB more and start at a 2 MiB boundary, so that every
		 * huge page the block can hold is aligned */
		char *raw = mmap(NULL, len + HUGE_2M, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (raw == MAP_FAILED)
			return 1;
		p = (char *)(((uintptr_t)raw + HUGE_2M - 1) & ~(uintptr_t)(HUGE_2M - 1));
		if (how[0] == 'a' && madvise(p, len, MADV_HUGEPAGE) != 0) {
			perror("madvise");
			return 1;
		}
	} else {
		usage();
		return 2;
	}
	for (size_t off = 0; off < len; off += PAGE_4K)
		p[off] = 7;
	printf("block of %ld MiB (%s)\n", mib, how);
	print_mapping(p);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && strcmp(argv[1], "hold") == 0 && argc <= 4) {
		int trim = argc == 4 && strcmp(argv[3], "trim") == 0;
		if (argc == 4 && !trim)
			usage();
		return run_hold(arg_mib(argv[2]), trim);
	}
	if (argc == 4 && strcmp(argv[1], "cache") == 0)
		return run_cache(arg_mib(argv[2]), argv[3]);
	if (argc >= 2 && strcmp(argv[1], "stats") == 0 && argc <= 3) {
		if (argc == 3 && strcmp(argv[2], "libc") != 0)
			usage();
		return run_stats(argc == 3);
	}
	if (argc == 4 && strcmp(argv[1], "thp") == 0)
		return run_thp(arg_mib(argv[2]), argv[3]);
	usage();
	return 2;
}
