/* stress: a long-running stress of one heaplab policy through the public
 * API (not LD_PRELOAD), for a given number of seconds.
 *
 *   bench/stress --policy=NAME [--threads=N] [--seconds=S] [--seed=X] ...
 *
 * What runs at once:
 *
 *   worker 0..N-1   each keeps a table of live blocks and does random
 *                   malloc / calloc / memalign / realloc chains / free, and
 *                   hands blocks to another worker's inbox (a small locked
 *                   ring); the receiver checks and frees them.  Sizes mix
 *                   small (≤256), medium (≤8 KiB), large (≤256 KiB) and
 *                   mmap-sized (≤4 MiB).  Every block carries a pattern
 *                   derived from its own tag, checked before it is freed or
 *                   reallocated (a realloc keeps the old prefix).  A worker
 *                   retires after a random number of operations and main
 *                   starts a fresh thread on its table: blocks of dead
 *                   threads are freed by live ones.
 *   main            a progress line; every --check-every ms it parks the
 *                   workers and runs hl_check; every --fork-every ms it forks
 *                   while the workers run: the child allocates, reallocates,
 *                   checks and frees its own blocks, runs hl_check and exits
 *                   with a status the parent checks (a hung child is killed
 *                   and counted).
 *
 * A region allocator (bump: hl_reset works on a fresh heap) never frees:
 * its frees are still made, and when the workers have asked for
 * --epoch-mb MiB, main parks them, frees every block, calls hl_reset and
 * checks that nothing is live, so memory stays bounded.
 *
 * At the end every block is freed, hl_check must find no problem and the
 * walker must see no live block (live_usable_bytes 0).  Exit status: 0 when
 * nothing failed, 1 on any failure, 2 on bad usage. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "heaplab.h"

/* ---- options ---------------------------------------------------------- */

typedef struct options {
	const char *policy;     /* --policy (required) */
	const char *conf;       /* --conf, passed to hl_heap_new */
	unsigned threads;       /* --threads */
	unsigned seconds;       /* --seconds */
	uint64_t seed;          /* --seed */
	unsigned slots;         /* --slots: live blocks per worker at most */
	unsigned check_ms;      /* --check-every */
	unsigned fork_ms;       /* --fork-every (0: never) */
	unsigned epoch_mb;      /* --epoch-mb (region allocators) */
	bool quiet;             /* --quiet: no progress line */
} options_t;

static void usage(FILE *out)
{
	fprintf(out,
		"usage: stress --policy=NAME [options]\n"
		"Stresses one heaplab policy through the public API: N threads of random\n"
		"malloc/calloc/memalign/realloc chains/free with cross-thread frees, periodic\n"
		"hl_check, forks in the middle; every block's contents verified; at the end\n"
		"every block freed, the checker clean and nothing live.\n"
		"\n"
		"  --policy=NAME      a compiled-in policy (--list shows them)\n"
		"  --conf=OPTS        the policy's options, as hl_heap_new takes them\n"
		"  --threads=N        worker threads (default 4, 1..64)\n"
		"  --seconds=S        how long to run (default 10)\n"
		"  --seed=X           seed of every worker's random stream (default 1)\n"
		"  --slots=N          live blocks per worker at most (default 512)\n"
		"  --check-every=MS   park the workers and run hl_check (default 1000)\n"
		"  --fork-every=MS    fork a child that uses the heap (default 2000, 0: never)\n"
		"  --epoch-mb=MB      region allocators: reset after MB MiB (default 256)\n"
		"  --quiet            no progress line on the terminal\n"
		"  --list             print the compiled-in policies and exit\n"
		"  --help             this text\n"
		"\n"
		"Prints one summary line; exit status 0 when nothing failed, 1 otherwise.\n");
}

static bool parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	if (!*s || *s == '-')
		return false;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || *end || v > max)
		return false;
	*out = v;
	return true;
}

/* One numeric option "--name=VALUE" into *dst; false if @p arg is not it. */
static bool numeric_option(const char *arg, const char *name, uint64_t max, uint64_t *dst)
{
	size_t len = strlen(name);
	if (strncmp(arg, name, len) != 0 || arg[len] != '=')
		return false;
	if (!parse_u64(arg + len + 1, max, dst)) {
		fprintf(stderr, "stress: %s wants a number from 0 to %" PRIu64 ", not '%s'\n",
			name, max, arg + len + 1);
		exit(2);
	}
	return true;
}

