/*
 * malloc_api_probe.c -- the C library's malloc API seen by a program:
 * run as it is (the real glibc), under LD_PRELOAD of a real allocator, or
 * under heaplab's preload library; tests/programs/malloc_api.sh compares the runs.
 *
 *   malloc_api_probe heap     a workload (one malloc(200000) kept; 100 x
 *                             malloc(1000), every other one freed; 10 x
 *                             malloc(100) freed), with mallinfo2 and
 *                             mallinfo before and after it and after
 *                             malloc_trim(0); then mallopt's answers; all
 *                             printed as "key value" lines once measured,
 *                             then malloc_stats (stderr) and malloc_info
 *                             (stdout, after a line "malloc_info")
 *   malloc_api_probe arenas N mallopt(M_ARENA_MAX, N) unless N is 0, then
 *                             four threads allocate at once; prints the
 *                             <heap> elements of malloc_info, written into
 *                             an open_memstream (whose buffer comes from
 *                             the allocator being described)
 *   malloc_api_probe threads N  N threads one after the other, each filling
 *                             its cache and ending; mallinfo2's uordblks
 *                             after the first and after the last (what a
 *                             thread cached goes back when it ends: glibc's
 *                             tst-malloc-tcache-leak asks the same)
 * Nothing is printed before the figures are taken: stdio's buffer would
 * be one more block.
 */
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#define FIELDS(m) m.arena, m.ordblks, m.smblks, m.hblks, m.hblkhd, m.usmblks, m.fsmblks, m.uordblks, m.fordblks, m.keepcost
static const char *const names[] = { "arena", "ordblks", "smblks", "hblks", "hblkhd",
				     "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost" };

static void put2(const char *when, struct mallinfo2 m)
{
	size_t v[] = { FIELDS(m) };
	for (int i = 0; i < 10; i++)
		printf("mallinfo2.%s.%s %zu\n", when, names[i], v[i]);
}

static void put1(const char *when, struct mallinfo m)
{
	int v[] = { FIELDS(m) };
	for (int i = 0; i < 10; i++)
		printf("mallinfo.%s.%s %d\n", when, names[i], v[i]);
}

static int heap_probe(void)
{
	struct mallinfo2 before = mallinfo2();
	struct mallinfo before1 = mallinfo();
	static void *volatile p[100], *volatile small[10], *volatile big; /* kept by the compiler */
	big = malloc(200000);   /* first: a large request merges the fastbins */
	for (int i = 0; i < 100; i++)
		p[i] = malloc(1000);
	for (int i = 0; i < 100; i += 2)
		free(p[i]);
	for (int i = 0; i < 10; i++)
		small[i] = malloc(100);
	for (int i = 0; i < 10; i++)
		free(small[i]);
	struct mallinfo2 after = mallinfo2();
	struct mallinfo after1 = mallinfo();
	int trim = malloc_trim(0);
	struct mallinfo2 trimmed = mallinfo2();
	/* what each accepts, without changing what later calls see much:
	 * values glibc takes, values it refuses, a parameter it does not know */
	static const struct { const char *name; int param, value; } opts[] = {
		{ "M_MXFAST.64", M_MXFAST, 64 },       { "M_MXFAST.1000", M_MXFAST, 1000 },
		{ "M_MXFAST.-1", M_MXFAST, -1 },       { "M_TRIM_THRESHOLD", M_TRIM_THRESHOLD, 256 << 10 },
		{ "M_TOP_PAD", M_TOP_PAD, 128 << 10 }, { "M_MMAP_THRESHOLD", M_MMAP_THRESHOLD, 256 << 10 },
		{ "M_MMAP_THRESHOLD.64M", M_MMAP_THRESHOLD, 64 << 20 },
		{ "M_MMAP_MAX", M_MMAP_MAX, 65536 },   { "M_CHECK_ACTION", M_CHECK_ACTION, 3 },
		{ "M_PERTURB", M_PERTURB, 0 },         { "M_ARENA_TEST", M_ARENA_TEST, 8 },
		{ "M_ARENA_TEST.0", M_ARENA_TEST, 0 }, { "M_ARENA_MAX", M_ARENA_MAX, 64 },
		{ "M_ARENA_MAX.-1", M_ARENA_MAX, -1 }, { "unknown.12345", 12345, 1 },
	};
	int said[sizeof opts / sizeof opts[0]];
	for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
		said[i] = mallopt(opts[i].param, opts[i].value);
	put2("before", before);
	put1("before", before1);
	put2("after", after);
	put1("after", after1);
	printf("malloc_trim %d\n", trim);
	put2("trimmed", trimmed);
	for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
		printf("mallopt.%s %d\n", opts[i].name, said[i]);
	printf("malloc_info.EINVAL %d\n", malloc_info(1, stdout));
	fflush(stdout);
	malloc_stats();
	printf("malloc_info\n");
	malloc_info(0, stdout);
	for (int i = 1; i < 100; i += 2)
		free(p[i]);
	free(big);
	return 0;
}

static pthread_barrier_t all_in, done;
static void *volatile held[8];  /* volatile: the compiler keeps each malloc */

static void *thread_main(void *arg)
{
	size_t i = (size_t)arg;
	held[i] = malloc(64);
	pthread_barrier_wait(&all_in);  /* every thread holds an arena at once */
	pthread_barrier_wait(&done);
	free(held[i]);
	return NULL;
}

static int arena_probe(int max)
{
	if (max > 0 && mallopt(M_ARENA_MAX, max) != 1)
		return printf("mallopt(M_ARENA_MAX, %d) refused\n", max), 1;
	held[7] = malloc(64);
	free(held[7]);
	enum { THREADS = 4 };
	pthread_t t[THREADS];
	pthread_barrier_init(&all_in, NULL, THREADS + 1);
	pthread_barrier_init(&done, NULL, THREADS + 1);
	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, thread_main, (void *)(size_t)i))
			return printf("pthread_create failed\n"), 1;
	pthread_barrier_wait(&all_in);
	char *xml = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&xml, &len);
	int rc = f ? malloc_info(0, f) : -1;
	if (f)
		fclose(f);
	pthread_barrier_wait(&done);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	int heaps = 0;
	for (const char *at = xml; at && (at = strstr(at, "<heap nr=")); at++)
		heaps++;
	printf("malloc_info %d heaps %d\n", rc, heaps);
	free(xml);
	return 0;
}

/* A thread that fills its cache: blocks of ten sizes, freed. */
static void *cache_filler(void *arg)
{
	static __thread void *volatile b[10];
	for (int i = 0; i < 10; i++)
		b[i] = malloc((size_t)(i + 1) * 48);
	for (int i = 0; i < 10; i++)
		free(b[i]);
	return arg;
}

/* Threads that end one after the other: what they cached must go back,
 * so the bytes in use after the last are those after the first. */
static int thread_probe(int rounds)
{
	size_t first = 0;
	for (int i = 0; i < rounds; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, cache_filler, NULL))
			return printf("pthread_create failed\n"), 1;
		pthread_join(t, NULL);
		if (i == 0)
			first = mallinfo2().uordblks;
	}
	size_t last = mallinfo2().uordblks;
	printf("uordblks after the first thread %zu, after %d %zu\n", first, rounds, last);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "heap"))
		return heap_probe();
	if (argc >= 3 && !strcmp(argv[1], "arenas"))
		return arena_probe(atoi(argv[2]));
	if (argc >= 3 && !strcmp(argv[1], "threads"))
		return thread_probe(atoi(argv[2]));
	fprintf(stderr, "usage: malloc_api_probe heap | arenas N | threads N\n");
	return 2;
}
