/* heaplab diagnose: record a real program on its own allocator, explain
 * what holds its memory, and what another allocator or setting would do
 * (diagnose/diagnose.h does the work; this file runs the program and
 * wires the steps). */
#include "config.h"
#include <dirent.h>
#include <elf.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "../diagnose/diagnose.h"

/* A recording of CPython's threads this many times slower than the
 * program alone is made again at that pace (shim/record_pace.c). */
static const double PACE_FROM = 1.25;

static int usage(FILE *out)
{
	fprintf(out,
		"usage: heaplab diagnose [--policies=LIST] [--knobs='POLICY/CONF;...'] [-o REPORT.html]\n"
		"                        [--model=CONF] [--sample-ms N] [--keep=FILE.rep] [--verify] [--json=FILE|-]\n"
		"                        [--jobs N] [--sample=K] [--record-max=BYTES]\n"
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
		"Its threads take turns by the clock: where it has several and the recorder slowed it\n"
		"(CPU time against the run as it is), it is recorded again with its timed waits that\n"
		"much longer (HEAPLAB_RECORD_PACE), so that each turn holds as much of its work.\n"
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

/* Is @p prog runnable, as execvp would find it?  Its path into @p full. */
static bool runnable(const char *prog, char *full, size_t len)
{
	if (strchr(prog, '/')) {
		snprintf(full, len, "%s", prog);
		return access(prog, X_OK) == 0;
	}
	const char *path = getenv("PATH");
	for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
		size_t k = strcspn(p, ":");
		snprintf(full, len, "%.*s/%s", (int)k, p, prog);
		struct stat sb;
		if (stat(full, &sb) == 0 && S_ISREG(sb.st_mode) && access(full, X_OK) == 0)
			return true;
		p += k + (p[k] == ':');
	}
	return false;
}

/* An ELF executable without a program interpreter: linked statically, so
 * the dynamic loader never runs in it and LD_PRELOAD does nothing. */
static bool statically_linked(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return false;
	Elf64_Ehdr eh;
	bool is_static = false;
	if (fread(&eh, sizeof eh, 1, f) == 1 && !memcmp(eh.e_ident, ELFMAG, SELFMAG) && eh.e_ident[EI_CLASS] == ELFCLASS64 &&
	    eh.e_phentsize == sizeof(Elf64_Phdr)) {
		is_static = true;
		for (unsigned k = 0; k < eh.e_phnum && is_static; k++) {
			Elf64_Phdr ph;
			if (fseek(f, (long)(eh.e_phoff + k * sizeof ph), SEEK_SET) != 0 || fread(&ph, sizeof ph, 1, f) != 1)
				break;
			if (ph.p_type == PT_INTERP)
				is_static = false;
		}
	}
	fclose(f);
	return is_static;
}

/* Is the program CPython (its file, links followed, named python...)? */
static bool is_cpython(const char *path)
{
	char real[4096];
	const char *name = realpath(path, real) ? real : path;
	const char *base = strrchr(name, '/');
	base = base ? base + 1 : name;
	return !strncmp(base, "python", 6);
}

/* The largest recording in @p dir (a wrapper's and its program's are
 * apart: the program allocating most is the one to diagnose); the others'
 * process ids and sizes into @p others. */
static int largest_recording(const char *dir, char *out, size_t len, char *others, size_t olen)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	off_t best = -1;
	char best_name[256] = "";
	size_t n = 0, used = 0;
	*others = 0;
	for (struct dirent *e; (e = readdir(d));) {
		char path[4096];
		struct stat sb;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		if (!strstr(e->d_name, ".rep") || stat(path, &sb) != 0)
			continue;
		n++;
		if (sb.st_size > best) {
			best = sb.st_size;
			snprintf(out, len, "%s", path);
			snprintf(best_name, sizeof best_name, "%s", e->d_name);
		}
	}
	rewinddir(d);
	for (struct dirent *e; n > 1 && (e = readdir(d));) {
		char path[4096];
		struct stat sb;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		if (!strstr(e->d_name, ".rep") || !strcmp(e->d_name, best_name) || stat(path, &sb) != 0)
			continue;
		long pid = strtol(e->d_name + 4, NULL, 10);   /* rec.PID.rep */
		int k = snprintf(others + used, olen - used, "%sprocess %ld (%lld B of recording)", used ? ", " : "", pid,
				 (long long)sb.st_size);
		if (k > 0 && used + (size_t)k < olen)
			used += (size_t)k;
	}
	closedir(d);
	return best < 0 ? -1 : 0;
}

