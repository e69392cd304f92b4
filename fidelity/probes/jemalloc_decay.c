/* jemalloc_decay MB WAIT_MS MODE [fork|fork-now]: how much of a freed heap stays
 * resident.  Allocates MB megabytes of 1 KiB blocks (each touched), frees
 * them all, then waits WAIT_MS, every 10 ms doing MODE: "idle" (nothing),
 * "small" (2,000 malloc(64)/free pairs: thread-cache hits) or "large" (50
 * malloc(64 KiB)/free pairs: above tcache_max, so each goes to the arena).
 * Without a background thread, decay runs only when allocator activity
 * ticks it; the two kinds of activity show which activity does.  Prints,
 * above the starting RSS: peak_mb, the peak; kept_pct, what is left after
 * the wait, in percent of the peak; drop_pct, what left during the wait
 * alone (the frees tick decay too, and on a loaded machine they take long
 * enough for early pages to age out before the wait begins).  With
 * "fork", all of it runs in a child forked first, which prints the
 * figures (the parent only waits for it): the parent warms the allocator
 * with a malloc(64)/free pair and waits 50 ms (its background thread, if
 * any, is running) before it forks.  "fork-now" is the same with a
 * malloc(100)/free pair and the fork right after it. */
#include <sys/wait.h>
#include <time.h>
#include "probe.h"

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0)
		;
}

enum mode { IDLE, SMALL, LARGE };

static void activity(enum mode m)
{
	int n = m == SMALL ? 2000 : m == LARGE ? 50 : 0;
	size_t size = m == SMALL ? 64 : 64 << 10;
	for (int i = 0; i < n; i++) {
		void *volatile p = malloc(size);
		free(p);
	}
}

static void run(long mb, long wait_ms, enum mode m)
{
	size_t n = (size_t)mb * 1024;
	char **v = malloc(n * sizeof *v);
	if (!v)
		probe_die("out of memory for the block table");
	long base = probe_rss_bytes();
	for (size_t i = 0; i < n; i++) {
		if (!(v[i] = malloc(1024)))
			probe_die("malloc failed");
		memset(v[i], 1, 1024);
	}
	long peak = probe_rss_bytes() - base;
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	long freed = probe_rss_bytes() - base;
	for (long t = 0; t < wait_ms; t += 10) {
		activity(m);
		nap_ms(10);
	}
	long kept = probe_rss_bytes() - base;
	double pct = peak > 0 ? 100.0 / (double)peak : 0.0;
	printf("peak_mb=%ld\nkept_pct=%.0f\ndrop_pct=%.0f\n", peak >> 20, pct * (double)kept,
	       pct * (double)(freed - kept));
	free(v);
}

int main(int argc, char **argv)
{
	probe_static_stdout();
	if (argc < 4)
		probe_die("usage: jemalloc_decay MB WAIT_MS idle|small|large [fork]");
	long mb = probe_arg(argc, argv, 1, 0), wait_ms = probe_arg(argc, argv, 2, 0);
	enum mode m = !strcmp(argv[3], "small") ? SMALL : !strcmp(argv[3], "large") ? LARGE : IDLE;
	if (mb < 1 || mb > 4096 || (m == IDLE && strcmp(argv[3], "idle") != 0))
		probe_die("MB must be 1..4096 and MODE idle, small or large");
	int in_child = argc > 4 && (strcmp(argv[4], "fork") == 0 || strcmp(argv[4], "fork-now") == 0);
	int now = in_child && strcmp(argv[4], "fork-now") == 0;
	if (argc > 4 && !in_child)
		probe_die("the fifth argument is fork or fork-now");
	void *volatile warm = malloc(now ? 100 : 64); /* volatile: the pair must not be optimised away */
	free(warm);         /* the allocator is set up (and its threads started) before any fork */
	if (!now)
		nap_ms(50);
	if (!in_child) {
		run(mb, wait_ms, m);
		return 0;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		probe_die("fork failed");
	if (pid == 0) {
		run(mb, wait_ms, m);
		fflush(NULL);
		_exit(0);
	}
	int status = 0;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		probe_die("the child failed");
	return 0;
}
