/**
 * @file diagnose.h
 * @brief `heaplab diagnose`: what holds a recorded program's memory
 *        (attribute.c), what another allocator or setting would do
 *        (whatif.c), and the report (report.c).  Built on the public API
 *        (heaplab.h) like the rest of libhlvis.
 */
#ifndef HL_DIAGNOSE_H
#define HL_DIAGNOSE_H

#include "../visualize/vis.h"

/** One cause per committed byte.  The walker's block states give the
 *  generic split; a policy's statistics refine a state into the rule that
 *  keeps it (see attribute.c's table). */
typedef enum dx_cause {
	DX_LIVE = 0,      /**< live payload: bytes the program asked for */
	DX_ROUNDING,      /**< usable minus requested: alignment, size-class rounding */
	DX_OVERHEAD,      /**< committed bytes in no block: headers, the policy's metadata, page tails */
	DX_CACHED,        /**< free, kept by a thread cache (bins: tcache) */
	DX_FASTBIN,       /**< free, in a fastbin (bins) */
	DX_HOLE,          /**< free, in a bin or free list below a live block (not at the top) */
	DX_TOP,           /**< free at the top, under the trim threshold */
	DX_ARENA,         /**< free (bins, fastbins, top) in a non-main arena's heap (bins) */
	DX_DIRTY,         /**< free pages not yet purged (decay, purge delay) */
	DX_MUZZY,         /**< lazily purged, still counted resident until the kernel takes them */
	DX_RETURNED,      /**< purged: committed address space with no page behind it */
	DX_NCAUSES
} dx_cause_t;

/** Short key of a cause ("live", "tcache", ...): JSON keys, legends. */
const char *dx_cause_key(dx_cause_t c);
/** The cause in plain words, as the report says it. */
const char *dx_cause_words(dx_cause_t c);

/** The heap at one moment of the replay. */
typedef struct dx_sample {
	size_t op;              /**< ops replayed before it */
	double ms;              /**< time of the recording (-1: not recorded) */
	size_t measured_rss;    /**< the real process's resident bytes (0: none) */
	size_t committed;       /**< the model's committed bytes: the sum of bytes[] */
	size_t resident;        /**< the model's resident bytes, heap and
				     metadata (mincore), as an RSS counts them */
	bool attributed;        /**< bytes[] filled (at most DX_ATTRIBUTED samples are) */
	size_t bytes[DX_NCAUSES];
} dx_sample_t;

/** Free memory held by live blocks of one allocation site. */
typedef struct dx_hold {
	unsigned site;          /**< trace site, 0 = unknown */
	size_t held;            /**< free bytes right below its live blocks */
	size_t blocks;          /**< its live blocks that hold some */
	size_t block_bytes;     /**< their requested bytes */
} dx_hold_t;

/** How many samples of a replay are split into causes at most: the first
 *  sample at or after each 1/DX_ATTRIBUTED of the ops, and the last.  A
 *  split walks the whole heap and sorts the live blocks that hold free
 *  memory by address; every sample still gets its committed and resident
 *  bytes. */
enum { DX_ATTRIBUTED = 200 };

/** A replay of a recording under one policy and configuration. */
typedef struct dx_run {
	char policy[32];
	char conf[160];
	bool ok;
	char message[256];
	dx_sample_t *samples;
	size_t nsamples;
	size_t nattributed;     /**< samples with attributed set */
	size_t peak_committed, final_committed;
	size_t peak_resident, final_resident;
	unsigned long long os_calls;   /**< every counted kernel call */
	dx_hold_t *holds;       /**< by held bytes, largest first (attribution only) */
	size_t nholds;
	size_t hold_sample;     /**< the sample the holds were counted at */
	size_t own_bytes;       /**< the real allocator's own memory at start that
				     the model does not hold (its library, its first
				     metadata), measured on this machine; 0: none or
				     the C library's own */
} dx_run_t;

/**
 * Replays @p t under @p policy / @p conf.  At every resident-set sample of
 * the recording (or every nops/100 ops when it has none) and at the end,
 * records committed and resident bytes; with @p attribute, splits the
 * committed bytes of up to DX_ATTRIBUTED of those samples (spread over
 * the ops, the last always) into causes and counts which sites' live
 * blocks hold free memory.  @p progress hears of the ops.  0 on success; else 2 with
 * hl_last_error() (a heap that cannot be made) or run->ok false (a replay
 * that failed: run->message).
 */
