/*
 * The layers of a recorded process's memory (libheaplab-record.so): every
 * mapping of /proc/self/smaps given to one layer, its Rss summed per
 * layer, written as one "#@layers" line (recorder.h).
 *
 *   heap      [heap]: the C allocator's break
 *   mapped    anonymous mappings the program did not make through mmap:
 *             the C allocator's own (blocks above its mmap threshold,
 *             thread arenas) and the loader's; glibc maps them through its
 *             internal entry, which no interposer sees
 *   mmap      anonymous mappings the program (or a library) made with
 *             mmap, outside malloc, as record_mmap.c noted them (CPython's
 *             pymalloc arenas are these)
 *   stack     [stack], and each anonymous mapping right above a small
 *             inaccessible one (a thread stack above its guard page); not
 *             one that starts on a 64 MiB boundary above a large one:
 *             that is a glibc thread arena's heap (HEAP_MAX_SIZE-aligned)
 *             above the unused tail of the heap below it
 *   exe       the program's own file
 *   alloc     the allocator's library (libc, jemalloc, mimalloc, tcmalloc)
 *   libs      every other shared object
 *   files     other files mapped (locale archive, data)
 *   recorder  this library and its tables
 *   other     the rest ([vdso], [vvar], ...)
 *
 * The kernel merges adjacent anonymous mappings of the same protection
 * into one entry, so an entry can hold the program's mappings and the C
 * allocator's side by side: its Rss is then split in proportion to the
 * bytes of each (smaps gives no finer figure).
 *
 * No allocation: the file is read through a fixed buffer, as the recorder
 * calls this with its lock held, inside the program's malloc.
 */
#include "config.h"
#include <dlfcn.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "../trace/recorder.h"

enum { L_HEAP, L_MAPPED, L_MMAP, L_STACK, L_EXE, L_ALLOC, L_LIBS, L_FILES, L_RECORDER, L_OTHER, L_N };
static const char *const layer_key[L_N] = { "heap", "mapped", "mmap", "stack", "exe",
					    "alloc", "libs", "files", "recorder", "other" };

static char exe_path[4096], self_path[4096];

/* One mapping's header: where it is, its permissions, its name. */
typedef struct mapping {
	uintptr_t lo, hi;
	char perms[5];
	const char *name;       /* points into the line ("" when anonymous) */
} mapping_t;

static bool ends_with_lib(const char *base, const char *lib)
{
	return !strncmp(base, lib, strlen(lib));
}

/* A thread's guard is a page or a few (pthread_attr_setguardsize); glibc's
 * arena heaps are aligned to HEAP_MAX_SIZE, 64 MiB on 64-bit machines
 * (malloc/arena.c, 2 * DEFAULT_MMAP_THRESHOLD_MAX). */
enum { GUARD_MAX = 1 << 20 };
#define ARENA_HEAP_ALIGN ((uintptr_t)64 << 20)

static int classify(const mapping_t *m, const mapping_t *prev)
{
	const char *n = m->name;
	if (!*n) {
		bool below_guard = prev && prev->hi == m->lo && !*prev->name && !strcmp(prev->perms, "---p") &&
				   prev->hi - prev->lo <= GUARD_MAX && m->lo % ARENA_HEAP_ALIGN;
		return below_guard && strcmp(m->perms, "---p") ? L_STACK : L_MAPPED;
	}
	if (!strcmp(n, "[heap]"))
		return L_HEAP;
	if (!strcmp(n, "[stack]"))
		return L_STACK;
	if (*n == '[')
		return L_OTHER;
	if (*exe_path && !strcmp(n, exe_path))
		return L_EXE;
	if (*self_path && !strcmp(n, self_path))
		return L_RECORDER;
	const char *base = strrchr(n, '/');
	base = base ? base + 1 : n;
	if (ends_with_lib(base, "libc.so") || ends_with_lib(base, "libjemalloc.so") ||
	    ends_with_lib(base, "libmimalloc.so") || ends_with_lib(base, "libtcmalloc"))
		return L_ALLOC;
	if (strstr(base, ".so"))
		return L_LIBS;
	return L_FILES;
}

static uintptr_t hex(const char **s)
{
	uintptr_t v = 0;
	for (;; ++*s) {
		char c = **s;
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
		if (d < 0)
			return v;
		v = v * 16 + (uintptr_t)d;
	}
}

