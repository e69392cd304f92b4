/* costs: what the operations an allocator is built from cost on this
 * machine, for the book's chapter 17 (the cost model).
 *
 *   costs count CASE N       run N operations of CASE once, then print how
 *                            many minor page faults they made: for callgrind
 *                            (bench/costs.sh counts the instructions of N
 *                            and 2N operations and takes the difference)
 *   costs time ROUNDS [CASE...]
 *                            time every CASE (default: all) in each of
 *                            ROUNDS rounds, the order turned by one place a
 *                            round; print per case the median ns per
 *                            operation and the median of the per-round
 *                            ratios to the round's `pair`
 *   costs list               the cases, one a line, with what they do
 *
 * The cases:
 *   pair      malloc(32) then free: under glibc a tcache hit, under
 *             LD_PRELOAD whatever the preloaded allocator's fast path is
 *   pair-mt   the same once another thread has been started and joined:
 *             glibc then locks an arena on every call that reaches one
 *   syscall   syscall(SYS_getppid): one trip into the kernel and back
 *   mmap      mmap of one anonymous page, then munmap, the page never touched
 *   fault     the first write to a fresh anonymous page (the region mapped
 *             beforehand, outside the count): one minor fault, a zeroed page
 *   dontneed  madvise(MADV_DONTNEED) of one resident page
 *   apart     (time only) two threads on two CPUs, each writing its own
 *             counter, the counters 128 bytes apart: no line shared
 *   bounce    (time only) the same with the counters in one 64-byte line:
 *             false sharing, the line moved between the CPUs at each write
 *             (both timed in batches of writes, a batch kept only when the
 *             other thread wrote meanwhile: the median of those batches)
 *   pairs2    (time only) two threads on two CPUs, each making pairs at
 *             once; run it under GLIBC_TUNABLES to set the tcache and arenas
 *
 * The program uses the C library's malloc, so one binary runs under every
 * allocator through LD_PRELOAD, and it maps its own pages (it measures the
 * kernel, not heaplab's page source).  Times on a shared machine move: a
 * ratio within one round moves less, the median of several rounds less
 * again; instruction counts (callgrind, user space only) do not move. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include "bench_util.h"

enum { PAIR_SIZE = 32, REGION_PAGES = 4096, LINE = 64 };

typedef struct cost_case {
	const char *name;
	const char *what;
	long batch;                   /* operations per timed round */
	void (*run)(long n);          /* performs n operations */
	int threads;                  /* 2: needs two CPUs, time only */
} cost_case_t;

static size_t page_size;


static void *costs_map(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		fprintf(stderr, "costs: mmap of %zu bytes failed: %s\n", bytes, strerror(errno));
		exit(2);
	}
	/* 4 KiB faults, not one 2 MiB fault for a whole aligned stretch */
	madvise(p, bytes, MADV_NOHUGEPAGE);
	return p;
}

/* ---- the single-threaded cases ------------------------------------- */

static void run_pair(long n)
{
	for (long i = 0; i < n; i++) {
		void *p = malloc(PAIR_SIZE);
		/* p escapes, so the compiler keeps the call pair */
		__asm__ volatile("" : : "r"(p) : "memory");
		free(p);
	}
}

static void *no_work(void *arg)
{
	return arg;
}

/* The pairs again, once one other thread has run: from then on glibc
 * takes an arena's lock wherever it would have skipped it in a process
 * that never made a thread (its single-thread shortcut). */
static void run_pair_mt(long n)
{
	static int started;
	pthread_t t;
	if (!started++ && pthread_create(&t, NULL, no_work, NULL) == 0)
		pthread_join(t, NULL);
	run_pair(n);
}

static void run_syscall(long n)
{
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
}

static void run_mmap(long n)
{
	for (long i = 0; i < n; i++) {
		void *p = mmap(NULL, page_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			fprintf(stderr, "costs: mmap failed: %s\n", strerror(errno));
			exit(2);
		}
		munmap(p, page_size);
	}
}

/* The untimed part of fault and dontneed: a region of up to REGION_PAGES
 * pages, fresh (fault) or all resident (dontneed). */
