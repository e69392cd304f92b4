/*
 * A program run for real, without the recorder, under a setting
 * (diagnose.h, "Running the program"): its RSS read from /proc/PID/statm
 * every few milliseconds and once more at its exit, with the program held
 * there by ptrace.  --verify measures the recommended setting this way,
 * and CPython is measured as it is (its recording ran with
 * PYTHONMALLOC=malloc, so is not the program as it is).
 */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "diagnose.h"

size_t dx_statm_bytes(const char *statm)
{
	unsigned long size, resident;
	if (sscanf(statm, "%lu %lu", &size, &resident) != 2)
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
	return got ? dx_statm_bytes(text) : 0;
}

void dx_set_variables(const char *setting)
{
	char *copy = strdup(setting), *save = NULL;
	for (char *kv = copy ? strtok_r(copy, " ", &save) : NULL; kv; kv = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(kv, '=');
		if (!eq)
			continue;
		*eq = 0;
		setenv(kv, eq + 1, 1);
	}
	free(copy);
}

/* The child: traced by its parent (refused: no exit event), the setting's
 * variables set, then the program. */
static void measured_child(char **argv, const char *setting, const dx_program_opts_t *o, int gate)
{
	close(gate);
	if (o->output_aside)
		dup2(2, 1);
	(void)ptrace(PTRACE_TRACEME, 0, NULL, NULL);
	dx_set_variables(setting);
	execvp(argv[0], argv);
	_exit(127);
}

/* The child @p pid stopped with @p status: at its exit (the final is read
 * now, every free it made done, nothing unmapped yet), after its exec (its
 * exit and any exec it makes become events from now on, not signals), or
 * at a signal, which it gets when it goes on. */
static void stopped(pid_t pid, int status, bool *options, bool *held, dx_measured_t *m)
{
	int sig = WSTOPSIG(status), event = status >> 16;
	if (event == PTRACE_EVENT_EXIT) {
		size_t at_exit = statm_resident(pid);
		if (at_exit) {
			*held = true;
			m->final = at_exit;
			m->peak = at_exit > m->peak ? at_exit : m->peak;
			m->samples++;
		}
		sig = 0;
	} else if (sig == SIGTRAP && !*options) {
		ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)(long)(PTRACE_O_TRACEEXIT | PTRACE_O_TRACEEXEC));
		*options = true;
		sig = 0;
	} else if (sig == SIGTRAP && event) {
		sig = 0;
	}
	ptrace(PTRACE_CONT, pid, NULL, (void *)(long)sig);
}

int dx_run_measured(char **argv, const char *setting, bool hwm, const dx_program_opts_t *o, dx_measured_t *m)
{
	memset(m, 0, sizeof *m);
	/* a pipe closed by exec: the child is sampled only once it is the
	 * program, not the copy of heaplab (and its replays) that fork made */
	int gate[2];
	if (pipe2(gate, O_CLOEXEC) < 0)
		return vis_fail("diagnose: pipe: %s", strerror(errno));
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0)
		measured_child(argv, setting, o, gate[0]);
	int fork_error = errno;
	close(gate[1]);
	char byte;
	while (pid > 0 && read(gate[0], &byte, 1) < 0 && errno == EINTR)
		;
	close(gate[0]);
	if (pid < 0)
		return vis_fail("diagnose: fork: %s", strerror(fork_error));
	struct timespec pause = { (time_t)(o->sample_ms / 1000), (long)(o->sample_ms % 1000) * 1000000L };
	int status = 0;
	struct rusage use;
	bool options = false, held = false;   /* held: the final read at the exit */
	for (;;) {
		size_t rss = statm_resident(pid);
		pid_t done = wait4(pid, &status, WNOHANG, &use);
		if (done == pid && WIFSTOPPED(status)) {
			stopped(pid, status, &options, &held, m);
			continue;
		}
		if (done == pid) {
			/* the kernel's high-water mark, which no sampling misses: only
			 * when this copy of heaplab was small at the fork (it counts) */
			size_t high = (size_t)use.ru_maxrss * 1024;
			if (hwm && high > m->peak)
				m->peak = high;
			break;
		}
		if (rss && !held) {  /* read while it still ran: counts */
			m->final = rss;
			m->peak = rss > m->peak ? rss : m->peak;
			m->samples++;
		}
		nanosleep(&pause, NULL);
	}
	m->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (m->status == 127)
		return vis_fail("diagnose: cannot run %s (exit status 127)", argv[0]);
	return 0;
}
