/* sysreplay TRACE...: replays malloc-lab traces on the C library's own
 * malloc (glibc) and prints, per trace, the utilization
 *     peak live requested bytes / peak bytes glibc holds from the system,
 * the figure `heaplab replay` gives for a heaplab policy.
 *
 * "Held" is mallinfo2().arena + mallinfo2().hblkhd (sbrk'd arena bytes plus
 * mmapped chunks), less its value just before the replay starts.  It can
 * only change when the break moves or a chunk with its own mapping comes or
 * goes, so it is read after exactly those operations (mallinfo2 walks every
 * free chunk: reading it after every op made long traces take seconds).
 *
 * Nothing but the trace may allocate during the replay, and glibc's heap
 * must be fresh when it starts, or space left over by the reader would be
 * reused for free.  So the parent loads and checks each trace with
 * libheaplab's reader, writes its operations in a flat binary form to a
 * memfd, and runs a fresh copy of itself (`sysreplay --child FD`) that maps
 * the operations and its block table with mmap, replays them before its
 * first malloc of any other kind, and writes its figures to a pipe. */
#include <errno.h>
#include <gnu/libc-version.h>
#include <malloc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "heaplab.h"

/* One operation in the flat form shared by parent and child. */
typedef struct sr_op {
	char kind;     /* a (malloc), c (calloc), m (memalign), r (realloc), f (free) */
	long id;       /* block id, >= 0 */
	size_t size;   /* bytes (per element for c) */
	size_t aux;    /* c: element count; m: alignment */
	unsigned tid;  /* the trace's thread ('t N'); used with --rss only */
} sr_op_t;

/* Head of the memfd: the counts, then nops sr_op_t. */
typedef struct sr_ops {
	size_t nops;
	long nids;     /* largest block id + 1 */
	sr_op_t op[];
} sr_ops_t;

/* What a child reports. */
typedef struct sr_result {
	size_t peak_live, peak_held;   /* bytes; peak_held is the peak resident
	                                  growth with --rss */
} sr_result_t;

/* --rss: measure any allocator (the one LD_PRELOAD names, or glibc) by the
 * process's anonymous resident set instead of glibc's mallinfo2: every page
 * of every block is written when handed out, as a program fills its
 * blocks, and the figure is the largest RssAnon read every RSS_EVERY ops
 * and at the end, less RssAnon before the first op (the replay's own
 * tables are written whole before that; the ops are a shared mapping,
 * which RssAnon does not count). */
enum { RSS_EVERY = 64 };
static bool rss_mode;

static int usage(FILE *out)
{
	fprintf(out,
		"usage: sysreplay TRACE...\n"
		"Replays malloc-lab traces on the C library's own malloc, each in a fresh\n"
		"process, and prints per trace the ops, peak live requested bytes, peak bytes\n"
		"held from the system (mallinfo2 arena + hblkhd after every op that moves the\n"
		"break or maps or unmaps a chunk, less\n"
		"the value before the first op) and utilization = live / held, then the mean.\n"
		"glibc's tunables apply as usual, e.g.\n"
		"  GLIBC_TUNABLES=glibc.malloc.top_pad=0 sysreplay traces/*-bal.rep\n"
		"  GLIBC_TUNABLES=glibc.malloc.tcache_count=0:glibc.malloc.mmap_threshold=65536 ...\n"
		"Ops of other threads ('t N') run on the one thread (on a thread each with\n"
		"--rss); snapshots are skipped.\n"
		"--rss measures whatever allocator runs (LD_PRELOAD=libjemalloc.so.2 ...): each\n"
		"block's pages are written when handed out, and \"peak rss\" is the growth of\n"
		"the anonymous resident set (RssAnon, read every 64 ops) over its value before\n"
		"the first op.\n"
		"Exit 1 when the allocator fails, 2 on bad input.\n");
	return out == stdout ? 0 : 2;
}

/* ---- child: the replay itself ------------------------------------------ */

/* A field of /proc/self/status in bytes ("VmRSS", "VmHWM"); 0 if absent. */
static size_t status_bytes(const char *key)
{
	char line[128];
	size_t kib = 0, n = strlen(key);
	FILE *f = fopen("/proc/self/status", "r");
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, key, n) && line[n] == ':')
			kib = strtoull(line + n + 1, NULL, 10);
	if (f)
		fclose(f);
	return kib * 1024;
}

/* Writes a byte in every page of a block, as the program would. */
static void touch(void *p, size_t n)
{
	for (size_t off = 0; p && off < n; off += 4096)
		((volatile char *)p)[off] = 1;
}

