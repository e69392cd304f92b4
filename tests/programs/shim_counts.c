/* The preload library's operation counters, read back through the model's
 * own statistics (hl_default_heap and hl_stat, looked up at run time):
 * after a thread's 1000 malloc and 1000 free calls (and free(NULL), which
 * is not an operation), ops.malloc and ops.free have grown by exactly 1000
 * — in the main thread, in a thread's first calls, in a thread that
 * reuses an exited thread's record, in the main thread again, and while a
 * listener is set on the default heap, which then hears at least one event
 * per malloc (the shim has left its inline hits, which emit none, for the
 * policy's copies that do) and none once it is unset.  Each
 * phase runs while no other thread of the program allocates.  Prints one
 * line per phase that is wrong and exits 1; prints "ok" otherwise.  The
 * malloc and free calls are the plain ones: their fast path (shim/shim.c)
 * is what it checks.  tests/programs/shim_counts.sh runs it on every policy. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

enum { CALLS = 1000 };

static void *heap;
static int (*stat_fn)(void *, const char *, double *);
static int (*listen_fn)(void *, void (*)(void *, const void *, void *), void *);
static int wrong;
static unsigned long heard;

static void hear(void *h, const void *e, void *arg)
{
	(void)h, (void)e, (void)arg;
	heard++;
}

static double ops(const char *name)
{
	double v = -1;
	if (stat_fn(heap, name, &v) != 0)
		v = -1;
	return v;
}

static void *phase(void *name)
{
	static void *blocks[CALLS];
	double m0 = ops("ops.malloc"), f0 = ops("ops.free");
	for (int i = 0; i < CALLS; i++) {
		blocks[i] = malloc((size_t)(16 + i % 200));
		*(volatile char *)blocks[i] = (char)i;
	}
	for (int i = 0; i < CALLS; i++) {
		free(blocks[i]);
		free(NULL);
	}
	double dm = ops("ops.malloc") - m0, df = ops("ops.free") - f0;
	if (dm != CALLS || df != CALLS) {
		printf("%s: ops.malloc grew by %.0f and ops.free by %.0f for %d calls each\n",
		       (const char *)name, dm, df, CALLS);
		wrong = 1;
	}
	return NULL;
}

static void in_thread(const char *name)
{
	pthread_t t;
	if (pthread_create(&t, NULL, phase, (void *)name) != 0 || pthread_join(t, NULL) != 0) {
		printf("%s: cannot run a thread\n", name);
		wrong = 1;
	}
}

int main(void)
{
	static char out[4096];
	setvbuf(stdout, out, _IOFBF, sizeof out);
	void *(*default_heap)(void);
	*(void **)&default_heap = dlsym(RTLD_DEFAULT, "hl_default_heap");
	*(void **)&stat_fn = dlsym(RTLD_DEFAULT, "hl_stat");
	*(void **)&listen_fn = dlsym(RTLD_DEFAULT, "hl_set_listener");
	void *volatile first = malloc(1);   /* builds the default heap */
	free(first);
	if (!default_heap || !stat_fn || !(heap = default_heap())) {
		printf("not running on heaplab's preload library\n");
		return 1;
	}
	phase("main thread");
	in_thread("a new thread");
	in_thread("a thread reusing an exited thread's record");
	phase("main thread again");
	if (!listen_fn || listen_fn(heap, hear, NULL) != 0) {
		printf("cannot set a listener on the default heap\n");
		return 1;
	}
	phase("main thread, listened to");
	unsigned long while_on = heard;
	listen_fn(heap, NULL, NULL);
	phase("main thread, no longer listened to");
	if (while_on < CALLS || heard != while_on) {
		printf("the listener heard %lu events while set (%d mallocs) and %lu after\n", while_on,
		       CALLS, heard - while_on);
		wrong = 1;
	}
	if (!wrong)
		printf("ok\n");
	return wrong;
}
