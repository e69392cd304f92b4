/**
 * @file grade.h
 * @brief libhlgrade: the malloc lab's grader (`heaplab grade`).
 *
 * The score sheet has four parts:
 *
 *   correctness   every trace (the public ones and the hidden ones of the
 *                 instructor's kit) replayed with full checking in a child
 *                 process; a trace with any error, crash or timeout is lost
 *   performance   the index of the lab's driver,
 *                   100 * (w U + (1 - w) min(1, T / Tr)),
 *                 U the mean utilization, T the graded policy's operations
 *                 per instruction and Tr the reference's, both counted by
 *                 valgrind (callgrind) inside the allocator calls of a
 *                 replay: a count, not a time, so the score is the same on
 *                 every run and every machine of the same build
 *   heap checker  the policy's `check` run on a sound heap (it must find
 *                 nothing) and on heaps the grader damages (a smashed
 *                 header, a write past a block's end, a block freed twice
 *                 while the program holds it): points for each damage it
 *                 reports, none when it cries wolf on the sound heap
 *   write-up      graded by hand; the sheet leaves its line blank
 *
 * Layers (top to bottom: tests/house/layers.sh checks this list)
 *   grade_sheet.c            the totals, the points, the table and JSON
 *   grade_run.c              the traces on both policies (child processes,
 *                            counted replays), the best layouts
 *   grade_checker.c          damage injected, the policy's checker judged
 *   grade_traces.c           the list of traces: files, folders, names,
 *                            the classic set, the hidden set
 *   grade.h                  types
 */
#ifndef HL_GRADE_H
#define HL_GRADE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "heaplab.h"
#include "../visualize/vis.h"

enum { GR_MAX_TRACES = 512, GR_UTIL = 1, GR_TPUT = 2, GR_ALL = 3 };

/** Points of each part of the sheet (out of 100 with the write-up). */
enum { GR_PTS_CORRECT = 30, GR_PTS_PERF = 40, GR_PTS_CHECKER = 20, GR_PTS_WRITEUP = 10 };

/** What to grade and how. */
typedef struct gr_opts {
	const char *policy, *reference, *conf, *ref_conf;
	double weight;          /**< w: share of utilization in the index */
	int repeat;             /**< unchecked passes after the checked one */
	unsigned timeout;       /**< seconds per native replay, 0 = none */
	bool count;             /**< count instructions (false: no throughput) */
	const char *program;    /**< the heaplab program valgrind runs to count */
	bool json;
	char *traces[GR_MAX_TRACES];
	bool hidden[GR_MAX_TRACES]; /**< the trace is of the hidden set */
	int ntraces;
	/** the hidden set: the folder looked in, and whether it was there */
	char hidden_dir[4096];
	bool hidden_found;
	vis_progress_fn progress;   /**< may be NULL */
} gr_opts_t;

/** One policy on one trace. */
typedef struct gr_run {
	bool ok;
	char error[256];
	double util;
	size_t ops;             /**< ops of one pass */
	bool counted;           /**< instructions were counted */
	char count_error[160];  /**< why not, when the replay was correct */
	uint64_t instructions;  /**< inside the allocator calls of one pass */
} gr_run_t;

typedef struct gr_row {
	const char *name;
	bool hidden;
	int scoring;            /**< GR_* bits from the trace's weight */
	double best;            /**< utilization of the best layout found
				     knowing the trace (heaplab bound); 0 when
				     not computed */
	gr_run_t mine, ref;
} gr_row_t;

/** One damage the grader does to a heap, or none (the sound heap). */
typedef struct gr_case {
	const char *name;
	bool damaged;           /**< false: the sound heap */
	bool done;              /**< the damage could be made */
	int problems;           /**< what the checker reported; -1: it crashed */
	char note[160];
} gr_case_t;

enum { GR_CASES = 4 };

typedef struct gr_checker {
	gr_case_t cases[GR_CASES];
	int injected, caught;   /**< damaged cases made, and reported */
	bool sound_ok;          /**< nothing reported on the sound heap */
} gr_checker_t;

/* ---- grade_traces.c ---- */

/** Adds a file, every *.rep of a folder, or a shipped trace's name
 *  ("random-bal"); 0, or 2 after one line on stderr. */
int gr_add_arg(gr_opts_t *o, const char *arg, bool hidden);
/** Adds the classic set, then the hidden set when the tree has it. */
int gr_add_defaults(gr_opts_t *o);
/** Which measures a trace counts in, from its header's weight. */
int gr_trace_scoring(const hl_trace_t *t);
void gr_free_traces(gr_opts_t *o);

/* ---- grade_checker.c ---- */

/** Runs the policy's checker on a sound heap and on each damaged one,
 *  each in a child process. */
void gr_judge_checker(const gr_opts_t *o, gr_checker_t *c);

/* ---- grade_run.c ---- */

/** Replays every trace on both policies; 0, or 2 when a trace cannot be
 *  read or instructions cannot be counted (one line on stderr). */
int gr_grade_traces(const gr_opts_t *o, gr_row_t *rows);

/* ---- grade_sheet.c ---- */

/** Prints the sheet (table or JSON); returns 0 when every trace was
 *  correct, 1 otherwise. */
int gr_print_sheet(const gr_opts_t *o, const gr_row_t *rows, const gr_checker_t *c, FILE *out);

#endif
