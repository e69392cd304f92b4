/* heaplab run: a real program on heaplab, through LD_PRELOAD. */
#include "config.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"

static int usage(FILE *out)
{
	fprintf(out,
		"usage: heaplab run [--policy=NAME] [--conf=S] [--stats] [--snapshot=FILE.dot]\n"
		"                   [--trace=FILE.rep] [--sample-ms N [--sample-file FILE]]\n"
		"                   -- COMMAND [ARGS...]\n"
		"Runs COMMAND with libheaplab-preload.so as its malloc.  --stats prints the heap's\n"
		"statistics to stderr at exit, --snapshot writes its picture, --trace records every\n"
		"operation as a trace for 'heaplab replay'.  --sample-ms N writes live, committed\n"
		"and resident bytes every N ms to FILE (default heaplab-samples.txt) for\n"
		"'heaplab plot --samples FILE'.  Python needs PYTHONMALLOC=malloc to\n"
		"send its small objects to malloc.\n");
	return out == stdout ? 0 : 2;
}

/* Creates the sample file with its header and tells the shim (see the
 * sampling section of shim/shim.c) where and how often to write. */
static int start_samples(const char *file, const char *policy, const char *every)
{
	long long ms = cli_parse_size(every);
	if (ms < 1 || ms > 3600000)
		return cli_error("run: bad --sample-ms '%s' (1..3600000)", every);
	FILE *f = fopen(file, "w");
	if (!f)
		return cli_error("run: cannot write %s: %s", file, strerror(errno));
	fprintf(f, "# heaplab samples: policy=%s interval_ms=%lld\n# pid ms live_requested committed resident\n",
		policy ? policy : hl_default_policy(), ms);
	fclose(f);
	char v[32];
	snprintf(v, sizeof v, "%lld", ms);
	setenv("HEAPLAB_SAMPLE_MS", v, 1);
	setenv("HEAPLAB_SAMPLE_FILE", file, 1);
	snprintf(v, sizeof v, "%lld", (long long)(cli_now() * 1e9));
	setenv("HEAPLAB_SAMPLE_T0", v, 1);
	return 0;
}

int cmd_run(int argc, char **argv)
{
	const char *policy = NULL, *conf = NULL, *snapshot = NULL, *trace = NULL;
	const char *sample_ms = NULL, *sample_file = "heaplab-samples.txt";
	bool stats = false;
	int i = 1;
	for (; i < argc; i++) {
		int r;
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		}
		if ((r = cli_opt(argc, argv, &i, "--policy", &policy)) || (r = cli_opt(argc, argv, &i, "--conf", &conf)) ||
		    (r = cli_opt(argc, argv, &i, "--snapshot", &snapshot)) ||
		    (r = cli_opt(argc, argv, &i, "--trace", &trace)) ||
		    (r = cli_opt(argc, argv, &i, "--sample-ms", &sample_ms)) ||
		    (r = cli_opt(argc, argv, &i, "--sample-file", &sample_file))) {
			if (r < 0)
				return 2;
		} else if (!strcmp(argv[i], "--stats"))
			stats = true;
		else if (!strcmp(argv[i], "--help"))
			return usage(stdout);
		else if (argv[i][0] == '-')
			return cli_error("run: unknown option '%s' (try --help)", argv[i]);
		else
			break;
	}
	if (i >= argc) {
		usage(stderr);
		return 2;
	}
	if (policy) {
		const char *names[1];
		if (!cli_policy_list(policy, names, 1))
			return 2;
		setenv("HEAPLAB_POLICY", policy, 1);
	}
	hl_heap_t *probe = hl_heap_new(policy, conf);
	if (!probe)
		return cli_error("run: %s", hl_last_error());
	hl_heap_destroy(probe);
	if (conf)
		setenv("HEAPLAB_CONF", conf, 1);
	if (stats)
		setenv("HEAPLAB_STATS", "1", 1);
	if (snapshot)
		setenv("HEAPLAB_SNAPSHOT", snapshot, 1);
	if (trace)
		setenv("HEAPLAB_TRACE", trace, 1);
	if (sample_ms && start_samples(sample_file, policy, sample_ms) != 0)
		return 2;
	if (*HL_SANITIZERS_BUILD)
		return cli_error("run: this heaplab is built with -fsanitize=%s, whose runtime owns malloc: "
				 "its preload library cannot go into another program (use a build without sanitizers)",
				 HL_SANITIZERS_BUILD);
	int rc = cli_prepend_preload("run", cli_preload_path(), "HEAPLAB_PRELOAD");
	if (rc)
		return rc;
	execvp(argv[i], argv + i);
	return cli_error("run: cannot run %s: %s", argv[i], strerror(errno));
}
