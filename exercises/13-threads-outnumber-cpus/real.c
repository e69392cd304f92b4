/*
 * Lab 13, the real side: real THREADS runs the lab's workload with plain
 * malloc and free on THREADS threads pinned to two CPUs, then, while
 * every thread is still alive and idle, prints what gperftools' tcmalloc
 * (libtcmalloc_minimal.so.4 through LD_PRELOAD) says its thread caches
 * hold:
 *
 *   thread_cache_bytes=   tcmalloc.current_total_thread_cache_bytes
 *   thread_cache_free=    tcmalloc.thread_cache_free_bytes
 *
 * and the same once the threads have ended (after_exit_...).  Exit 77
 * when malloc is not tcmalloc (no MallocExtension_GetNumericProperty).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include "workload.h"

typedef int (*property_fn)(const char *, size_t *);

static pthread_barrier_t idle, go;
static cpu_set_t cpus;

static void *plain_alloc(void *arg, size_t n) { (void)arg; return malloc(n); }
static void plain_free(void *arg, void *p) { (void)arg; free(p); }

static void *worker(void *arg)
{
	(void)arg;
	pthread_setaffinity_np(pthread_self(), sizeof cpus, &cpus);
	lab13_rounds(plain_alloc, plain_free, NULL);
	pthread_barrier_wait(&idle);
	pthread_barrier_wait(&go);
	return NULL;
}

static size_t property(property_fn get, const char *name)
{
	size_t v = 0;
	if (!get(name, &v)) {
		fprintf(stderr, "real: tcmalloc has no property %s\n", name);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 8;
	property_fn get = (property_fn)dlsym(RTLD_DEFAULT, "MallocExtension_GetNumericProperty");
	if (!get) {
		fprintf(stderr, "real: malloc is not tcmalloc (no MallocExtension); run it with LD_PRELOAD\n");
		return 77;
	}
	if (n < 1 || n > MAX_THREADS || lab13_two_cpus(&cpus) < 1) {
		fprintf(stderr, "real: THREADS must be 1..%d\n", MAX_THREADS);
		return 2;
	}
	pthread_t t[MAX_THREADS];
	pthread_barrier_init(&idle, NULL, (unsigned)n + 1);
	pthread_barrier_init(&go, NULL, (unsigned)n + 1);
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, worker, NULL) != 0)
			return 2;
	pthread_barrier_wait(&idle);
	printf("thread_cache_bytes=%zu\n", property(get, "tcmalloc.current_total_thread_cache_bytes"));
	printf("thread_cache_free=%zu\n", property(get, "tcmalloc.thread_cache_free_bytes"));
	pthread_barrier_wait(&go);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("after_exit_thread_cache_free=%zu\n", property(get, "tcmalloc.thread_cache_free_bytes"));
	printf("working_set=%zu\n", lab13_working_set());
	return 0;
}