static char *region_fresh(long pages)
{
	return costs_map((size_t)pages * page_size);
}

static void region_touch(char *r, long pages)
{
	for (long i = 0; i < pages; i++)
		r[(size_t)i * page_size] = 1;
}

/* The timed parts, one page an operation. */
static void fault_pages(char *r, long pages)
{
	for (long i = 0; i < pages; i++)
		((volatile char *)r)[(size_t)i * page_size] = 1;
}

static void dontneed_pages(char *r, long pages)
{
	for (long i = 0; i < pages; i++)
		madvise(r + (size_t)i * page_size, page_size, MADV_DONTNEED);
}

/* count mode: the region's set-up is counted too (one mmap, one munmap
 * per REGION_PAGES operations), which the difference of two counts
 * spreads over the operations */
static void run_fault(long n)
{
	for (long done = 0; done < n; done += REGION_PAGES) {
		long k = n - done < REGION_PAGES ? n - done : REGION_PAGES;
		char *r = region_fresh(k);
		fault_pages(r, k);
		munmap(r, (size_t)k * page_size);
	}
}

static void run_dontneed(long n)
{
	for (long done = 0; done < n; done += REGION_PAGES) {
		long k = n - done < REGION_PAGES ? n - done : REGION_PAGES;
		char *r = region_fresh(k);
		region_touch(r, k);
		dontneed_pages(r, k);
		munmap(r, (size_t)k * page_size);
	}
}

/* ---- two threads, one counter each ---------------------------------- */

static int two_cpus[2];
static char *counters;            /* page-aligned; the counters inside it */
static size_t counter_gap;        /* bytes from thread 0's counter to 1's */
static long writes_each;
static pthread_barrier_t start_line;

/* A thread's writes are timed in batches, and a batch counts only when the
 * other thread made at least half as many writes meanwhile: on a machine
 * shared with other work the two threads are often not running at once,
 * and a batch written alone shares nothing. */
enum { BATCH = 100000, MAX_BATCHES = 1024 };
static double batch_ns[2][MAX_BATCHES];   /* ns a write, batches run together */
static int batches[2], batches_tried[2];

static volatile long *counter_of(int k)
{
	return (volatile long *)(counters + (size_t)k * counter_gap);
}

static void *writer(void *arg)
{
	int me = (int)(intptr_t)arg;
	volatile long *mine = counter_of(me), *other = counter_of(1 - me);
	bench_pin(two_cpus[me], "costs");
	batches[me] = batches_tried[me] = 0;
	pthread_barrier_wait(&start_line);
	for (long done = 0; done < writes_each; done += BATCH) {
		long seen = *other;
		double t0 = bench_now();
		for (long i = 0; i < BATCH; i++)
			*mine += 1;
		double t = bench_now() - t0;
		if (batches_tried[me]++ < MAX_BATCHES && *other - seen >= BATCH / 2)
			batch_ns[me][batches[me]++] = t * 1e9 / BATCH;
	}
	return NULL;
}

/* The median ns a write of the batches both threads ran together, or -1
 * when there was none. */
static double two_median(void)
{
	double all[2 * MAX_BATCHES];
	int n = 0;
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < batches[k]; i++)
			all[n++] = batch_ns[k][i];
	return n ? bench_median(all, n) : -1;
}

/* Runs @fn on two threads (argument 0 and 1), each to make @n operations
 * from a common start line, and waits for both. */
static void run_both(void *(*fn)(void *), long n)
{
	pthread_t t[2];
	writes_each = n;
	pthread_barrier_init(&start_line, NULL, 2);
	for (intptr_t k = 0; k < 2; k++)
		pthread_create(&t[k], NULL, fn, (void *)k);
	for (int k = 0; k < 2; k++)
		pthread_join(t[k], NULL);
	pthread_barrier_destroy(&start_line);
}

/* Two threads write @n times each to counters @gap bytes apart. */
static void run_two(long n, size_t gap)
{
	counter_gap = gap;
	memset(counters, 0, 2 * page_size);
	run_both(writer, n);
}

static void run_apart(long n) { run_two(n, 2 * LINE); }
static void run_bounce(long n) { run_two(n, sizeof(long)); }

