/**
 * @file vis.h
 * @brief Seeing the heap: what `heaplab render`, `step` and `plot` share.
 *
 * Glossary
 *   frame    the state of a heap after one trace op (frame 0: before any);
 *            its statistics always, its DOT picture when the frame is kept
 *   kept     a frame whose picture is stored: every Nth op, each `s label`,
 *            the first and the last frame
 *   sample   one (time, live, committed, resident) point of a plot
 *   map      the terminal's picture of a heap: hl_walk's blocks as a bar
 *            and a numbered list (the free ones are the quiz's choices)
 *
 *   trace ──hl_replay──▶ after_op ──▶ frames[] ──▶ html.c   (stepper page)
 *                          │                  └──▶ plot.c   (SVG plot)
 *                          └──▶ tty.c  (map after each op, the quiz)
 *   DOT ──render.c (Graphviz `dot`, HL_DOT_PATH)──▶ SVG / PNG
 *
 * Errors
 *   visualize is a library: it prints nothing on stderr.  A function that
 *   fails returns 2 (or NULL) after hl_set_error(); the caller shows
 *   hl_last_error() as it sees fit (the heaplab command prints it).  Long
 *   work reports progress through a vis_progress_fn the caller passes.
 *
 * Invariants
 *   nframes == hl_trace_ops(trace) + 1   (fewer when the replay failed)
 *   frames[i].dot != NULL  =>  frames[i].diagram == i
 *   frames[i].diagram <= i  and  frames[frames[i].diagram].dot != NULL
 */
#ifndef HL_VIS_H
#define HL_VIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "heaplab.h"

/** The numbers a frame shows; all in bytes except the last two. */
typedef struct vis_stats {
	double live;        /**< live requested bytes */
	double peak;        /**< peak live requested bytes so far */
	double committed;   /**< bytes committed (backed or backable by RAM) */
	double resident;    /**< bytes resident, measured with mincore */
	double util;        /**< peak requested / peak committed so far (0..1) */
	double oscalls;     /**< calls that change mappings so far (no mincore) */
} vis_stats_t;

/** One frame: the heap after op `op` (frame 0 has op == -1). */
/** One block of a moment of the heap (see diff.c). */
typedef struct vis_block {
	int region;                /**< region number */
	size_t off;                /**< offset of the walker's address in it */
	size_t size;               /**< bytes, as the walker reports them */
	hl_block_state_t state;    /**< what it is */
	const void *addr;          /**< the walker's address (this run only) */
	char name[40];             /**< hl_addr_name: "region#k+0xoff" */
	char id[48];               /**< hl_block_id: its cell's id in the pictures */
} vis_block_t;

/** The blocks of one moment, sorted by region then offset. */
typedef struct vis_blocks {
	vis_block_t *b;
	size_t n, cap;
} vis_blocks_t;

typedef struct vis_capture {
	vis_blocks_t *out;
	bool failed;
} vis_capture_t;

/** Fills @p out with the heap's blocks (reusing its storage); 0 or -1. */
int vis_blocks_capture(hl_heap_t *h, vis_blocks_t *out);
void vis_blocks_free(vis_blocks_t *s);
/** The order of a block list: by region, then offset (<0, 0, >0). */
int vis_block_place_cmp(const vis_block_t *a, const vis_block_t *b);
/** Whether @p a and @p b are one block unchanged: same place, size and state. */
bool vis_block_same(const vis_block_t *a, const vis_block_t *b);

typedef enum vis_change_kind {
	VIS_CHANGED = 0,   /**< one block before, one after: state, size or start differ */
	VIS_SPLIT,         /**< one block became several */
	VIS_MERGED,        /**< several became one */
	VIS_RESHAPED,      /**< several became several */
	VIS_APPEARED,      /**< nothing was there (a new region) */
	VIS_DISAPPEARED,   /**< nothing is left (the region went back) */
} vis_change_kind_t;

