/*
 * Core pieces on their own: configuration strings, the trace reader's
 * errors, the page source's counting and measuring, the request ledger.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "testlib.h"
#include "conf.h"
#include "ledger.h"
#include "os.h"
#include "policy.h"
#include "lock.h"

static const hl_option_t opts[] = {
	{ "fit", HL_OPT_ENUM, "first", 0, 0, "first|next|best", "which block" },
	{ "count", HL_OPT_INT, "16", 0, 100, NULL, "how many" },
	{ "threshold", HL_OPT_SIZE, "128K", 0, 1 << 30, NULL, "bytes" },
	{ "flag", HL_OPT_BOOL, "off", 0, 1, NULL, "a switch" },
	{ NULL, 0, NULL, 0, 0, NULL, NULL },
};

START_TEST(conf_defaults_and_values)
{
	hl_conf_t c;
	char err[256];
	ck_assert_int_eq(hl_conf_parse(&c, opts, NULL, err, sizeof err), 0);
	ck_assert_int_eq(hl_conf_enum(&c, "fit"), 0);
	ck_assert_int_eq(hl_conf_int(&c, "count"), 16);
	ck_assert_uint_eq(hl_conf_size(&c, "threshold"), 128 * 1024);
	ck_assert(!hl_conf_given(&c, "count"));
	ck_assert_int_eq(hl_conf_parse(&c, opts, "fit:best,count:7,threshold:4M,flag:on", err, sizeof err), 0);
	ck_assert_int_eq(hl_conf_enum(&c, "fit"), 2);
	ck_assert_int_eq(hl_conf_int(&c, "count"), 7);
	ck_assert_uint_eq(hl_conf_size(&c, "threshold"), 4u << 20);
	ck_assert(hl_conf_bool(&c, "flag"));
	ck_assert(hl_conf_given(&c, "count"));
}
END_TEST

START_TEST(conf_errors_say_what_is_valid)
{
	hl_conf_t c;
	char err[256];
	ck_assert_int_eq(hl_conf_parse(&c, opts, "fitt:best", err, sizeof err), -1);
	ck_assert_ptr_nonnull(strstr(err, "unknown option 'fitt'"));
	ck_assert_ptr_nonnull(strstr(err, "fit, count, threshold, flag"));
	ck_assert_int_eq(hl_conf_parse(&c, opts, "count:101", err, sizeof err), -1);
	ck_assert_ptr_nonnull(strstr(err, "from 0 to 100"));
	/* found by fuzz_conf: a newline of the string was echoed into the message */
	ck_assert_int_eq(hl_conf_parse(&c, opts, "fi\nt:best", err, sizeof err), -1);
	ck_assert_ptr_nonnull(strstr(err, "unknown option 'fi\\x0at'"));
	ck_assert_ptr_null(strchr(err, '\n'));
	ck_assert_int_eq(hl_conf_parse(&c, opts, "fit:worst", err, sizeof err), -1);
	ck_assert_ptr_nonnull(strstr(err, "first|next|best"));
	ck_assert_int_eq(hl_conf_parse(&c, opts, "threshold:12Q", err, sizeof err), -1);
	ck_assert_int_eq(hl_conf_parse(&c, opts, "count", err, sizeof err), -1);
	ck_assert_ptr_nonnull(strstr(err, "no value"));
}
END_TEST