static void *pairs_thread(void *arg)
{
	bench_pin(two_cpus[arg != NULL], "costs");
	pthread_barrier_wait(&start_line);
	run_pair(writes_each);
	return NULL;
}

/* Two threads on two CPUs, each making @n malloc/free pairs at once: with
 * the arenas and the tcache as the environment sets them. */
static void run_pairs2(long n)
{
	run_both(pairs_thread, n);
}

static const cost_case_t cases[] = {
	{ "pair", "malloc(32) then free (glibc: a tcache hit)", 2000000, run_pair, 1 },
	{ "pair-mt", "the same once another thread has run (glibc: no single-thread shortcut)", 2000000, run_pair_mt, 1 },
	{ "syscall", "syscall(SYS_getppid)", 300000, run_syscall, 1 },
	{ "mmap", "mmap of one anonymous page, then munmap, never touched", 20000, run_mmap, 1 },
	{ "fault", "first write to a fresh anonymous page (a minor fault)", 2 * REGION_PAGES, run_fault, 1 },
	{ "dontneed", "madvise(MADV_DONTNEED) of one resident page", 2 * REGION_PAGES, run_dontneed, 1 },
	{ "apart", "two threads on two CPUs, counters in separate lines (per write)", 20000000, run_apart, 2 },
	{ "bounce", "two threads on two CPUs, counters in one line (per write)", 20000000, run_bounce, 2 },
	{ "pairs2", "two threads on two CPUs, each making pairs (per pair of one thread)", 1000000, run_pairs2, 2 },
};
enum { NCASES = sizeof cases / sizeof cases[0] };

static const cost_case_t *case_named(const char *name)
{
	for (int i = 0; i < NCASES; i++)
		if (strcmp(cases[i].name, name) == 0)
			return &cases[i];
	return NULL;
}

/* ---- timing --------------------------------------------------------- */

static long together[2];   /* batches run by both threads at once, of all */

/* Seconds one batch of @c takes.  fault and dontneed time only the
 * per-page loop, their regions prepared and unmapped outside the clock. */
static double time_batch(const cost_case_t *c)
{
	long n = c->batch;
	if (c->run == run_fault || c->run == run_dontneed) {
		double total = 0;
		for (long done = 0; done < n; done += REGION_PAGES) {
			char *r = region_fresh(REGION_PAGES);
			if (c->run == run_dontneed)
				region_touch(r, REGION_PAGES);
			double t0 = bench_now();
			if (c->run == run_fault)
				fault_pages(r, REGION_PAGES);
			else
				dontneed_pages(r, REGION_PAGES);
			total += bench_now() - t0;
			munmap(r, (size_t)REGION_PAGES * page_size);
		}
		return total;
	}
	double t0 = bench_now();
	c->run(n);
	double wall = bench_now() - t0;
	if (c->run == run_apart || c->run == run_bounce) {
		double m = two_median();
		together[0] += batches[0] + batches[1];
		together[1] += batches_tried[0] + batches_tried[1];
		return m < 0 ? wall : m * (double)n / 1e9;
	}
	return wall;
}


/* bounce against apart, when both ran: the median of the rounds' ratios */
static void print_sharing(int rounds, double ns[][rounds], int nwant, const cost_case_t **want)
{
	int a = -1, b = -1;
	for (int i = 0; i < nwant; i++) {
		if (want[i]->run == run_apart)
			a = i;
		if (want[i]->run == run_bounce)
			b = i;
	}
	if (a < 0 || b < 0)
		return;
	double v[rounds];
	for (int r = 0; r < rounds; r++)
		v[r] = ns[b][r] / ns[a][r];
	printf("\nbounce / apart: %.1f (median of %d rounds' ratios; %ld of %ld batches of %d writes ran with both threads at once)\n",
	       bench_median(v, rounds), rounds, together[0], together[1], BATCH);
}