int dx_replay(const hl_trace_t *t, const char *policy, const char *conf, bool attribute,
	      vis_progress_fn progress, dx_run_t *run);
void dx_run_free(dx_run_t *run);
/** The model's resident bytes, heap and metadata, after one malloc(100)
 *  and its free under @p policy / @p conf (what it holds of itself at
 *  start); 0 when it cannot be replayed. */
size_t dx_model_started(const char *policy, const char *conf);

/** @name The layers of the process's memory (layers.c)
 *  From /proc/PID/smaps, read by the recorder at the largest RSS sample
 *  and at the end ("#@layers" lines, shim/record_layers.c). */
/**@{*/
typedef enum dx_layer {
	DX_L_HEAP = 0,    /**< [heap]: the C allocator's break */
	DX_L_MAPPED,      /**< unnamed anonymous: the C allocator's mappings, the loader's */
	DX_L_MMAP,        /**< anonymous mappings the program made with mmap (pymalloc's arenas) */
	DX_L_STACK,       /**< stacks */
	DX_L_EXE,         /**< the program's file */
	DX_L_ALLOC,       /**< the allocator's library */
	DX_L_LIBS,        /**< other libraries */
	DX_L_FILES,       /**< other files */
	DX_L_RECORDER,    /**< the recorder's library */
	DX_L_OTHER,       /**< [vdso], ... */
	DX_NLAYERS
} dx_layer_t;
typedef struct dx_layers {
	bool ok;                /**< the line was there */
	double ms;              /**< when it was read */
	size_t rss;             /**< the RSS sample then (statm, less the recorder's tables) */
	size_t bytes[DX_NLAYERS];
} dx_layers_t;
const char *dx_layer_key(dx_layer_t l);
const char *dx_layer_words(dx_layer_t l);
/** The layers at the peak and at the end of recording @p t (its last
 *  "#@layers" lines); -1 (both not ok) when it has none. */
int dx_layers_read(const hl_trace_t *t, dx_layers_t *peak, dx_layers_t *final);
/** Was @p t read from the binary form (what the recorder writes unless
 *  HEAPLAB_RECORD_FORMAT=text)? */
bool dx_recording_binary(const hl_trace_t *t);
/** Writes the trace at @p path to @p out as text (@p to_text) or in the
 *  binary form, record by record (trace/trace_binary.h); 0, or -1 with
 *  hl_last_error() saying why ("FILE: record N: ..."). */
int dx_recording_convert(const char *path, FILE *out, bool to_text);
size_t dx_layers_total(const dx_layers_t *l);
/**@}*/

/** @name A sampled recording (sample.c)
 *  HEAPLAB_RECORD_SAMPLE / HEAPLAB_RECORD_MAX (trace/recorder.h): one new
 *  block of the program's in K recorded, each model's heap scaled back. */
/**@{*/
/** The largest error measured at a rate (bench/SAMPLING.md). */
typedef struct dx_sample_error {
	unsigned long rate;     /**< one block in this many */
	double peak;            /**< predicted peak RSS against the whole replay's: the largest |error|, a fraction */
	double final;           /**< the same for the final RSS */
} dx_sample_error_t;
/** What a recording says of its sampling. */
typedef struct dx_sampling {
	unsigned long first;    /**< the rate at the start: one block in this many */
	unsigned long last;     /**< at the end (the rate only halves) */
	size_t rates;           /**< "#@sample" lines: the halvings plus one */
	unsigned long long program_ops;   /**< the program's ops, kept or not (0: not said) */
	unsigned long replayed; /**< the one rate the replay is at (trace/sample.c: hl_trace_thin) */
	size_t ops_read;        /**< ops in the recording, before the reader dropped any */
	bool too_short;         /**< the program made fewer ops than the corpus's programs the bound is over */
	const dx_sample_error_t *error;   /**< measured at the smallest rate measured at or past replayed; NULL: past
					       them all, or too_short */
} dx_sampling_t;
/** Fills @p s; false when @p t is replayed whole (not sampled, or sampled
 *  at 1 in 1 with a budget it never reached). */
bool dx_sampling(const hl_trace_t *t, dx_sampling_t *s);
/** The error measured at the smallest rate measured that is @p k or more
 *  (one block in k); NULL when @p k is past every rate measured. */
