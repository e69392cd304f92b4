/**
 * @file trace.h
 * @brief Traces inside the core: the parsed form of a `.rep` file.
 *
 * Format (CMU malloc lab, both header styles, plus heaplab's extensions):
 *
 *   20000          <- optional header: four numbers, one per line
 *   3                 (classic: heap size, ids, ops, weight;
 *   4                  64-bit lab: weight, ids, ops, max alloc —
 *   1                  both have ids second and ops third)
 *   a 0 512        malloc: block 0 gets 512 bytes
 *   r 0 1024       realloc block 0
 *   c 1 10 16      calloc(10, 16) as block 1
 *   m 2 4096 100   memalign(4096, 100) as block 2
 *   t 1            following ops run on thread 1
 *   s after-free   take a snapshot named "after-free"
 *   f 0            free block 0 ("f -1" is free(NULL); an f of a block
 *                  already freed is replayed as a double free, with a
 *                  warning: the mistake of the program it came from)
 *   # comment
 *
 * Recorded with sites (libheaplab-record.so), lines an older reader takes
 * for comments carry the rest, and allocating ops may end with "@N":
 *
 *   #@site 7 0x55d0c3a01234      site 7 is this return address
 *   a 3 100 @7                  block 3 allocated at site 7
 *   #@rss 120 5238784           120 ms in, the process had 5238784 bytes resident
 *   #@t 120350                  the ops below ran 120350 us in (until the next #@t)
 *   #@module LO HI BASE PATH    an executable segment [LO, HI) of PATH loaded at BASE
 *   #@exit 3                    thread 3 exits here
 *   #@touched 5 32              block 5 (live) had 32 pages resident
 *   #@layers peak MS RSS k=B... the layers of /proc/self/smaps (recorder.h),
 *                               kept as they are for heaplab diagnose
 *   #@sample 1/64               from here on, one new block in 64 is recorded
 *                               (recorder.h: hl_rec_sample_blocks; sample.c)
 *   #@sampled 52000000          the program made that many ops, kept or not
 *   #@front pymalloc            the program as it runs has this allocator in
 *                               front of malloc, and the recording went past it
 *                               (recorder.h: hl_rec_front)
 *
 * "#@touched ID PAGES" goes before the free of a block of 64 KiB or more,
 * and at the end for those still live: how many of the pages the block
 * covers the process had resident then (mincore), so that a replay writes
 * that many pages of the block rather than all (a program that allocates
 * a large buffer and uses part of it: sort's 130 MiB buffer, 3.5 MiB
 * resident).  It describes the last op that made block ID (a, c, m, or r).
 *
 * "#@exit N" is an op of thread N (kind 'x', no block): the replay's
 * thread N leaves the heap as an exiting thread does (the policy's
 * thread_exit: bins flushes its tcache and puts its arena on the free
 * list).  A later op on N, or "t N", is a new thread that got the same
 * number (the recorder hands exited threads' numbers to new ones, so that
 * a program that starts many short threads stays within 0..255).  An exit
 * of a thread that has not run (0 runs from the start, others from their
 * first "t" line) or has exited already is damage.
 *
 * Time: the recorder reads the clock at every op and writes "#@t US"
 * (microseconds since the recording started, the zero of "#@rss" too)
 * before an op when the clock has moved by at least 100 us since the last
 * stamp, and one at the end of the recording; so each op's time is known
 * to 100 us for about 14 bytes per stamp at most 10,000 stamps a second,
 * and an idle gap shows as one jump.  An op before the first stamp ran at
 * 0.  A replay drives the heap's clock (core/clock.h) from them, or, in a
 * trace without any, from N nanoseconds per op (`--op-ns=N`, default 0: no
 * time passes).  Stamps never go back; two with no op between keep the
 * later.  An older reader takes them for comments.
 *
 * Other "#@" words are ignored (comments); a known one with bad fields,
 * and an "@N" naming a site not declared before it, are damage.
 *
 * The binary form (trace_binary.h: what libheaplab-record.so writes by
 * default) holds the same lines as records; the reader tells the two forms
 * by the binary one's first 8 bytes, and a binary trace's "line" numbers
 * (in messages, hl_trace_op_line) are its record numbers: the lines of its
 * text form (`heaplab diagnose --text --trace=FILE`).
 *
 * Block ids run from 0 to 4194303 (they index arrays, so the bound keeps
 * a tiny trace from asking for gigabytes); thread ids from 0 to 255.
 */
#ifndef HL_TRACE_H
#define HL_TRACE_H

/** The page "#@touched" counts in: the recorder's machine's (4 KiB here). */
#define HL_TRACE_PAGE 4096

#include <stddef.h>
#include <stdint.h>
#include "heaplab.h"

typedef struct hl_trace_op {
	char kind;        /**< a f r c m t s, x (thread exit: "#@exit") */
	unsigned tid;     /**< thread the op runs on */
	long id;          /**< block id (-1 for free(NULL)); tid for 't' and 'x' */
	size_t size;      /**< bytes (per element for c) */
	size_t aux;       /**< c: element count; m: alignment; s: label offset;
			       f: 1 when the block was freed before (a double free) */
	unsigned line;    /**< line in the file */
	unsigned site;    /**< allocation site 1.., 0 when none */
} hl_trace_op_t;

