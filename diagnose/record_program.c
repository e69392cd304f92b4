/*
 * The program diagnosed, recorded (diagnose.h, "Running the program"):
 * found as execvp would find it, checked (an LD_PRELOAD library cannot go
 * into a statically linked program), run once on the C library's malloc
 * with libheaplab-record.so preloaded, and its recording read.  A wrapper
 * and the program it starts record apart (rec.PID.rep each): the largest
 * recording is the one diagnosed, the others are named.  CPython is
 * recorded with PYTHONMALLOC=malloc, its timed waits counted in its own
 * time; one with several threads is recorded --draws times
 * (dx_record_program).
 */
#include "config.h"
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "diagnose.h"

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

/* Is the program CPython (its file, links followed)? */
static bool is_cpython(const char *path)
{
	char real[4096];
	return hl_cpython_file(realpath(path, real) ? real : path);
}

int dx_recordable(const char *prog, const char *recorder)
{
	char full[4096];
	if (!runnable(prog, full, sizeof full))
		return vis_fail("diagnose: cannot run %s: no such program", prog);
	if (statically_linked(full))
		return vis_fail("diagnose: %s is statically linked: the recorder (an LD_PRELOAD library) cannot go into it",
				prog);
	if (*HL_SANITIZERS_BUILD)
		return vis_fail("diagnose: this heaplab is built with -fsanitize=%s, whose runtime owns malloc: "
				"its recorder cannot go into another program (use a build without sanitizers)",
				HL_SANITIZERS_BUILD);
	if (access(recorder, R_OK) != 0)
		return vis_fail("diagnose: cannot find %s (set HEAPLAB_RECORDER to its path)", recorder);
	return 0;
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

/* LD_PRELOAD with @p lib first, what was there kept (malloc'd), or NULL. */
static char *preload_first(const char *lib)
{
	const char *old = getenv("LD_PRELOAD");
	size_t n = strlen(lib) + (old ? strlen(old) : 0) + 2;
	char *v = malloc(n);
	if (v)
		snprintf(v, n, "%s%s%s", lib, old && *old ? ":" : "", old ? old : "");
	return v;
}

/* The child: the recorder's variables set (@p extra too, "VAR=VALUE" or
 * NULL), then the program; when it cannot be run, its errno goes back
 * through @p errpipe. */
static void record_child(char **argv, const dx_program_opts_t *o, const char *extra, const char *pace,
			 const char *dir, const char *preload, int errpipe)
{
	char prefix[4200], ms[32];
	snprintf(prefix, sizeof prefix, "%s/rec", dir);
	snprintf(ms, sizeof ms, "%lld", o->sample_ms);
	setenv("HEAPLAB_RECORD", prefix, 1);
	setenv("HEAPLAB_RECORD_MS", ms, 1);
	if (pace)
		setenv("HEAPLAB_RECORD_PACE", pace, 1);
	if (extra) {
		dx_set_variables(extra);
		if (strstr(extra, "PYTHONMALLOC=malloc"))   /* past pymalloc: the recording says so */
			setenv("HEAPLAB_RECORD_FRONT", "pymalloc", 1);
	}
	setenv("LD_PRELOAD", preload, 1);
	if (o->output_aside)
		dup2(2, 1);
	execvp(argv[0], argv);
	int err = errno;
	(void)!write(errpipe, &err, sizeof err);
	_exit(127);
}

/* Runs the program under the recorder (with @p extra set, and
 * HEAPLAB_RECORD_PACE=MODE:NS from @p rec's pace and pace_call_ns,
 * unless its pace is NULL); the recording's path, how the
 * run ended and the other recordings into @p rec.  dx_record_program's
 * return values. */
static int record(char **argv, const dx_program_opts_t *o, const char *extra, dx_recorded_t *rec)
{
	char pace[48];
	if (rec->pace)
		snprintf(pace, sizeof pace, "%s:%d", rec->pace, rec->pace_call_ns);
	const char *tmp = getenv("TMPDIR");
	snprintf(rec->dir, sizeof rec->dir, "%s/heaplab-diagnose.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(rec->dir)) {
		rec->dir[0] = 0;
		return vis_fail("diagnose: cannot make a directory for the recording: %s", strerror(errno));
	}
	if (o->notes)
		fprintf(o->notes, "heaplab diagnose: recording %s ...\n", argv[0]);
	if (access(o->recorder, R_OK) != 0)
		return vis_fail("diagnose: cannot find %s (set HEAPLAB_RECORDER to its path)", o->recorder);
	char *preload = preload_first(o->recorder);
	if (!preload)
		return vis_fail("diagnose: out of memory");
	int errpipe[2];
	if (pipe2(errpipe, O_CLOEXEC) < 0) {
		free(preload);
		return vis_fail("diagnose: pipe: %s", strerror(errno));
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0)
		record_child(argv, o, extra, rec->pace ? pace : NULL, rec->dir, preload, errpipe[1]);
	int fork_error = errno, err = 0;
	free(preload);
	close(errpipe[1]);
	while (pid > 0 && read(errpipe[0], &err, sizeof err) < 0 && errno == EINTR)
		;
	close(errpipe[0]);
	if (pid < 0)
		return vis_fail("diagnose: fork: %s", strerror(fork_error));
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (err)
		return vis_fail("diagnose: cannot run %s: %s", argv[0], strerror(err));
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		return 1;
	rec->ended = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (rec->ended && o->notes)
		fprintf(o->notes, "heaplab diagnose: note: %s %s %d; diagnosing what it recorded\n", argv[0],
			WIFEXITED(status) ? "exited with status" : "was ended by signal",
			WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	if (largest_recording(rec->dir, rec->path, sizeof rec->path, rec->others, sizeof rec->others) < 0)
		return vis_fail("diagnose: %s wrote no recording (is it dynamically linked?)", argv[0]);
	return 0;
}

/* The most bytes @p t's blocks hold at once: how far its threads' work
 * overlapped.  The recorded run's peak RSS says less of it: the C
 * allocator under the recorder keeps much of one burst's memory for the
 * next, whatever the overlap (the seed's program: 9 recordings, their
 * peak RSS within 62.5-64.4 MiB, their live peaks 21-29 MiB, and the
 * model's peak for the program as it is follows the live peak). */
static size_t live_peak(const hl_trace_t *t)
{
	size_t peak = 0;
	return hl_trace_live_peak(t, &peak, NULL) == 0 ? peak : 0;
}

/* Records the program @p o->draws - 1 times more (@p rec is the first
 * recording, read) and keeps the recording of median live peak: threads
 * that take turns by the clock take them in another order each run, and
 * one recording is one draw of it.  The others are thrown away; their
 * live peaks go to rec->draw_live_peaks. */
static int record_draws(char **argv, const dx_program_opts_t *o, dx_recorded_t *rec)
{
	unsigned want = o->draws ? o->draws : DX_DRAWS;
	if (want > DX_DRAWS_MAX)
		want = DX_DRAWS_MAX;
	dx_recorded_t *draw = calloc(want, sizeof *draw);
	if (!draw)
		return vis_fail("diagnose: out of memory");
	size_t peak[DX_DRAWS_MAX] = { live_peak(rec->trace) };
	hl_trace_free(rec->trace);   /* one in memory at a time */
	rec->trace = NULL;
	draw[0] = *rec;
	int rc = 0;
	unsigned n = 1;
	while (n < want && !rc) {
		draw[n] = *rec;   /* what is known of the program goes with each */
		draw[n].dir[0] = 0;
		if (o->notes)
			fprintf(o->notes, "heaplab diagnose: recording %s again (%u of %d: the order its threads take "
				"turns in is one draw of the clock's) ...\n", argv[0], n + 1, want);
		rc = record(argv, o, rec->recorded_with, &draw[n]);   /* paced as the first */
		if (!rc && !(draw[n].trace = o->load(draw[n].path)))
			rc = 1;
		if (!rc)
			peak[n] = live_peak(draw[n].trace);
		hl_trace_free(draw[n].trace);
		draw[n].trace = NULL;
		n++;
	}
	/* the median: the middle of the draws sorted by peak */
	unsigned order[DX_DRAWS_MAX];
	for (unsigned i = 0; i < n; i++) {
		unsigned k = i;
		for (; k > 0 && peak[order[k - 1]] > peak[i]; k--)
			order[k] = order[k - 1];
		order[k] = i;
	}
	unsigned pick = order[n / 2];
	for (unsigned i = 0; i < n; i++)
		if (i != pick || rc)
			remove_dir(draw[i].dir);
	if (!rc) {
		*rec = draw[pick];
		rec->ndraws = n;
		rec->draw_picked = pick;
		memcpy(rec->draw_live_peaks, peak, sizeof peak);
		if (!(rec->trace = o->load(rec->path)))
			rc = 1;
	}
	free(draw);
	return rc;
}

/* What a call of CPython's allocator takes in the program as it runs on
 * pymalloc, in ns of its thread's time, where the recorded run, on glibc
 * past pymalloc, leaves the whole call out (HEAPLAB_RECORD_PACE=
 * allocator:NS).  Without it the recorded threads get through more of
 * their work in a turn than alone, and the seed's bursts overlap less.
 * Chosen on this machine (CPython 3.11.7) as the count whose recorded
 * runs overlap as the program alone does: most dicts live at once in
 * bench/diagnose/repro_live.py 2 0.5, median (quartiles) of 31 runs taken
 * in turns (bench/diagnose/pace_calls.py _build 31 0 14): alone 48,000
 * (45,800-54,100), recorded at 0 ns 45,600 (37,600-50,700), at 14 ns
 * 46,200 (40,000-52,600); 41 runs of each one after the other: 48,800
 * alone, 39,900 at 0 ns, 48,300 at 14; 25 runs in turns: 47,400 alone,
 * 50,100 at 14 ns, 53,900 at 20, 55,700 at 26.  Timing the builds on their
 * threads' clocks (with a count of each thread's left-out time added to
 * the recorder for the purpose) says as much, noisily: a burst built in
 * 6.5 ms alone counted 3.7 ms recorded, over 200,000 calls (14 ns), but
 * other runs gave 0 to 13 ns, and 10 to 23 for four threads building
 * tuples. */
enum { PYMALLOC_CALL_NS = 14 };

int dx_record_program(char **argv, const dx_program_opts_t *o, dx_recorded_t *rec)
{
	memset(rec, 0, sizeof *rec);
	rec->ended = -1;
	/* CPython: its small objects go to pymalloc, which maps its arenas
	 * itself, out of the recorder's sight; recorded with
	 * PYTHONMALLOC=malloc, every one is a malloc call, and pools (the
	 * model of pymalloc) replays the program as it runs */
	char full[4096];
	bool python = runnable(argv[0], full, sizeof full) && is_cpython(full);
	rec->cpython = python && !getenv("PYTHONMALLOC");
	rec->recorded_with = rec->cpython ? "PYTHONMALLOC=malloc" : NULL;
	/* CPython's threads take turns by the clock (a waiting thread's timed
	 * wait of the switch interval), and the recorder slows their work,
	 * not the clock: its timed waits are counted in its own time, the
	 * recorder's work left out, and the C allocator's too where the
	 * program runs on pymalloc, much the faster (shim/record_pace.c) */
	rec->pace = !python ? NULL : rec->cpython ? "allocator" : "recorder";
	rec->pace_call_ns = rec->cpython ? PYMALLOC_CALL_NS : 0;
	int rc = record(argv, o, rec->recorded_with, rec);
	if (!rc && !(rec->trace = o->load(rec->path)))
		rc = 1;
	if (rc)
		return rc;
	/* CPython run as it is: its RSS (recorded with PYTHONMALLOC=malloc,
	 * the recording is not the program as it is) */
	if (rec->cpython) {
		if (o->notes)
			fprintf(o->notes, "heaplab diagnose: measuring %s as it is (pymalloc), without the recorder ...\n",
				argv[0]);
		dx_measured_t asis = { 0 };
		if (dx_run_measured(argv, "", true, o, &asis) == 0) {
			rec->asis_peak = asis.peak;
			rec->asis_final = asis.final;
		}
	}
	if (python && hl_trace_threads(rec->trace) > 1 && o->draws != 1)
		rc = record_draws(argv, o, rec);
	return rc;
}

void dx_recording_given(hl_trace_t *t, const char *path, dx_recorded_t *rec)
{
	memset(rec, 0, sizeof *rec);
	rec->trace = t;
	rec->ended = -1;
	/* a CPython recording made past pymalloc (diagnose's own, or one made
	 * by hand with HEAPLAB_RECORD_FRONT=pymalloc) is replayed behind it */
	const char *front = hl_trace_front(t);
	if (front && !strcmp(front, "pymalloc")) {
		rec->cpython = true;
		rec->recorded_with = "PYTHONMALLOC=malloc";
	}
	snprintf(rec->path, sizeof rec->path, "%s", path);
}

int dx_recording_keep(const dx_recorded_t *rec, const char *to)
{
	if (!rec->dir[0])
		return 0;
	FILE *in = fopen(rec->path, "rb"), *out = in ? fopen(to, "wb") : NULL;
	char buf[65536];
	size_t n;
	while (out && (n = fread(buf, 1, sizeof buf, in)) > 0)
		fwrite(buf, 1, n, out);
	int bad = !out || ferror(in) || fclose(out) != 0;
	if (in)
		fclose(in);
	return bad ? vis_fail("diagnose: cannot write %s", to) : 0;
}

void dx_recorded_free(dx_recorded_t *rec)
{
	hl_trace_free(rec->trace);
	rec->trace = NULL;
	if (rec->dir[0])
		remove_dir(rec->dir);
	rec->dir[0] = 0;
}