static void list_policies(void)
{
	for (size_t i = 0; hl_policy_name(i); i++)
		printf("%s\n", hl_policy_name(i));
	exit(0);
}

static bool one_option(const char *a, options_t *o)
{
	uint64_t v;
	if (strncmp(a, "--policy=", 9) == 0)
		o->policy = a + 9;
	else if (strncmp(a, "--conf=", 7) == 0)
		o->conf = a + 7;
	else if (numeric_option(a, "--threads", 64, &v))
		o->threads = (unsigned)v;
	else if (numeric_option(a, "--seconds", 7 * 86400, &v))
		o->seconds = (unsigned)v;
	else if (numeric_option(a, "--seed", UINT64_MAX, &v))
		o->seed = v;
	else if (numeric_option(a, "--slots", 1 << 20, &v))
		o->slots = (unsigned)v;
	else if (numeric_option(a, "--check-every", 3600000, &v))
		o->check_ms = (unsigned)v;
	else if (numeric_option(a, "--fork-every", 3600000, &v))
		o->fork_ms = (unsigned)v;
	else if (numeric_option(a, "--epoch-mb", 1 << 20, &v))
		o->epoch_mb = (unsigned)v;
	else if (strcmp(a, "--quiet") == 0)
		o->quiet = true;
	else
		return false;
	return true;
}

static options_t parse_options(int argc, char **argv)
{
	options_t o = { .threads = 4, .seconds = 10, .seed = 1, .slots = 512,
			.check_ms = 1000, .fork_ms = 2000, .epoch_mb = 256 };
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			exit(0);
		}
		if (strcmp(argv[i], "--list") == 0)
			list_policies();
		if (!one_option(argv[i], &o)) {
			fprintf(stderr, "stress: unknown argument '%s' (try --help)\n", argv[i]);
			exit(2);
		}
	}
	if (!o.policy || !*o.policy) {
		fprintf(stderr, "stress: --policy=NAME is required (try --help or --list)\n");
		exit(2);
	}
	if (o.threads < 1 || o.slots < 1 || o.check_ms < 1 || o.epoch_mb < 1) {
		fprintf(stderr, "stress: --threads, --slots, --check-every and --epoch-mb must be at least 1\n");
		exit(2);
	}
	return o;
}

/* ---- random numbers (splitmix64: one word of state per stream) -------- */