static int time_mode(int rounds, const cost_case_t **want, int nwant)
{
	const cost_case_t *pair = case_named("pair");
	double ns[NCASES + 1][rounds], ratio[NCASES + 1][rounds];
	run_pair(pair->batch);   /* warm: the allocator's first calls */
	for (int r = 0; r < rounds; r++) {
		double pair_ns = 0;
		for (int k = 0; k < nwant + 1; k++) {
			/* the pair is timed in every round, at a turning place */
			int i = (k + r) % (nwant + 1);
			const cost_case_t *c = i == nwant ? pair : want[i];
			double v = time_batch(c) * 1e9 / (double)c->batch;
			ns[i][r] = v;
			if (c == pair)
				pair_ns = v;
		}
		for (int i = 0; i < nwant; i++)
			ratio[i][r] = pair_ns > 0 ? ns[i][r] / pair_ns : 0;
		fprintf(stderr, "costs: round %d of %d\r", r + 1, rounds);
	}
	fprintf(stderr, "\n");
	printf("| case | what | ns per operation (median of %d rounds) | ratio to pair (median of the rounds' ratios) |\n"
	       "|---|---|---|---|\n", rounds);
	printf("| pair | %s | %.1f | 1 |\n", pair->what, bench_median(ns[nwant], rounds));
	for (int i = 0; i < nwant; i++)
		printf("| %s | %s | %.1f | %.3g |\n", want[i]->name, want[i]->what,
		       bench_median(ns[i], rounds), bench_median(ratio[i], rounds));
	print_sharing(rounds, ns, nwant, want);
	return 0;
}

/* ---- the command line ----------------------------------------------- */

static int usage(void)
{
	fprintf(stderr, "usage: costs count CASE N | costs time ROUNDS [CASE...] | costs list\n");
	return 2;
}

static long positive(const char *s, const char *what)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || *end || v <= 0) {
		fprintf(stderr, "costs: %s must be a positive number, not '%s'\n", what, s);
		exit(2);
	}
	return v;
}

static const cost_case_t *known(const char *name)
{
	const cost_case_t *c = case_named(name);
	if (!c) {
		fprintf(stderr, "costs: unknown case '%s' (costs list names them)\n", name);
		exit(2);
	}
	return c;
}

static int count_mode(const cost_case_t *c, long n)
{
	if (c->threads > 1) {
		fprintf(stderr, "costs: %s is timed only (two threads), not counted\n", c->name);
		return 2;
	}
	struct rusage before, after;
	getrusage(RUSAGE_SELF, &before);
	c->run(n);
	getrusage(RUSAGE_SELF, &after);
	printf("%s %ld operations, %ld minor faults\n", c->name, n, after.ru_minflt - before.ru_minflt);
	return 0;
}

/* Sets up the two threads' CPUs and counters; 0 when there are not two. */
static int two_ready(void)
{
	if (bench_allowed_cpus(two_cpus, 2) < 2)
		return 0;
	counters = costs_map(2 * page_size);
	return 1;
}

int main(int argc, char **argv)
{
	bench_static_stdout();
	page_size = (size_t)sysconf(_SC_PAGESIZE);
	if (argc == 2 && strcmp(argv[1], "list") == 0) {
		for (int i = 0; i < NCASES; i++)
			printf("%-9s %s\n", cases[i].name, cases[i].what);
		return 0;
	}
	if (argc == 4 && strcmp(argv[1], "count") == 0)
		return count_mode(known(argv[2]), positive(argv[3], "N"));
	if (argc < 3 || strcmp(argv[1], "time") != 0)
		return usage();
	int rounds = (int)positive(argv[2], "ROUNDS");
	const cost_case_t *want[NCASES];
	int nwant = 0, two = two_ready();
	for (int i = 3; i < argc; i++)
		if (strcmp(argv[i], "pair") != 0)
			want[nwant++] = known(argv[i]);
	for (int i = 0; argc == 3 && i < NCASES; i++)
		if (cases[i].run != run_pair && cases[i].run != run_pairs2)
			want[nwant++] = &cases[i];
	for (int i = 0; i < nwant; i++)
		if (want[i]->threads > 1 && !two) {
			fprintf(stderr, "costs: %s needs two CPUs to run on\n", want[i]->name);
			return 2;
		}
	return time_mode(rounds, want, nwant);
}