static const char *write_temp(const char *text)
{
	static char path[64];
	snprintf(path, sizeof path, "/tmp/hl-trace-XXXXXX");
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

/* Loads text as a trace and expects the error "path:line: <fragment>". */
static void expect_trace_error(const char *text, unsigned line, const char *fragment)
{
	const char *path = write_temp(text);
	ck_assert_ptr_null(hl_trace_load(path));
	char want[128];
	snprintf(want, sizeof want, "%s:%u: ", path, line);
	ck_assert_msg(strncmp(hl_last_error(), want, strlen(want)) == 0, "got '%s', want prefix '%s'", hl_last_error(), want);
	ck_assert_msg(strstr(hl_last_error(), fragment) != NULL, "got '%s', want '%s'", hl_last_error(), fragment);
	unlink(path);
}

START_TEST(trace_reader_rejects_damage)
{
	expect_trace_error("a 0 10\nx 1 2\n", 2, "unknown op");
	expect_trace_error("a 0 10\nf 1\n", 2, "not live");
	expect_trace_error("a 0 10\nf 1\nf 1\n", 2, "not live");
	expect_trace_error("a 0\n", 1, "missing size");
	expect_trace_error("a 0 ten\n", 1, "bad size");
	expect_trace_error("a 0 10\na 0 10\n", 2, "still live");
	expect_trace_error("1\n2\na 0 10\n", 3, "incomplete header");
	expect_trace_error("s\n", 1, "label");
	expect_trace_error("t 999\n", 1, "out of range");
	/* found by fuzz_trace: one id near 2^31 made the reader allocate 2 GB */
	expect_trace_error("a 0 1\na 4194304 1\n", 2, "block id 4194304 out of range 0..4194303");
	/* a control byte of the input is shown escaped: the message stays one line */
	expect_trace_error("a 0 1x\033[2J\n", 1, "bad size '1x\\x1b[2J'");
}
END_TEST

START_TEST(trace_reader_reads_the_front)
{
	/* "#@front NAME": what the program has in front of malloc as it runs */
	const char *path = write_temp("#@front pymalloc\na 0 10\nf 0\n");
	hl_trace_t *t = hl_trace_load(path);
	ck_assert_msg(t != NULL, "%s", hl_last_error());
	ck_assert_str_eq(hl_trace_front(t), "pymalloc");
	hl_trace_free(t);
	unlink(path);
	path = write_temp("a 0 10\nf 0\n");
	t = hl_trace_load(path);
	ck_assert_ptr_nonnull(t);
	ck_assert_ptr_null(hl_trace_front(t));
	hl_trace_free(t);
	unlink(path);
	expect_trace_error("#@front py malloc\na 0 1\n", 1, "front line without its one word");
}
END_TEST

START_TEST(trace_reader_keeps_a_double_free)
{
	/* a recorded program's mistake: loaded, with a warning, to be replayed */
	const char *path = write_temp("a 0 10\nf 0\nf 0\n");
	hl_trace_t *t = hl_trace_load(path);
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(hl_trace_ops(t), 3);
	ck_assert_ptr_nonnull(strstr(hl_trace_warnings(t), ":3: warning: block 0 is freed again: replayed as a double free"));
	hl_trace_free(t);
	unlink(path);
}
END_TEST

START_TEST(trace_reader_reads_thread_exits)
{
	/* "#@exit N": an op of its own on thread N, not a block op;
	 * a later op or "t N" is a new thread numbered N */
	const char *path = write_temp("1\n3\n3\n1\na 0 10\nt 1\na 1 10\n#@exit 1\nt 1\nf 1\n#@exits 9\n");
	hl_trace_t *t = hl_trace_load(path);
	ck_assert_msg(t != NULL, "%s", hl_last_error());
	ck_assert_uint_eq(hl_trace_ops(t), 6);
	ck_assert_int_eq(hl_trace_op_kind(t, 3), 'x');
	ck_assert_int_eq(hl_trace_op_id(t, 3), -1);
	ck_assert_uint_eq(hl_trace_op_size(t, 3), 0);
	ck_assert_uint_eq(hl_trace_op_line(t, 3), 8);
	char buf[64];
	ck_assert_str_eq(hl_trace_op_text(t, 3, buf, sizeof buf), "#@exit 1");
	/* the header counts block ops only ("#@exits" is a comment) */
	ck_assert_str_eq(hl_trace_warnings(t), "");
	hl_trace_free(t);
	unlink(path);
	/* thread 0 runs from the start */
	path = write_temp("a 0 1\n#@exit 0\nf 0\n");
	t = hl_trace_load(path);
	ck_assert_msg(t != NULL, "%s", hl_last_error());
	ck_assert_int_eq(hl_trace_op_kind(t, 1), 'x');
	hl_trace_free(t);
	unlink(path);
	/* damage: bad fields, an exit of a thread that is not running */
	static const struct {
		const char *text;
		unsigned line;
		const char *message;
	} damage[] = {
		{ "a 0 1\n#@exit x\n", 2, "bad thread id 'x'" },
		{ "a 0 1\n#@exit 0 1\n", 2, "unexpected '1' after the thread id" },
		{ "a 0 1\n#@exit 256\n", 2, "thread id 256 out of range 0..255" },
		{ "a 0 1\n#@exit -1\n", 2, "out of range" },
		{ "a 0 1\n#@exit 2\n", 2, "thread 2 exits before it ran" },
		{ "t 1\na 0 1\n#@exit 1\n#@exit 1\n", 4, "thread 1 exits twice" },
		/* "x" is no op of the trace's own: only the "#@" line makes one */
		{ "a 0 1\nx 0\n", 2, "unknown op" },
	};
	for (size_t k = 0; k < sizeof damage / sizeof damage[0]; k++)
		expect_trace_error(damage[k].text, damage[k].line, damage[k].message);
}
END_TEST

START_TEST(trace_reader_reads_both_headers_and_extensions)
{
	const char *path = write_temp("20000\r\n2\r\n5\r\n1\r\na 0 10\r\nr 0 20\r\nc 1 3 8\r\nf 0\r\nf -1");
	hl_trace_t *t = hl_trace_load(path);
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(hl_trace_ops(t), 5);
	ck_assert_str_eq(hl_trace_warnings(t), "");
	ck_assert_int_eq(hl_trace_op_kind(t, 2), 'c');
	ck_assert_uint_eq(hl_trace_op_size(t, 2), 24);
	ck_assert_uint_eq(hl_trace_op_line(t, 2), 7);
	hl_trace_free(t);
	unlink(path);
	/* a header that counts fewer ops than the file has (five published
	 * traces count one short) is a warning with a line number */
	path = write_temp("1\n1\n1\n1\na 0 1\nf 0\n");
	t = hl_trace_load(path);
	ck_assert_ptr_nonnull(t);
	ck_assert_ptr_nonnull(strstr(hl_trace_warnings(t), ":3: warning: header says 1 ops, the file has 2"));
	hl_trace_free(t);
	unlink(path);
	/* a file with fewer ops than its header announces was cut short: an
	 * error, unless the load is lenient */
	path = write_temp("1\n1\n3\n1\na 0 1\nf 0\n");
	ck_assert_ptr_null(hl_trace_load(path));
	ck_assert_ptr_nonnull(strstr(hl_last_error(), ":6: the file ends after 2 of the 3 ops its header announces"));
	t = hl_trace_load_lenient(path);
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(hl_trace_ops(t), 2);
	ck_assert_ptr_nonnull(strstr(hl_trace_warnings(t), ":6: warning: the file ends after 2 of the 3 ops"));
	hl_trace_free(t);
	unlink(path);
	/* cut in the middle of a number: the true cause, not "live again" */
	path = write_temp("1\n2\n3\n1\na 0 1\nf 0\na 0");
	ck_assert_ptr_null(hl_trace_load(path));
	ck_assert_ptr_nonnull(strstr(hl_last_error(), ":7: the file ends in the middle of a line ('a 0' has no newline)"));
	unlink(path);
	path = write_temp("a 0 10\na 0");
	ck_assert_ptr_null(hl_trace_load(path));
	ck_assert_ptr_nonnull(strstr(hl_last_error(), ":2: the file ends in the middle of a line ('a 0' has no newline)"));
	t = hl_trace_load_lenient(path);
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(hl_trace_ops(t), 1);
	hl_trace_free(t);
	unlink(path);
	/* a NUL byte is named as one */
	path = write_temp("a 0 10\n");
	FILE *nul = fopen(path, "a");
	fputs("f 0", nul);
	fputc(0, nul);
	fputs("\n", nul);
	fclose(nul);
	ck_assert_ptr_null(hl_trace_load(path));
	ck_assert_ptr_nonnull(strstr(hl_last_error(), ":2: NUL byte at column 4"));
	unlink(path);
	path = write_temp("# headerless, with extensions\nm 0 64 100\nt 1\ns after\nf 0\n");
	t = hl_trace_load(path);
	ck_assert_ptr_nonnull(t);
	ck_assert_str_eq(hl_trace_op_label(t, 2), "after");
	char buf[64];
	ck_assert_str_eq(hl_trace_op_text(t, 0, buf, sizeof buf), "m 0 64 100");
	hl_trace_free(t);
	unlink(path);
}
END_TEST

START_TEST(page_source_counts_and_measures)
{
	hl_os_t os;
	hl_os_init(&os);
	size_t page = hl_os_page(&os);
	char *r = hl_os_reserve(&os, 64 * page, 16 * page, false);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq((uintptr_t)r % (16 * page), 0);
	ck_assert_uint_eq(os.reserved_bytes, 64 * page);
	ck_assert_uint_eq(os.committed_bytes, 0);
	ck_assert_uint_eq(hl_os_resident(&os), 0);
	ck_assert_int_eq(hl_os_commit(&os, r, 8 * page), 0);
	memset(r, 1, 8 * page);
	ck_assert_uint_eq(hl_os_resident(&os), 8 * page);
	hl_os_purge(&os, r, 4 * page);
	ck_assert_uint_eq(hl_os_resident(&os), 4 * page);
	ck_assert_uint_eq(os.committed_bytes, 8 * page); /* purged pages stay committed */
	hl_os_decommit(&os, r, 8 * page);
	ck_assert_uint_eq(os.committed_bytes, 0);
	size_t off;
	ck_assert_int_eq(hl_os_locate(&os, r + 5 * page + 3, &off), 0);
	ck_assert_uint_eq(off, 5 * page + 3);
	hl_brk_t b;
	ck_assert_int_eq(hl_brk_init(&os, &b, 1 << 20), 0);
	ck_assert_ptr_eq(hl_brk_move(&os, &b, 3000), b.base);
	ck_assert_uint_eq(b.end, page);
	memset(b.base, 2, page);
	ck_assert_uint_eq(hl_os_resident(&os), page);
	ck_assert_ptr_null(hl_brk_move(&os, &b, 2 << 20)); /* beyond the reservation */
	hl_brk_move(&os, &b, -(intptr_t)page);
	ck_assert_uint_eq(b.end, 0);
	ck_assert_uint_eq(hl_os_resident(&os), 0);
	/* metadata pages: counted apart from the heap's, written or not */
	char *m = hl_os_reserve_meta(&os, 16 * page);
	ck_assert_ptr_nonnull(m);
	ck_assert_uint_eq(hl_os_resident_meta(&os), 0);
	m[0] = 1, m[5 * page] = 1, m[16 * page - 1] = 1;
	ck_assert_uint_eq(hl_os_resident_meta(&os), 3 * page);
	ck_assert_uint_eq(hl_os_resident(&os), 0);
	ck_assert_uint_ge(os.calls[HL_OS_MMAP], 2);
	ck_assert_uint_ge(os.calls[HL_OS_MINCORE], 1);
	hl_os_release(&os, r, 0);
	ck_assert_int_lt(hl_os_locate(&os, r, NULL), 0);
	hl_os_release_all(&os);
}
END_TEST

static int sum_values(uintptr_t p, size_t v, void *arg)
{
	(void)p;
	*(size_t *)arg += v;
	return 0;
}

START_TEST(ledger_tracks_requests)
{
	hl_os_t os;
	hl_os_init(&os);
	hl_ledger_t *l = hl_os_boot_alloc(sizeof *l);
	hl_ledger_init(l, &os);
	for (uintptr_t i = 1; i <= 100000; i++)
		ck_assert(hl_ledger_add(l, (void *)(i * 16), i));
	ck_assert_int_eq(l->live, (int64_t)100000 * 100001 / 2);
	for (uintptr_t i = 1; i <= 100000; i += 2)
		ck_assert_uint_eq(hl_ledger_remove(l, (void *)(i * 16)), i);
	ck_assert_uint_eq(hl_ledger_get(l, (void *)(16 * 2)), 2);
	ck_assert_uint_eq(hl_ledger_get(l, (void *)(16 * 3)), (size_t)-1);
	ck_assert_uint_eq(hl_ledger_remove(l, (void *)(16 * 3)), (size_t)-1);
	ck_assert_int_eq(l->peak, (int64_t)100000 * 100001 / 2);
	size_t even = 0;                 /* what is left: the even requests */
	ck_assert_int_eq(hl_ledger_foreach(l, sum_values, &even), 0);
	ck_assert_uint_eq(even, (size_t)50000 * 50001);
	hl_os_boot_free(l, sizeof *l);
	hl_os_release_all(&os);
}
END_TEST

/* A block of one heap freed into another, both in debug mode. */
static void free_into_another_heap(const void *policy)
{
	hl_heap_t *mine = hl_heap_new(policy, "debug:on");
	hl_heap_t *other = hl_heap_new(policy, "debug:on");
	hl_malloc(mine, 40);
	hl_free(mine, hl_malloc(other, 40));
}

/* A freed block written to, then the next call. */
static void write_then_malloc(const void *policy)
{
	hl_heap_t *h = hl_heap_new(policy, "debug:on");
	char *p = hl_malloc(h, 40);
	hl_free(h, p);
	p[20] = 'x';
	hl_malloc(h, 40);
}

START_TEST(debug_guard_names_the_mistake_under_every_policy)
{
	for (size_t i = 0; i < hl_policy_count(); i++) {
		const char *name = hl_policy_name(i);
		char want[160];
		snprintf(want, sizeof want, "heaplab: %s: free of a pointer this heap never handed out (0x", name);
		tl_expect_abort(free_into_another_heap, name, want);
		snprintf(want, sizeof want, "heaplab: %s: write into a freed block (0x", name);
		tl_expect_abort(write_then_malloc, name, want);
	}
}
END_TEST

/* Options are described once, in their tables: every option of the core's
 * table and of every compiled-in policy's has a help line, and the
 * generated documentation (hl_options_doc, behind `heaplab options` and the
 * book's appendix) has a row for each, in both forms. */
static void doc_lists_every_option(const char *name, const hl_option_t *table)
{
	for (int markdown = 0; markdown < 2; markdown++) {
		char *text = NULL;
		size_t len = 0;
		FILE *out = open_memstream(&text, &len);
		ck_assert_int_eq(hl_options_doc(name, markdown, out), 0);
		fclose(out);
		int rows = 0;
		for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : "")
			rows += markdown ? !strncmp(l, "| `", 3) : !strncmp(l, "    ", 4) && l[4] != ' ';
		int keys = 0;
		for (const hl_option_t *o = table; o->key; o++, keys++) {
			ck_assert_msg(o->help && strlen(o->help) > 8, "%s: option %s has no description",
				      name ? name : "core", o->key);
			char row[96];
			snprintf(row, sizeof row, markdown ? "| `%s` |" : "\n    %s ", o->key);
			const char *at = strstr(text, row);
			if (!markdown && !at && !strncmp(text, row + 1, strlen(row + 1)))
				at = text;      /* the first line has no newline before it */
			ck_assert_msg(at, "%s: the %s doc has no row for %s", name ? name : "core",
				      markdown ? "markdown" : "text", o->key);
		}
		ck_assert_int_eq(rows, keys);
		free(text);
	}
}

