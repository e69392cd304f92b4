/* claims_jeprof DUMPFILE [COUNT SIZE]: does jemalloc's heap profiler charge
 * bytes to the code that allocated them?  One named function allocates
 * COUNT blocks of SIZE bytes (default 20,000 x 1,000: 20 MB) and keeps
 * them; the probe then asks jemalloc for a heap profile (mallctl
 * "prof.dump") and adds up the live bytes of every stack that passes
 * through that function, whose address range it reads from its own symbol
 * table (dladdr1; the probe is linked with -export-dynamic).
 *
 * Run it on jemalloc with MALLOC_CONF=prof:true,lg_prof_sample:0 (every
 * allocation sampled, so the figures are exact).  Prints requested=,
 * attributed= (bytes of the stacks through the function), elsewhere=
 * (bytes of the other stacks), stacks=.  Exit 77 when malloc is not
 * jemalloc or jemalloc was built without profiling. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*mallctl_fn)(const char *, void *, size_t *, void *, size_t);

/* The allocation site the profile must name.  Not static and never
 * inlined, so it has an address range of its own in the symbol table, and
 * visible (heaplab builds with -fvisibility=hidden), so dladdr finds it. */
__attribute__((noinline, visibility("default"))) void **claims_prof_named_allocator(size_t count, size_t size)
{
	void **blocks = calloc(count, sizeof *blocks);
	for (size_t i = 0; blocks && i < count; i++)
		if (!(blocks[i] = malloc(size)))
			return NULL;
	return blocks;
}

static void skip(const char *why)
{
	fprintf(stderr, "claims_jeprof: %s\n", why);
	exit(77);
}

static void die(const char *why)
{
	fprintf(stderr, "claims_jeprof: %s\n", why);
	exit(2);
}

/* Reads the dump: each "@ addr addr ..." line is a stack, and the
 * "t*: objects: bytes [...]" line after it its live totals. */
static void sum_profile(const char *path, uintptr_t lo, uintptr_t hi,
	unsigned long long *inside, unsigned long long *outside, unsigned *stacks)
{
	FILE *f = fopen(path, "r");
	if (!f)
		die("the heap profile was not written");
	char line[8192];
	int through = -1; /* -1: before the first stack */
	while (fgets(line, sizeof line, f)) {
		if (!strncmp(line, "MAPPED_LIBRARIES", 16))
			break;
		if (line[0] == '@') {
			through = 0;
			for (char *s = line + 1, *end; *s && *s != '\n'; s = end) {
				uintptr_t a = (uintptr_t)strtoull(s, &end, 16);
				if (end == s)
					break;
				through |= a >= lo && a < hi;
			}
			continue;
		}
		unsigned long long objs, bytes;
		if (through >= 0 && sscanf(line, " t*: %llu: %llu", &objs, &bytes) == 2) {
			*(through ? inside : outside) += bytes;
			*stacks += through ? 1 : 0;
			through = -1;
		}
	}
	fclose(f);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		die("usage: claims_jeprof DUMPFILE [COUNT SIZE]");
	size_t count = argc > 2 ? strtoul(argv[2], NULL, 10) : 20000;
	size_t size = argc > 3 ? strtoul(argv[3], NULL, 10) : 1000;
	mallctl_fn mallctl = (mallctl_fn)dlsym(RTLD_DEFAULT, "mallctl");
	if (!mallctl)
		skip("malloc is not jemalloc (no mallctl)");
	bool prof = false;
	size_t len = sizeof prof;
	if (mallctl("opt.prof", &prof, &len, NULL, 0))
		skip("this jemalloc was built without profiling (no opt.prof)");
	if (!prof)
		skip("profiling is off: run with MALLOC_CONF=prof:true,lg_prof_sample:0");

	Dl_info info;
	const ElfW(Sym) *sym = NULL;
	if (!dladdr1((void *)claims_prof_named_allocator, &info, (void **)&sym, RTLD_DL_SYMENT)
		|| !sym || !info.dli_sname)
		die("the probe cannot see its own symbol (link it with -export-dynamic)");
	uintptr_t lo = (uintptr_t)info.dli_saddr, hi = lo + sym->st_size;

	void **blocks = claims_prof_named_allocator(count, size);
	if (!blocks)
		die("malloc failed");
	const char *path = argv[1];
	if (mallctl("prof.dump", NULL, NULL, (void *)&path, sizeof path))
		die("mallctl prof.dump failed");
	unsigned long long inside = 0, outside = 0;
	unsigned stacks = 0;
	sum_profile(path, lo, hi, &inside, &outside, &stacks);
	printf("function=%s\nrequested=%zu\nattributed=%llu\nelsewhere=%llu\nstacks=%u\n",
		info.dli_sname, count * size, inside, outside, stacks);
	for (size_t i = 0; i < count; i++)
		free(blocks[i]);
	free(blocks);
	return 0;
}
