/*
 * Classic heap mistakes, one per run: `misuse_program CASE`.
 *
 * Run it on the C library's malloc or under LD_PRELOAD of heaplab's shim
 * and watch who notices.  Each case makes exactly one mistake and then
 * keeps using the heap a little, as a real program would; a run that
 * survives prints "survived CASE" and exits 0.  Nothing here uses stdio:
 * its buffers would come from the heap being tested.
 *
 * Built with MISUSE_PYMALLOC (tests/programs/misuse_pymalloc) it makes the same
 * mistakes with CPython's object allocator, pymalloc, the allocator the
 * `pools` policy models: requests above 512 bytes and pointers pymalloc
 * does not recognise go on to the C library's malloc, as in CPython.
 */
#ifdef MISUSE_PYMALLOC
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define malloc PyObject_Malloc
#define realloc PyObject_Realloc
#define free PyObject_Free
#endif
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Returns its argument where the compiler cannot see it: a copy taken
 * before a free is not known to be the freed pointer, so the mistake is
 * compiled as written (not warned about, not optimised away). */
static void *launder(void *p)
{
	__asm__ volatile("" : "+r"(p));
	return p;
}

static void say(int fd, const char *a, const char *b)
{
	(void)!write(fd, a, strlen(a));
	(void)!write(fd, b, strlen(b));
	(void)!write(fd, "\n", 1);
}

/* free of a 40-byte block, twice */
static void double_free(void)
{
	char *p = malloc(40), *again = launder(p);
	free(p);
	free(again);
}

/* free of a pointer 16 bytes inside a live block */
static void interior(void)
{
	char *p = malloc(64);
	free((char *)launder(p) + 16);
}

/* free of a local variable */
static void stack(void)
{
	char local[64] = { 0 };
	free(launder(local + 16));
}

/* 64 bytes written into a 40-byte block: the block after it is damaged;
 * then that neighbour is freed, then the block itself */
static void overflow(void)
{
	char *a = malloc(40);
	char *b = launder(malloc(40));
	memset(launder(a), 'A', 64);
	free(b);
	free(a);
}

/* a write into a freed block, then two more requests of its size */
static void write_after_free(void)
{
	char *p = malloc(40), *stale = launder(p);
	free(p);
	memset(stale, 'U', 40);
	char *q = malloc(40);
	char *r = malloc(40);
	launder(q);
	launder(r);
}

/* free of a 5,000-byte block (too big for any thread cache), twice */
static void large_double_free(void)
{
	char *p = malloc(5000), *again = launder(p);
	free(p);
	free(again);
}

/* free of memory some other allocator (here: mmap) handed out */
static void foreign(void)
{
	char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return;
	free(launder(page + 16));
}

/* realloc of a block already freed */
static void realloc_freed(void)
{
	char *p = malloc(40), *stale = launder(p);
	free(p);
	launder(realloc(stale, 80));
}

/* the 16 bytes in front of a block (where most allocators keep its
 * header) overwritten, then the block freed */
static void header_smash(void)
{
	char *keep = launder(malloc(40));
	char *p = malloc(40);
	memset((char *)launder(p) - 16, 'H', 16);
	free(p);
	free(keep);
}

static const struct {
	const char *name;
	void (*run)(void);
} cases[] = {
	{ "double-free", double_free },
	{ "interior", interior },
	{ "stack", stack },
	{ "overflow", overflow },
	{ "write-after-free", write_after_free },
	{ "large-double-free", large_double_free },
	{ "foreign", foreign },
	{ "realloc-freed", realloc_freed },
	{ "header-smash", header_smash },
};

int main(int argc, char **argv)
{
#ifdef MISUSE_PYMALLOC
	Py_Initialize();
#endif
	if (argc == 2)
		for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
			if (!strcmp(argv[1], cases[i].name)) {
				cases[i].run();
				say(1, "survived ", argv[1]);
				return 0;
			}
	say(2, "usage: misuse_program CASE, one of:", "");
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		say(2, "  ", cases[i].name);
	return 2;
}