static size_t held_now(void)
{
	struct mallinfo2 mi = mallinfo2();
	return mi.arena + mi.hblkhd;
}

/* glibc marks a chunk with a mapping of its own by bit 1 of its size word,
 * the word just below the payload.  Reading that word is reading glibc's
 * chunk header on purpose, which GCC's bounds check cannot know. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Warray-bounds"
static bool own_mapping(const void *p)
{
	size_t size_word;
	if (!p)
		return false;
	memcpy(&size_word, (const char *)p - sizeof size_word, sizeof size_word);
	return size_word & 2;
}
#pragma GCC diagnostic pop

static void *map_zeroed(size_t bytes)
{
	void *p = mmap(NULL, bytes ? bytes : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

/* Performs one op on glibc; returns the block's new address (NULL after a free). */
static void *call_libc(const sr_op_t *op, void *old)
{
	switch (op->kind) {
	case 'a': return malloc(op->size);
	case 'c': return calloc(op->aux, op->size);
	case 'm': return memalign(op->aux, op->size);
	case 'r': return realloc(old, op->size);
	default: free(old); return NULL;
	}
}

/* A replay under way: the ops, the block table and the figures.  With
 * --rss each trace thread's ops run on a thread of their own, one thread
 * at a time, handing the turn over at each 't' (a real allocator's
 * thread caches and arenas then see the trace's threads). */
typedef struct sr_state {
	const sr_ops_t *t;
	void **block;
	size_t *bytes;
	size_t live, base, next, failed;  /* failed: op index + 1, 0 = none */
	void *brk;
	sr_result_t *r;
	pthread_mutex_t lock;
	pthread_cond_t turn_changed;
} sr_state_t;

/* Op @p i; false when the allocator returned NULL. */
static bool one_op(sr_state_t *s, size_t i)
{
	const sr_op_t *op = &s->t->op[i];
	sr_result_t *r = s->r;
	size_t n = op->kind == 'c' ? op->aux * op->size : op->size;
	if (s->block[op->id] && (op->kind == 'f' || op->kind == 'r'))
		s->live -= s->bytes[op->id];
	bool mapped = !rss_mode && own_mapping(s->block[op->id]);
	void *p = call_libc(op, s->block[op->id]);
	s->block[op->id] = p;
	s->bytes[op->id] = n;
	if (op->kind != 'f' && !(op->kind == 'r' && n == 0)) {
		if (!p)
			return false;
		s->live += n;
	}
	if (s->live > r->peak_live)
		r->peak_live = s->live;
	if (rss_mode) {
		if (op->kind != 'f')
			touch(p, n);
		if (i % RSS_EVERY == 0 || i + 1 == s->t->nops) {
			size_t now = status_bytes("RssAnon");
			if (now > s->base && now - s->base > r->peak_held)
				r->peak_held = now - s->base;
		}
		return true;
	}
	void *now = sbrk(0);
	if (now == s->brk && !mapped && !own_mapping(p))
		return true;                 /* nothing held has changed */
	s->brk = now;
	size_t held = held_now() - s->base;
	if (held > r->peak_held)
		r->peak_held = held;
	return true;
}

/* Runs the ops of trace thread @p tid whenever the next op is one of
 * them, until the ops run out or one fails. */
static void run_turns(sr_state_t *s, unsigned tid)
{
	pthread_mutex_lock(&s->lock);
	for (;;) {
		while (s->next < s->t->nops && !s->failed && s->t->op[s->next].tid != tid)
			pthread_cond_wait(&s->turn_changed, &s->lock);
		if (s->next >= s->t->nops || s->failed)
			break;
		while (s->next < s->t->nops && s->t->op[s->next].tid == tid) {
			if (!one_op(s, s->next)) {
				s->failed = s->next + 1;
				break;
			}
			s->next++;
		}
		pthread_cond_broadcast(&s->turn_changed);
	}
	pthread_mutex_unlock(&s->lock);
}

typedef struct sr_worker {
	sr_state_t *s;
	unsigned tid;
} sr_worker_t;

static void *worker_main(void *arg)
{
	sr_worker_t *w = arg;
	run_turns(w->s, w->tid);
	return NULL;
}

/* Replays the ops; the live-byte bookkeeping follows trace/replay.c.
 * 0, op index + 1 when the allocator failed, -1 when out of memory. */
