/* The heap checker the student writes (the policy's `check`), judged: it
 * runs on a sound heap, where it must report nothing, and on heaps the
 * grader has damaged, where it must report something.  Each case runs in
 * a child process of its own (a checker that crashes or loops on a damaged
 * heap has not reported it).
 *
 * The heap: 192 blocks of 8 to 507 bytes, every third freed, then three
 * live 48-byte blocks g1, a, g2, a between two live guards so that freeing
 * it merges with nothing.  The damage assumes only what every boundary-tag
 * allocator of the lab has: its metadata sits next to the payload.
 *   smashed header  the two words below a's payload (its header, and the
 *                   word before it) get a plausible wrong size: bit 8
 *                   flipped, the flag bits left alone
 *   write past end  the program writes 8 bytes of 'A' just past a's usable
 *                   size (a's footer, or the next block's header)
 *   freed twice     a is freed and allocated again (the same block); the
 *                   two words below it are then put back as the free left
 *                   them: the block the program holds is marked free, as a
 *                   second free of a reused pointer leaves it */
#include "config.h"
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "grade.h"

enum { SOUND, SMASHED, PAST_END, FREED_TWICE };
enum { NBLOCKS = 192, TARGET = 48, REUSE_TRIES = 4096, CHECK_SECONDS = 10 };

static const char *const case_names[GR_CASES] = {
	[SOUND] = "sound heap", [SMASHED] = "smashed header",
	[PAST_END] = "write past the end", [FREED_TWICE] = "block freed twice",
};

/* A heap with live and free blocks, and a live target between guards. */
static void *build(hl_heap_t *h)
{
	uint32_t x = 12345;
	void *p[NBLOCKS];
	for (int i = 0; i < NBLOCKS; i++) {
		x = x * 1103515245u + 12345u;
		p[i] = hl_malloc(h, 8 + (x >> 16) % 500);
	}
	for (int i = 1; i < NBLOCKS; i += 3)
		hl_free(h, p[i]);
	hl_malloc(h, TARGET);
	void *a = hl_malloc(h, TARGET);
	hl_malloc(h, TARGET);
	return a;
}

/* Frees a and allocates until the same block comes back, then restores
 * the words below it as the free left them.  false when it never came. */
static bool free_twice(hl_heap_t *h, char *a)
{
	uint64_t freed[2];
	hl_free(h, a);
	memcpy(freed, a - sizeof freed, sizeof freed);
	for (int i = 0; i < REUSE_TRIES; i++) {
		char *b = hl_malloc(h, TARGET);
		if (!b)
			return false;
		if (b == a) {
			memcpy(a - sizeof freed, freed, sizeof freed);
			return true;
		}
	}
	return false;
}

static bool damage(hl_heap_t *h, int k, char *a)
{
	uint64_t w;
	switch (k) {
	case SMASHED:
		for (int i = 1; i <= 2; i++) {
			memcpy(&w, a - i * 8, 8);
			w ^= 0x100;
			memcpy(a - i * 8, &w, 8);
		}
		return true;
	case PAST_END:
		memset(a + hl_usable_size(h, a), 'A', 8);
		return true;
	case FREED_TWICE:
		return free_twice(h, a);
	}
	return true;
}

static void child_case(const gr_opts_t *o, int k, int fd)
{
	gr_case_t out = { .name = case_names[k], .damaged = k != SOUND };
	alarm(CHECK_SECONDS);
	hl_heap_t *h = hl_heap_new(o->policy, o->conf);
	char *a = h ? build(h) : NULL;
	if (!a) {
		snprintf(out.note, sizeof out.note, "cannot build the heap: %s", h ? "out of memory" : hl_last_error());
	} else if (!(out.done = damage(h, k, a))) {
		snprintf(out.note, sizeof out.note, "the freed block was never handed out again");
	} else {
		FILE *rep = tmpfile();
		out.problems = hl_check(h, rep);
		if (rep) {
			rewind(rep);
			if (fgets(out.note, sizeof out.note, rep))
				out.note[strcspn(out.note, "\n")] = 0;
			fclose(rep);
		}
	}
	ssize_t w = write(fd, &out, sizeof out);
	_exit(w == (ssize_t)sizeof out ? 0 : 3);
}

static void run_case(const gr_opts_t *o, int k, gr_case_t *c)
{
	int fds[2];
	memset(c, 0, sizeof *c);
	c->name = case_names[k];
	c->damaged = k != SOUND;
	if (pipe(fds) < 0) {
		snprintf(c->note, sizeof c->note, "cannot start the case");
		return;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[0]);
		int null = open("/dev/null", O_WRONLY);
		dup2(null, STDERR_FILENO);
		child_case(o, k, fds[1]);
	}
	close(fds[1]);
	gr_case_t got;
	ssize_t n = pid < 0 ? -1 : read(fds[0], &got, sizeof got);
	close(fds[0]);
	int status = 0;
	if (pid > 0)
		waitpid(pid, &status, 0);
	if (n == (ssize_t)sizeof got) {
		*c = got;
		c->name = case_names[k];
		return;
	}
	/* The damage or the checker killed the child: the damage was made
	 * (a crash in the damage itself would be the grader's bug). */
	c->done = true;
	c->problems = -1;
	snprintf(c->note, sizeof c->note, "the checker %s",
		 WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM ? "did not return" :
		 WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "died");
}

void gr_judge_checker(const gr_opts_t *o, gr_checker_t *c)
{
	memset(c, 0, sizeof *c);
	for (int k = 0; k < GR_CASES; k++) {
		gr_case_t *x = &c->cases[k];
		run_case(o, k, x);
		if (!x->damaged) {
			c->sound_ok = x->done && x->problems == 0;
		} else if (x->done) {
			c->injected++;
			c->caught += x->problems > 0;
		}
	}
}