START_TEST(options_documented_from_their_tables)
{
	doc_lists_every_option(NULL, hl_core_options);
	for (size_t i = 0; i < hl_policy_count(); i++) {
		const hl_policy_t *p = hl_policy_find(hl_policy_name(i));
		doc_lists_every_option(p->name, p->options);
	}
	ck_assert_int_eq(hl_options_doc("nosuch", true, stdout), -1);
}
END_TEST

/* core/lock.h: the futex lock that bins' arenas use.  Four threads add to a
 * plain counter under it; a lock that let two in at once loses additions
 * (and under TSan, a lock without acquire and release is a reported race).
 * The main thread holds the lock while they start, so most of them find it
 * busy and go through the futex wait and wake. */
enum { LOCK_THREADS = 4, LOCK_ROUNDS = 100000 };
static hl_lock_t shared_lock;
static unsigned long shared_count;
static unsigned started;

static void *add_under_lock(void *arg)
{
	unsigned *waited = arg;
	__atomic_add_fetch(&started, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < LOCK_ROUNDS; i++) {
		*waited += hl_lock(&shared_lock);
		shared_count++;
		hl_unlock(&shared_lock);
	}
	return NULL;
}

START_TEST(futex_lock_excludes_and_wakes)
{
	pthread_t th[LOCK_THREADS];
	unsigned waited[LOCK_THREADS] = { 0 };
	hl_lock_init(&shared_lock);
	ck_assert(!hl_lock(&shared_lock));             /* free: taken at once */
	ck_assert(!hl_lock_try(&shared_lock));         /* held: refused */
	for (int i = 0; i < LOCK_THREADS; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, add_under_lock, &waited[i]), 0);
	while (__atomic_load_n(&started, __ATOMIC_RELAXED) < LOCK_THREADS)
		sched_yield();
	usleep(20000);
	hl_unlock(&shared_lock);
	unsigned total_waits = 0;
	for (int i = 0; i < LOCK_THREADS; i++) {
		pthread_join(th[i], NULL);
		total_waits += waited[i];
	}
	ck_assert_uint_eq(shared_count, (unsigned long)LOCK_THREADS * LOCK_ROUNDS);
	ck_assert(hl_lock_try(&shared_lock));          /* left free */
	hl_unlock(&shared_lock);
	printf("futex lock: %u of %d acquires waited\n", total_waits, LOCK_THREADS * LOCK_ROUNDS);
}
END_TEST