/** One group of a diff: blocks [before, before + nbefore) of the earlier
 *  moment became blocks [after, after + nafter) of the later one. */
typedef struct vis_change {
	vis_change_kind_t kind;
	size_t before, nbefore, after, nafter;
} vis_change_t;

typedef struct vis_diff {
	vis_change_t *c;
	size_t n, cap;
} vis_diff_t;

/** Compares two moments; 0, or -1 when out of memory. */
int vis_diff(const vis_blocks_t *a, const vis_blocks_t *b, vis_diff_t *d);
void vis_diff_free(vis_diff_t *d);
const char *vis_change_name(vis_change_kind_t k);

/** What one op changed in the block list: the blocks of the previous
 *  moment that are gone or different, then the new or different ones. */
typedef struct vis_delta {
	vis_block_t *gone, *came;
	size_t ngone, ncame;
} vis_delta_t;

typedef struct vis_frame {
	long op;            /**< trace op index, -1 for the empty heap */
	char text[64];      /**< the op in trace syntax, "" for frame 0 */
	unsigned line;      /**< its line in the trace file */
	const char *label;  /**< `s label` text (owned by the trace) or NULL */
	vis_stats_t st;     /**< statistics after the op */
	char *dot;          /**< DOT picture when kept, else NULL (malloc'd) */
	size_t diagram;     /**< index of the frame whose picture is shown */
	vis_delta_t delta;  /**< blocks changed by the op (when the walk records blocks) */
	char *explain;      /**< the op's steps and net change, one "    line" each
			         (vis_explain_steps; when the walk records blocks) */
} vis_frame_t;

/** A recorded walk through a trace. */
typedef struct vis_walk {
	vis_frame_t *frames;  /**< nframes entries */
	size_t nframes;       /**< ops + 1 */
	size_t every;         /**< a picture is kept every `every` ops */
	size_t kept;          /**< frames with a picture */
	bool blocks;          /**< frames carry block deltas (VIS_WALK_BLOCKS) */
	vis_blocks_t now;     /**< the blocks after the last recorded op */
	hl_replay_result_t result; /**< how the replay went */
} vis_walk_t;

/**
 * Progress of long work: @p done of @p total steps of @p what (total 0:
 * unknown).  Called with done == total once at the end, so a progress
 * line can be cleared.  May be NULL wherever it is taken.
 */
typedef void (*vis_progress_fn)(const char *what, size_t done, size_t total);

/** Sets hl_last_error() to the formatted message and returns 2. */
int vis_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/** What @p write prints to the stream it is given, as a malloc'd string
 *  (NULL when out of memory). */
char *vis_text_of(void (*write)(FILE *f, void *arg), void *arg);

/** Reads all six statistics of @p h. */
void vis_read_stats(hl_heap_t *h, vis_stats_t *st);

/** Chooses `every` for a trace of @p nops ops: 1 up to 400 ops, else
 *  enough to keep about 200 pictures. */
size_t vis_default_every(size_t nops);

/**
 * Replays @p t on a fresh heap of @p policy with @p conf, recording a frame
 * per op; pictures are kept every @p every ops (0: statistics only).
 * @p progress (may be NULL) hears of every op, as @p what.
 * @return 0 when the replay held; 1 when it failed (w->result says why,
 *         the frames up to the failure are kept); 2 when the heap could
 *         not be made (hl_last_error() says why).
 */
int vis_walk_trace(const char *policy, const char *conf, const hl_trace_t *t, size_t every,
		   const char *what, vis_progress_fn progress, vis_walk_t *w);
/** vis_walk_trace that also records, in each frame, which blocks the op
 *  changed (frame 0: every block of the new heap), so that any moment can
 *  be rebuilt (vis_walk_blocks_at) and any two compared (vis_diff), and
 *  the steps the policy took for the op (explain.c). */