const dx_sample_error_t *dx_sample_error(unsigned long k);
/** The model's @p bytes, @p started of them its own from the start, as
 *  the program's at a rate of one block in @p k. */
size_t dx_scaled(unsigned long k, size_t started, size_t bytes);
/** The summary's lines on the sampling (none when not sampled): whether
 *  the figures are @p scaled back by the rate or the sample's own. */
void dx_sampling_text(FILE *out, const hl_trace_t *t, bool scaled);
/** The "sampled" value of --json: an object, or null. */
void dx_sampling_json(FILE *out, const hl_trace_t *t);
/** --sample=K and --record-max=BYTES (either may be NULL) checked and put
 *  in the environment the recorded program inherits (HEAPLAB_RECORD_SAMPLE,
 *  HEAPLAB_RECORD_MAX), or, for a recording made before (@p recorded), the
 *  reader's (HEAPLAB_TRACE_SAMPLE: one block in K of the recording's
 *  replayed); -1 with hl_last_error() on a bad value. */
int dx_sample_options(const char *rate, const char *max, bool recorded);
/**@}*/

/** @name What if (whatif.c) */
/**@{*/
/** A candidate: a policy, a configuration and what the real allocator
 *  would need for the same choice. */
typedef struct dx_candidate {
	const char *policy;
	const char *conf;
	const char *real;       /**< the setting for the real allocator, or NULL */
} dx_candidate_t;

/** How many replays may run at once: the CPUs this process may run on. */
unsigned dx_workers(void);
/**
 * Replays @p t under each of @p n candidates, into @p runs[k] (no
 * attribution), in up to @p workers processes at once (diagnose/parallel.c;
 * 1: one after the other, in this one); with @p base, this process first
 * replays it with attribution into @p base_run (dx_replay) while the others
 * start on the candidates.  A candidate that cannot be replayed has
 * run->ok false and its reason in run->message, as does one whose process
 * died.  @p progress hears of the replays this process makes.
 * @return the base's dx_replay result (0 without one)
 */
int dx_replay_many(const hl_trace_t *t, const dx_candidate_t *base, dx_run_t *base_run, const dx_candidate_t *cands,
		   size_t n, dx_run_t *runs, unsigned workers, vis_progress_fn progress);

/** The built-in grid for the compiled-in policies named in @p policies
 *  (comma list, NULL = all); NULL with hl_last_error() on an unknown name.
 *  @p knobs (may be NULL) adds "POLICY/CONF" candidates separated by ';';
 *  @p bins_base (may be NULL) goes before the grid's own options of bins
 *  (the rules of the glibc the program ran on). */
dx_candidate_t *dx_grid(const char *policies, const char *knobs, const char *bins_base, size_t *n);
/** The grid for a CPython program recorded with PYTHONMALLOC=malloc: every
 *  candidate of dx_grid twice, once behind pymalloc (pools with the
 *  candidate as its fallback, the real setting as it is: CPython on that
 *  allocator) and once alone (the real setting with PYTHONMALLOC=malloc).
 *  The first candidate is CPython as it is (pools on bins @p bins_base). */
/** The library a real setting preloads (the path after "LD_PRELOAD="),
 *  in @p path; "" when it preloads none or @p setting is NULL. */
void dx_preloaded(const char *setting, char *path, size_t len);
dx_candidate_t *dx_grid_cpython(const char *policies, const char *knobs, const char *bins_base, size_t *n);
void dx_grid_free(dx_candidate_t *c, size_t n);
/** What the ranking minimises: peak plus final resident bytes. */
size_t dx_resident_score(const dx_run_t *run);
/** Orders @p runs best first: lowest peak plus final resident bytes, then
 *  peak plus final committed, then OS calls; failed runs last.  Fills
 *  @p order with indexes. */
void dx_rank(const dx_run_t *runs, size_t n, size_t *order);
/**@}*/

/** @name The report (report.c) */
/**@{*/
/** Resolves the sites @p want to "function (file:line)" with addr2line:
 *  what[s] for site s (NULL for sites not wanted, and for 0), or
 *  "module+0xoff" (or the bare address) when addr2line cannot. */
char **dx_sites_resolve(const hl_trace_t *t, const unsigned *want, size_t nwant);
void dx_sites_free(char **what, const hl_trace_t *t);
typedef struct dx_report dx_report_t;
/** `--verify`: the program run again, without the recorder, under the
 *  recommended real setting, its RSS read from /proc/PID/statm. */
