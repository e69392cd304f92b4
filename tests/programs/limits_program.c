/* A program that runs out of memory on purpose, for tests/programs/limits.sh: the
 * same binary runs on the real glibc and, through LD_PRELOAD, on every
 * policy.  One mode per run:
 *
 *   limits_program first      RLIMIT_DATA set to 1 byte (here: under prlimit
 *                             this kernel does not even start /bin/true),
 *                             then one malloc, the program's first (the
 *                             heap is built then): NULL with ENOMEM, or a
 *                             block; with the limit lifted, malloc works
 *   limits_program again      one malloc (the heap is built), RLIMIT_DATA
 *                             set to 1 byte, then four mallocs of growing sizes
 *                             twice over: each NULL with ENOMEM or a block
 *                             that can be written; then as for first
 *   limits_program fill T     T threads allocate (malloc of many sizes,
 *                             realloc, aligned_alloc) until the first NULL,
 *                             which must say ENOMEM; then everything is
 *                             freed and each thread allocates again
 *   limits_program free-errno free keeps errno, also when its munmap fails
 *                             at the process's mapping limit (the way
 *                             glibc's tst-free-errno makes it fail)
 *
 * Prints what it saw, one line each ("null seen" when an allocation failed
 * as it should); on heaplab it then runs the model's checker (hl_check,
 * looked up at run time) and prints "checker clean" or the problems.  Exits
 * 0 when every result was allowed, 1 otherwise. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

static int wrong;
static int nulls;
static size_t held;      /* bytes the threads held when they met NULL */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* Writes a line with write(2): stdio may need memory there is none of. */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#include <stdarg.h>
static void say(const char *fmt, ...)
{
	char line[256];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	if (n > 0)
		(void)!write(1, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

/* A NULL must come with ENOMEM. */
static void failed(const char *what, size_t n, int err)
{
	pthread_mutex_lock(&lock);
	nulls++;
	if (err != ENOMEM) {
		say("%s(%zu) returned NULL with errno %d, not ENOMEM\n", what, n, err);
		wrong = 1;
	}
	pthread_mutex_unlock(&lock);
}

static void touch(void *p, size_t n)
{
	((volatile char *)p)[0] = 1;
	((volatile char *)p)[n - 1] = 1;
}

/* A statistic of the model's (hl_stat, looked up at run time); -1 on the
 * real allocator. */
static double model_stat(const char *name)
{
	void *(*default_heap)(void);
	int (*stat)(void *, const char *, double *);
	*(void **)&default_heap = dlsym(RTLD_DEFAULT, "hl_default_heap");
	*(void **)&stat = dlsym(RTLD_DEFAULT, "hl_stat");
	double v = -1;
	if (!default_heap || !stat || !default_heap() || stat(default_heap(), name, &v) != 0)
		return -1;
	return v;
}

static int checker(void)
{
	void *(*default_heap)(void);
	int (*check)(void *, FILE *);
	*(void **)&default_heap = dlsym(RTLD_DEFAULT, "hl_default_heap");
	*(void **)&check = dlsym(RTLD_DEFAULT, "hl_check");
	if (!default_heap || !check)
		return 0;                 /* the real allocator: no checker */
	void *h = default_heap();
	if (!h) {
		say("heaplab: no default heap\n");
		return 1;
	}
	int bad = check(h, stderr);
	if (bad)
		say("checker found %d problems\n", bad);
	else
		say("checker clean\n");
	return bad != 0;
}

/* ---- first, again ------------------------------------------------------- */

static void some_mallocs(int count)
{
	for (int i = 0; i < count; i++) {
		size_t n = (size_t)100 << (3 * i);
		errno = 0;
		void *p = malloc(n);
		if (!p)
			failed("malloc", n, errno);
		else
			touch(p, n);
	}
}

/* ---- fill --------------------------------------------------------------- */

/* A thread's blocks form a list through their first word: keeping them
 * needs no memory of the program's own. */
static void *fill(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg * 2654435761u + 1;
	void *list = NULL;
	size_t kept = 0, held_here = 0;
	for (int round = 0; round < 2; round++) {
		for (;;) {
			seed = seed * 1103515245u + 12345u;
			unsigned r = seed >> 8;
			size_t n = 16 + (r % 7 == 0 ? r % (1 << 20) : r % 4096);
			void *p;
			errno = 0;
			switch (r % 5) {
			case 0:
				p = aligned_alloc(512, (n + 511) & ~(size_t)511);
				break;
			case 1:
				p = malloc(n / 2 + 16);
				if (p) {
					void *q = realloc(p, n);
					if (!q) {
						int e = errno;
						free(p);
						errno = e;
					}
					p = q;
				}
				break;
			default:
				p = malloc(n);
			}
			if (!p) {
				failed("an allocation", n, errno);
				if (round == 0) {
					pthread_mutex_lock(&lock);
					held += held_here;
					pthread_mutex_unlock(&lock);
				}
				break;
			}
			held_here += n;
			touch(p, n);
			*(void **)p = list;
			list = p;
			kept++;
			/* the second round stops early: the heap works again */
			if (round == 1 && kept > 64)
				break;
		}
		while (list) {
			void *next = *(void **)list;
			free(list);
			list = next;
		}
		kept = 0;
	}
	return NULL;
}

/* ---- free-errno --------------------------------------------------------- */

/* The mapping of /proc/self/maps that holds @p p: its first and last byte. */
static int mapping_of(const void *p, uintptr_t *start, uintptr_t *end)
{
	int fd = open("/proc/self/maps", O_RDONLY);
	static char buf[1 << 20];
	size_t len = 0;
	ssize_t got;
	while (fd >= 0 && len < sizeof buf - 1 && (got = read(fd, buf + len, sizeof buf - 1 - len)) > 0)
		len += (size_t)got;
	if (fd >= 0)
		close(fd);
	buf[len] = 0;
	for (char *l = buf; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l)) {
		unsigned long a, b;
		if (sscanf(l, "%lx-%lx", &a, &b) == 2 && (uintptr_t)p >= a && (uintptr_t)p < b) {
			*start = a;
			*end = b;
			return 0;
		}
	}
	return -1;
}

static int free_errno(void)
{
	errno = 1789;
	free(NULL);
	if (errno != 1789) {
		say("free(NULL) changed errno\n");
		wrong = 1;
	}
	size_t page = (size_t)sysconf(_SC_PAGESIZE), big = 0x1000000;
	for (int i = 0; i < 2; i++) {
		void *volatile p = malloc(big - 0x100);
		errno = 1789;
		free(p);
		if (errno != 1789) {
			say("free of a large block changed errno\n");
			wrong = 1;
		}
	}
	/* a large block, and its mapping grown by a page on each side so that
	 * giving the block's own pages back splits the mapping in three.  New
	 * mappings go below the older ones: a bumper mapped first takes the
	 * place above the block, so the page taken there is the bumper's */
	char *bumper = mmap(NULL, big, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *p = malloc(big - 0x100);
	uintptr_t start, end, s2, e2;
	if (!p || mapping_of(p, &start, &end) < 0) {
		say("no mapping holds the large block\n");
		return 1;
	}
	int merged = 0;
	for (int attempt = 0; attempt < 2 && !merged; attempt++) {
		int flags = MAP_PRIVATE | MAP_ANONYMOUS | (attempt ? MAP_NORESERVE : 0);
		bool in_bumper = bumper != MAP_FAILED && end >= (uintptr_t)bumper && end < (uintptr_t)bumper + big;
		void *lo = mmap((void *)(start - page), page, PROT_READ | PROT_WRITE, flags | MAP_FIXED_NOREPLACE, -1, 0);
		void *hi = mmap((void *)end, page, PROT_READ | PROT_WRITE,
				flags | (in_bumper ? MAP_FIXED : MAP_FIXED_NOREPLACE), -1, 0);
		merged = lo == (void *)(start - page) && hi == (void *)end && mapping_of(p, &s2, &e2) == 0 &&
			 s2 == start - page && e2 == end + page;
		if (!merged) {
			if (lo == (void *)(start - page))
				munmap(lo, page);
			if (hi == (void *)end)
				munmap(hi, page);
		}
	}
	say(merged ? "mapping grown on both sides\n" : "mapping could not be grown: no split tested\n");
	/* then as many mappings as the process may have (at most 65536) */
	char name[] = "/tmp/limits-program-XXXXXX";
	int fd = mkstemp(name);
	if (fd < 0) {
		say("cannot create a temporary file\n");
		return 1;
	}
	unlink(name);
	(void)!write(fd, "x", 1);
	static void *maps[65536];
	int nmaps = 0;
	while (nmaps < 65536 && (maps[nmaps] = mmap(NULL, page, PROT_READ, MAP_PRIVATE, fd, 0)) != MAP_FAILED)
		nmaps++;
	volatile uintptr_t where = (uintptr_t)p;      /* only its address, after free */
	double regions = model_stat("os.regions"), munmaps = model_stat("os.munmap_calls");
	errno = 1789;
	free(p);
	int after = errno;
	int still = mapping_of((void *)where, &s2, &e2) == 0;
	double regions_after = model_stat("os.regions"), munmaps_after = model_stat("os.munmap_calls");
	for (int i = 0; i < nmaps; i++)
		munmap(maps[i], page);
	close(fd);
	/* the model's page source tried to unmap the block's region and the
	 * kernel refused: the region must keep its record */
	if (still && munmaps_after > munmaps && regions_after < regions) {
		say("a failed munmap lost its region's record (%.0f regions before, %.0f after)\n", regions,
		    regions_after);
		wrong = 1;
	}
	if (after != 1789) {
		say("free changed errno to %d when the mapping limit was reached\n", after);
		wrong = 1;
	} else {
		say("free kept errno at the mapping limit%s\n", still ? " (its munmap failed)" : "");
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	if (!strcmp(mode, "first") || !strcmp(mode, "again")) {
		struct rlimit was, none;
		if (!strcmp(mode, "again")) {
			void *volatile warm = malloc(1);
			free(warm);
		}
		getrlimit(RLIMIT_DATA, &was);
		none = was;
		none.rlim_cur = 1;    /* 0 under a larger hard limit means no limit */
		if (setrlimit(RLIMIT_DATA, &none) != 0) {
			say("cannot set RLIMIT_DATA to 1 byte\n");
			return 2;
		}
		some_mallocs(!strcmp(mode, "first") ? 1 : 4);
		if (!strcmp(mode, "again"))
			some_mallocs(4);
		/* the limit lifted, the next call succeeds (the heap is built) */
		setrlimit(RLIMIT_DATA, &was);
		void *volatile after = malloc(100);
		if (!after) {
			say("malloc failed once RLIMIT_DATA was lifted\n");
			wrong = 1;
		}
		free(after);
	} else if (!strcmp(mode, "fill")) {
		struct rlimit as, data;
		if (getrlimit(RLIMIT_AS, &as) || getrlimit(RLIMIT_DATA, &data) ||
		    (as.rlim_cur == RLIM_INFINITY && data.rlim_cur == RLIM_INFINITY)) {
			say("fill runs only under RLIMIT_AS or RLIMIT_DATA (prlimit)\n");
			return 2;
		}
		int n = argc > 2 ? atoi(argv[2]) : 4;
		pthread_t t[64];
		if (n < 1 || n > 64)
			n = 4;
		int started = 0;
		for (int i = 0; i < n; i++)
			if (pthread_create(&t[started], NULL, fill, (void *)(uintptr_t)i) == 0)
				started++;
			else
				fill((void *)(uintptr_t)i);     /* no memory for a thread's stack */
		for (int i = 0; i < started; i++)
			pthread_join(t[i], NULL);
	} else if (!strcmp(mode, "free-errno")) {
		if (free_errno())
			return 1;
	} else {
		say("usage: limits_program first|again|fill THREADS|free-errno\n");
		return 2;
	}
	if (nulls)
		say("null seen\n");
	if (held)
		say("held %zu MiB at the first NULL\n", held >> 20);
	return checker() || wrong;
}
