/* mimalloc_halfgig WAIT_MS: the half-gigabyte program step by step.
 * 500,000 blocks of 1 KiB, each touched; nine in ten freed (every block
 * whose index is not a multiple of ten); the rest freed; then WAIT_MS of
 * idleness and two pages' worth of 5000-byte blocks freed, a page free
 * being when mimalloc runs the purges that are due.  Resident growth over
 * the start, in MiB, after each step:
 *   alloc_mib=M  free90_mib=M  freeall_mib=M  after_wait_mib=M */
#include "probe.h"
#include "probe_util.h"

enum { N = 500000, SIZE = 1024 };

static long mib_over(long base)
{
	return (probe_rss_bytes() - base + (1L << 19)) >> 20;
}

int main(int argc, char **argv)
{
	probe_static_stdout();
	if (argc != 2)
		probe_die("usage: mimalloc_halfgig WAIT_MS");
	long wait = probe_arg(argc, argv, 1, 0);
	static char *p[N];
	probe_trigger_t trigger;
	probe_trigger_arm(&trigger);
	long base = probe_rss_bytes();
	for (int i = 0; i < N; i++) {
		if (!(p[i] = malloc(SIZE)))
			probe_die("malloc failed");
		p[i][0] = 1;
	}
	printf("alloc_mib=%ld\n", mib_over(base));
	for (int i = 0; i < N; i++)
		if (i % 10) {
			free(p[i]);
			p[i] = NULL;
		}
	printf("free90_mib=%ld\n", mib_over(base));
	for (int i = 0; i < N; i++)
		free(p[i]);
	printf("freeall_mib=%ld\n", mib_over(base));
	probe_sleep_ms(wait);
	probe_trigger_fire(&trigger);
	printf("after_wait_mib=%ld\n", mib_over(base));
	return 0;
}
