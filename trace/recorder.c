/*
 * The trace recorder behind HEAPLAB_TRACE (see recorder.h).
 *
 * Each live pointer gets a block id from a map (open addressing, mapped
 * with hl_os_boot_alloc); freed ids are reused, last freed first (a stack),
 * so a long run stays within the reader's bound on ids (trace.c).  A "t N" line
 * is written whenever the calling thread differs from the previous line's.
 * "#@exit N" says thread N exited (hl_rec_thread_exit, called by the shim
 * at thread exit); its number goes to the next new thread.
 *
 * With sites (the *_at calls of libheaplab-record.so), a second map numbers
 * the callers' return addresses; resident-set samples are taken on the
 * allocation path itself, every SAMPLE_CHECK ops at most one clock read,
 * and by libheaplab-record.so's sampling thread through hl_rec_sample_now
 * (a program that does not allocate is sampled all the same), at most one
 * per interval either way, and once at the end.
 *
 * Time: every op reads the clock (CLOCK_MONOTONIC, a vDSO call), and a
 * "#@t US" line goes before it when the clock moved by 0.1 ms or more since
 * the last one (trace.h); hl_rec_finish writes the end's.
 */
#include "config.h"
#include <ctype.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include "bits.h"
#include "os.h"
#include "recorder.h"
#include "trace.h"
#include "trace_binary.h"

typedef struct slot {
	uintptr_t ptr;   /* 0: an empty slot */
	long id;
	size_t size;     /* bytes asked for */
} slot_t;

/* Blocks this large get a "#@touched" line: how many of their pages were
 * resident when freed (or at the end), which a replay writes instead of all. */
enum { TOUCHED_MIN = 64 << 10 };

/* A block with this many bytes resident when freed gets an RSS sample just
 * before its free, clock or no clock: a buffer filled and freed between two
 * clock samples is the program's peak, which they would miss. */
enum { SAMPLE_BEFORE_FREE_MIN = 1 << 20 };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int fd = -1;
/* What goes out, written whole when the next record would not fit: a
 * binary record is 3 bytes or so, so 1 MiB is a write(2) every few
 * hundred thousand ops. */
static char buf[1 << 20];
static size_t buflen;
static bool binary;               /* records (trace_binary.h), not lines */
static hl_bin_state_t bin;        /* what the records are coded against */
/* Binary: the text line being made (a "#@" line), written as one TEXT
 * record when its newline comes. */
static char line[4096];
static size_t linelen;
static slot_t *map;
static size_t cap, used;
static long next_id;
static long *free_ids;            /* ids of freed blocks, to reuse */
static size_t nfree_ids, free_ids_cap;
static unsigned last_tid;
static unsigned next_tid = 1;
static __thread unsigned my_tid;   /* 0 = not yet numbered */
/* Numbers of exited threads, for the next new threads (last exited first):
 * a program that starts thousands of short threads stays within the
 * reader's 0..255 as long as no more than 256 run at once. */
enum { TIDS_KEPT = 256 };
static unsigned exited_tids[TIDS_KEPT];
static unsigned nexited_tids;

/* Sites: return address -> number (1, 2, ...), open addressing. */
typedef struct site_slot {
	uintptr_t addr;  /* 0 empty */
	unsigned n;
} site_slot_t;
static site_slot_t *sites;
static size_t site_cap, site_used;

/* Time stamps ("#@t"). */
#define TIME_GRAIN_NS 100000LL
static long long last_time_ns;

/* Resident-set samples. */
enum { SAMPLE_CHECK = 256 };
static long sample_ms;            /* 0: no samples */
static long long t0_ns, next_sample_ns;
static unsigned ops_since_check;
static bool finished;             /* the last sample is written: no more */

/* Sampling (hl_rec_sample_blocks): one new block in sample_k is kept, with
 * every op of it, the rest leave no line.  sampling is false when the
 * recording keeps every block and has no budget: the ops then take one
 * branch more than before sampling existed. */