/* "lo-hi perms offset dev inode   name": false for a field line. */
static bool header(char *line, mapping_t *m)
{
	const char *s = line;
	if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
		return false;
	m->lo = hex(&s);
	if (*s != '-')
		return false;
	s++;
	m->hi = hex(&s);
	while (*s == ' ')
		s++;
	memcpy(m->perms, s, 4);
	m->perms[4] = 0;
	for (int field = 0; field < 4 && *s; field++) {   /* perms, offset, dev, inode */
		while (*s && *s != ' ')
			s++;
		while (*s == ' ')
			s++;
	}
	m->name = s;
	return true;
}

static unsigned long long kb_field(const char *line, const char *key)
{
	size_t k = strlen(key);
	if (strncmp(line, key, k))
		return ~0ull;
	unsigned long long v = 0;
	for (const char *s = line + k; *s; s++)
		if (*s >= '0' && *s <= '9')
			v = v * 10 + (unsigned long long)(*s - '0');
	return v * 1024;
}

/* An anonymous entry's Rss split between the program's own mappings, the
 * recorder's and the rest, by their bytes in it. */
static void add_rss(unsigned long long bytes[L_N], int layer, const mapping_t *m, unsigned long long rss)
{
	if (layer != L_MAPPED && layer != L_STACK) {
		bytes[layer] += rss;
		return;
	}
	size_t own, prog = hl_rec_mapped_overlap(m->lo, m->hi, &own), size = m->hi - m->lo;
	if (prog + own > size || !size) {
		prog = prog > size ? size : prog;
		own = size - prog;
	}
	unsigned long long p = size ? (unsigned long long)((double)rss * (double)prog / (double)size) : 0;
	unsigned long long o = size ? (unsigned long long)((double)rss * (double)own / (double)size) : 0;
	p = (p + 2048) / 4096 * 4096;    /* whole pages */
	o = (o + 2048) / 4096 * 4096;
	if (p + o > rss)
		o = rss > p ? rss - p : 0, p = p > rss ? rss : p;
	bytes[L_MMAP] += p;
	bytes[L_RECORDER] += o;
	bytes[layer] += rss - p - o;
}

/* Sums the Rss of every mapping into its layer.  -1 when smaps cannot be read. */
static int take(unsigned long long bytes[L_N])
{
	static char buf[1 << 16];
	static char names[2][4096];   /* the current and the previous mapping's name */
	int fd = open("/proc/self/smaps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	memset(bytes, 0, L_N * sizeof *bytes);
	mapping_t cur = { 0 }, prev = { 0 };
	bool have = false, have_prev = false;
	int layer = L_OTHER, which = 0;
	size_t len = 0;
	for (;;) {
		ssize_t n = read(fd, buf + len, sizeof buf - 1 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
		buf[len] = 0;
		char *line = buf, *nl;
		while ((nl = strchr(line, '\n'))) {
			*nl = 0;
			mapping_t m;
			if (header(line, &m)) {
				if (have) {
					prev = cur;
					have_prev = true;
				}
				which ^= 1;
				snprintf(names[which], sizeof names[which], "%s", m.name);
				m.name = names[which];
				cur = m;
				have = true;
				layer = classify(&cur, have_prev ? &prev : NULL);
			} else if (have) {
				unsigned long long rss = kb_field(line, "Rss:");
				if (rss != ~0ull)
					add_rss(bytes, layer, &cur, rss);
			}
			line = nl + 1;
		}
		len = (size_t)(buf + len - line);
		memmove(buf, line, len);
		if (len == sizeof buf - 1)
			len = 0;          /* a line longer than the buffer: dropped */
	}
	close(fd);
	return 0;
}

static void path_of_self(void)
{
	ssize_t n = readlink("/proc/self/exe", exe_path, sizeof exe_path - 1);
	exe_path[n > 0 ? n : 0] = 0;
	Dl_info info;
	if (dladdr((void *)path_of_self, &info) && info.dli_fname)
		snprintf(self_path, sizeof self_path, "%s", info.dli_fname);
}

/* The hook the recorder calls (recorder.h): one "#@layers" line into @p out. */
static size_t layers_line(char *out, size_t len, const char *when, long long ms, unsigned long long rss)
{
	unsigned long long bytes[L_N];
	if (!*exe_path)
		path_of_self();
	if (take(bytes) < 0)
		return 0;
	int k = snprintf(out, len, "#@layers %s %lld %llu", when, ms, rss);
	for (int l = 0; l < L_N && k > 0 && (size_t)k < len; l++)
		k += snprintf(out + k, len - (size_t)k, " %s=%llu", layer_key[l], bytes[l]);
	if (k <= 0 || (size_t)k + 2 > len)
		return 0;
	out[k++] = '\n';
	out[k] = 0;
	return (size_t)k;
}

void hl_rec_layers_start(void) { hl_rec_layers_hook(layers_line); }