static uint64_t next_random(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static size_t random_below(uint64_t *s, size_t n)
{
	return (size_t)(next_random(s) % n);
}

/* Sizes: 60% small, 25% medium, 13.5% large, 1.5% mmap-sized. */
static size_t random_size(uint64_t *s)
{
	size_t r = random_below(s, 1000);
	if (r < 600)
		return random_below(s, 257);
	if (r < 850)
		return 257 + random_below(s, 8192 - 256);
	if (r < 985)
		return 8193 + random_below(s, 256 * 1024 - 8192);
	return 256 * 1024 + random_below(s, 4 * 1024 * 1024 - 256 * 1024);
}

/* ---- patterns ----------------------------------------------------------
 * The checked bytes of a block of n bytes: every byte of the first DENSE
 * bytes, then one 8-byte word every STRIDE bytes (every page is touched),
 * then the last word.  The value at offset o depends on the block's tag and
 * on o only, so a realloc's kept prefix checks against the old tag. */

enum { DENSE = 8192, STRIDE = 4096 };

static uint64_t word_at(uint64_t tag, size_t o)
{
	return tag ^ ((uint64_t)o * 0x9E3779B97F4A7C15ull);
}

static uint8_t byte_at(uint64_t tag, size_t o)
{
	return (uint8_t)(word_at(tag, o & ~(size_t)7) >> ((o & 7) * 8));
}

/* Calls fn on each checked word offset below n (words are whole in the
 * block); the dense area's tail bytes are handled by fill/first_bad. */
#define FOR_EACH_CHECKED_WORD(o, n)                                              \
	for (size_t o = 0; o + 8 <= (n);                                         \
	     o = (o + 8 < DENSE) ? o + 8 : ((o + STRIDE) & ~(size_t)(STRIDE - 1)))

static size_t last_word(size_t n)
{
	return (n & ~(size_t)7) - 8;
}

static void fill(void *p, size_t n, uint64_t tag)
{
	unsigned char *b = p;
	FOR_EACH_CHECKED_WORD(o, n) {
		uint64_t w = word_at(tag, o);
		memcpy(b + o, &w, 8);
	}
	for (size_t o = n & ~(size_t)7; o < n && o < DENSE; o++)
		b[o] = byte_at(tag, o);
	if (n >= 16) {
		uint64_t w = word_at(tag, last_word(n));
		memcpy(b + last_word(n), &w, 8);
	}
}

/* First checked byte offset below @p limit that does not hold the pattern
 * of a block of @p n bytes with @p tag (zero == true: all zero instead), or
 * SIZE_MAX when all hold. */
static size_t first_bad(const void *p, size_t n, uint64_t tag, size_t limit, bool zero)
{
	const unsigned char *b = p;
	FOR_EACH_CHECKED_WORD(o, n) {
		if (o + 8 > limit)
			break;
		uint64_t w;
		memcpy(&w, b + o, 8);
		if (w != (zero ? 0 : word_at(tag, o)))
			return o;
	}
	for (size_t o = n & ~(size_t)7; o < n && o < limit && o < DENSE; o++)
		if (b[o] != (zero ? 0 : byte_at(tag, o)))
			return o;
	if (n >= 16 && last_word(n) + 8 <= limit) {
		uint64_t w;
		memcpy(&w, b + last_word(n), 8);
		if (w != (zero ? 0 : word_at(tag, last_word(n))))
			return last_word(n);
	}
	return SIZE_MAX;
}

/* ---- shared state ------------------------------------------------------ */

typedef struct block {
	void *p;                /* NULL: the slot is empty */
	size_t n;               /* bytes asked for */
	uint64_t tag;           /* pattern of its contents */
} block_t;

enum { INBOX = 256 };

typedef struct worker {
	unsigned id;
	pthread_t thread;
	uint64_t rng;                 /* this worker's random stream */
	block_t *slots;               /* its live blocks (only it touches them
	                                 while it runs; main when all parked) */
	pthread_mutex_t inbox_lock;   /* guards inbox and inbox_n */
	block_t inbox[INBOX];         /* blocks other workers handed over */
	unsigned inbox_n;
	unsigned long lifetime;       /* ops left before this thread retires */
	bool retired;                 /* (ctl.lock) the thread has returned */
	_Atomic unsigned long ops;    /* operations done, all generations */
} worker_t;

enum pause_kind { RUN = 0, PARK_FOR_CHECK, PARK_FOR_RESET };

static struct {
	hl_heap_t *heap;
	options_t opt;
	bool region;                  /* frees free nothing: epochs of hl_reset */
	worker_t *workers;
	pthread_mutex_t lock;         /* guards parked, retired, pause */
	pthread_cond_t parked_cond;   /* main waits: parked changed */
	pthread_cond_t resume_cond;   /* workers wait: pause ended */
	unsigned parked;              /* workers parked or retired */
	_Atomic int pause;            /* enum pause_kind */
	_Atomic bool stop;
	_Atomic unsigned long failures;
	_Atomic uint64_t epoch_bytes; /* bytes asked for since the last reset */
	_Atomic uint64_t next_tag;
} g;

static void failure(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void failure(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "\nstress: FAIL (%s, seed %" PRIu64 "): ", g.opt.policy, g.opt.seed);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	atomic_fetch_add(&g.failures, 1);
	atomic_store(&g.stop, true);
}

static uint64_t new_tag(uint64_t *rng)
{
	return next_random(rng) ^ atomic_fetch_add(&g.next_tag, 1);
}

/* The block's pattern must hold up to @p limit bytes; false after a failure. */
static bool verify(const block_t *b, size_t limit, const char *when)
{
	size_t bad = first_bad(b->p, b->n, b->tag, limit, false);
	if (bad == SIZE_MAX)
		return true;
	failure("%s: block %p of %zu bytes: byte %zu is 0x%02x, expected 0x%02x",
		when, b->p, b->n, bad, ((unsigned char *)b->p)[bad], byte_at(b->tag, bad));
	return false;
}

/* A fresh block: aligned, usable, owned; then its pattern. */
static bool accept_new(block_t *b, void *p, size_t n, size_t align, uint64_t *rng, const char *op)
{
	if (!p) {
		failure("%s(%zu) returned NULL: %s", op, n, strerror(errno));
		return false;
	}
	if ((uintptr_t)p % (align > 16 ? align : 16) != 0) {
		failure("%s(%zu, align %zu) returned %p, misaligned", op, n, align, p);
		return false;
	}
	if ((random_below(rng, 8) == 0) && (hl_usable_size(g.heap, p) < n || !hl_owns(g.heap, p))) {
		failure("%s(%zu) returned %p: usable size %zu or not owned", op, n, p,
			hl_usable_size(g.heap, p));
		return false;
	}
	if (g.region)
		atomic_fetch_add_explicit(&g.epoch_bytes, n, memory_order_relaxed);
	*b = (block_t){ .p = p, .n = n, .tag = new_tag(rng) };
	fill(p, n, b->tag);
	return true;
}

/* ---- one worker's operations ------------------------------------------ */

static void op_malloc(worker_t *w, block_t *b)
{
	size_t n = random_size(&w->rng);
	accept_new(b, hl_malloc(g.heap, n), n, 0, &w->rng, "malloc");
}

static void op_calloc(worker_t *w, block_t *b)
{
	size_t size = 1 + random_below(&w->rng, 64);
	size_t count = random_size(&w->rng) / size;
	void *p = hl_calloc(g.heap, count, size);
	size_t n = count * size;
	if (p && first_bad(p, n, 0, n, true) != SIZE_MAX) {
		failure("calloc(%zu, %zu) = %p is not zeroed at byte %zu", count, size, p,
			first_bad(p, n, 0, n, true));
		return;
	}
	accept_new(b, p, n, 0, &w->rng, "calloc");
}

static void op_memalign(worker_t *w, block_t *b)
{
	size_t align = (size_t)32 << random_below(&w->rng, 8);   /* 32 .. 4096 */
	size_t n = random_size(&w->rng);
	void *p = NULL;
	if (random_below(&w->rng, 2)) {
		p = hl_memalign(g.heap, align, n);
	} else {
		int rc = hl_posix_memalign(g.heap, &p, align, n);
		errno = rc;
	}
	accept_new(b, p, n, align, &w->rng, "memalign");
}

static void op_free(worker_t *w, block_t *b)
{
	if (verify(b, b->n, "before free"))
		hl_free(g.heap, b->p);
	b->p = NULL;
}

/* New size of a realloc chain step: grow a little, grow a lot, shrink. */
static size_t realloc_size(worker_t *w, size_t n)
{
	size_t m;
	switch (random_below(&w->rng, 4)) {
	case 0:
		m = n + random_below(&w->rng, 64);
		break;
	case 1:
		m = n / 2 + random_below(&w->rng, 16);
		break;
	case 2:
		m = n * 2 + 1 < 4 * 1024 * 1024 ? n * 2 + 1 : n;
		break;
	default:
		m = random_size(&w->rng);
	}
	return m ? m : 1;   /* realloc(p, 0) frees: done on purpose elsewhere */
}

/* 1..6 reallocs of one block, each keeping the old prefix; rarely ends in
 * realloc(p, 0), which frees. */
static void op_realloc_chain(worker_t *w, block_t *b)
{
	unsigned steps = 1 + (unsigned)random_below(&w->rng, 6);
	for (unsigned i = 0; i < steps && !atomic_load_explicit(&g.stop, memory_order_relaxed); i++) {
		if (!verify(b, b->n, "before realloc"))
			return;
		if (random_below(&w->rng, 256) == 0) {
			if (hl_realloc(g.heap, b->p, 0) != NULL)
				failure("realloc(%p, 0) did not return NULL", b->p);
			b->p = NULL;
			return;
		}
		size_t n = realloc_size(w, b->n);
		void *p = hl_realloc(g.heap, b->p, n);
		if (!p) {
			failure("realloc(%p, %zu) returned NULL: %s", b->p, n, strerror(errno));
			return;
		}
		block_t moved = { .p = p, .n = b->n, .tag = b->tag };
		if (!verify(&moved, n < b->n ? n : b->n, "after realloc"))
			return;
		accept_new(b, p, n, 0, &w->rng, "realloc");
	}
}

/* Gives the block to another worker's inbox; frees it here when full. */
static void op_hand_over(worker_t *w, block_t *b)
{
	if (g.opt.threads < 2 || !verify(b, b->n, "before hand-over")) {
		op_free(w, b);
		return;
	}
	unsigned to = (w->id + 1 + (unsigned)random_below(&w->rng, g.opt.threads - 1)) % g.opt.threads;
	worker_t *t = &g.workers[to];
	pthread_mutex_lock(&t->inbox_lock);
	bool room = t->inbox_n < INBOX;
	if (room)
		t->inbox[t->inbox_n++] = *b;
	pthread_mutex_unlock(&t->inbox_lock);
	if (room)
		b->p = NULL;
	else
		op_free(w, b);
}

/* Checks and frees what other workers handed over. */
static void drain_inbox(worker_t *w, const char *who)
{
	block_t got[INBOX];
	pthread_mutex_lock(&w->inbox_lock);
	unsigned n = w->inbox_n;
	memcpy(got, w->inbox, n * sizeof got[0]);
	w->inbox_n = 0;
	pthread_mutex_unlock(&w->inbox_lock);
	for (unsigned i = 0; i < n; i++)
		if (verify(&got[i], got[i].n, who))
			hl_free(g.heap, got[i].p);
}

static void one_op(worker_t *w)
{
	block_t *b = &w->slots[random_below(&w->rng, g.opt.slots)];
	unsigned r = (unsigned)random_below(&w->rng, 100);
	if (!b->p) {
		if (r < 70)
			op_malloc(w, b);
		else if (r < 85)
			op_calloc(w, b);
		else
			op_memalign(w, b);
	} else if (r < 45) {
		op_free(w, b);
	} else if (r < 70) {
		op_realloc_chain(w, b);
	} else if (r < 90) {
		op_hand_over(w, b);
	} else if (verify(b, b->n, "while live")) {
		fill(b->p, b->n, b->tag = new_tag(&w->rng));
	}
	if (random_below(&w->rng, 20000) == 0)
		hl_trim(g.heap, random_below(&w->rng, 2) ? 0 : 64 * 1024);
}

/* ---- parking: the workers stop where main can look at the heap -------- */

static void park(void)
{
	pthread_mutex_lock(&g.lock);
	g.parked++;
	pthread_cond_signal(&g.parked_cond);
	while (atomic_load(&g.pause) != RUN)
		pthread_cond_wait(&g.resume_cond, &g.lock);
	g.parked--;
	pthread_mutex_unlock(&g.lock);
}

static void *worker_main(void *arg)
{
	worker_t *w = arg;
	while (!atomic_load_explicit(&g.stop, memory_order_relaxed) && w->lifetime > 0) {
		if (atomic_load_explicit(&g.pause, memory_order_relaxed) != RUN) {
			park();
			continue;
		}
		one_op(w);
		if ((w->lifetime & 15) == 0)
			drain_inbox(w, "after hand-over");
		w->lifetime--;
		atomic_fetch_add_explicit(&w->ops, 1, memory_order_relaxed);
	}
	pthread_mutex_lock(&g.lock);
	w->retired = true;
	g.parked++;
	pthread_cond_signal(&g.parked_cond);
	pthread_mutex_unlock(&g.lock);
	return NULL;
}

static unsigned long threads_started;

/* Starts (or restarts, on the same table) worker @p w's thread. */
static void start_worker(worker_t *w)
{
	w->lifetime = 2000 + random_below(&w->rng, 20000);
	w->retired = false;
	threads_started++;
	int rc = pthread_create(&w->thread, NULL, worker_main, w);
	if (rc) {
		fprintf(stderr, "stress: pthread_create: %s\n", strerror(rc));
		exit(1);
	}
}

/* Joins retired workers and starts their successors (not when stopping). */
static void replace_retired(void)
{
	for (unsigned i = 0; i < g.opt.threads; i++) {
		worker_t *w = &g.workers[i];
		pthread_mutex_lock(&g.lock);
		bool retired = w->retired;
		pthread_mutex_unlock(&g.lock);
		if (!retired || atomic_load(&g.stop))
			continue;
		pthread_join(w->thread, NULL);
		pthread_mutex_lock(&g.lock);
		g.parked--;
		pthread_mutex_unlock(&g.lock);
		start_worker(w);
	}
}

static void park_all(enum pause_kind kind)
{
	pthread_mutex_lock(&g.lock);
	atomic_store(&g.pause, kind);
	while (g.parked < g.opt.threads)
		pthread_cond_wait(&g.parked_cond, &g.lock);
	pthread_mutex_unlock(&g.lock);
}

static void resume_all(void)
{
	pthread_mutex_lock(&g.lock);
	atomic_store(&g.pause, RUN);
	pthread_cond_broadcast(&g.resume_cond);
	pthread_mutex_unlock(&g.lock);
}

/* ---- main's checks ------------------------------------------------------ */

static int count_live(const hl_block_t *b, void *arg)
{
	if (b->state == HL_BLOCK_LIVE)
		++*(size_t *)arg;
	return 0;
}

static unsigned long checks;

static void run_checker(const char *when)
{
	checks++;
	int problems = hl_check(g.heap, stderr);
	if (problems)
		failure("hl_check %s found %d problem(s) (above)", when, problems);
}

/* With every worker stopped or parked: frees every block they hold. */
static void free_everything(void)
{
	for (unsigned i = 0; i < g.opt.threads; i++) {
		worker_t *w = &g.workers[i];
		drain_inbox(w, "at the end, in an inbox");
		for (unsigned s = 0; s < g.opt.slots; s++)
			if (w->slots[s].p)
				op_free(w, &w->slots[s]);
	}
}

/* Nothing may be live: the walker sees no live block, the statistics no
 * live bytes. */
static void expect_nothing_live(const char *when)
{
	size_t live = 0;
	double usable = -1;
	hl_walk(g.heap, count_live, &live);
	if (hl_stat(g.heap, "live_usable_bytes", &usable) != 0)
		usable = -1;
	if (live != 0 || usable != 0)
		failure("%s: %zu block(s) still live, live_usable_bytes %.0f", when, live, usable);
}

static unsigned long resets;

/* Region allocators: free all (which records nothing), reset, check. */
static void reset_epoch(void)
{
	park_all(PARK_FOR_RESET);
	free_everything();
	if (hl_reset(g.heap) != 0)
		failure("hl_reset failed: %s", hl_last_error());
	resets++;
	atomic_store(&g.epoch_bytes, 0);
	run_checker("after hl_reset");
	expect_nothing_live("after hl_reset");
	resume_all();
}

/* ---- fork --------------------------------------------------------------- */

/* In the child: the forking thread alone uses the heap for a moment. */
static int child_work(uint64_t seed)
{
	uint64_t rng = seed;
	block_t b[64] = { 0 };
	for (int round = 0; round < 400 && !atomic_load(&g.stop); round++) {
		block_t *x = &b[random_below(&rng, 64)];
		worker_t fake = { .rng = rng };
		if (!x->p)
			random_below(&rng, 2) ? op_malloc(&fake, x) : op_memalign(&fake, x);
		else if (random_below(&rng, 2))
			op_realloc_chain(&fake, x);
		else
			op_free(&fake, x);
		rng = fake.rng;
	}
	for (int i = 0; i < 64; i++)
		if (b[i].p && verify(&b[i], b[i].n, "in the fork child"))
			hl_free(g.heap, b[i].p);
	if (atomic_load(&g.failures))
		return 3;
	int problems = hl_check(g.heap, stderr);
	return problems ? 4 : 0;
}

static unsigned long forks;

/* Waits for the child up to 60 s, then kills it. */
static void fork_and_check(uint64_t seed)
{
	pid_t pid = fork();
	if (pid < 0) {
		failure("fork: %s", strerror(errno));
		return;
	}
	if (pid == 0)
		_exit(child_work(seed));
	forks++;
	int status = 0;
	for (int waited_ms = 0;; waited_ms += 10) {
		pid_t r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			break;
		if (waited_ms >= 60000) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			failure("fork child %d hung for 60 s (killed)", (int)pid);
			return;
		}
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	if (WIFSIGNALED(status))
		failure("fork child %d (fork %lu) died of signal %d (%s)", (int)pid, forks,
			WTERMSIG(status), strsignal(WTERMSIG(status)));
	else if (WEXITSTATUS(status) != 0)
		failure("fork child %d (fork %lu) exited %d (%s)", (int)pid, forks, WEXITSTATUS(status),
			WEXITSTATUS(status) == 4 ? "hl_check found problems" : "contents or calls failed");
}

/* ---- main ---------------------------------------------------------------- */

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static unsigned long total_ops(void)
{
	unsigned long ops = 0;
	for (unsigned i = 0; i < g.opt.threads; i++)
		ops += atomic_load_explicit(&g.workers[i].ops, memory_order_relaxed);
	return ops;
}

static void progress(double elapsed, bool tty)
{
	if (!tty)
		return;
	fprintf(stderr, "\r\033[K%s: %4.0f/%u s  ops %lu  forks %lu  checks %lu  failures %lu",
		g.opt.policy, elapsed, g.opt.seconds, total_ops(), forks, checks,
		atomic_load(&g.failures));
	fflush(stderr);
}

static void setup(void)
{
	g.heap = hl_heap_new(g.opt.policy, g.opt.conf);
	if (!g.heap) {
		fprintf(stderr, "stress: %s\n", hl_last_error());
		exit(2);
	}
	/* On a fresh heap hl_reset works exactly for region allocators. */
	g.region = hl_reset(g.heap) == 0;
	pthread_mutex_init(&g.lock, NULL);
	pthread_cond_init(&g.parked_cond, NULL);
	pthread_cond_init(&g.resume_cond, NULL);
	g.workers = calloc(g.opt.threads, sizeof *g.workers);
	if (!g.workers) {
		fprintf(stderr, "stress: out of memory\n");
		exit(1);
	}
	for (unsigned i = 0; i < g.opt.threads; i++) {
		worker_t *w = &g.workers[i];
		w->id = i;
		w->rng = g.opt.seed * 0x100000001B3ull + i;
		w->slots = calloc(g.opt.slots, sizeof *w->slots);
		if (!w->slots) {
			fprintf(stderr, "stress: out of memory\n");
			exit(1);
		}
		pthread_mutex_init(&w->inbox_lock, NULL);
	}
}

/* Main's loop until the time is up or something failed. */
static void supervise(bool tty)
{
	double start = now(), last_check = start, last_fork = start, last_progress = 0;
	uint64_t fork_rng = g.opt.seed ^ 0xF0F0F0F0ull;
	uint64_t epoch_limit = (uint64_t)g.opt.epoch_mb << 20;
	while (!atomic_load(&g.stop)) {
		struct timespec ts = { 0, 5 * 1000 * 1000 };
		nanosleep(&ts, NULL);
		double t = now();
		if (t - start >= g.opt.seconds)
			break;
		replace_retired();
		if (g.region && atomic_load(&g.epoch_bytes) > epoch_limit)
			reset_epoch();
		if ((t - last_check) * 1000 >= g.opt.check_ms) {
			park_all(PARK_FOR_CHECK);
			run_checker("with the workers parked");
			resume_all();
			last_check = t;
		}
		if (g.opt.fork_ms && (t - last_fork) * 1000 >= g.opt.fork_ms) {
			fork_and_check(next_random(&fork_rng));
			last_fork = now();
		}
		if (t - last_progress >= 1) {
			progress(t - start, tty);
			last_progress = t;
		}
	}
	progress(now() - start, tty);
	if (tty)
		fputc('\n', stderr);
}

/* Stops the workers, frees every block, checks the heap is empty. */
static void finish(void)
{
	atomic_store(&g.stop, true);
	resume_all();
	for (unsigned i = 0; i < g.opt.threads; i++)
		pthread_join(g.workers[i].thread, NULL);
	atomic_store(&g.stop, false);     /* verify() still reports */
	free_everything();
	if (g.region && hl_reset(g.heap) != 0)
		failure("hl_reset failed: %s", hl_last_error());
	run_checker("at the end");
	expect_nothing_live("at the end, every block freed");
}

int main(int argc, char **argv)
{
	g.opt = parse_options(argc, argv);
	setup();
	bool tty = !g.opt.quiet && isatty(STDERR_FILENO);
	for (unsigned i = 0; i < g.opt.threads; i++)
		start_worker(&g.workers[i]);
	supervise(tty);
	finish();
	unsigned long failures = atomic_load(&g.failures);
	printf("stress: policy=%s threads=%u seconds=%u seed=%" PRIu64 " ops=%lu forks=%lu checks=%lu"
	       " threads_started=%lu%s failures=%lu %s\n",
	       g.opt.policy, g.opt.threads, g.opt.seconds, g.opt.seed, total_ops(), forks, checks,
	       threads_started, g.region ? " (region: frees record nothing)" : "", failures,
	       failures ? "FAIL" : "PASS");
	if (g.region)
		printf("stress: %s resets=%lu\n", g.opt.policy, resets);
	hl_heap_destroy(g.heap);
	return failures ? 1 : 0;
}