typedef struct dx_verify {
	char setting[256];      /**< what was set ("" = the allocator as it is) */
	const dx_run_t *run;    /**< the candidate's replay: the prediction */
	bool ok;                /**< the program ran and was sampled */
	int status;             /**< its exit status */
	size_t samples;         /**< statm reads */
	size_t peak, final;     /**< measured resident bytes */
	size_t asis_peak, asis_final;   /**< the same without the setting (0: not run) */
} dx_verify_t;

/** The candidate the report recommends and its real setting, or NULL when
 *  the recommendation is to keep the allocator as it is. */
const dx_run_t *dx_recommended(const dx_report_t *r, const dx_candidate_t **cand);
/** The model's non-heap part of the process (code, stacks, the
 *  interpreter's own mappings): the median, over the recorded samples, of
 *  the measured RSS minus the resident bytes then of the model of the
 *  allocator the recorded run ran on (dx_report::recorded, else the
 *  attribution); 0 when not recorded.  The median, not the last sample: a program's teardown
 *  can make the real allocator give back what the model keeps (CPython's
 *  repro: 8.0-8.3 MiB through the run, -5.8 MiB at the last sample). */
long long dx_outside_heap(const dx_report_t *r);
/** The model of the allocator the recorded run ran on: dx_report::recorded
 *  where there is one, else the attribution. */
const dx_run_t *dx_recorded_model(const dx_report_t *r);
/** The RSS @p run predicts for the program.  @p peak: the largest, over
 *  the samples, of its resident bytes plus what lay outside the heap at
 *  that sample of the recorded run (the measured RSS less the resident
 *  bytes then of the model of the allocator that ran; the median where a sample has no measurement,
 *  nothing where it is negative), so memory the program maps outside
 *  malloc as it runs (a collector's pages, a mapped file) is followed as
 *  it grows.  @p final: its last resident bytes plus the median
 *  (dx_outside_heap, for the reason given there).  Both use the median
 *  alone when the two runs were not sampled alike, and both add the real
 *  allocator's own memory at start (dx_run::own_bytes). */
void dx_predict(const dx_report_t *r, const dx_run_t *run, size_t *peak, size_t *final);

struct dx_report {
	const hl_trace_t *trace;
	const char *command;          /**< the program, as run */
	const dx_run_t *base;         /**< the attribution (bins) */
	const dx_run_t *runs;         /**< every candidate */
	const dx_candidate_t *cands;
	const size_t *order;          /**< runs best first */
	size_t nruns;
	char **sites;                 /**< dx_sites_resolve */
	const dx_verify_t *verify;    /**< --verify's measurement, or NULL */
	dx_layers_t layers_peak, layers_final;   /**< from the recording (ok false: none) */
	const char *recorded_with;    /**< the setting the recording ran under that the
					   program does not (PYTHONMALLOC=malloc), or NULL */
	size_t asis_peak, asis_final; /**< the program run as it is, measured (0: not run) */
	int ended;                    /**< how the recorded run ended: exit status,
					   128 + signal, or -1 when not known */
	const char *others;           /**< the other processes recorded (children that
					   executed a program, which records apart), or NULL/"" */
	const dx_run_t *recorded;     /**< the model of the allocator the recorded run
					   ran on, where it is not @c base (CPython
					   recorded with PYTHONMALLOC=malloc: bins), or NULL */
	double pace;                  /**< the recording's pace: its timed waits this
					   many times as long, the recorder's slowdown
					   of the program (0: recorded at the clock's) */
};
/** What part of the measured RSS the model accounts for: the attribution's
 *  resident bytes at its peak over the measured peak (@p peak) and at the
 *  end over the last measurement (@p final), in percent; false when
 *  nothing was measured. */
bool dx_coverage(const dx_report_t *r, double *peak, double *final);
void dx_report_text(FILE *out, const dx_report_t *r);
/** The measured peak and final RSS the coverage is reckoned against: the
 *  program run as it is (asis_*) when there is one, else the recording's
 *  samples; false when neither. */
bool dx_measured(const dx_report_t *r, size_t *peak, size_t *final);
/** `--json`: every figure of the summary as one JSON object (report_json.c). */
int dx_report_json(FILE *out, const dx_report_t *r);
int dx_report_html(FILE *out, const dx_report_t *r);
/**@}*/
#endif
