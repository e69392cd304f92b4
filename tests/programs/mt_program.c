/* A multi-threaded program for the real-program tests: four threads build
 * and tear down linked structures with malloc, realloc and free, hand
 * blocks to each other, and one of them forks; the output is a checksum
 * that depends only on the data, so every allocator must print the same.
 *
 * Built twice: tests/programs/mt_program calls the C library's malloc (heaplab gets
 * it through LD_PRELOAD); tests/programs/mt_api (MT_PROGRAM_API) runs the same work
 * on a heaplab heap through the API, `mt_api POLICY [CONF]`, which is how
 * the sanitizer builds run it (a sanitizer owns malloc, so no preloading). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef MT_PROGRAM_API
#include "heaplab.h"
static hl_heap_t *heap;
#define malloc(n) hl_malloc(heap, (n))
#define realloc(p, n) hl_realloc(heap, (p), (n))
#define free(p) hl_free(heap, (p))
#endif

typedef struct node {
	struct node *next;
	size_t len;
	char text[];
} node_t;

static node_t *_Atomic shared;
static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t work(unsigned seed)
{
	uint64_t sum = 0, s = seed * 2654435761u + 1;
	node_t *list = NULL;
	for (int i = 0; i < 200000; i++) {
		s = s * 6364136223846793005ull + 1442695040888963407ull;
		size_t len = (s >> 33) % 300 + 1;
		node_t *n = malloc(sizeof *n + len);
		if (!n)
			abort();
		n->len = len;
		memset(n->text, (int)('a' + len % 26), len);
		n->next = list;
		list = n;
		if (i % 3 == 0) {
			node_t *d = list;
			list = d->next;
			sum += d->len + (unsigned char)d->text[d->len - 1];
			if (i % 9 == 0) {
				pthread_mutex_lock(&shared_lock);
				d->next = shared;
				shared = d; /* another thread will free it */
				pthread_mutex_unlock(&shared_lock);
			} else {
				free(d);
			}
		}
		if (i % 1000 == 0 && list) {
			node_t *g = realloc(list, sizeof *g + list->len * 2);
			if (!g)
				abort();
			memset(g->text + g->len, 'z', g->len);
			g->len *= 2;
			list = g;
		}
	}
	while (list) {
		node_t *d = list;
		list = d->next;
		sum += d->len;
		free(d);
	}
	return sum;
}

static void *thread_main(void *arg)
{
	uint64_t *out = arg;
	*out = work((unsigned)*out);
	pthread_mutex_lock(&shared_lock);
	node_t *mine = shared;
	shared = NULL;
	pthread_mutex_unlock(&shared_lock);
	while (mine) {
		node_t *d = mine;
		mine = d->next;
		free(d);
	}
	return NULL;
}

int main(int argc, char **argv)
{
#ifdef MT_PROGRAM_API
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: mt_api POLICY [CONF]\n");
		return 2;
	}
	heap = hl_heap_new(argv[1], argc == 3 ? argv[2] : "");
	if (!heap) {
		fprintf(stderr, "mt_api: %s\n", hl_last_error());
		return 2;
	}
#else
	(void)argc, (void)argv;
#endif
	pthread_t th[4];
	uint64_t res[4];
	for (int i = 0; i < 4; i++) {
		res[i] = (uint64_t)i + 1;
		pthread_create(&th[i], NULL, thread_main, &res[i]);
	}
	pid_t pid = fork(); /* while the other threads allocate */
	if (pid == 0) {
		/* only this thread exists here: the program's own lock may have
		 * been held by another thread at fork time (the allocator's locks
		 * are its own business: its atfork handlers) */
		pthread_mutex_init(&shared_lock, NULL);
		shared = NULL;
		char *p = malloc(1000);
		strcpy(p, "child");
		free(p);
		_exit(work(7) ? 0 : 1);
	}
	int status = 0;
	waitpid(pid, &status, 0);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	for (node_t *d = shared; d;) {
		node_t *n = d->next;
		free(d);
		d = n;
	}
	printf("checksums %llu %llu %llu %llu child %d\n", (unsigned long long)res[0], (unsigned long long)res[1],
	       (unsigned long long)res[2], (unsigned long long)res[3], WIFEXITED(status) ? WEXITSTATUS(status) : -1);
#ifdef MT_PROGRAM_API
	/* every block was freed: the heap must be consistent */
	if (hl_check(heap, stderr) != 0)
		return 1;
	hl_heap_destroy(heap);
#endif
	return 0;
}