int vis_walk_trace_blocks(const char *policy, const char *conf, const hl_trace_t *t, size_t every,
			  const char *what, vis_progress_fn progress, vis_walk_t *w);
/** Called after each op of a walk, once frame @p k is recorded; a
 *  non-zero return stops the walk as a failure (after hl_set_error()). */
typedef int (*vis_walk_hook_fn)(const hl_replay_t *rp, size_t k, void *arg);

/** How vis_walk_run walks. */
typedef struct vis_walk_opts {
	size_t every;             /**< a picture every N ops (0: statistics only) */
	bool blocks;              /**< as vis_walk_trace_blocks: deltas and steps */
	const char *what;         /**< what progress calls the walk */
	vis_progress_fn progress; /**< may be NULL */
	vis_walk_hook_fn hook;    /**< may be NULL */
	void *arg;                /**< passed to hook */
} vis_walk_opts_t;
/** vis_walk_trace or vis_walk_trace_blocks, as @p o says, with a hook. */
int vis_walk_run(const char *policy, const char *conf, const hl_trace_t *t, const vis_walk_opts_t *o,
		 vis_walk_t *w);
/** The path one op took (paths.c). */
typedef struct vis_path_op {
	char kind;           /**< the trace op: 'a', 'f', 'r', 's', ... */
	char text[64];       /**< the op in trace syntax */
	char path[320];      /**< "cache miss (tcache bin) → split (top)" */
	char *reveal;        /**< every step, one line each (hl_event_text) */
} vis_path_op_t;

typedef struct vis_paths {
	vis_path_op_t *op;   /**< one per op of the trace */
	size_t n;
} vis_paths_t;

/** Replays @p t on a new heap of @p policy and names the path each op
 *  took from its decision events.  0; 1 when the replay failed (the ops
 *  before it are kept; hl_last_error() says why); 2 when the heap could
 *  not be made or memory ran out. */
int vis_paths_trace(const char *policy, const char *conf, const hl_trace_t *t, vis_paths_t *out);
void vis_paths_free(vis_paths_t *p);

/** The blocks after frame @p k of a walk that recorded them; 0 or -1. */
int vis_walk_blocks_at(const vis_walk_t *w, size_t k, vis_blocks_t *out);
void vis_walk_free(vis_walk_t *w);
/**
 * Keeps fewer pictures until their SVG (svgs[], one per kept frame, in
 * frame order) weighs at most @p budget bytes: doubles `every` and drops
 * the pictures that rule no longer keeps (labels, first and last stay).
 * @return how many times `every` was doubled.
 */
size_t vis_walk_thin(vis_walk_t *w, char **svgs, size_t budget);
/** Keeps fewer pictures, as vis_walk_thin does, until `every` is at least
 *  @p every (so that walks of one trace keep the same frames). */
size_t vis_walk_thin_to(vis_walk_t *w, char **svgs, size_t every);

/** @name Graphviz (render.c) */
/**@{*/
/** True when the dot program configure found can be run. */
bool vis_have_dot(void);
/** 0 when dot can be run, else 2 (hl_last_error() says how to get it). */
int vis_need_dot(void);
/**
 * Runs dot on the file @p in, writing @p format ("svg", "png") to @p out.
 * Graphviz's warnings and errors are appended to @p diag (may be NULL)
 * as text.  @return 0 ok, 1 dot warned, 2 dot failed or is missing
 * (hl_last_error() says which).
 */
int vis_dot_file(const char *in, const char *format, const char *out, char **diag);
/**
 * Renders @p n DOT texts to SVG with one dot process; svgs[i] receives
 * the i-th picture (malloc'd, without the XML prologue).  Warnings as in
 * vis_dot_file.  @return 0, 1 or 2 as vis_dot_file.
 */
int vis_dot_svgs(char *const *dots, size_t n, char **svgs, char **diag);
/**@}*/

