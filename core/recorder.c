/*
 * The trace recorder behind HEAPLAB_TRACE (see recorder.h).
 *
 * Each live pointer gets a block id from a map (open addressing, mapped
 * with hl_os_boot_alloc); freed ids are reused, smallest first is not
 * needed — a counter suffices because traces allow any id.  A "t N" line
 * is written whenever the calling thread differs from the previous line's.
 */
#include "config.h"
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include "bits.h"
#include "os.h"
#include "recorder.h"

typedef struct slot {
	uintptr_t ptr;   /* 0 empty, 1 tombstone */
	long id;
} slot_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int fd = -1;
static char buf[1 << 16];
static size_t buflen;
static slot_t *map;
static size_t cap, used, tombs;
static long next_id;
static unsigned last_tid;
static unsigned next_tid = 1;
static __thread unsigned my_tid;   /* 0 = not yet numbered */

static void flush_locked(void)
{
	size_t off = 0;
	while (off < buflen) {
		ssize_t w = write(fd, buf + off, buflen - off);
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	buflen = 0;
}

static void put_str(const char *s)
{
	size_t n = strlen(s);
	if (buflen + n > sizeof buf)
		flush_locked();
	memcpy(buf + buflen, s, n);
	buflen += n;
}

static void put_num(unsigned long long v)
{
	char tmp[24];
	int n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	char out[24];
	for (int i = 0; i < n; i++)
		out[i] = tmp[n - 1 - i];
	out[n] = 0;
	put_str(out);
}

static size_t slot_index(uintptr_t p) { return (size_t)(hl_mix64(p) & (cap - 1)); }

static bool grow(void)
{
	size_t ncap = cap ? cap * 2 : 1 << 16;
	slot_t *n = hl_os_boot_alloc(ncap * sizeof *n);
	if (!n)
		return false;
	for (size_t i = 0; i < cap; i++)
		if (map[i].ptr > 1) {
			size_t k = (size_t)(hl_mix64(map[i].ptr) & (ncap - 1));
			while (n[k].ptr)
				k = (k + 1) & (ncap - 1);
			n[k] = map[i];
		}
	hl_os_boot_free(map, cap * sizeof *map);
	map = n;
	cap = ncap;
	tombs = 0;
	return true;
}

static slot_t *find(uintptr_t p)
{
	if (!cap)
		return NULL;
	for (size_t i = slot_index(p), n = 0; n < cap && map[i].ptr; i = (i + 1) & (cap - 1), n++)
		if (map[i].ptr == p)
			return &map[i];
	return NULL;
}

static long assign(uintptr_t p)
{
	if ((used + tombs + 1) * 2 > cap && !grow())
		return -1;
	size_t i = slot_index(p);
	while (map[i].ptr > 1)
		i = (i + 1) & (cap - 1);
	if (map[i].ptr == 1)
		tombs--;
	map[i].ptr = p;
	map[i].id = next_id++;
	used++;
	return map[i].id;
}

static long forget(uintptr_t p)
{
	slot_t *s = find(p);
	if (!s)
		return -1;
	long id = s->id;
	s->ptr = 1;
	used--;
	tombs++;
	return id;
}

static void thread_line(void)
{
	if (!my_tid)
		my_tid = next_tid++;
	unsigned tid = my_tid - 1;
	if (tid != last_tid) {
		put_str("t ");
		put_num(tid);
		put_str("\n");
		last_tid = tid;
	}
}

int hl_rec_open(const char *path)
{
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	const char head[] = "# heaplab trace recorded with HEAPLAB_TRACE\n";
	(void)!write(fd, head, sizeof head - 1);
	return 0;
}

/* Writes "<op> <id> <a> [<b>]" for a new block p. */
static void record_new(char op, const void *p, size_t a, size_t b, bool two)
{
	if (fd < 0 || !p)
		return;
	pthread_mutex_lock(&lock);
	thread_line();
	long id = assign((uintptr_t)p);
	if (id >= 0) {
		char o[3] = { op, ' ', 0 };
		put_str(o);
		put_num((unsigned long long)id);
		put_str(" ");
		put_num(a);
		if (two) {
			put_str(" ");
			put_num(b);
		}
		put_str("\n");
	}
	pthread_mutex_unlock(&lock);
}

void hl_rec_malloc(const void *p, size_t n) { record_new('a', p, n, 0, false); }
void hl_rec_calloc(const void *p, size_t count, size_t size) { record_new('c', p, count, size, true); }
void hl_rec_memalign(const void *p, size_t align, size_t n) { record_new('m', p, align, n, true); }

void hl_rec_realloc(const void *old, const void *p, size_t n)
{
	if (fd < 0)
		return;
	if (!old) {
		hl_rec_malloc(p, n);
		return;
	}
	pthread_mutex_lock(&lock);
	long id = forget((uintptr_t)old);
	if (id >= 0) {
		thread_line();
		put_str("r ");
		put_num((unsigned long long)id);
		put_str(" ");
		put_num(n);
		put_str("\n");
		if (p && n) {
			if ((used + tombs + 1) * 2 > cap)
				grow();
			size_t i = slot_index((uintptr_t)p);
			while (map[i].ptr > 1)
				i = (i + 1) & (cap - 1);
			if (map[i].ptr == 1)
				tombs--;
			map[i].ptr = (uintptr_t)p;
			map[i].id = id;
			used++;
		}
	}
	pthread_mutex_unlock(&lock);
}

void hl_rec_free(const void *p)
{
	if (fd < 0)
		return;
	pthread_mutex_lock(&lock);
	long id = p ? forget((uintptr_t)p) : -1;
	if (!p || id >= 0) {
		thread_line();
		put_str("f ");
		if (id < 0)
			put_str("-1");
		else
			put_num((unsigned long long)id);
		put_str("\n");
	}
	pthread_mutex_unlock(&lock);
}

void hl_rec_flush(void)
{
	if (fd < 0)
		return;
	pthread_mutex_lock(&lock);
	flush_locked();
	pthread_mutex_unlock(&lock);
}
