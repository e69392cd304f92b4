/* heaplab diagnose: record a real program on its own allocator, explain
 * what holds its memory, and what another allocator or setting would do.
 * This file parses the options, calls diagnose/diagnose.h (recording,
 * measuring, the diagnosis, --verify) and writes the report where asked. */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "../diagnose/diagnose.h"

static int usage(FILE *out)
{
	fprintf(out,
		"usage: heaplab diagnose [--policies=LIST] [--knobs='POLICY/CONF;...'] [-o REPORT.html]\n"
		"                        [--model=CONF] [--sample-ms N] [--keep=FILE.rep] [--verify] [--json=FILE|-]\n"
		"                        [--jobs N] [--sample=K] [--record-max=BYTES] [--draws=N]\n"
		"                        -- COMMAND [ARGS...]\n"
		"       heaplab diagnose [options] --trace=FILE.rep\n"
		"       heaplab diagnose --text|--binary --trace=FILE.rep > OUT\n"
		"Runs COMMAND once on the C library's malloc with libheaplab-record.so, recording\n"
		"every call with its allocation site and the process's RSS every N ms (default 10),\n"
		"then replays the recording: under bins (the model of glibc) every committed byte\n"
		"at every sample gets one cause (live payload, rounding, overhead, tcache,\n"
		"fastbins, holes below live blocks, top, other arenas, ...), the free memory held\n"
		"below live blocks is counted by their allocation site (resolved with addr2line),\n"
		"and every policy of the grid (--policies: a comma list of policies; --knobs adds\n"
		"candidates, e.g. 'bins/arena_max:4;slab/narenas:4') is ranked by peak and final\n"
		"heap and kernel calls.  Prints a summary and recommends the real allocator's\n"
		"setting; -o writes a self-contained HTML report.  --trace diagnoses a recording\n"
		"made before (by --keep, or HEAPLAB_RECORD=PREFIX LD_PRELOAD=libheaplab-record.so).\n"
		"A recording is binary (a few bytes an operation; HEAPLAB_RECORD_FORMAT=text in the\n"
		"environment records text); every command reads both forms.  --text writes the\n"
		"recording FILE.rep as text to the standard output, --binary in the binary form.\n"
		"--model gives options of the model of glibc for the attribution (default: its\n"
		"defaults, which follow the running glibc's version).\n"
		"--verify runs COMMAND twice more without the recorder, under the recommended\n"
		"setting and as it is, reads its RSS from /proc/PID/statm every N ms (the final\n"
		"with the program held at its exit, by ptrace), and shows the measured peak and\n"
		"final RSS beside the prediction.\n"
		"The summary's first line says what share of the measured peak and final RSS the\n"
		"model accounts for (WARNING under 90 %%); the layers of /proc/PID/smaps at the peak\n"
		"and at the end name the rest.  A CPython program is recorded with PYTHONMALLOC=malloc\n"
		"and replayed behind pools (the model of pymalloc) as it runs, and measured once as it is.\n"
		"Its threads take turns by the clock, and the recorder slows their work, not the\n"
		"clock: its timed waits count its own time, the allocator's calls left out and\n"
		"each counted as pymalloc's (HEAPLAB_RECORD_PACE=allocator:14), so that each turn\n"
		"holds as much of its work as without the recorder.  With several threads it is\n"
		"recorded --draws times (default 3, at most 15), for their order differs each run:\n"
		"the recording whose blocks held the median most bytes at once is diagnosed.\n"
		"--json=FILE writes every figure as JSON (- : on stdout, instead of the summary, the\n"
		"program's own output going to stderr).\n"
		"--jobs N replays up to N candidates at once, each in its own process (default: one\n"
		"for each CPU this process may run on; 1: one after the other).\n"
		"--sample=K records one new block in K with all its ops (HEAPLAB_RECORD_SAMPLE), and\n"
		"--record-max=BYTES halves that rate as the recording nears BYTES (HEAPLAB_RECORD_MAX),\n"
		"for a program too long to record whole; each model's heap is scaled back by the rate,\n"
		"and the summary states the sampling error measured at it (bench/SAMPLING.md).\n"
		"With --trace, --sample=K replays one block in K of the recording's.\n");
	return out == stdout ? 0 : 2;
}