/* Each thread writes its own record's counters on every call, and its
 * hits read other fields of the record: two threads' records must never
 * share a cache line (packed, percpu's rseq hit on one thread read the
 * line the other thread's counters were written to). */
enum { RECORD_THREADS = 4 };
static hl_heap_t *record_heap;
static pthread_barrier_t record_barrier;

static void *note_record(void *arg)
{
	void *p = hl_malloc(record_heap, 16);   /* attaches the thread */
	*(hl_thread_t **)arg = hl_thread_get(record_heap);
	pthread_barrier_wait(&record_barrier);  /* all alive: no record reused */
	hl_free(record_heap, p);
	return NULL;
}

START_TEST(thread_records_never_share_a_cache_line)
{
	record_heap = tl_heap(hl_default_policy(), NULL);  /* the records are the core's */
	pthread_t th[RECORD_THREADS];
	hl_thread_t *rec[RECORD_THREADS + 1] = { hl_thread_get(record_heap) };
	pthread_barrier_init(&record_barrier, NULL, RECORD_THREADS);
	for (int i = 0; i < RECORD_THREADS; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, note_record, &rec[i + 1]), 0);
	for (int i = 0; i < RECORD_THREADS; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&record_barrier);
	for (int i = 0; i <= RECORD_THREADS; i++)
		for (int j = 0; j <= RECORD_THREADS; j++) {
			uintptr_t a = (uintptr_t)rec[i], b = (uintptr_t)rec[j];
			ck_assert_ptr_nonnull(rec[i]);
			if (i == j)
				continue;
			/* the lines of [a, a + size) and of [b, b + size) are disjoint */
			uintptr_t a_first = a / 64, a_last = (a + sizeof(hl_thread_t) - 1) / 64;
			uintptr_t b_first = b / 64, b_last = (b + sizeof(hl_thread_t) - 1) / 64;
			ck_assert_msg(a_last < b_first || b_last < a_first,
				      "records %p and %p (%zu bytes each) share a cache line", rec[i], rec[j],
				      sizeof(hl_thread_t));
		}
	hl_heap_destroy(record_heap);
}
END_TEST

