/*
 * fork() from a signal handler that may interrupt malloc, free or another
 * fork, in a process with one thread (what glibc's malloc/tst-mallocfork2
 * checks; this is our own program).  glibc's fork takes no malloc lock
 * while the process has never had a second thread, so the handler's fork
 * cannot wait on a lock its own thread holds.
 *
 * A helper process sends SIGUSR1 to this one again and again; the handler
 * forks a child that exits at once and waits for it.  The main loop
 * frees and allocates blocks of up to 70000 bytes and forks every seventh
 * round or so.  Exit 0 after ROUNDS rounds with every child exiting 0 and
 * no NULL from malloc; 1 with one line otherwise.  A hang is the caller's
 * timeout.
 *
 * usage: signal_fork [ROUNDS]
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

enum { SLOTS = 1009, MAX_SIZE = 70000 };

static volatile sig_atomic_t handler_failed;
static volatile sig_atomic_t handler_forks;

/* 0 when the child exited 0, -1 otherwise */
static int fork_and_reap(void)
{
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0)
		_exit(0);
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return status == 0 ? 0 : -1;
}

static void on_usr1(int sig)
{
	(void)sig;
	int saved = errno;
	if (fork_and_reap() != 0)
		handler_failed = 1;
	handler_forks++;
	errno = saved;
}

/* The helper: a signal every two to five milliseconds until killed. */
static void send_signals(pid_t target)
{
	unsigned seed = (unsigned)getpid();
	for (;;) {
		if (kill(target, SIGUSR1) != 0)
			_exit(1);
		usleep(2000 + rand_r(&seed) % 3000);
	}
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 300;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL) != 0) {
		perror("signal_fork: sigaction");
		return 1;
	}
	pid_t self = getpid();
	pid_t sender = fork();
	if (sender < 0) {
		perror("signal_fork: fork");
		return 1;
	}
	if (sender == 0)
		send_signals(self);

	static void *slot[SLOTS];
	unsigned seed = 1;
	int forks = 0, rc = 0;
	for (int i = 0; i < rounds && rc == 0; i++) {
		int k = (int)(rand_r(&seed) % SLOTS);
		size_t n = rand_r(&seed) % MAX_SIZE;
		if (rand_r(&seed) % 7 == 0) {
			forks++;
			if (fork_and_reap() != 0) {
				fprintf(stderr, "signal_fork: round %d: a child of the main loop failed\n", i);
				rc = 1;
			}
		}
		free(slot[k]);
		slot[k] = malloc(n);
		if (!slot[k]) {
			fprintf(stderr, "signal_fork: round %d: malloc(%zu) returned NULL\n", i, n);
			rc = 1;
		} else {
			memset(slot[k], i, n < 64 ? n : 64);
		}
		if (handler_failed) {
			fprintf(stderr, "signal_fork: round %d: a fork in the signal handler failed\n", i);
			rc = 1;
		}
	}
	kill(sender, SIGKILL);
	waitpid(sender, NULL, 0);
	for (int k = 0; k < SLOTS; k++)
		free(slot[k]);
	if (rc == 0)
		printf("rounds %d forks %d handler_forks %d\n", rounds, forks, (int)handler_forks);
	return rc;
}
