/* xthread OPS BATCH: one thread allocates blocks of 16..512 bytes in
 * batches and hands each batch to a second thread, which frees them (the
 * shape of mimalloc-bench's xmalloc-test).  Prints ns per block. */
#include <pthread.h>
#include "bench_util.h"

enum { QUEUE = 64 };

static long ops, batch;
static void **queue[QUEUE];
static long head, tail;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;

static void *consumer(void *arg)
{
	(void)arg;
	for (long done = 0; done < ops / batch; done++) {
		pthread_mutex_lock(&lock);
		while (head == tail)
			pthread_cond_wait(&cond, &lock);
		void **b = queue[tail++ % QUEUE];
		pthread_cond_broadcast(&cond);
		pthread_mutex_unlock(&lock);
		for (long i = 0; i < batch; i++)
			free(b[i]);
		free(b);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	ops = bench_arg(argc, argv, 1, 4000000);
	batch = bench_arg(argc, argv, 2, 256);
	uint64_t s = 42;
	pthread_t th;
	double t0 = bench_now();
	pthread_create(&th, NULL, consumer, NULL);
	for (long done = 0; done < ops / batch; done++) {
		void **b = malloc((size_t)batch * sizeof *b);
		for (long i = 0; i < batch; i++) {
			b[i] = malloc(16 + bench_rand(&s) % 497);
			*(char *)b[i] = 1;
		}
		pthread_mutex_lock(&lock);
		while (head - tail == QUEUE)
			pthread_cond_wait(&cond, &lock);
		queue[head++ % QUEUE] = b;
		pthread_cond_broadcast(&cond);
		pthread_mutex_unlock(&lock);
	}
	pthread_join(th, NULL);
	double dt = bench_now() - t0;
	printf("ns_per_op %.2f\npeak_rss_mb %.1f\n", dt * 1e9 / (double)ops, bench_peak_mb());
	return 0;
}
