/*
 * The real allocators' own memory at start (diagnose.h, "Running the
 * program"): a candidate that preloads a real allocator carries what that
 * allocator holds of itself in a process that has just started it (its
 * library's pages, its first metadata: 2.2 MiB for jemalloc 5.3, 0.4 for
 * mimalloc 2.0.9, 5.5 for gperftools 2.10 here), which its model does not
 * hold.  The recording ran on glibc, so what lay outside its heap has none
 * of it.  Measured on this machine, on a program nobody here wrote.
 */
#include "config.h"
#include <fcntl.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include "diagnose.h"

/* Resident bytes of `cat /proc/self/statm` under @p lib ("": the C
 * library's malloc), once; 0 when it cannot be run. */
static size_t started_once(const char *lib)
{
	int fds[2];
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
	return dx_statm_bytes(text);
}

/* The same, the median of three runs; 0 when one cannot be run. */
static size_t started_resident(const char *lib)
{
	size_t got[3];
	for (int k = 0; k < 3; k++)
		if (!(got[k] = started_once(lib)))
			return 0;
	size_t lo = got[0] < got[1] ? got[0] : got[1], hi = got[0] < got[1] ? got[1] : got[0];
	return got[2] < lo ? lo : got[2] > hi ? hi : got[2];
}

void dx_allocators_own(const dx_candidate_t *cands, dx_run_t *runs, size_t n, const char *model)
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
			modelled = dx_model_started(hl_policy_of_family("glibc"), model);
		size_t real = started_resident(lib), mine = dx_model_started(cands[k].policy, cands[k].conf);
		long long own = (long long)real - (long long)glibc - ((long long)mine - (long long)modelled);
		runs[k].own_bytes = real && own > 0 ? (size_t)own : 0;
	}
}