START_TEST(trace_reader_reads_time_stamps)
{
	/* "#@t US": the ops after it ran at US microseconds; two stamps with no
	 * op between keep the later; the last one is the trace's end */
	const char *path = write_temp("a 0 10\n#@t 100\n#@t 250\na 1 10\nf 0\n#@t 2000000\n");
	hl_trace_t *t = hl_trace_load(path);
	ck_assert_msg(t != NULL, "%s", hl_last_error());
	ck_assert(hl_trace_timed(t));
	ck_assert_uint_eq(hl_trace_ops(t), 3);
	ck_assert_uint_eq(hl_trace_op_ns(t, 0, 7), 0);
	ck_assert_uint_eq(hl_trace_op_ns(t, 1, 7), 250000);
	ck_assert_uint_eq(hl_trace_op_ns(t, 2, 7), 250000);
	ck_assert_uint_eq(hl_trace_end_ns(t, 7), 2000000000ull);
	hl_trace_free(t);
	unlink(path);
	/* without stamps: op_ns per op */
	path = write_temp("a 0 10\na 1 10\nf 0\n");
	t = hl_trace_load(path);
	ck_assert(!hl_trace_timed(t));
	ck_assert_uint_eq(hl_trace_op_ns(t, 2, 7), 14);
	ck_assert_uint_eq(hl_trace_end_ns(t, 7), 21);
	hl_trace_free(t);
	unlink(path);
	/* time never goes back */
	path = write_temp("#@t 10\na 0 10\n#@t 5\nf 0\n");
	ck_assert(hl_trace_load(path) == NULL);
	ck_assert_msg(strstr(hl_last_error(), "goes back in time"), "%s", hl_last_error());
	unlink(path);
}
END_TEST

