/*
 * fork() while other threads hold stdio and malloc locks (what glibc's
 * malloc/tst-malloc-fork-deadlock checks; this is our own program).
 *
 * Readers call getline on a file of one 50000-byte line: each holds its
 * FILE's lock while getline grows the line with realloc.  One thread runs
 * fflush(NULL), which holds the C library's list of open files while it
 * takes each FILE's lock.  Forkers fork and wait.  glibc's fork takes
 * that list's lock before its malloc locks, so no cycle forms; an
 * allocator whose pthread_atfork handler takes its own locks first can
 * wait on a reader that waits on it (forker: allocator lock, wants the
 * list; flusher: list, wants a FILE; reader: FILE, wants the allocator).
 *
 * The readers read READS lines each; the flusher and the forkers run
 * until the readers are done (on a busy machine the forkers may wait on
 * the list most of that time: what matters is that every thread ends).
 * Exit 0 when every thread has ended, each child having exited 17; 1 with
 * one line otherwise.  A hang (the cycle) is the caller's timeout.
 *
 * usage: stdio_fork [READS]
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

enum { FORKERS = 4, READERS = 8 };

static atomic_bool stop;
static atomic_int failed;
static int reads_each;
static atomic_int forks;
static char path[] = "/tmp/heaplab-stdio-fork-XXXXXX";

static void *forker(void *arg)
{
	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		pid_t pid = fork();
		if (pid < 0) {
			atomic_store(&failed, 1);
			break;
		}
		if (pid == 0)
			_exit(17);
		int status;
		if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 17) {
			atomic_store(&failed, 1);
			break;
		}
		atomic_fetch_add(&forks, 1);
	}
	return NULL;
}

static void *reader(void *arg)
{
	(void)arg;
	FILE *f = fopen(path, "r");
	if (!f) {
		atomic_store(&failed, 1);
		return NULL;
	}
	for (int i = 0; i < reads_each; i++) {
		rewind(f);
		char *line = NULL;
		size_t cap = 0;
		if (getline(&line, &cap, f) != 50001)
			atomic_store(&failed, 1);
		free(line);
	}
	fclose(f);
	return NULL;
}

static void *flusher(void *arg)
{
	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed))
		if (fflush(NULL) != 0)
			atomic_store(&failed, 1);
	return NULL;
}

int main(int argc, char **argv)
{
	reads_each = argc > 1 ? atoi(argv[1]) : 2000;
	int fd = mkstemp(path);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
	if (!f) {
		perror("stdio_fork: temporary file");
		return 1;
	}
	for (int i = 0; i < 50000; i++)
		fputc('x', f);
	fputc('\n', f);
	if (fclose(f) != 0) {
		perror("stdio_fork: temporary file");
		return 1;
	}
	pthread_t fk[FORKERS], rd[READERS], fl;
	for (int i = 0; i < READERS; i++)
		pthread_create(&rd[i], NULL, reader, NULL);
	pthread_create(&fl, NULL, flusher, NULL);
	for (int i = 0; i < FORKERS; i++)
		pthread_create(&fk[i], NULL, forker, NULL);
	for (int i = 0; i < READERS; i++)
		pthread_join(rd[i], NULL);
	atomic_store(&stop, true);
	pthread_join(fl, NULL);
	for (int i = 0; i < FORKERS; i++)
		pthread_join(fk[i], NULL);
	unlink(path);
	if (atomic_load(&failed)) {
		fprintf(stderr, "stdio_fork: a fork, a child or a getline failed\n");
		return 1;
	}
	printf("reads %d forks %d\n", READERS * reads_each, atomic_load(&forks));
	return 0;
}