/* The command line, its words joined by spaces: the report's "command". */
static char *joined(char **argv)
{
	size_t n = 1;
	for (char **a = argv; *a; a++)
		n += strlen(*a) + 1;
	char *s = calloc(n, 1);
	for (char **a = argv; s && *a; a++) {
		strcat(s, *a);
		if (a[1])
			strcat(s, " ");
	}
	return s;
}

/* A recording made here, read as far as it goes: a program ended by a
 * signal, or by _exit (no destructor ran), leaves it without its end, and
 * what it holds is still the program's (a warning says so). */
static hl_trace_t *load_recording(const char *path)
{
	return cli_load_trace(path, true);
}

/* The report, as text on stdout (unless --json=-), as JSON, as HTML. */
static int write_report(const dx_report_t *r, const char *html, const char *json)
{
	int rc = 0;
	if (!json || strcmp(json, "-"))
		dx_report_text(stdout, r);
	if (json && !strcmp(json, "-")) {
		if (dx_report_json(stdout, r) < 0)
			rc = cli_error("diagnose: cannot write the JSON report");
	} else if (json) {
		FILE *f = fopen(json, "w");
		if (!f || dx_report_json(f, r) < 0 || fclose(f) != 0)
			rc = cli_error("diagnose: cannot write %s", json);
	}
	if (html) {
		FILE *f = fopen(html, "w");
		if (!f || dx_report_html(f, r) < 0 || fclose(f) != 0)
			rc = cli_error("diagnose: cannot write %s", html);
		else
			fprintf(stderr, "heaplab diagnose: report written to %s\n", html);
	}
	return rc;
}

/* --text, --binary: the recording @p trace written to stdout in that form. */
static int convert(const char *trace, bool to_text, bool to_binary)
{
	if (to_text && to_binary)
		return cli_error("diagnose: give --text or --binary, not both");
	if (!trace)
		return cli_error("diagnose: --%s converts a recording: give it with --trace=FILE.rep", to_text ? "text" : "binary");
	if (to_binary && isatty(1))
		return cli_error("diagnose: --binary writes the binary form to the standard output, a terminal: redirect it to a file");
	if (dx_recording_convert(trace, stdout, to_text) < 0)
		return cli_error("diagnose: %s", hl_last_error());
	return 0;
}

