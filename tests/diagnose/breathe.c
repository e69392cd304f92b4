/*
 * A program whose memory comes back (tests/diagnose/diagnose.sh checks --verify on
 * it): 20,000 buffers of 1,000 bytes, touched and held for a while, then
 * all freed, so glibc's main arena trims its top and the RSS falls back.
 * It reads its own RSS from /proc/self/statm at the peak and at the end
 * and prints both (stdout unbuffered: no malloc of its own), for the test to compare with what --verify measured
 * from outside; it holds each state 300 ms so the outside reads see it.
 * With the argument "quick" it exits as soon as it has freed: no reading
 * every few ms sees the end, only one taken at the exit.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { BLOCKS = 20000, SIZE = 1000 };

static void *blocks[BLOCKS];

/* Read with open and read: a FILE would be a malloc of its own, and
 * kept in the tcache above the buffers it would stop the trim. */
static unsigned long resident(void)
{
	char text[128] = "";
	int fd = open("/proc/self/statm", O_RDONLY);
	if (fd >= 0) {
		ssize_t n = read(fd, text, sizeof text - 1);
		text[n > 0 ? n : 0] = 0;
		close(fd);
	}
	const char *second = strchr(text, ' ');
	return second ? strtoul(second + 1, NULL, 10) * (unsigned long)sysconf(_SC_PAGESIZE) : 0;
}

static void hold(void)
{
	struct timespec t = { 0, 300 * 1000000L };
	nanosleep(&t, NULL);
}

int main(int argc, char **argv)
{
	int quick = argc > 1 && !strcmp(argv[1], "quick");
	setvbuf(stdout, NULL, _IONBF, 0);     /* no buffer malloc'ed at the end */
	for (int i = 0; i < BLOCKS; i++) {
		blocks[i] = malloc(SIZE);
		if (!blocks[i])
			return 1;
		memset(blocks[i], 3, SIZE);
	}
	unsigned long peak = resident();
	hold();
	for (int i = 0; i < BLOCKS; i++)
		free(blocks[i]);
	unsigned long end = resident();
	if (!quick)
		hold();
	printf("breathe: peak %lu end %lu\n", peak, end);
	return 0;
}
