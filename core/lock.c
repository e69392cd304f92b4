/*
 * The lock's two calls into the kernel (lock.h): the waiting side marks
 * the word 2 ("someone may wait") and sleeps on it until it swaps a free
 * word for its own 2; the releasing side wakes one sleeper when it found 2.
 */
#include "config.h"
#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "lock.h"

void hl_lock_wait(hl_lock_t *l)
{
	/* from here on the word says 2 while we hold it: a waiter cannot tell
	 * whether others still sleep, so its release must wake one.  A wait
	 * that finds the word changed fails with EAGAIN: the lock is taken
	 * inside free, which keeps errno */
	int saved = errno;
	while (__atomic_exchange_n(&l->word, 2, __ATOMIC_SEQ_CST) != 0)
		syscall(SYS_futex, &l->word, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
	errno = saved;
}

void hl_lock_wake(hl_lock_t *l)
{
	int saved = errno;
	syscall(SYS_futex, &l->word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	errno = saved;
}