static double stat_of(hl_heap_t *h, const char *path)
{
	double v = -1;
	ck_assert_msg(hl_stat(h, path, &v) == 0, "no statistic %s", path);
	return v;
}

START_TEST(replay_clock_runs_background_passes_at_its_times)
{
	/* the model of jemalloc: its background thread and decay */
	const char *jemalloc = hl_policy_of_family("jemalloc");
	if (!jemalloc) {
		printf("SKIP replay clock: no model of jemalloc compiled in\n");
		return;
	}
	/* a real heap has no replay clock */
	hl_heap_t *h = hl_heap_new(jemalloc, NULL);
	ck_assert_ptr_nonnull(h);
	errno = 0;
	ck_assert_int_eq(hl_heap_set_time(h, 1), -1);
	ck_assert_int_eq(errno, EINVAL);
	hl_heap_destroy(h);
	/* a replay heap: slab's background thread is a task with no thread,
	 * whose passes run when the clock passes their time, and decay freed
	 * pages away over the decay time, not before */
	h = hl_heap_new_replay(jemalloc, "background_thread:on,dirty_decay_ms:1000");
	ck_assert_msg(h != NULL, "%s", hl_last_error());
	ck_assert(hl_heap_replay_clock(h));
	ck_assert_uint_eq(hl_heap_time(h), 0);
	enum { N = 4096 };
	static void *p[N];
	for (int i = 0; i < N; i++) {
		p[i] = hl_malloc(h, 1024);
		memset(p[i], 1, 1024);
	}
	for (int i = 0; i < N; i++)
		hl_free(h, p[i]);
	double runs0 = stat_of(h, "policy_stats.background_runs");
	ck_assert(hl_heap_set_time(h, 1000) == 0);    /* 1 us: the kick's pass */
	ck_assert(stat_of(h, "policy_stats.dirty_bytes") > 3e6);
	ck_assert(hl_heap_set_time(h, 200000000) == 0);   /* 0.2 s: most pages still dirty */
	ck_assert(stat_of(h, "policy_stats.dirty_bytes") > 2e6);
	ck_assert(hl_heap_set_time(h, 2000000000) == 0);  /* 2 s: all gone */
	ck_assert_uint_eq(hl_heap_time(h), 2000000000ull);
	ck_assert(stat_of(h, "policy_stats.dirty_bytes") == 0);
	double runs = stat_of(h, "policy_stats.background_runs") - runs0;
	ck_assert_msg(runs >= 5 && runs <= 21, "%g passes in 2 s (at least 100 ms apart)", runs);
	hl_heap_destroy(h);
}
END_TEST

static Suite *core_suite(void)
{
	Suite *s = suite_create("core");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, conf_defaults_and_values);
	tcase_add_test(tc, options_documented_from_their_tables);
	tcase_add_test(tc, conf_errors_say_what_is_valid);
	tcase_add_test(tc, trace_reader_rejects_damage);
	tcase_add_test(tc, trace_reader_reads_the_front);
	tcase_add_test(tc, trace_reader_reads_both_headers_and_extensions);
	tcase_add_test(tc, trace_reader_keeps_a_double_free);
	tcase_add_test(tc, trace_reader_reads_thread_exits);
	tcase_add_test(tc, trace_reader_reads_time_stamps);
	tcase_add_test(tc, replay_clock_runs_background_passes_at_its_times);
	tcase_add_test(tc, page_source_counts_and_measures);
	tcase_add_test(tc, ledger_tracks_requests);
	tcase_add_test(tc, debug_guard_names_the_mistake_under_every_policy);
	tcase_add_test(tc, futex_lock_excludes_and_wakes);
	tcase_add_test(tc, thread_records_never_share_a_cache_line);
	suite_add_tcase(s, tc);
	return s;
}

TL_MAIN(core_suite)
