/* heaplab adversary: search for a short trace that makes a policy hold the
 * most memory for what the trace keeps live (visualize/adversary.h). */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "../visualize/vis.h"
#include "../visualize/adversary.h"

static int adversary_usage(FILE *out)
{
	fprintf(out,
		"usage: heaplab adversary --policy=NAME [--conf=S] [--budget=N] [--seed=N]\n"
		"                         [--live=SIZE] -o TRACE.rep\n"
		"Searches for a trace that makes the policy hold the most memory for the bytes\n"
		"the trace keeps live: N candidates (default 12) drawn from four families of\n"
		"patterns (ladder: growing sizes, sparse survivors; pin: one survivor per page\n"
		"or slab of each size class; strand: threads that free into their own caches\n"
		"and arenas; waves: the same blocks again and again), each replayed on the\n"
		"policy and measured against its bound (heaplab bound).  Writes the worst to\n"
		"TRACE.rep, with comments saying which family won and why it hurts, and prints\n"
		"its peak committed bytes, its bound and their ratio.  --live is what one wave\n"
		"of blocks holds (default 1M); --seed picks another search (default 1).\n"
		"Exit 1 when a replay fails, 2 on bad input.\n");
	return out == stdout ? 0 : 2;
}

static int parse_number(const char *text, const char *what, long long lo, long long hi, long long *v)
{
	if (!text)
		return 0;
	*v = cli_parse_size(text);
	if (*v < lo || *v > hi)
		return cli_error("bad %s '%s' (%lld..%lld)", what, text, lo, hi);
	return 0;
}

int cmd_adversary(int argc, char **argv)
{
	const char *policy = NULL, *conf = NULL, *budget = NULL, *seed = NULL, *live = NULL, *output = NULL;
	for (int i = 1; i < argc; i++) {
		int r;
		if ((r = cli_opt(argc, argv, &i, "--policy", &policy)) || (r = cli_opt(argc, argv, &i, "--conf", &conf)) ||
		    (r = cli_opt(argc, argv, &i, "--budget", &budget)) || (r = cli_opt(argc, argv, &i, "--seed", &seed)) ||
		    (r = cli_opt(argc, argv, &i, "--live", &live)) || (r = cli_opt(argc, argv, &i, "-o", &output))) {
			if (r < 0)
				return 2;
		} else if (!strcmp(argv[i], "--help")) {
			return adversary_usage(stdout);
		} else {
			return cli_error("unexpected argument '%s' (try --help)", argv[i]);
		}
	}
	if (!policy || !output)
		return adversary_usage(stderr);
	const char *names[1];
	if (cli_policy_list(policy, names, 1) != 1)
		return 2;
	long long n_budget = 12, n_seed = 1, n_live = 1 << 20;
	if (parse_number(budget, "--budget", 1, 10000, &n_budget) || parse_number(seed, "--seed", 0, 1LL << 31, &n_seed) ||
	    parse_number(live, "--live", 4096, 1LL << 30, &n_live))
		return 2;
	vis_adversary_opts_t o = { names[0], conf, (int)n_budget, (unsigned)n_seed, (size_t)n_live };
	vis_adversary_t worst;
	if (vis_adversary(&o, cli_progress_cb, &worst)) {
		free(worst.text);
		cli_last_error();
		return 1;
	}
	FILE *f = fopen(output, "w");
	if (!f) {
		free(worst.text);
		return cli_error("cannot write %s", output);
	}
	char c[32], b[32], r[32];
	fprintf(f, "# heaplab adversary --policy=%s%s%s --budget=%lld --seed=%lld --live=%lld\n", names[0],
		conf ? " --conf=" : "", conf ? conf : "", n_budget, n_seed, n_live);
	fprintf(f, "# worst of %d candidates: family %s; on %s, peak committed %zu bytes for a bound\n"
		   "# (peak of live bytes) of %zu: %.2f x bound; peak resident %zu bytes\n",
		worst.tried, worst.family, names[0], worst.peak_committed, worst.bound, worst.ratio, worst.peak_resident);
	fputs(worst.text, f);
	free(worst.text);
	if (fclose(f) != 0)
		return cli_error("cannot write %s", output);
	printf("%s: family %s, %s peak committed for a bound of %s: %.2f x bound (peak resident %s), worst of %d\n",
	       output, worst.family, vis_bytes((double)worst.peak_committed, c, sizeof c),
	       vis_bytes((double)worst.bound, b, sizeof b), worst.ratio, vis_bytes((double)worst.peak_resident, r, sizeof r),
	       worst.tried);
	return 0;
}