static int replay(const sr_ops_t *t, sr_result_t *r)
{
	sr_state_t s = { .t = t, .r = r, .lock = PTHREAD_MUTEX_INITIALIZER, .turn_changed = PTHREAD_COND_INITIALIZER };
	s.block = map_zeroed((size_t)t->nids * sizeof *s.block);
	s.bytes = map_zeroed((size_t)t->nids * sizeof *s.bytes);
	static sr_worker_t workers[256];
	static pthread_t threads[256];
	bool started[256] = { false };
	if (!s.block || !s.bytes)
		return -1;
	memset(r, 0, sizeof *r);
	if (rss_mode) {
		memset(s.block, 0, (size_t)t->nids * sizeof *s.block);
		memset(s.bytes, 0, (size_t)t->nids * sizeof *s.bytes);
	}
	s.base = rss_mode ? status_bytes("RssAnon") : held_now();
	s.brk = sbrk(0);
	for (size_t i = 0; rss_mode && i < t->nops; i++) {
		unsigned tid = t->op[i].tid;
		if (tid == 0 || started[tid])
			continue;
		workers[tid] = (sr_worker_t){ &s, tid };
		if (pthread_create(&threads[tid], NULL, worker_main, &workers[tid]) != 0)
			return -1;
		started[tid] = true;
	}
	run_turns(&s, 0);
	for (unsigned tid = 1; tid < 256; tid++)
		if (started[tid])
			pthread_join(threads[tid], NULL);
	return (int)s.failed;
}

static int child_main(const char *fd_text)
{
	char *end;
	long fd = strtol(fd_text, &end, 10);
	struct stat st;
	if (*end || fd < 0 || fstat((int)fd, &st) < 0 || (size_t)st.st_size < sizeof(sr_ops_t)) {
		fprintf(stderr, "sysreplay: --child: bad descriptor '%s'\n", fd_text);
		return 2;
	}
	const sr_ops_t *t = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, (int)fd, 0);
	if (t == MAP_FAILED) {
		fprintf(stderr, "sysreplay: --child: cannot map the operations: %s\n", strerror(errno));
		return 2;
	}
	sr_result_t r;
	int rc = replay(t, &r);
	if (rc < 0) {
		fprintf(stderr, "sysreplay: out of memory for the replay's tables or threads\n");
		return 1;
	}
	if (rc) {
		fprintf(stderr, "sysreplay: op %d: the allocator returned NULL\n", rc - 1);
		return 1;
	}
	return write(STDOUT_FILENO, &r, sizeof r) == (ssize_t)sizeof r ? 0 : 1;
}

/* ---- parent: load, hand over, collect ------------------------------------ */

/* Fills @p op from op @p i of @p t; false when it is not a block op. */
static bool flat_op(const hl_trace_t *t, size_t i, sr_op_t *op)
{
	char kind = hl_trace_op_kind(t, i);
	long id = hl_trace_op_id(t, i);
	if (!strchr("acmrf", kind) || id < 0)
		return false;   /* thread switch, snapshot, free(NULL) */
	*op = (sr_op_t){ .kind = kind, .id = id, .size = hl_trace_op_size(t, i) };
	if (kind == 'c' || kind == 'm') {
		/* the public API gives c's total and not m's alignment: read both
		 * back from the op's trace text, "c ID COUNT SIZE" / "m ID ALIGN SIZE" */
		char text[96], k;
		long tid;
		if (sscanf(hl_trace_op_text(t, i, text, sizeof text), "%c %ld %zu %zu", &k, &tid, &op->aux,
			   &op->size) != 4)
			return false;
	}
	return true;
}

/* Writes the block ops of @p t to a new memfd; its descriptor, or -1. */
static int flatten(const hl_trace_t *t, const char *path)
{
	size_t n = hl_trace_ops(t), kept = 0;
	sr_ops_t *flat = calloc(1, sizeof *flat + n * sizeof(sr_op_t));
	int fd = memfd_create("sysreplay-ops", 0);
	if (!flat || fd < 0) {
		fprintf(stderr, "sysreplay: %s: %s\n", path, strerror(errno));
		free(flat);
		return -1;
	}
	unsigned tid = 0;
	for (size_t i = 0; i < n; i++) {
		char text[32];
		if (hl_trace_op_kind(t, i) == 't' && sscanf(hl_trace_op_text(t, i, text, sizeof text), "t %u", &tid) != 1)
			tid = 0;
		if (!flat_op(t, i, &flat->op[kept]))
			continue;
		flat->op[kept].tid = rss_mode ? tid : 0;
		if (flat->op[kept].id >= flat->nids)
			flat->nids = flat->op[kept].id + 1;
		kept++;
	}
	flat->nops = kept;
	size_t len = sizeof *flat + kept * sizeof(sr_op_t);
	bool ok = write(fd, flat, len) == (ssize_t)len;
	free(flat);
	if (!ok) {
		fprintf(stderr, "sysreplay: %s: cannot write the operations\n", path);
		close(fd);
		return -1;
	}
	return fd;
}