/** @name Output (html.c, tty.c, plot.c) */
/**@{*/
/** Writes the self-contained stepper page. */
int vis_html_write(FILE *out, const vis_walk_t *w, char *const *svgs, const char *trace,
		   const char *policy, const char *conf);

/** Options of the terminal walk. */
typedef struct vis_tty_opts {
	bool quiz;        /**< ask before each allocation */
	bool color;       /**< ANSI colours (only on a terminal) */
	bool pause;       /**< wait for Enter after each op (stdin is a terminal) */
	FILE *in, *out;   /**< answers / keys; the walk */
} vis_tty_opts_t;
/** Walks @p t on a fresh heap in the terminal.  Returns an exit status:
 *  0, 1 when the replay stopped (said on o->out), 2 when the heap could
 *  not be made (hl_last_error() says why). */
int vis_tty_walk(const char *policy, const char *conf, const hl_trace_t *t, const vis_tty_opts_t *o);

/** One series point of a plot. */
typedef struct vis_point {
	double x;                            /**< op index or milliseconds */
	double live, committed, resident;    /**< bytes */
} vis_point_t;
/** One series of vis_plot_series_svg: a value per point. */
typedef struct vis_series {
	const char *name, *color;
	const double *y;
	double peak;         /**< written as data-peak (the caller's figure) */
} vis_series_t;
/** Plots @p ns series over the points @p x as an inline SVG element with
 *  id @p id: stacked areas (each polygon on the ones before it) or lines.
 *  Each shape carries data-series, data-last (its value at the last point)
 *  and data-peak. */
int vis_plot_series_svg(FILE *out, const char *id, const double *x, size_t n, const vis_series_t *s, size_t ns,
			bool stacked, const char *title, const char *xlabel);
/** Writes the plot of @p n points as SVG. */
int vis_plot_svg(FILE *out, const vis_point_t *p, size_t n, const char *title, const char *xlabel);
/** Reads a `heaplab run --sample-ms` file: the samples of process @p pid,
 *  or (pid <= 0) of the process that wrote the most; NULL when it cannot
 *  (hl_last_error() says why). */
vis_point_t *vis_samples_load(const char *path, long pid, size_t *n, char *title, size_t title_len);
/**@}*/

/** @name Lockstep: one trace on several policies, op by op (lockstep.c)
 * Every column is a walk of its own replay heap (the trace's clock: the
 * time-based rules act alike in every run); frame k of each column is the
 * heap after the same op.  The divergence rules say where the columns differ:
 *   os         the op made an OS call in one column and none in another
 *   reuse      the block the op handed out holds bytes that a block the
 *              trace freed earlier held, in one column and not in another
 *   committed  the op changed the committed bytes of a column, and after
 *              it the largest committed figure of a column is more than
 *              N % above the smallest (where the gap is made or moves) */
/**@{*/
typedef enum vis_rule { VIS_RULE_OS, VIS_RULE_REUSE, VIS_RULE_COMMITTED, VIS_NRULES } vis_rule_t;

/** What one op did in one column, beside its frame. */
typedef struct vis_lockstep_op {
	bool reused;        /**< its block holds bytes a freed block held */
	long reused_id;     /**< the trace id of (one) such freed block, or -1 */
	char addr[40];      /**< hl_addr_name of the op's block, "" when none */
	char block_id[48];  /**< hl_block_id of it (the picture's cell), "" when none */
} vis_lockstep_op_t;

typedef struct vis_lockstep_column {
	const char *policy;     /**< the caller's string */
	vis_walk_t walk;
	vis_lockstep_op_t *op;  /**< walk.nframes entries (frame 0: none) */
	int rc;                 /**< the walk's: 0, or 1 when the replay stopped */
} vis_lockstep_column_t;

typedef struct vis_lockstep {
	vis_lockstep_column_t *col;
	size_t ncols;
	size_t nframes;         /**< the most frames of any column */
} vis_lockstep_t;

