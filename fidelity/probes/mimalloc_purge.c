/* mimalloc_purge KIB WAIT_MS: KIB KiB of 1000-byte blocks, all freed; after
 * WAIT_MS the program frees two pages' worth of 5000-byte blocks, and a
 * page coming free is when mimalloc (and sharded) run the purges that are
 * due: there is no timer.  (A fresh page is no trigger: taking slices that
 * wait for their purge postpones the segment's deadline in mimalloc.)  One
 * 1000-byte block stays live, so memory is freed page by page, never as a
 * whole segment.
 *   at_free_pct=P     % of the grown resident memory gone right after free
 *   after_wait_pct=P  % gone after the wait and the trigger */
#include "probe.h"
#include "probe_util.h"

enum { MAXN = 65536, SIZE = 1000 };

int main(int argc, char **argv)
{
	probe_static_stdout();
	if (argc != 3)
		probe_die("usage: mimalloc_purge KIB WAIT_MS");
	long n = probe_arg(argc, argv, 1, 0) * 1024 / SIZE;
	long wait = probe_arg(argc, argv, 2, 0);
	if (n < 1 || n > MAXN || wait < 0)
		probe_die("need 1 <= KIB <= 64000 and WAIT_MS >= 0");
	static char *p[MAXN];
	probe_trigger_t trigger;
	char *keep = malloc(SIZE);
	if (!keep)
		probe_die("malloc failed");
	probe_trigger_arm(&trigger);
	long base = probe_rss_bytes();
	for (long i = 0; i < n; i++) {
		if (!(p[i] = malloc(SIZE)))
			probe_die("malloc failed");
		memset(p[i], 1, SIZE);
	}
	long grown = probe_rss_bytes() - base;
	for (long i = 0; i < n; i++)
		free(p[i]);
	long at_free = probe_rss_bytes();
	probe_sleep_ms(wait);
	probe_trigger_fire(&trigger);
	long after = probe_rss_bytes();
	printf("grown_kib=%ld\nat_free_pct=%ld\nafter_wait_pct=%ld\n", grown / 1024,
	       probe_pct(base + grown - at_free, grown), probe_pct(base + grown - after, grown));
	free(keep);
	return 0;
}