/* Runs `sysreplay --child FD` on the ops in @p fd; 0 with @p r filled. */
static int run_child(int fd, const char *path, sr_result_t *r)
{
	int pipefd[2];
	if (pipe(pipefd) < 0)
		return -1;
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		char fd_text[24];
		snprintf(fd_text, sizeof fd_text, "%d", fd);
		dup2(pipefd[1], STDOUT_FILENO);
		close(pipefd[0]);
		close(pipefd[1]);
		if (rss_mode)
			execl("/proc/self/exe", "sysreplay", "--child", "--rss", fd_text, (char *)NULL);
		else
			execl("/proc/self/exe", "sysreplay", "--child", fd_text, (char *)NULL);
		fprintf(stderr, "sysreplay: cannot run /proc/self/exe: %s\n", strerror(errno));
		_exit(2);
	}
	close(pipefd[1]);
	ssize_t got = pid > 0 ? read(pipefd[0], r, sizeof *r) : -1;
	close(pipefd[0]);
	int status = 0;
	if (pid > 0)
		waitpid(pid, &status, 0);
	if (got != (ssize_t)sizeof *r || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "sysreplay: %s: the replay failed\n", path);
		return -1;
	}
	return 0;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "--child") && !strcmp(argv[2], "--rss")) {
		rss_mode = true;
		return child_main(argv[3]);
	}
	if (argc == 3 && !strcmp(argv[1], "--child"))
		return child_main(argv[2]);
	if (argc > 1 && !strcmp(argv[1], "--rss")) {
		rss_mode = true;
		argv[1] = argv[0];
		argv++;
		argc--;
	}
	if (argc < 2)
		return usage(stderr);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help"))
			return usage(stdout);
		if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "sysreplay: unknown option '%s' (try --help)\n", argv[i]);
			return 2;
		}
	}
	/* every trace is read and checked before the first line is printed */
	int ntraces = argc - 1, *fd = calloc((size_t)ntraces, sizeof *fd);
	size_t *ops = calloc((size_t)ntraces, sizeof *ops);
	for (int i = 0; fd && ops && i < ntraces; i++) {
		hl_trace_t *t = hl_trace_load(argv[i + 1]);
		if (!t) {
			fprintf(stderr, "sysreplay: %s\n", hl_last_error());
			return 2;
		}
		fd[i] = flatten(t, argv[i + 1]);
		ops[i] = hl_trace_ops(t);
		hl_trace_free(t);
		if (fd[i] < 0)
			return 2;
	}
	if (!fd || !ops) {
		fprintf(stderr, "sysreplay: out of memory\n");
		return 2;
	}
	char allocator[32];
	const char *preload = getenv("LD_PRELOAD");
	if (preload && *preload) {
		const char *slash = strrchr(preload, '/');
		snprintf(allocator, sizeof allocator, "%.*s", (int)strcspn(slash ? slash + 1 : preload, ". "),
			 slash ? slash + 1 : preload);
	} else {
		snprintf(allocator, sizeof allocator, "glibc-%s", gnu_get_libc_version());
	}
	printf("%-22s %-19s %9s %12s %12s %7s\n", "trace", "allocator", "ops", "peak live",
	       rss_mode ? "peak rss" : "peak held", "util");
	double util_sum = 0;
	for (int i = 0; i < ntraces; i++) {
		sr_result_t r;
		if (run_child(fd[i], argv[i + 1], &r) < 0)
			return 1;
		close(fd[i]);
		double util = r.peak_held ? (double)r.peak_live / (double)r.peak_held : 0;
		util_sum += util;
		printf("%-22s %-19s %9zu %12zu %12zu %6.1f%%\n", base_name(argv[i + 1]), allocator, ops[i], r.peak_live,
		       r.peak_held, 100 * util);
	}
	printf("%-22s %-19s %9s %12s %12s %6.1f%%\n", "mean", allocator, "", "", "", 100 * util_sum / ntraces);
	free(fd);
	free(ops);
	return 0;
}
