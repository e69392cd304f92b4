/* heaplab sizes: the ladder of request -> usable size of one policy.
 * Prints one line per request size where the usable size changes. */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "cli.h"

static int usage(FILE *out)
{
	fprintf(out, "usage: heaplab sizes --policy=NAME [--conf=S] [--max N] [--all]\n"
		     "For each request size 0..N (default 1024) prints 'request usable waste';\n"
		     "only the sizes where the usable size steps up, unless --all.\n");
	return out == stdout ? 0 : 2;
}

int cmd_sizes(int argc, char **argv)
{
	const char *policy = NULL, *conf = NULL, *max_s = NULL;
	bool all = false;
	for (int i = 1; i < argc; i++) {
		int r;
		if ((r = cli_opt(argc, argv, &i, "--policy", &policy)) ||
		    (r = cli_opt(argc, argv, &i, "--conf", &conf)) || (r = cli_opt(argc, argv, &i, "--max", &max_s))) {
			if (r < 0)
				return 2;
		} else if (!strcmp(argv[i], "--all"))
			all = true;
		else if (!strcmp(argv[i], "--help"))
			return usage(stdout);
		else
			return cli_error("sizes: unknown argument '%s' (try --help)", argv[i]);
	}
	if (!policy)
		return cli_error("sizes: --policy=NAME is required");
	long long max = max_s ? cli_parse_size(max_s) : 1024;
	if (max < 0 || max > (1LL << 30))
		return cli_error("sizes: bad --max '%s' (a size up to 1G)", max_s);
	hl_heap_t *h = hl_heap_new(policy, conf);
	if (!h)
		return cli_error("%s", hl_last_error());
	printf("# %s: request usable waste\n", policy);
	size_t last = (size_t)-1;
	for (long long n = 0; n <= max; n++) {
		void *p = hl_malloc(h, (size_t)n);
		if (!p) {
			hl_heap_destroy(h);
			return cli_error("sizes: malloc(%lld) failed", n);
		}
		size_t u = hl_usable_size(h, p);
		if (all || u != last)
			printf("%lld %zu %lld\n", n, u, (long long)u - n);
		last = u;
		hl_free(h, p);
	}
	hl_heap_destroy(h);
	return 0;
}
