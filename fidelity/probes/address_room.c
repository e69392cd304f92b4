/* address_room: how much address space the allocator holds once started,
 * and whether a program that lowers its address limit after start-up still
 * has room to work (glibc's tst-malloc-thread-fail does this: RLIMIT_AS of
 * 200 MiB, then threads).  Prints
 *   vm_start_mb=  the process's VmSize after the first malloc and free, MiB
 *   vm_first_malloc_mb=  what that first malloc and free added to it, MiB
 *                 (0 where the allocator started before main)
 *   room_256m=    yes when, after RLIMIT_AS is lowered to 256 MiB, four
 *                 threads each allocate, touch and free 64 blocks of 16 KiB
 *                 and the main thread a 1 MiB block; else no
 *   posix_memalign_errno=  errno after posix_memalign (128, 512), called
 *                 until it fails under that limit (0 before each call):
 *                 ENOMEM or its number (glibc's tst-malloc-thread-fail
 *                 wants ENOMEM).  The probe is built with -fno-builtin:
 *                 gcc otherwise assumes posix_memalign leaves errno alone
 *                 and reads a stale value.
 * An allocator that reserves its address space whole at start (a GiB-sized
 * region, a break reserved to its maximum) shows both. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/resource.h>
#include "probe.h"

enum { THREADS = 4, BLOCKS = 64, BLOCK = 16 << 10 };

/* VmSize of this process in KiB, read without calling malloc. */
static long vm_size_kb(void)
{
	static char buf[8192];
	int fd = open("/proc/self/status", O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		probe_die("cannot read /proc/self/status");
	buf[n] = 0;
	char *v = strstr(buf, "VmSize:");
	if (!v)
		probe_die("no VmSize in /proc/self/status");
	return strtol(v + 7, NULL, 10);
}

static void *work(void *arg)
{
	char *b[BLOCKS];
	int ok = 1;
	for (int i = 0; i < BLOCKS; i++)
		if ((b[i] = malloc(BLOCK)))
			memset(b[i], 1, BLOCK);
		else
			ok = 0;
	for (int i = 0; i < BLOCKS; i++)
		free(b[i]);
	*(int *)arg = ok;
	return NULL;
}

int main(void)
{
	probe_static_stdout();
	long before_kb = vm_size_kb();
	char *volatile first = malloc(64);   /* volatile: not folded away */
	free(first);
	long start_kb = vm_size_kb();
	struct rlimit lim = { 256L << 20, 256L << 20 };
	if (setrlimit(RLIMIT_AS, &lim) != 0)
		probe_die("cannot lower RLIMIT_AS");
	int ok = 1, done[THREADS] = { 0 };
	pthread_t t[THREADS];
	int started = 0;
	for (; started < THREADS; started++)
		if (pthread_create(&t[started], NULL, work, &done[started]) != 0) {
			ok = 0;
			break;
		}
	for (int i = 0; i < started; i++) {
		pthread_join(t[i], NULL);
		ok &= done[i];
	}
	char *big = malloc(1 << 20);
	if (big)
		memset(big, 1, 1 << 20);
	else
		ok = 0;
	free(big);
	void *head = NULL, *q;
	int rc, err;
	do {
		errno = 0;
		rc = posix_memalign(&q, 128, 512);
		err = errno;
		if (!rc) {
			*(void **)q = head;
			head = q;
		}
	} while (!rc);
	while (head) {
		q = *(void **)head;
		free(head);
		head = q;
	}
	char errname[32];
	snprintf(errname, sizeof errname, err == ENOMEM ? "ENOMEM" : "%d", err);
	printf("posix_memalign_errno=%s\n", errname);
	printf("vm_start_mb=%.1f\nvm_first_malloc_mb=%.1f\nroom_256m=%s\n", start_kb / 1024.0,
	       (start_kb - before_kb) / 1024.0, ok ? "yes" : "no");
	return 0;
}
