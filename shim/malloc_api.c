/*
 * malloc_api.c -- the rest of the C library's malloc API in the preload
 * library: mallinfo, mallinfo2, mallopt, malloc_stats, malloc_info and
 * malloc_trim, each answered as the default heap's real allocator answers
 * it (malloc_api.h): by the policy's hl_libc_api_t where that allocator
 * exports the function, else by the C library's own, which is what a
 * program reaches under that allocator.  (malloc_usable_size, valloc,
 * pvalloc and memalign are the shim's, shim/shim.c.)
 */
#include "config.h"
#include <dlfcn.h>
#include <errno.h>
#include <string.h>
#include "heap_internal.h"
#include "malloc_api.h"
#include "shim.h"

#define SHIM_API __attribute__((visibility("default")))

/* Who answers: the policy (or the guest its delegate names) with its
 * state, or nobody (NULL: the C library's own). */
typedef struct answer {
	hl_heap_t *heap;
	void *st;
	const hl_libc_api_t *api;
} answer_t;

static answer_t who_answers(void)
{
	answer_t a = { hl_shim_heap(), NULL, NULL };
	if (!a.heap)
		return a;
	a.st = a.heap->state;
	a.api = a.heap->policy->libc_api;
	if (a.api && a.api->delegate) {
		void *gst = NULL;
		const hl_policy_t *g = a.api->delegate(a.st, &gst);
		a.st = gst;
		a.api = g ? g->libc_api : NULL;
	}
	return a;
}

/* The C library's function NAME (the next definition after ours). */
static void *libc_fn(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

static struct mallinfo2 libc_mallinfo2(void)
{
	struct mallinfo2 (*fn)(void) = (struct mallinfo2 (*)(void))libc_fn("mallinfo2");
	struct mallinfo2 m;
	memset(&m, 0, sizeof m);
	return fn ? fn() : m;
}

SHIM_API struct mallinfo2 mallinfo2(void)
{
	answer_t a = who_answers();
	struct mallinfo2 m;
	memset(&m, 0, sizeof m);
	if (!a.api || !a.api->mallinfo || !a.api->mallinfo2)
		return libc_mallinfo2();
	a.api->mallinfo(a.st, &m);
	return m;
}

/* glibc's mallinfo is mallinfo2 with every field cut to int; gperftools'
 * casts its figures the same way. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
SHIM_API struct mallinfo mallinfo(void)
{
	answer_t a = who_answers();
	struct mallinfo2 m;
	memset(&m, 0, sizeof m);
	if (!a.api || !a.api->mallinfo) {
		struct mallinfo (*fn)(void) = (struct mallinfo (*)(void))libc_fn("mallinfo");
		if (fn)
			return fn();
	} else {
		a.api->mallinfo(a.st, &m);
	}
	struct mallinfo o = {
		.arena = (int)m.arena, .ordblks = (int)m.ordblks, .smblks = (int)m.smblks,
		.hblks = (int)m.hblks, .hblkhd = (int)m.hblkhd, .usmblks = (int)m.usmblks,
		.fsmblks = (int)m.fsmblks, .uordblks = (int)m.uordblks, .fordblks = (int)m.fordblks,
		.keepcost = (int)m.keepcost,
	};
	return o;
}
#pragma GCC diagnostic pop

SHIM_API int mallopt(int param, int value)
{
	answer_t a = who_answers();
	if (a.api && a.api->mallopt)
		return a.api->mallopt(a.st, param, value);
	int (*fn)(int, int) = (int (*)(int, int))libc_fn("mallopt");
	return fn ? fn(param, value) : 0;
}

SHIM_API void malloc_stats(void)
{
	answer_t a = who_answers();
	if (a.api && a.api->malloc_stats) {
		a.api->malloc_stats(a.st, stderr);
		return;
	}
	void (*fn)(void) = (void (*)(void))libc_fn("malloc_stats");
	if (fn)
		fn();
}

SHIM_API int malloc_info(int options, FILE *fp)
{
	answer_t a = who_answers();
	if (a.api && a.api->malloc_info)
		return a.api->malloc_info(a.st, options, fp);
	int (*fn)(int, FILE *) = (int (*)(int, FILE *))libc_fn("malloc_info");
	return fn ? fn(options, fp) : EINVAL;
}

SHIM_API int malloc_trim(size_t pad)
{
	answer_t a = who_answers();
	/* a delegating host's trim is its guest's (pools: the fallback) */
	if (a.api && a.api->trims)
		return hl_trim(a.heap, pad) > 0;
	int (*fn)(size_t) = (int (*)(size_t))libc_fn("malloc_trim");
	return fn ? fn(pad) : 0;
}
