/*
 * Lab 14: one planted heap bug per run, on the allocator you choose, to
 * see which tool notices it.
 *
 *   bugs [--libc | --policy=NAME] [--conf=CONF] [--annotate] CASE
 *
 * CASE
 *   clean            no bug (the control: every tool must stay quiet)
 *   overflow         8 bytes written just past a 40-byte request
 *   use-after-free   8 bytes written into a 48-byte block after its free
 *   overrun          a memset 8 KiB too long, from a 64 KiB block that is
 *                    the last of the heap: it runs off the end of the
 *                    memory the allocator has mapped
 *
 * --libc           the blocks come from malloc and free: the C library's,
 *                  or the tool's own when one replaces them (AddressSanitizer,
 *                  valgrind's memcheck), or heaplab's under LD_PRELOAD
 * --policy=NAME    the blocks come from a heaplab heap of that policy
 *                  (hl_malloc, hl_free; student by default), CONF its options
 * --annotate       tell the tool where each heaplab block begins and ends, as
 *                  an allocator built for the tool would: AddressSanitizer's
 *                  poisoning when this program is built with
 *                  -fsanitize=address (bugs-asan), valgrind's client requests
 *                  when <valgrind/memcheck.h> was installed at build time and
 *                  the program runs under valgrind
 * --tools          print which of the two this build can annotate for
 *
 * A run that nothing stops prints "survived CASE" and exits 0.  The
 * annotations are this program's, around the allocator's calls: the
 * allocator itself (heaplab's core and policies) has none.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "heaplab.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define BUGS_ASAN 1
#else
#define BUGS_ASAN 0
#endif
#if !BUGS_ASAN && defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define BUGS_VALGRIND 1
#endif
#endif
#ifndef BUGS_VALGRIND
#define BUGS_VALGRIND 0
#endif

static hl_heap_t *heap;   /* NULL: --libc */
static int annotate;

/* Returns its argument where the compiler cannot see it, so that a bug is
 * compiled as written. */
static void *launder(void *p)
{
	__asm__ volatile("" : "+r"(p));
	return p;
}

static void *get(size_t n)
{
	if (!heap)
		return malloc(n);
	char *p = hl_malloc(heap, n);
	if (!p) {
		fprintf(stderr, "bugs: hl_malloc(%zu) failed: %s\n", n, hl_last_error());
		exit(2);
	}
	if (annotate) {
		size_t usable = hl_usable_size(heap, p);
#if BUGS_ASAN
		/* the request is the program's; the slack after it is not */
		ASAN_UNPOISON_MEMORY_REGION(p, n);
		ASAN_POISON_MEMORY_REGION(p + n, usable - n);
#elif BUGS_VALGRIND
		VALGRIND_MALLOCLIKE_BLOCK(p, n, 0, 0);
		VALGRIND_MAKE_MEM_NOACCESS(p + n, usable - n);
#else
		(void)usable;
#endif
	}
	return p;
}

static void put(void *p)
{
	if (!heap) {
		free(p);
		return;
	}
	size_t usable = hl_usable_size(heap, p);
	hl_free(heap, p);
	if (annotate) {
#if BUGS_ASAN
		/* after the allocator's own writes (it is not instrumented) */
		ASAN_POISON_MEMORY_REGION(p, usable);
#elif BUGS_VALGRIND
		VALGRIND_FREELIKE_BLOCK(p, 0);
		VALGRIND_MAKE_MEM_NOACCESS(p, usable);
#else
		(void)usable;
#endif
	}
}

int main(int argc, char **argv)
{
	const char *policy = "student", *conf = NULL, *what = NULL;
	int libc = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--libc"))
			libc = 1;
		else if (!strncmp(argv[i], "--policy=", 9))
			policy = argv[i] + 9;
		else if (!strncmp(argv[i], "--conf=", 7))
			conf = argv[i] + 7;
		else if (!strcmp(argv[i], "--annotate"))
			annotate = 1;
		else if (!strcmp(argv[i], "--tools")) {
#if BUGS_ASAN
			puts("asan yes");
#else
			puts("asan no");
#endif
#if BUGS_VALGRIND
			puts("valgrind-annotations yes");
#else
			puts("valgrind-annotations no");
#endif
			return 0;
		}
		else if (argv[i][0] != '-' && !what)
			what = argv[i];
		else {
			fprintf(stderr, "bugs: unknown argument '%s'\n", argv[i]);
			return 2;
		}
	}
	if (!what) {
		fprintf(stderr, "usage: bugs [--libc | --policy=NAME] [--conf=CONF] [--annotate] clean|overflow|use-after-free|overrun\n");
		return 2;
	}
	if (!libc && !(heap = hl_heap_new(policy, conf))) {
		fprintf(stderr, "bugs: no heap of policy %s: %s\n", policy, hl_last_error());
		return 2;
	}
	/* a few live blocks around the one the bug hits, as in a program */
	void *before = get(40);
	if (!strcmp(what, "clean")) {
		char *p = get(40);
		memset(p, 'x', 40);
		put(p);
	} else if (!strcmp(what, "overflow")) {
		char *p = get(40);
		memset(launder(p), 'x', 48);
		put(p);
	} else if (!strcmp(what, "use-after-free")) {
		char *p = get(48), *again = launder(p);
		put(p);
		memset(again, 'x', 8);
	} else if (!strcmp(what, "overrun")) {
		char *p = get(64 << 10);
		memset(launder(p), 'x', (64 << 10) + (8 << 10));
		put(p);
	} else {
		fprintf(stderr, "bugs: unknown case '%s'\n", what);
		return 2;
	}
	put(get(40));
	put(before);
	printf("survived %s\n", what);
	return 0;
}