static bool sampling;
static unsigned long sample_k = 1;
static uint64_t sample_seed;
static unsigned long long seen;       /* the program's ops, kept or not */
static unsigned long long budget;     /* bytes (0: none) */
static unsigned long long written;    /* bytes written out so far */
static unsigned halvings;             /* times the rate was halved */
static unsigned long long next_halving;   /* written + buffered bytes that halve it */

static void flush_locked(void)
{
	size_t off = 0;
	while (off < buflen) {
		ssize_t w = write(fd, buf + off, buflen - off);
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	written += off;
	buflen = 0;
}

/* Room for @p n more bytes, the buffer written out first when they do not
 * fit: a record never straddles two writes, so a recording always ends on
 * a whole one. */
static void room(size_t n)
{
	if (buflen + n > sizeof buf)
		flush_locked();
}

static void put_text_record(void)
{
	room(16 + linelen);
	buflen += hl_bin_put_text_head((uint8_t *)buf + buflen, linelen);
	memcpy(buf + buflen, line, linelen);
	buflen += linelen;
	linelen = 0;
}

static void put_str(const char *s)
{
	if (binary) {
		for (; *s; s++)
			if (*s == '\n')
				put_text_record();
			else if (linelen < sizeof line)
				line[linelen++] = *s;
		return;
	}
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

/* A binary op record (trace_binary.h). */
static void put_op(hl_bin_kind_t kind, long id, size_t a, size_t b, unsigned site)
{
	room(HL_BIN_OP_MAX);
	buflen += hl_bin_put_op(&bin, (uint8_t *)buf + buflen, kind, id, a, b, site);
}

/* Odd while one of the recorder's tables is being replaced by a larger
 * one (both are resident then), and counted up at each start and end:
 * the sampling thread, which reads the process's RSS and the tables'
 * without the lock, keeps its sample only when the count was even and
 * the same before and after, for a sample taken meanwhile counts the
 * table being let go as the program's (4.5 MiB on CPython, at the
 * peak).  Written under the lock only. */
static atomic_uint table_moves;

static void table_move(void) { atomic_fetch_add_explicit(&table_moves, 1, memory_order_acq_rel); }

/* The slot a block's pointer hashes to in a table of @p c slots: a random
 * window of 256 slots for each 4 KiB page of address space, and in it the
 * page's addresses in order, one slot for each 16 bytes.  The blocks a
 * program works on at one time are near one another (glibc cuts them from
 * the same chunk, gives back the one freed last), so their slots share
 * cache lines and pages: a table of millions of slots hashed at random
 * took a cache and a TLB miss at each op, most of the recorder's time on
 * CPython.  Windows no larger than a page: a random place for each 64 KiB
 * made runs of 4,096 slots that overlapped into clusters thousands of
 * slots long, which every new block walked to its end (record_new was
 * 63 % of the instructions of a recorded CPython program, 1,600 an op;
 * 16 % now: callgrind, tests' tuples.py 1 under PYTHONMALLOC=malloc). */
static size_t index_in(uintptr_t p, size_t c) { return (size_t)(((hl_mix64(p >> 12) << 8) + ((p >> 4) & 255)) & (c - 1)); }
static size_t slot_index(uintptr_t p) { return index_in(p, cap); }

/* Rehashes into a table twice as big. */
static bool grow(void)
{
	size_t ncap = cap ? cap * 2 : 1 << 16;
	table_move();
	slot_t *n = hl_os_boot_alloc(ncap * sizeof *n);
	if (!n) {
		table_move();
		return false;
	}
	for (size_t i = 0; i < cap; i++)
		if (map[i].ptr) {
			size_t k = index_in(map[i].ptr, ncap);
			while (n[k].ptr)
				k = (k + 1) & (ncap - 1);
			n[k] = map[i];
		}
	hl_os_boot_free(map, cap * sizeof *map);
	map = n;
	cap = ncap;
	table_move();
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

/* Keeps a freed block's id for the next new block. */
static void recycle(long id)
{
	if (nfree_ids == free_ids_cap) {
		size_t ncap = free_ids_cap ? free_ids_cap * 2 : 1 << 14;
		table_move();
		long *n = hl_os_boot_alloc(ncap * sizeof *n);
		if (n && free_ids) {
			memcpy(n, free_ids, nfree_ids * sizeof *n);
			hl_os_boot_free(free_ids, free_ids_cap * sizeof *free_ids);
		}
		if (n) {
			free_ids = n;
			free_ids_cap = ncap;
		}
		table_move();
		if (!n)
			return;        /* the id is simply not reused */
	}
	free_ids[nfree_ids++] = id;
}

static long assign(uintptr_t p, size_t size)
{
	if ((used + 1) * 2 > cap && !grow())
		return -1;
	size_t i = slot_index(p);
	while (map[i].ptr)
		i = (i + 1) & (cap - 1);
	map[i].ptr = p;
	map[i].id = nfree_ids ? free_ids[--nfree_ids] : next_id++;
	map[i].size = size;
	used++;
	return map[i].id;
}

/* Empties slot @p i of its run: each later slot of the run whose block's
 * home is not after @p i moves back into the hole, so that a lookup never
 * meets an empty slot before its block.  (Linear probing without
 * tombstones: a program frees as much as it allocates, and the tombstones
 * it left lengthened every probe until the next rehash.) */
static void vacate(size_t i)
{
	size_t mask = cap - 1;
	for (size_t j = (i + 1) & mask; map[j].ptr; j = (j + 1) & mask)
		if (((j - slot_index(map[j].ptr)) & mask) >= ((j - i) & mask)) {
			map[i] = map[j];
			i = j;
		}
	map[i].ptr = 0;
}

static long forget(uintptr_t p, size_t *size)
{
	slot_t *s = find(p);
	if (!s)
		return -1;
	long id = s->id;
	*size = s->size;
	vacate((size_t)(s - map));
	used--;
	return id;
}

static long long now_ns(void);
static void time_line(void);

/* The lines before an op line: "#@t" when the clock moved, "t N" when the
 * thread changed. */
static void thread_line(void)
{
	time_line();
	if (!my_tid)
		my_tid = nexited_tids ? exited_tids[--nexited_tids] + 1 : next_tid++;
	unsigned tid = my_tid - 1;
	if (tid != last_tid && binary) {
		put_op(HL_BIN_T, (long)tid, 0, 0, 0);
		last_tid = tid;
	} else if (tid != last_tid) {
		put_str("t ");
		put_num(tid);
		put_str("\n");
		last_tid = tid;
	}
}

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* "#@t US" before an op when the clock moved by TIME_GRAIN_NS or more
 * since the last one (trace.h: the op's time to 0.1 ms, at most 10,000
 * lines a second); with @p force, whenever it moved at all. */
static void put_time(bool force)
{
	long long t = now_ns();
	if (t - last_time_ns < (force ? 1 : TIME_GRAIN_NS))
		return;
	last_time_ns = t;
	if (binary) {
		room(HL_BIN_OP_MAX);
		buflen += hl_bin_put_time(&bin, (uint8_t *)buf + buflen, (uint64_t)(t - t0_ns) / 1000);
		return;
	}
	put_str("#@t ");
	put_num((unsigned long long)((t - t0_ns) / 1000));
	put_str("\n");
}

static void time_line(void) { put_time(false); }

/* ---- the recorder's own library ------------------------------------------ */

/* The loaded segments of the object this code is in (the recorder's
 * library), found once when the recording opens. */
enum { SELF_SEGS = 8 };
static struct { uintptr_t lo, hi; } self_seg[SELF_SEGS];
static int nself_seg;

static int find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	uintptr_t here = (uintptr_t)arg, page = (uintptr_t)sysconf(_SC_PAGESIZE);
	bool mine = false;
	for (int k = 0; k < info->dlpi_phnum; k++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[k];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && here >= lo && here < lo + ph->p_memsz)
			mine = true;
	}
	if (!mine)
		return 0;
	for (int k = 0; k < info->dlpi_phnum && nself_seg < SELF_SEGS; k++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[k];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		self_seg[nself_seg].lo = lo & ~(page - 1);
		self_seg[nself_seg++].hi = (lo + ph->p_memsz + page - 1) & ~(page - 1);
	}
	return 1;
}

/* Bytes of the recorder's library that this process has resident: the
 * pages of its segments present in its page table (/proc/self/pagemap,
 * bit 63; mincore would count the page cache's copy instead).  Not the
 * program's: a sample leaves them out as it does the tables. */
static unsigned long long self_resident(void)
{
	if (!nself_seg)
		return 0;
	int f = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return 0;
	uint64_t entry[512];
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	unsigned long long present = 0;
	for (int i = 0; i < nself_seg; i++)
		for (uintptr_t p = self_seg[i].lo; p < self_seg[i].hi;) {
			size_t n = (self_seg[i].hi - p) / page;
			n = n < 512 ? n : 512;
			ssize_t got = pread(f, entry, n * sizeof *entry, (off_t)(p / page * sizeof *entry));
			if (got <= 0)
				break;
			for (size_t k = 0; k < (size_t)got / sizeof *entry; k++)
				present += entry[k] >> 63;
			p += n * page;
		}
	close(f);
	return present * page;
}

static int open_as(const char *path, bool as_binary)
{
	if (!nself_seg)
		dl_iterate_phdr(find_self, (void *)(uintptr_t)find_self);
	t0_ns = next_sample_ns = last_time_ns = now_ns();
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	binary = as_binary;
	if (binary) {
		memcpy(buf, HL_BIN_MAGIC, HL_BIN_MAGIC_LEN);
		buflen = HL_BIN_MAGIC_LEN;
	}
	put_str("# heaplab trace recorded with HEAPLAB_TRACE\n");
	flush_locked();
	return 0;
}

int hl_rec_open(const char *path) { return open_as(path, false); }
int hl_rec_open_binary(const char *path) { return open_as(path, true); }

/* ---- sites ---------------------------------------------------------------- */

static bool sites_grow(void)
{
	size_t ncap = site_cap ? site_cap * 2 : 1 << 12;
	table_move();
	site_slot_t *n = hl_os_boot_alloc(ncap * sizeof *n);
	if (!n) {
		table_move();
		return false;
	}
	for (size_t i = 0; i < site_cap; i++)
		if (sites[i].addr) {
			size_t k = (size_t)(hl_mix64(sites[i].addr) & (ncap - 1));
			while (n[k].addr)
				k = (k + 1) & (ncap - 1);
			n[k] = sites[i];
		}
	if (sites)
		hl_os_boot_free(sites, site_cap * sizeof *sites);
	sites = n;
	site_cap = ncap;
	table_move();
	return true;
}

static void put_hex(uintptr_t v)
{
	char out[24];
	int n = 0;
	char tmp[20];
	do {
		tmp[n++] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	out[0] = '0';
	out[1] = 'x';
	for (int i = 0; i < n; i++)
		out[2 + i] = tmp[n - 1 - i];
	out[2 + n] = 0;
	put_str(out);
}

/* The number of @p site, declared with a "#@site" line the first time;
 * 0 when there is no site or no room. */
static unsigned site_number(const void *site)
{
	uintptr_t a = (uintptr_t)site;
	if (!a)
		return 0;
	if ((site_used + 1) * 2 > site_cap && !sites_grow())
		return 0;
	size_t i = (size_t)(hl_mix64(a) & (site_cap - 1));
	while (sites[i].addr && sites[i].addr != a)
		i = (i + 1) & (site_cap - 1);
	if (sites[i].addr)
		return sites[i].n;
	sites[i].addr = a;
	sites[i].n = (unsigned)++site_used;
	put_str("#@site ");
	put_num(sites[i].n);
	put_str(" ");
	put_hex(a);
	put_str("\n");
	return sites[i].n;
}

static void put_site(unsigned n)
{
	if (n) {
		put_str(" @");
		put_num(n);
	}
}

/* ---- resident-set samples -------------------------------------------------- */

/* Resident bytes from /proc/self/statm (second field, in pages). */
static unsigned long long rss_bytes(void)
{
	int f = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return 0;
	char text[128];
	ssize_t n = read(f, text, sizeof text - 1);
	close(f);
	if (n <= 0)
		return 0;
	text[n] = 0;
	const char *s = text;
	while (*s && *s != ' ')
		s++;
	unsigned long long pages = 0;
	for (s++; *s >= '0' && *s <= '9'; s++)
		pages = pages * 10 + (unsigned long long)(*s - '0');
	return pages * (unsigned long long)sysconf(_SC_PAGESIZE);
}

/* Resident bytes of the recorder's own tables and library: not the
 * program's.  The tables read with mincore, for a table is mapped at its
 * full size but touched only where it hashed (a small program touches a
 * few of the 1.5 MiB of its first block table). */
static unsigned long long own_bytes(void)
{
	return self_resident() + hl_os_resident_range(NULL, map, cap * sizeof *map) +
	       hl_os_resident_range(NULL, sites, site_cap * sizeof *sites) +
	       hl_os_resident_range(NULL, free_ids, free_ids_cap * sizeof *free_ids);
}

/* The layers of smaps at the largest sample so far (written at the end). */
static hl_rec_layers_fn layers_fn;
static char peak_layers[1024];
static unsigned long long peak_layers_rss;

void hl_rec_layers_hook(hl_rec_layers_fn fn) { layers_fn = fn; }

/* The hook reads smaps through a buffer of its own: one reader at a time
 * (the sampling thread reads without the recorder's lock). */
static pthread_mutex_t layers_lock = PTHREAD_MUTEX_INITIALIZER;

static bool above_peak(unsigned long long rss) { return rss > peak_layers_rss + (peak_layers_rss >> 6); }

/* The layers at @p rss into @p out when it passes the last peak read. */
static size_t read_layers(char *out, size_t len, long long ms, unsigned long long rss)
{
	if (!layers_fn || !above_peak(rss))
		return 0;
	pthread_mutex_lock(&layers_lock);
	size_t n = layers_fn(out, len, "peak", ms, rss);
	pthread_mutex_unlock(&layers_lock);
	return n;
}

static void layers_at_peak(long long ms, unsigned long long rss)
{
	if (read_layers(peak_layers, sizeof peak_layers, ms, rss))
		peak_layers_rss = rss;
}

/* The program's resident bytes: the process's, less the recorder's. */
static unsigned long long program_rss(void)
{
	unsigned long long rss = rss_bytes(), own = own_bytes();
	return rss > own ? rss - own : 0;
}

/* The time of the last sample written: a sample whose time was read
 * before another was written (the sampling thread reads /proc, which
 * takes milliseconds at a new peak, while a block's free takes its own
 * sample) gets that one's time, not an earlier one. */
static long long last_sample_ms;

static void rss_line(long long ms, unsigned long long rss)
{
	if (ms < last_sample_ms)
		ms = last_sample_ms;
	last_sample_ms = ms;
	put_str("#@rss ");
	put_num((unsigned long long)ms);
	put_str(" ");
	put_num(rss);
	put_str("\n");
}

static void sample_line(long long t)
{
	unsigned long long rss = program_rss();
	long long ms = (t - t0_ns) / 1000000;
	rss_line(ms, rss);
	layers_at_peak(ms, rss);
}

/* The end: the peak's layers and the final ones. */
static void layers_lines(long long t)
{
	if (!layers_fn)
		return;
	unsigned long long rss = rss_bytes(), own = own_bytes();
	rss = rss > own ? rss - own : 0;
	long long ms = (t - t0_ns) / 1000000;
	layers_at_peak(ms, rss);
	static char final[1024];
	if (peak_layers_rss)
		put_str(peak_layers);
	pthread_mutex_lock(&layers_lock);
	size_t n = layers_fn(final, sizeof final, "final", ms, rss);
	pthread_mutex_unlock(&layers_lock);
	if (n)
		put_str(final);
}

/* Called with the lock held after each op line. */
static void maybe_sample(void)
{
	if (!sample_ms || ++ops_since_check < SAMPLE_CHECK)
		return;
	ops_since_check = 0;
	long long t = now_ns();
	if (t < next_sample_ns)
		return;
	next_sample_ns = t + sample_ms * 1000000LL;
	sample_line(t);
}

/* The sampling thread's sample: /proc read (statm, pagemap, and smaps at
 * a new peak: milliseconds for a large process) before it takes the lock,
 * so that the program's threads do not wait on it.  A sample during which
 * a table of the recorder's moved is dropped (table_moves); the next
 * tick, or the next op past the interval, takes one. */
void hl_rec_sample_now(void)
{
	static char layers[sizeof peak_layers];   /* this thread's alone */
	long long t = now_ns();
	if (fd < 0 || !sample_ms || finished || t < next_sample_ns)
		return;
	unsigned moves = atomic_load_explicit(&table_moves, memory_order_acquire);
	if (moves & 1)
		return;
	unsigned long long rss = program_rss();
	long long ms = (t - t0_ns) / 1000000;
	size_t have = read_layers(layers, sizeof layers, ms, rss);
	pthread_mutex_lock(&lock);
	if (fd >= 0 && !finished && t >= next_sample_ns && moves == atomic_load_explicit(&table_moves, memory_order_relaxed)) {
		next_sample_ns = t + sample_ms * 1000000LL;
		rss_line(ms, rss);
		if (have && above_peak(rss)) {
			memcpy(peak_layers, layers, have + 1);
			peak_layers_rss = rss;
		}
	}
	pthread_mutex_unlock(&lock);
}

long hl_rec_sample_ms(void) { return sample_ms; }

void hl_rec_sample_every(long ms)
{
	sample_ms = ms > 0 ? ms : 0;
	ops_since_check = SAMPLE_CHECK - 1;   /* the first op samples */
}

/* "f ID", or "f -1" for free(NULL) (@p id -1). */
static void put_free(long id)
{
	if (binary) {
		put_op(HL_BIN_F, id, 0, 0, 0);
		return;
	}
	put_str("f ");
	if (id < 0)
		put_str("-1");
	else
		put_num((unsigned long long)id);
	put_str("\n");
}

/* ---- sampling -------------------------------------------------------------- */

/* The bytes of the recording at which the rate is halved for the
 * (@p n + 1)-th time: budget * (n + 1) / (n + 2), so B/2, 2B/3, 3B/4, ...
 * The recording stays below the budget however long the program runs
 * (the j-th rate writes B/((j+1)(j+2)) bytes), and a program that makes
 * ops at a steady pace spends about as long at each of the first rates
 * (the j-th rate keeps half as many blocks for 2(j+1)/(j+3) of the
 * bytes), longer at each later one. */
static unsigned long long halving_at(unsigned n) { return budget / (n + 2) * (n + 1); }

static void rate_line(void)
{
	put_str("#@sample 1/");
	put_num(sample_k);
	put_str("\n");
}

/* Halves the rate: a new block is kept at 1 in 2k from here.  The blocks
 * kept before stay in the recording with all their ops: a reader makes
 * the whole recording one rate by keeping each of them with the chance
 * that rate leaves it (trace/sample.c), for a heap sampled at two rates
 * is no model's heap scaled down (the denser past's free memory would be
 * scaled by the later rate). */
static void halve_rate(void)
{
	sample_k *= 2;
	next_halving = halving_at(++halvings);
	rate_line();
}

/* The rates past this would keep no block of any program. */
enum { SAMPLE_K_MAX_LOG2 = 40 };

/* Is the program's next new block kept?  One in sample_k, by a hash of
 * its number among the program's blocks and the seed; the rate halved
 * first when the recording has reached the budget's next threshold. */
static bool keep_new(void)
{
	seen++;
	if (budget && written + buflen >= next_halving && halvings < SAMPLE_K_MAX_LOG2)
		halve_rate();
	return hl_mix64(sample_seed + seen) % sample_k == 0;
}

int hl_rec_sample_blocks(unsigned long k, unsigned long long max_bytes, uint64_t seed)
{
	if (fd < 0 || !k)
		return -1;
	pthread_mutex_lock(&lock);
	sample_k = k;
	budget = max_bytes;
	sample_seed = seed;
	halvings = 0;
	next_halving = halving_at(0);
	sampling = k > 1 || max_bytes;
	if (sampling)
		rate_line();
	pthread_mutex_unlock(&lock);
	return 0;
}

unsigned long hl_rec_sample_rate(void) { return sample_k; }

/* Writes "<op> <id> <a> [<b>] [@site]" for a new block p. */
static void record_new(char op, const void *p, size_t a, size_t b, bool two, const void *site)
{
	if (fd < 0 || !p)
		return;
	pthread_mutex_lock(&lock);
	if (sampling && !keep_new()) {
		pthread_mutex_unlock(&lock);
		return;
	}
	thread_line();
	unsigned sn = site_number(site);
	long id = assign((uintptr_t)p, two && op == 'c' ? a * b : two ? b : a);
	if (id >= 0 && binary) {
		put_op(op == 'a' ? HL_BIN_A : op == 'c' ? HL_BIN_C : HL_BIN_M, id, a, b, sn);
		maybe_sample();
	} else if (id >= 0) {
		char o[3] = { op, ' ', 0 };
		put_str(o);
		put_num((unsigned long long)id);
		put_str(" ");
		put_num(a);
		if (two) {
			put_str(" ");
			put_num(b);
		}
		put_site(sn);
		put_str("\n");
		maybe_sample();
	}
	pthread_mutex_unlock(&lock);
}

void hl_rec_malloc(const void *p, size_t n) { record_new('a', p, n, 0, false, NULL); }
void hl_rec_calloc(const void *p, size_t count, size_t size) { record_new('c', p, count, size, true, NULL); }
void hl_rec_memalign(const void *p, size_t align, size_t n) { record_new('m', p, align, n, true, NULL); }
void hl_rec_malloc_at(const void *p, size_t n, const void *site) { record_new('a', p, n, 0, false, site); }

void hl_rec_calloc_at(const void *p, size_t count, size_t size, const void *site)
{
	record_new('c', p, count, size, true, site);
}

void hl_rec_memalign_at(const void *p, size_t align, size_t n, const void *site)
{
	record_new('m', p, align, n, true, site);
}

void hl_rec_realloc(const void *old, const void *p, size_t n) { hl_rec_realloc_at(old, p, n, NULL); }

void hl_rec_realloc_at(const void *old, const void *p, size_t n, const void *site)
{
	if (fd < 0)
		return;
	if (!old) {
		record_new('a', p, n, 0, false, site);
		return;
	}
	pthread_mutex_lock(&lock);
	seen += sampling;
	size_t was;
	long id = forget((uintptr_t)old, &was);
	if (id >= 0) {
		thread_line();
		unsigned sn = site_number(site);
		if (binary) {
			put_op(HL_BIN_R, id, n, 0, sn);
		} else {
			put_str("r ");
			put_num((unsigned long long)id);
			put_str(" ");
			put_num(n);
			put_site(sn);
			put_str("\n");
		}
		maybe_sample();
		if (!(p && n)) {
			recycle(id);
		} else {
			if ((used + 1) * 2 > cap)
				grow();
			size_t i = slot_index((uintptr_t)p);
			while (map[i].ptr)
				i = (i + 1) & (cap - 1);
			map[i].ptr = (uintptr_t)p;
			map[i].id = id;
			map[i].size = n;
			used++;
		}
	}
	pthread_mutex_unlock(&lock);
}

/* "#@touched ID PAGES" for a large block at @p p, still the program's;
 * returns its resident bytes (0 for a block too small for the line). */
static size_t touched_line(long id, uintptr_t p, size_t size)
{
	if (size < TOUCHED_MIN)
		return 0;
	size_t resident = hl_os_resident_range(NULL, (const void *)p, size);
	put_str("#@touched ");
	put_num((unsigned long long)id);
	put_str(" ");
	put_num(resident / HL_TRACE_PAGE);
	put_str("\n");
	return resident;
}

void hl_rec_free(const void *p)
{
	if (fd < 0)
		return;
	pthread_mutex_lock(&lock);
	seen += sampling;
	size_t size = 0;
	long id = p ? forget((uintptr_t)p, &size) : -1;
	if (!p || id >= 0) {
		thread_line();
		if (id >= 0 && touched_line(id, (uintptr_t)p, size) >= SAMPLE_BEFORE_FREE_MIN && sample_ms)
			sample_line(now_ns());
		put_free(id);
		if (id >= 0)
			recycle(id);
		maybe_sample();
	}
	pthread_mutex_unlock(&lock);
}

void hl_rec_thread_exit(void)
{
	if (fd < 0 || !my_tid)
		return;    /* not recording, or a thread that never allocated */
	pthread_mutex_lock(&lock);
	unsigned tid = my_tid - 1;
	if (binary) {
		put_op(HL_BIN_X, (long)tid, 0, 0, 0);
	} else {
		put_str("#@exit ");
		put_num(tid);
		put_str("\n");
	}
	if (last_tid == tid)
		last_tid = ~0u;    /* the next op names its thread, even a new one numbered tid */
	if (nexited_tids < TIDS_KEPT)
		exited_tids[nexited_tids++] = tid;
	my_tid = 0;
	pthread_mutex_unlock(&lock);
}

void hl_rec_front(const char *name)
{
	if (fd < 0 || !name || !*name || strlen(name) > 64)
		return;
	for (const char *c = name; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '_')
			return;
	pthread_mutex_lock(&lock);
	put_str("#@front ");
	put_str(name);
	put_str("\n");
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

/* ---- the end: modules, a last sample ------------------------------------- */

/* One "#@module LO HI BASE PATH" per executable segment of each object. */
static int module_lines(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	const char *self = arg;
	const char *path = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : self;
	if (!path || !*path)
		return 0;
	for (int k = 0; k < info->dlpi_phnum; k++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[k];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		put_str("#@module ");
		put_hex(lo);
		put_str(" ");
		put_hex(lo + ph->p_memsz);
		put_str(" ");
		put_hex(info->dlpi_addr);
		put_str(" ");
		put_str(path);
		put_str("\n");
	}
	return 0;
}

void hl_rec_finish(void)
{
	if (fd < 0)
		return;
	static char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	self[n > 0 ? n : 0] = 0;
	pthread_mutex_lock(&lock);
	if (site_used)
		dl_iterate_phdr(module_lines, self);
	if (!finished)
		for (size_t i = 0; i < cap; i++)   /* the large blocks still live */
			if (map[i].ptr)
				touched_line(map[i].id, map[i].ptr, map[i].size);
	if (!finished) {
		long long t = now_ns();
		if (sample_ms) {
			sample_line(t);
			layers_lines(t);
		}
		if (sampling) {   /* the program's ops, kept or not */
			put_str("#@sampled ");
			put_num(seen);
			put_str("\n");
		}
		put_time(true);   /* the recording's end: an idle tail is time too */
		if (binary) {
			room(1);
			buf[buflen++] = HL_BIN_END;
		}
	}
	finished = true;
	flush_locked();
	/* the recording ends here: what the program's last destructors free
	 * after this is not the program's run (and would follow the END record) */
	close(fd);
	fd = -1;
	pthread_mutex_unlock(&lock);
}

void hl_rec_forget(void)
{
	if (fd >= 0)
		close(fd);
	fd = -1;
	buflen = linelen = 0;
	pthread_mutex_init(&lock, NULL);
	pthread_mutex_init(&layers_lock, NULL);
}