/** The rule's name ("os", "reuse", "committed"). */
const char *vis_rule_name(vis_rule_t r);
/** The rule named @p name, or -1. */
int vis_rule_parse(const char *name);
/**
 * Walks @p t on each of @p n policies with @p conf (@p o as vis_walk_run
 * takes it, without a hook).  @return 0 when every replay held, 1 when one
 * stopped (its column's walk says why, its frames up to there are kept),
 * 2 when a heap could not be made or memory ran out (hl_last_error()).
 */
int vis_lockstep_walk(const char *const *policies, size_t n, const char *conf, const hl_trace_t *t,
		      const vis_walk_opts_t *o, vis_lockstep_t *ls);
void vis_lockstep_free(vis_lockstep_t *ls);
/** Whether the columns differ at frame @p k (k >= 1) by rule @p r;
 *  @p pct is the committed rule's N. */
bool vis_lockstep_differs(const vis_lockstep_t *ls, size_t k, vis_rule_t r, double pct);
/** The terminal's table: one row per op, a column per policy, the rules
 *  on which the columns differ at the end of each row; with @p only >= 0
 *  only the rows where that rule holds (and the start). */
void vis_lockstep_table(FILE *out, const vis_lockstep_t *ls, const hl_trace_t *t, int only, double pct);
/** The lockstep page: a column per policy, each with its pictures
 *  (svgs[c][i]: column c's i-th kept frame), figures and steps, and the
 *  "next divergence" control, set to @p rule and @p pct. */
int vis_html_write_lockstep(FILE *out, const vis_lockstep_t *ls, char **const *svgs, const char *trace,
			    const char *conf, vis_rule_t rule, double pct);
/**@}*/

/** Writes @p s with the characters XML and HTML reserve escaped. */
void vis_put_xml(FILE *out, const char *s);
/** Writes @p s as a JSON string literal, safe inside an HTML script. */
void vis_json_string(FILE *out, const char *s);
/** Formats bytes for people: "512 B", "64.0 KiB", "1.50 MiB". */
const char *vis_bytes(double b, char *buf, size_t len);

/** @name Explaining a replay (heaplab replay --explain)
 * The decision events of each operation (hl_events_keep) and the net change
 * of the heap's figures.  Text: the op, then one indented line per step and
 * a "net:" line.  JSON: one object per line and operation:
 *
 *     {"policy":"bins","op":3,"line":5,"text":"a 2 100","kind":"a","id":2,"size":100,
 *      "addr":"region#1+0x2a0",              (null when no block)
 *      "events":[{"kind":"split","what":"top","index":-1,"size":112,
 *                 "size2":134544,"before":134656,"after":134544,
 *                 "addr":"region#1+0x290","text":"split: top ..."}, ...],
 *      "lost_events":0,
 *      "delta":{"live":112,"committed":0,"resident":0,"os_calls":0},
 *      "after":{"live":...,"committed":...,"resident":...,"os_calls":...}}
 *
 * "op" counts from 1 like the stepper's frames; "kind" is the trace op's
 * letter; an event's "kind" is hl_event_kind_name(), its numbers are -1 or
 * 0 when they do not apply (heaplab.h, hl_event_t); "live" is
 * live_usable_bytes, "os_calls" every page-source call but mincore. */
/**@{*/
typedef struct vis_explain vis_explain_t;
/** Starts keeping @p h's events; NULL after hl_set_error(). */
vis_explain_t *vis_explain_new(hl_heap_t *h);
/** Writes what the op the replay just performed did (an after_op hook). */
void vis_explain_op(vis_explain_t *x, const hl_replay_t *rp, FILE *out, bool json);
/** The same in text without the op's own line: its steps and the "net:"
 *  line only (the terminal walk prints them under each op). */
void vis_explain_steps(vis_explain_t *x, const hl_replay_t *rp, FILE *out);
/** Stops keeping events and frees @p x (NULL does nothing). */
void vis_explain_free(vis_explain_t *x);
/**@}*/

#endif
