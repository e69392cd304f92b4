/*
 * The what-if candidates replayed side by side: one process per CPU this
 * one may run on, each taking the next candidate from a shared queue.
 *
 *   parent ──fork──▶ worker 1 … worker W-1       (copies of the recording,
 *     │                 │                          shared until written)
 *     ├── queue: a pipe of candidate numbers, read 4 bytes at a time
 *     │                 │
 *     │    replays k, writes its dx_run_t, samples and holds to result k
 *     │                 (an anonymous memory file, one per candidate)
 *     └── replays the attribution (the base, the longest) and then takes
 *         candidates too, with the progress line; waits for the workers
 *         and reads back the results they wrote
 *
 * Processes, not threads: a replay's heap is the model's whole state, and
 * a worker that fails (out of memory, a crash in a policy) loses only its
 * candidate, which the report names.
 */
#include "config.h"
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "diagnose.h"

unsigned dx_workers(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
		return (unsigned)CPU_COUNT(&set);
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (unsigned)n : 1;
}

static void replay_one(const hl_trace_t *t, const dx_candidate_t *c, dx_run_t *run, vis_progress_fn progress)
{
	if (dx_replay(t, c->policy, c->conf, false, progress, run) != 0) {
		snprintf(run->policy, sizeof run->policy, "%s", c->policy);
		snprintf(run->conf, sizeof run->conf, "%s", c->conf ? c->conf : "");
		snprintf(run->message, sizeof run->message, "%s", hl_last_error());
	}
}

/* Moves all @p n bytes to (@p out) or from @p fd, whatever a signal or a
 * short transfer does; false at an error or an early end. */
static bool transfer(int fd, void *p, size_t n, bool out)
{
	char *b = p;
	while (n) {
		ssize_t done = out ? write(fd, b, n) : read(fd, b, n);
		if (done < 0 && errno == EINTR)
			continue;
		if (done <= 0)
			return false;
		b += done;
		n -= (size_t)done;
	}
	return true;
}

static bool write_all(int fd, const void *p, size_t n) { return transfer(fd, (void *)p, n, true); }
static bool read_all(int fd, void *p, size_t n) { return transfer(fd, p, n, false); }

/* The next candidate of the queue; false when it is empty. */
static bool next_job(int queue, uint32_t *k)
{
	return read_all(queue, k, sizeof *k);
}

static bool save_run(int fd, const dx_run_t *run)
{
	return write_all(fd, run, sizeof *run) &&
	       write_all(fd, run->samples, run->nsamples * sizeof *run->samples) &&
	       write_all(fd, run->holds, run->nholds * sizeof *run->holds);
}

/* A worker's result, read back; false when it wrote none (it died). */
static bool load_run(int fd, dx_run_t *run)
{
	if (lseek(fd, 0, SEEK_SET) != 0 || !read_all(fd, run, sizeof *run)) {
		memset(run, 0, sizeof *run);
		return false;
	}
	run->samples = run->nsamples ? malloc(run->nsamples * sizeof *run->samples) : NULL;
	run->holds = run->nholds ? malloc(run->nholds * sizeof *run->holds) : NULL;
	if ((run->nsamples && (!run->samples || !read_all(fd, run->samples, run->nsamples * sizeof *run->samples))) ||
	    (run->nholds && (!run->holds || !read_all(fd, run->holds, run->nholds * sizeof *run->holds)))) {
		dx_run_free(run);
		memset(run, 0, sizeof *run);
		return false;
	}
	return true;
}

static int run_sequentially(const hl_trace_t *t, const dx_candidate_t *base, dx_run_t *base_run,
			    const dx_candidate_t *cands, size_t n, dx_run_t *runs, vis_progress_fn progress)
{
	int rc = base ? dx_replay(t, base->policy, base->conf, true, progress, base_run) : 0;
	for (size_t k = 0; k < n; k++)
		replay_one(t, &cands[k], &runs[k], progress);
	return rc;
}

int dx_replay_many(const hl_trace_t *t, const dx_candidate_t *base, dx_run_t *base_run, const dx_candidate_t *cands,
		   size_t n, dx_run_t *runs, unsigned workers, vis_progress_fn progress)
{
	memset(runs, 0, n * sizeof *runs);
	if (workers > n + (base != NULL))
		workers = (unsigned)(n + (base != NULL));
	int queue[2] = { -1, -1 };
	int *result = calloc(n ? n : 1, sizeof *result);
	pid_t *pid = calloc(workers ? workers : 1, sizeof *pid);
	bool *mine = calloc(n ? n : 1, sizeof *mine);
	size_t opened = 0;
	bool queued = false;
	if (workers >= 2 && result && pid && mine && n * sizeof(uint32_t) <= 65536 && pipe(queue) == 0) {
		for (; opened < n; opened++)
			if ((result[opened] = memfd_create("heaplab-candidate", MFD_CLOEXEC)) < 0)
				break;
		queued = opened == n;
		for (uint32_t k = 0; queued && k < n; k++)
			queued = write_all(queue[1], &k, sizeof k);   /* fits the pipe: 4 bytes each */
		close(queue[1]);
		if (!queued)
			close(queue[0]);
	}
	if (!queued) {       /* one CPU, or no pipe or memory file: one by one */
		for (size_t k = 0; k < opened; k++)
			close(result[k]);
		free(result);
		free(pid);
		free(mine);
		return run_sequentially(t, base, base_run, cands, n, runs, progress);
	}
	fflush(NULL);
	unsigned started = 0;
	for (unsigned w = 1; w < workers; w++) {
		pid_t p = fork();
		if (p == 0) {
			uint32_t k;
			while (next_job(queue[0], &k)) {
				dx_run_t run;
				replay_one(t, &cands[k], &run, NULL);
				bool saved = save_run(result[k], &run);
				dx_run_free(&run);
				if (!saved)
					_exit(1);
			}
			_exit(0);
		}
		if (p > 0)
			pid[started++] = p;
	}
	/* the parent is a worker too, the one that shows its progress: first
	 * the attribution (the longest replay), then what the queue has left */
	int rc = base ? dx_replay(t, base->policy, base->conf, true, progress, base_run) : 0;
	uint32_t k;
	while (next_job(queue[0], &k)) {
		replay_one(t, &cands[k], &runs[k], progress);
		mine[k] = true;
	}
	close(queue[0]);
	int ended = 0;
	for (unsigned w = 0; w < started; w++) {
		int status;
		while (waitpid(pid[w], &status, 0) < 0 && errno == EINTR)
			;
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			ended = status;
	}
	for (size_t c = 0; c < n; c++) {
		if (!mine[c] && !load_run(result[c], &runs[c])) {
			snprintf(runs[c].policy, sizeof runs[c].policy, "%s", cands[c].policy);
			snprintf(runs[c].conf, sizeof runs[c].conf, "%s", cands[c].conf ? cands[c].conf : "");
			if (ended && WIFSIGNALED(ended))
				snprintf(runs[c].message, sizeof runs[c].message,
					 "its replay's process was ended by signal %d (%s)", WTERMSIG(ended),
					 strsignal(WTERMSIG(ended)));
			else
				snprintf(runs[c].message, sizeof runs[c].message, "its replay's process wrote no result");
		}
		close(result[c]);
	}
	free(result);
	free(pid);
	free(mine);
	return rc;
}