static void remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	for (struct dirent *e; (e = readdir(d));) {
		char path[4096];
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		if (e->d_name[0] != '.')
			unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

/* With --json=-, heaplab's standard output carries the JSON alone: the
 * program's own goes to the standard error. */
static bool program_output_aside;

static void output_aside(void)
{
	if (program_output_aside)
		dup2(2, 1);
}

/* The CPU time, user and system, of @p use. */
static double cpu_seconds(const struct rusage *use)
{
	return (double)(use->ru_utime.tv_sec + use->ru_stime.tv_sec) +
	       (double)(use->ru_utime.tv_usec + use->ru_stime.tv_usec) / 1e6;
}

/* Can the recorder go into program @p prog?  0, or the error said in a
 * line. */
static int recordable(const char *prog)
{
	char full[4096];
	if (!runnable(prog, full, sizeof full))
		return cli_error("diagnose: cannot run %s: no such program", prog);
	if (statically_linked(full))
		return cli_error("diagnose: %s is statically linked: the recorder (an LD_PRELOAD library) cannot go into it",
				 prog);
	if (*HL_SANITIZERS_BUILD)
		return cli_error("diagnose: this heaplab is built with -fsanitize=%s, whose runtime owns malloc: "
				 "its recorder cannot go into another program (use a build without sanitizers)",
				 HL_SANITIZERS_BUILD);
	if (access(cli_record_path(), R_OK) != 0)
		return cli_error("diagnose: cannot find %s (set HEAPLAB_RECORDER to its path)", cli_record_path());
	return 0;
}

/* Runs the program under the recorder (with @p extra, "VAR=VALUE" or NULL,
 * set, and its timed waits @p pace times as long when above 1;
 * recordable() said yes); the recording's path into @p out, how it ended
 * into @p ended, its CPU time into @p cpu. */
static int record(char **argv, const char *sample_ms, const char *extra, double pace, char *dir, char *out, size_t len,
		  int *ended, char *others, size_t olen, double *cpu)
{
	const char *lib = cli_record_path();
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, 4096, "%s/heaplab-diagnose.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		return cli_error("diagnose: cannot make a directory for the recording: %s", strerror(errno));
	fprintf(stderr, "heaplab diagnose: recording %s ...\n", argv[0]);
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return cli_error("diagnose: fork: %s", strerror(errno));
	if (pid == 0) {
		char prefix[4200];
		snprintf(prefix, sizeof prefix, "%s/rec", dir);
		setenv("HEAPLAB_RECORD", prefix, 1);
		setenv("HEAPLAB_RECORD_MS", sample_ms, 1);
		if (pace > 1.0) {
			char k[32];
			snprintf(k, sizeof k, "%.2f", pace);
			setenv("HEAPLAB_RECORD_PACE", k, 1);
		}
		if (extra) {
			char kv[256];
			snprintf(kv, sizeof kv, "%s", extra);
			char *eq = strchr(kv, '=');
			*eq = 0;
			setenv(kv, eq + 1, 1);
		}
		if (cli_prepend_preload("diagnose", lib, "HEAPLAB_RECORDER"))
			_exit(127);
		output_aside();
		execvp(argv[0], argv);
		fprintf(stderr, "heaplab: diagnose: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	int status;
	struct rusage use;
	while (wait4(pid, &status, 0, &use) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		return 2;
	*cpu = cpu_seconds(&use);
	*ended = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (*ended)
		fprintf(stderr, "heaplab diagnose: note: %s %s %d; diagnosing what it recorded\n", argv[0],
			WIFEXITED(status) ? "exited with status" : "was ended by signal",
			WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	if (largest_recording(dir, out, len, others, olen) < 0)
		return cli_error("diagnose: %s wrote no recording (is it dynamically linked?)", argv[0]);
	return 0;
}

/* The policy that models glibc (its table's fidelity_family): every
 * recording ran on the C library's malloc, so it attributes the memory
 * and is the program "as it is".  Its defaults follow the running glibc
 * (bins' option version). */
static const char *glibc_model(void)
{
	return hl_policy_of_family("glibc");
}

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

static int keep_copy(const char *from, const char *to)
{
	FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
	char buf[65536];
	size_t n;
	while (out && (n = fread(buf, 1, sizeof buf, in)) > 0)
		fwrite(buf, 1, n, out);
	int bad = !out || ferror(in) || fclose(out) != 0;
	if (in)
		fclose(in);
	return bad ? cli_error("diagnose: cannot write %s", to) : 0;
}

/* The resident bytes a line of /proc/PID/statm gives (its second field,
 * in pages), or 0. */
static size_t statm_text_resident(const char *text)
{
	unsigned long size, resident;
	if (sscanf(text, "%lu %lu", &size, &resident) != 2)
		return 0;
	return resident * (size_t)sysconf(_SC_PAGESIZE);
}

/* The resident bytes of process @p pid, or 0. */
static size_t statm_resident(pid_t pid)
{
	char path[64], text[256];
	snprintf(path, sizeof path, "/proc/%d/statm", (int)pid);
	FILE *f = fopen(path, "r");
	bool got = f && fgets(text, sizeof text, f);
	if (f)
		fclose(f);
	return got ? statm_text_resident(text) : 0;
}

/* Is @p setting a list of VAR=VALUE words (what a shell would take)? */
static bool is_setting(const char *setting)
{
	for (const char *p = setting; *p;) {
		p += strspn(p, " ");
		size_t k = strcspn(p, " "), name = strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_");
		if (k && (name == 0 || p[name] != '='))
			return false;
		p += k;
	}
	return true;
}

/* Runs @p argv with @p setting's variables set, sampling its RSS every
 * @p ms; peak and final into @p peak / @p final.  The final is read with
 * the program held at its exit (ptrace's exit event: every free it made is
 * done, nothing is unmapped yet): CPython frees its objects as it shuts
 * down, in its last milliseconds, which a reading every 10 ms misses (the
 * tuples program of bench/diagnose: 59.4 MiB at the last reading, 12.9 at
 * the exit).  Where ptrace is refused (a sandbox), the last reading stands
 * in.  Its CPU time (user and system) into @p cpu when not NULL.  -1 when
 * it could not be started. */
static int run_measured(char **argv, const char *setting, long long ms, size_t *peak, size_t *final,
			size_t *samples, int *status_out, bool hwm, double *cpu)
{
	/* a pipe closed by exec: the child is sampled only once it is the
	 * program, not the copy of heaplab (and its replays) that fork made */
	int gate[2];
	if (pipe2(gate, O_CLOEXEC) < 0)
		return -1;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(gate[0]);
		output_aside();
		(void)ptrace(PTRACE_TRACEME, 0, NULL, NULL);   /* refused: no exit event */
		char *copy = strdup(setting), *save = NULL;
		for (char *kv = copy ? strtok_r(copy, " ", &save) : NULL; kv; kv = strtok_r(NULL, " ", &save)) {
			char *eq = strchr(kv, '=');
			*eq = 0;
			setenv(kv, eq + 1, 1);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	close(gate[1]);
	char byte;
	while (read(gate[0], &byte, 1) < 0 && errno == EINTR)
		;
	close(gate[0]);
	struct timespec pause = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
	int status = 0;
	*peak = *final = *samples = 0;
	struct rusage use;
	bool options = false, held = false;   /* held: the final read at the exit */
	for (;;) {
		size_t rss = statm_resident(pid);
		pid_t done = wait4(pid, &status, WNOHANG, &use);
		if (done == pid && WIFSTOPPED(status)) {
			int sig = WSTOPSIG(status), event = status >> 16;
			if (event == PTRACE_EVENT_EXIT) {
				size_t at_exit = statm_resident(pid);
				if (at_exit) {
					held = true;
					*final = at_exit;
					*peak = at_exit > *peak ? at_exit : *peak;
					++*samples;
				}
				sig = 0;
			} else if (sig == SIGTRAP && !options) {
				/* stopped after its exec: from now on, its exit is an
				 * event, and so is any exec it makes (not a signal) */
				ptrace(PTRACE_SETOPTIONS, pid, NULL,
				       (void *)(long)(PTRACE_O_TRACEEXIT | PTRACE_O_TRACEEXEC));
				options = true;
				sig = 0;
			} else if (sig == SIGTRAP && event) {
				sig = 0;
			}
			ptrace(PTRACE_CONT, pid, NULL, (void *)(long)sig);
			continue;
		}
		if (done == pid) {
			/* the kernel's high-water mark, which no sampling misses: only
			 * when this copy of heaplab was small at the fork (it counts) */
			size_t high = (size_t)use.ru_maxrss * 1024;
			if (hwm && high > *peak)
				*peak = high;
			if (cpu)
				*cpu = cpu_seconds(&use);
			break;
		}
		if (rss && !held) {  /* read while it still ran: counts */
			*final = rss;
			*peak = rss > *peak ? rss : *peak;
			++*samples;
		}
		nanosleep(&pause, NULL);
	}
	*status_out = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	return *status_out == 127 ? -1 : 0;
}

/* ---- the real allocators' own memory at start ------------------------------ */

/* Resident bytes of `cat /proc/self/statm` under @p lib ("": the C
 * library's malloc): a process that has started its allocator and made
 * its few blocks (a program nobody here wrote), the median of three
 * runs; 0 when it cannot be run. */
static size_t started_resident(const char *lib)
{
	size_t got[3];
	for (int k = 0; k < 3; k++) {
		int fds[2];
		got[k] = 0;
		if (pipe2(fds, O_CLOEXEC) < 0)
			return 0;
		fflush(NULL);
		pid_t pid = fork();
		if (pid == 0) {
			dup2(fds[1], STDOUT_FILENO);
			if (*lib)
				setenv("LD_PRELOAD", lib, 1);
			else
				unsetenv("LD_PRELOAD");
			execlp("cat", "cat", "/proc/self/statm", (char *)NULL);
			_exit(127);
		}
		close(fds[1]);
		char text[256];
		ssize_t n = pid < 0 ? -1 : read(fds[0], text, sizeof text - 1);
		close(fds[0]);
		int status;
		if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) || n <= 0)
			return 0;
		text[n] = 0;
		if (!(got[k] = statm_text_resident(text)))
			return 0;
	}
	size_t lo = got[0] < got[1] ? got[0] : got[1], hi = got[0] < got[1] ? got[1] : got[0];
	return got[2] < lo ? lo : got[2] > hi ? hi : got[2];
}

/* Each candidate that preloads a real allocator gets that allocator's own
 * memory at start which its model does not hold: what a process that
 * starts it holds beyond one on the C library's malloc (its library's
 * pages, its first metadata: 2.2 MiB for jemalloc 5.3, 0.4 for mimalloc
 * 2.0.9, 5.5 for gperftools 2.10 here), less what the model holds beyond
 * the model of glibc after one malloc.  The recording ran on glibc, so what lay outside
 * its heap has none of it. */
static void allocators_own(const dx_candidate_t *cands, dx_run_t *runs, size_t n, const char *model)
{
	size_t glibc = 0, modelled = 0;
	for (size_t k = 0; k < n; k++) {
		char lib[4096];
		dx_preloaded(cands[k].real, lib, sizeof lib);
		if (!*lib || !runs[k].ok || access(lib, R_OK) != 0)
			continue;
		if (!glibc && !(glibc = started_resident("")))
			return;
		if (!modelled)
			modelled = dx_model_started(glibc_model(), model);
		size_t real = started_resident(lib), mine = dx_model_started(cands[k].policy, cands[k].conf);
		long long own = (long long)real - (long long)glibc - ((long long)mine - (long long)modelled);
		runs[k].own_bytes = real && own > 0 ? (size_t)own : 0;
	}
}

/* --verify: the recommended setting (or none) and the allocator as it is. */
static void verify(char **argv, long long ms, const dx_report_t *r, dx_verify_t *v)
{
	const dx_candidate_t *cand;
	const dx_run_t *best = dx_recommended(r, &cand);
	memset(v, 0, sizeof *v);
	v->run = r->base;
	if (best && is_setting(cand->real)) {
		snprintf(v->setting, sizeof v->setting, "%s", cand->real);
		v->run = best;
	}
	fprintf(stderr, "heaplab diagnose: verifying: running %s %s...\n", argv[0],
		*v->setting ? v->setting : "as it is");
	size_t n;
	int st;
	v->ok = run_measured(argv, v->setting, ms, &v->peak, &v->final, &v->samples, &v->status, false, NULL) == 0 && v->samples;
	if (v->ok && *v->setting) {
		fprintf(stderr, "heaplab diagnose: verifying: running %s as it is ...\n", argv[0]);
		if (run_measured(argv, "", ms, &v->asis_peak, &v->asis_final, &n, &st, false, NULL) < 0)
			v->asis_peak = v->asis_final = 0;
	}
}

/* Replays every candidate and writes the report. */
/* What the report learns besides the replays: the layers, how the run
 * ended, and the program as it is when it was recorded otherwise. */
typedef struct run_facts {
	dx_layers_t peak, final;
	const char *recorded_with;
	size_t asis_peak, asis_final;
	int ended;
	char others[1024];
	double pace;      /**< the recording's HEAPLAB_RECORD_PACE (0: none) */
} run_facts_t;

static int diagnose(const hl_trace_t *t, const char *command, const char *policies, const char *knobs,
		    const char *model, const char *html, const char *json, char **verify_argv, long long ms, bool cpython,
		    unsigned jobs, const run_facts_t *facts)
{
	size_t n;
	dx_candidate_t *cands = cpython ? dx_grid_cpython(policies, knobs, model, &n) : dx_grid(policies, knobs, model, &n);
	if (!cands)
		return cli_error("%s", hl_last_error());
	dx_run_t base, recorded = { 0 }, *runs = calloc(n, sizeof *runs);
	size_t *order = calloc(n, sizeof *order);
	if (!runs || !order)
		return cli_error("diagnose: out of memory");
	int rc = 0;
	/* CPython recorded with PYTHONMALLOC=malloc ran on the C library's
	 * malloc, not on pymalloc: what lay outside the heap is the measured
	 * RSS less that allocator's model (pools would leave glibc's headers
	 * and rounding of every small object in it, about 12 % of the peak of
	 * a program of small objects) */
	bool want_recorded = cpython && hl_trace_samples(t);
	/* the attribution (the allocator the program runs on as it is), every
	 * candidate and the recorded run's allocator, side by side */
	dx_candidate_t *all = calloc(n + 1, sizeof *all);
	dx_run_t *done = calloc(n + 1, sizeof *done);
	if (!all || !done) {
		free(all);
		free(done);
		rc = cli_error("diagnose: out of memory");
		goto out;
	}
	memcpy(all, cands, n * sizeof *cands);
	all[n] = (dx_candidate_t){ glibc_model(), model, NULL };
	dx_candidate_t as_is = { cpython ? cands[0].policy : glibc_model(), cpython ? cands[0].conf : model, NULL };
	if (dx_replay_many(t, &as_is, &base, all, n + want_recorded, done, jobs, cli_progress_cb) != 0) {
		for (size_t k = 0; k < n + 1; k++)
			dx_run_free(&done[k]);
		free(all);
		free(done);
		rc = cli_error("diagnose: %s", hl_last_error());
		goto out;
	}
	memcpy(runs, done, n * sizeof *runs);
	bool have_recorded = want_recorded && done[n].ok;
	if (want_recorded)
		recorded = done[n];
	free(all);
	free(done);
	cli_progress_done();
	allocators_own(cands, runs, n, model);
	dx_rank(runs, n, order);
	unsigned want[8];
	size_t nwant = 0;
	for (size_t k = 0; k < base.nholds && nwant < 8; k++)
		want[nwant++] = base.holds[k].site;
	dx_report_t r = { t, command, &base, runs, cands, order, n, dx_sites_resolve(t, want, nwant), NULL,
			  facts->peak, facts->final, facts->recorded_with, facts->asis_peak, facts->asis_final,
			  facts->ended, facts->others, have_recorded ? &recorded : NULL, facts->pace };
	dx_verify_t checked;
	if (verify_argv) {
		verify(verify_argv, ms, &r, &checked);
		r.verify = &checked;
	}
	if (!json || strcmp(json, "-"))
		dx_report_text(stdout, &r);
	if (json && !strcmp(json, "-")) {
		if (dx_report_json(stdout, &r) < 0)
			rc = cli_error("diagnose: cannot write the JSON report");
	} else if (json) {
		FILE *f = fopen(json, "w");
		if (!f || dx_report_json(f, &r) < 0 || fclose(f) != 0)
			rc = cli_error("diagnose: cannot write %s", json);
	}
	if (html) {
		FILE *f = fopen(html, "w");
		if (!f || dx_report_html(f, &r) < 0 || fclose(f) != 0)
			rc = cli_error("diagnose: cannot write %s", html);
		else
			fprintf(stderr, "heaplab diagnose: report written to %s\n", html);
	}
	dx_sites_free(r.sites, t);
	dx_run_free(&base);
	dx_run_free(&recorded);
out:
	for (size_t k = 0; k < n; k++)
		dx_run_free(&runs[k]);
	free(runs);
	free(order);
	dx_grid_free(cands, n);
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
	const char *sample_ms = "10", *jobs_text = NULL, *rate = NULL, *record_max = NULL;
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
		    (r = cli_opt(argc, argv, &i, "--record-max", &record_max))) {
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
	program_output_aside = json && !strcmp(json, "-");
	long long ms = cli_parse_size(sample_ms);
	if (ms < 1 || ms > 3600000)
		return cli_error("diagnose: bad --sample-ms '%s' (1..3600000)", sample_ms);
	long long jobs = jobs_text ? cli_parse_size(jobs_text) : (long long)dx_workers();
	if (jobs < 1 || jobs > 256)
		return cli_error("diagnose: bad --jobs '%s' (1..256)", jobs_text);
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
		return cli_error("%s", hl_last_error());
	dx_grid_free(check, ncand);
	/* the input's own errors first (a missing or damaged trace, a program
	 * the recorder cannot go into): a build without a model of glibc
	 * still says them */
	hl_trace_t *t = NULL;
	if (trace && !(t = cli_load_trace(trace, false)))
		return 2;
	if (!trace && recordable(argv[i]))
		return 2;
	hl_heap_t *probe = glibc_model() ? hl_heap_new(glibc_model(), *model ? model : NULL) : NULL;
	if (!probe) {
		hl_trace_free(t);
		if (!glibc_model())
			return cli_error("diagnose: no compiled-in policy models glibc, the C library the recording runs on (configure --with-policy=all)");
		return cli_error("diagnose: --model: %s", hl_last_error());
	}
	hl_heap_destroy(probe);
	char dir[4096] = "", path[4200], full[4096];
	char *command = trace ? strdup(trace) : joined(argv + i);
	int rc = 0;
	run_facts_t facts = { .ended = -1 };
	/* CPython: its small objects go to pymalloc, which maps its arenas
	 * itself, out of the recorder's sight; recorded with
	 * PYTHONMALLOC=malloc, every one is a malloc call, and pools (the model
	 * of pymalloc) replays the program as it runs */
	bool python = !trace && runnable(argv[i], full, sizeof full) && is_cpython(full);
	bool cpython = python && !getenv("PYTHONMALLOC");
	double rec_cpu = 0, asis_cpu = 0;
	if (!trace) {
		facts.recorded_with = cpython ? "PYTHONMALLOC=malloc" : NULL;
		rc = record(argv + i, sample_ms, facts.recorded_with, 1.0, dir, path, sizeof path, &facts.ended,
			    facts.others, sizeof facts.others, &rec_cpu);
		trace = path;
	}
	/* a recording made here is read as far as it goes: a program ended by
	 * a signal, or by _exit (no destructor ran), leaves it without its
	 * end, and what it holds is still the program's (a warning says so) */
	if (!rc && dir[0] && !(t = cli_load_trace(trace, true)))
		rc = 2;
	/* CPython run as it is: its RSS (recorded with PYTHONMALLOC=malloc, the
	 * recording is not the program as it is), and, where its threads
	 * take turns, its CPU time for the pace below */
	if (t && (cpython || (python && hl_trace_threads(t) > 1))) {
		size_t samples, peak, final;
		int st;
		fprintf(stderr, "heaplab diagnose: measuring %s as it is%s, without the recorder ...\n", argv[i],
			cpython ? " (pymalloc)" : "");
		if (run_measured(argv + i, "", ms, &peak, &final, &samples, &st, true, &asis_cpu) == 0 && cpython) {
			facts.asis_peak = peak;
			facts.asis_final = final;
		}
	}
	/* CPython's threads take turns by the clock (a waiting thread's timed
	 * wait of the switch interval): recorded slower, they interleave
	 * more finely than they do as the program runs, and so do the blocks
	 * they leave (shim/record_pace.c).  Recorded again with its timed
	 * waits as much longer as the recorder slowed it. */
	if (t && python && hl_trace_threads(t) > 1 && asis_cpu > 0 && rec_cpu / asis_cpu >= PACE_FROM) {
		facts.pace = rec_cpu / asis_cpu;
		fprintf(stderr, "heaplab diagnose: the recorder slowed %s %.1f times (%.2f s of CPU against %.2f s): "
				"recording again with its timed waits %.1f times as long, so that its threads take turns "
				"as they do without the recorder ...\n",
			argv[i], facts.pace, rec_cpu, asis_cpu, facts.pace);
		hl_trace_free(t);
		t = NULL;
		remove_dir(dir);
		dir[0] = 0;
		rc = record(argv + i, sample_ms, facts.recorded_with, facts.pace, dir, path, sizeof path, &facts.ended,
			    facts.others, sizeof facts.others, &rec_cpu);
		t = rc ? NULL : cli_load_trace(trace, true);
		if (!rc && !t)
			rc = 2;
	}
	if (t)
		dx_layers_read(t, &facts.peak, &facts.final);
	if (t && keep && dir[0])
		rc = keep_copy(trace, keep);
	if (t && !rc)
		rc = diagnose(t, command, policies, knobs, model, html, json, verify_wanted ? argv + i : NULL, ms, cpython,
			      (unsigned)jobs, &facts);
	hl_trace_free(t);
	if (dir[0])
		remove_dir(dir);
	free(command);
	return rc;
}