int cmd_diagnose(int argc, char **argv)
{
	const char *policies = NULL, *knobs = NULL, *html = NULL, *trace = NULL, *keep = NULL, *json = NULL;
	bool verify_wanted = false, to_text = false, to_binary = false;
	const char *model = "";
	const char *sample_ms = "10", *jobs_text = NULL, *rate = NULL, *record_max = NULL, *draws_text = NULL;
	int i = 1;
	for (; i < argc; i++) {
		int r;
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		}
		if (!strcmp(argv[i], "-o")) {
			if (i + 1 >= argc)
				return cli_error("diagnose: -o needs a file name");
			html = argv[++i];
			continue;
		}
		if ((r = cli_opt(argc, argv, &i, "--policies", &policies)) || (r = cli_opt(argc, argv, &i, "--knobs", &knobs)) ||
		    (r = cli_opt(argc, argv, &i, "--trace", &trace)) || (r = cli_opt(argc, argv, &i, "--keep", &keep)) ||
		    (r = cli_opt(argc, argv, &i, "--sample-ms", &sample_ms)) || (r = cli_opt(argc, argv, &i, "--output", &html)) ||
		    (r = cli_opt(argc, argv, &i, "--model", &model)) || (r = cli_opt(argc, argv, &i, "--json", &json)) ||
		    (r = cli_opt(argc, argv, &i, "--jobs", &jobs_text)) || (r = cli_opt(argc, argv, &i, "--sample", &rate)) ||
		    (r = cli_opt(argc, argv, &i, "--record-max", &record_max)) ||
		    (r = cli_opt(argc, argv, &i, "--draws", &draws_text))) {
			if (r < 0)
				return 2;
		} else if (!strcmp(argv[i], "--verify")) {
			verify_wanted = true;
		} else if (!strcmp(argv[i], "--text")) {
			to_text = true;
		} else if (!strcmp(argv[i], "--binary")) {
			to_binary = true;
		} else if (!strcmp(argv[i], "--help")) {
			return usage(stdout);
		} else if (argv[i][0] == '-') {
			return cli_error("diagnose: unknown option '%s' (try --help)", argv[i]);
		} else {
			break;
		}
	}
	long long ms = cli_parse_size(sample_ms);
	if (ms < 1 || ms > 3600000)
		return cli_error("diagnose: bad --sample-ms '%s' (1..3600000)", sample_ms);
	long long jobs = jobs_text ? cli_parse_size(jobs_text) : (long long)dx_workers();
	if (jobs < 1 || jobs > 256)
		return cli_error("diagnose: bad --jobs '%s' (1..256)", jobs_text);
	long long draws = draws_text ? cli_parse_size(draws_text) : DX_DRAWS;
	if (draws < 1 || draws > DX_DRAWS_MAX)
		return cli_error("diagnose: bad --draws '%s' (1..%d)", draws_text, DX_DRAWS_MAX);
	if (draws_text && trace)
		return cli_error("diagnose: --draws records the program again: give the command, not --trace");
	if (!trace && i >= argc)
		return cli_error("diagnose: no command to run (give one after --, or --trace=FILE.rep; try --help)");
	if (trace && i < argc)
		return cli_error("diagnose: give either a command or --trace, not both");
	if (dx_sample_options(rate, record_max, trace) < 0)
		return cli_error("diagnose: %s", hl_last_error());
	if (verify_wanted && trace)
		return cli_error("diagnose: --verify runs the program again: give the command, not --trace");
	if (to_text || to_binary)
		return convert(trace, to_text, to_binary);
	size_t ncand;
	dx_candidate_t *check = dx_grid(policies, knobs, model, &ncand);   /* bad names fail before the run */
	if (!check)
		return cli_last_error();
	dx_grid_free(check, ncand);
	/* the input's own errors first (a missing or damaged trace, a program
	 * the recorder cannot go into): a build without a model of glibc
	 * still says them */
	const dx_program_opts_t prog = { .recorder = cli_record_path(), .sample_ms = ms, .output_aside = json && !strcmp(json, "-"),
					 .notes = stderr, .load = load_recording, .draws = (unsigned)draws };
	hl_trace_t *t = NULL;
	if (trace && !(t = cli_load_trace(trace, false)))
		return 2;
	if (!trace && dx_recordable(argv[i], prog.recorder))
		return cli_last_error();
	const char *glibc = hl_policy_of_family("glibc");
	hl_heap_t *probe = glibc ? hl_heap_new(glibc, *model ? model : NULL) : NULL;
	if (!probe) {
		hl_trace_free(t);
		if (!glibc)
			return cli_error("diagnose: no compiled-in policy models glibc, the C library the recording runs on (configure --with-policy=all)");
		return cli_error("diagnose: --model: %s", hl_last_error());
	}
	hl_heap_destroy(probe);
	dx_recorded_t rec;
	int rc = 0;
	if (trace)
		dx_recording_given(t, trace, &rec);
	else if ((rc = dx_record_program(argv + i, &prog, &rec)) != 0)
		rc = rc == 2 ? cli_last_error() : 2;
	if (!rc && keep && dx_recording_keep(&rec, keep))
		rc = cli_last_error();
	char *command = trace ? strdup(trace) : joined(argv + i);
	const dx_diagnose_opts_t o = { policies, knobs, model, (unsigned)jobs, cli_progress_cb };
	dx_diagnosis_t d = { 0 };
	if (!rc && dx_diagnose(&rec, command, &o, &d))
		rc = cli_last_error();
	dx_verify_t checked;
	if (!rc && verify_wanted) {
		dx_verify(argv + i, &d.report, &prog, &checked);
		d.report.verify = &checked;
	}
	if (!rc)
		rc = write_report(&d.report, html, json);
	dx_diagnosis_free(&d);
	dx_recorded_free(&rec);
	free(command);
	return rc;
}