typedef struct hl_trace_rss {
	size_t ops_before;     /**< ops of the trace before the sample */
	unsigned long ms;      /**< since the recording started */
	size_t bytes;          /**< resident bytes of the process */
} hl_trace_rss_t;

typedef struct hl_trace_time {
	size_t ops_before;     /**< ops of the trace before the stamp */
	uint64_t us;           /**< microseconds since the recording started */
} hl_trace_time_t;

typedef struct hl_trace_rate {
	size_t ops_before;     /**< ops of the trace before the "#@sample" line */
	unsigned long k;       /**< from there on, one new block in k is kept */
} hl_trace_rate_t;

typedef struct hl_trace_touched {
	size_t op;             /**< the op that made the block */
	size_t pages;          /**< of its pages, how many were resident */
} hl_trace_touched_t;

typedef struct hl_trace_module {
	uintptr_t lo, hi, base;
	size_t path;           /**< offset in labels */
} hl_trace_module_t;

struct hl_trace {
	char *path;
	hl_trace_op_t *ops;
	size_t nops, cap;
	long max_id;          /**< largest block id + 1 */
	unsigned nthreads;    /**< largest tid + 1 */
	long header[4];       /**< the four header numbers, if any */
	bool has_header;
	char *labels;         /**< label text, NUL-separated */
	size_t labels_len, labels_cap;
	uintptr_t *sites;     /**< return address of site k+1 */
	unsigned nsites, sites_cap;
	hl_trace_rss_t *rss;
	size_t nrss, rss_cap;
	hl_trace_time_t *times;   /**< "#@t" stamps, in order */
	size_t ntimes, times_cap;
	hl_trace_module_t *modules;
	size_t nmodules, modules_cap;
	hl_trace_touched_t *touched;   /**< "#@touched", by op once read */
	size_t ntouched, touched_cap;
	bool last_unterminated; /**< the last op line had no newline */
	char *warnings;       /**< "file:line: warning: ..." lines */
	size_t warnings_len;
	/* A long trace does not stay in memory: past a window of ops
	 * (HL_TRACE_WINDOW, or HEAPLAB_TRACE_WINDOW), the reader writes its
	 * ops to an unlinked temporary file, and t->ops is a window on it
	 * that hl_trace_op_at moves as the replay goes (pread: a forked copy
	 * shares the file, not the window). */
	size_t win_lo;        /**< the first op t->ops holds */
	size_t win_n;         /**< how many it holds */
	size_t window;        /**< ops a window holds */
	int spill_fd;         /**< the file of every op, or -1 (all in t->ops) */
	size_t counted;       /**< ops other than t, s and #@exit */
	size_t layers[2];     /**< the last "#@layers peak" and "#@layers final"
				   lines: offset in labels + 1, 0 when none */
	bool binary;          /**< read from the binary form (trace_binary.h) */
	hl_trace_rate_t *rates;   /**< "#@sample 1/K" lines, in order (sample.c) */
	size_t nrates, rates_cap;
	unsigned long long program_ops;   /**< "#@sampled N": the program's ops, kept or not (0: not said) */
	size_t front;         /**< "#@front NAME": offset in labels + 1, 0 when none */
	unsigned long thinned_to; /**< made one rate, this one (hl_trace_thin); 0: as recorded */
	size_t ops_read;      /**< ops in the file, before hl_trace_thin dropped any */
};

/** Makes a recording one rate (sample.c): its last, or @p target when
 *  that is lower (one block in more); each block made at rate K kept with
 *  the chance K/LAST, by a hash of its op's place and @p seed, its ops and
 *  "#@touched" kept or dropped with it, the op numbers of samples, stamps
 *  and rate lines renumbered.  0, or -1 with hl_set_error. */
int hl_trace_thin(hl_trace_t *t, unsigned long target, uint64_t seed);

/** Ops a window holds when the environment does not say (40 MiB of them). */
#define HL_TRACE_WINDOW ((size_t)1 << 20)

/** Op @p i of a spilled trace, read from its file into the window; exits
 *  with one line when the file cannot be read. */
const hl_trace_op_t *hl_trace_op_load(const hl_trace_t *t, size_t i);

/** Op @p i (< hl_trace_ops): the pointer holds until another op outside the
 *  window is asked for. */
static inline const hl_trace_op_t *hl_trace_op_at(const hl_trace_t *t, size_t i)
{
	return i - t->win_lo < t->win_n ? &t->ops[i - t->win_lo] : hl_trace_op_load(t, i);
}

/** Reads a trace held in memory (@p len bytes of @p text, no NUL needed),
 *  named @p name in its messages: what hl_trace_load does with a file's
 *  bytes (the fuzzer feeds the reader this way). */
hl_trace_t *hl_trace_parse(const char *name, const char *text, size_t len);
#endif
