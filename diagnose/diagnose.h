/**
 * @file diagnose.h
 * @brief `heaplab diagnose`: the program recorded and measured
 *        (record_program.c, measure.c, allocator_own.c), what holds its
 *        memory (attribute.c), what another allocator or setting would do
 *        (whatif.c), the diagnosis that ties them (diagnosis.c,
 *        verify.c), and the report (report.c).  Built on the public API
 *        (heaplab.h) and on libhlvis.
 */
/*
 * Layers (top to bottom: tests/house/layers.sh checks this list)
 *   report_json.c            --json: the diagnosis as one object
 *   verify.c                 --verify: the recommended setting and the
 *                            program as it is, measured
 *   diagnosis.c              attribution, grid, the recorded allocator and
 *                            the real allocators' own memory: ranked
 *   report.c                 the summary and the HTML page
 *   record_program.c         the program found, checked, recorded
 *   allocator_own.c          each real allocator's own memory at start
 *   parallel.c               the candidates replayed side by side
 *   whatif.c                 the grid of policies and knobs, the ranking
 *   attribute.c              each committed byte given one cause
 *   sample.c                 a sampled recording: its rate, each figure
 *                            scaled back, the error measured for the rate
 *   layers.c                 the recording's "#@layers" lines, its form
 *   measure.c                a program run for real, its RSS
 *   diagnose.h               types
 */
#ifndef HL_DIAGNOSE_H
#define HL_DIAGNOSE_H

#include "../visualize/vis.h"

struct rusage;

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
	size_t bytes[DX_NCAUSES];   /**< the committed bytes of each cause (dx_cause_t) */
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
	char policy[32];        /**< the policy replayed */
	char conf[160];         /**< its options ("": its defaults) */
	bool ok;                /**< the replay went to the end */
	char message[256];      /**< why it did not, when not ok */
	dx_sample_t *samples;   /**< the heap at each sample, in the order of the ops */
	size_t nsamples;        /**< how many samples */
	size_t nattributed;     /**< samples with attributed set */
	size_t peak_committed;  /**< the largest committed bytes of a sample, or the
				     page source's own peak when larger */
	size_t final_committed; /**< the committed bytes of the last sample */
	size_t peak_resident;   /**< the largest resident bytes of a sample */
	size_t final_resident;  /**< the resident bytes of the last sample */
	unsigned long long os_calls;   /**< every counted kernel call */
	dx_hold_t *holds;       /**< by held bytes, largest first (attribution only) */
	size_t nholds;          /**< how many holds */
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
/** Frees what @p run holds (its samples and holds), not @p run itself. */
void dx_run_free(dx_run_t *run);
/** The model's resident bytes, heap and metadata, after one malloc(100)
 *  and its free under @p policy / @p conf (what it holds of itself at
 *  start); 0 when it cannot be replayed. */
size_t dx_model_started(const char *policy, const char *conf);

/** @name The layers of the process's memory (layers.c)
 *  From /proc/PID/smaps, read by the recorder at the largest RSS sample
 *  and at the end ("#@layers" lines, shim/record_layers.c). */
/**@{*/
/** A layer of the process's memory, as /proc/PID/smaps names its mappings. */
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
/** The resident bytes of each layer at one moment (a "#@layers" line). */
typedef struct dx_layers {
	bool ok;                /**< the line was there */
	double ms;              /**< when it was read */
	size_t rss;             /**< the RSS sample then (statm, less the recorder's tables) */
	size_t bytes[DX_NLAYERS];   /**< the resident bytes of each layer (dx_layer_t) */
} dx_layers_t;
/** Short key of a layer ("heap", "mapped", ...): JSON keys. */
const char *dx_layer_key(dx_layer_t l);
/** The layer in plain words, as the report says it. */
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
/** The resident bytes of every layer of @p l together. */
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
	const char *policy;     /**< the policy replayed */
	const char *conf;       /**< its options ("": its defaults) */
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
dx_candidate_t *dx_grid_cpython(const char *policies, const char *knobs, const char *bins_base, size_t *n);
/** The library a real setting preloads (the path after "LD_PRELOAD="),
 *  in @p path; "" when it preloads none or @p setting is NULL. */
void dx_preloaded(const char *setting, char *path, size_t len);
/** Frees the @p n candidates of a grid. */
void dx_grid_free(dx_candidate_t *c, size_t n);
/** What the ranking minimises: peak plus final resident bytes. */
size_t dx_resident_score(const dx_run_t *run);
/** Orders @p runs best first: lowest peak plus final resident bytes, then
 *  peak plus final committed, then OS calls; failed runs last.  Fills
 *  @p order with indexes. */
void dx_rank(const dx_run_t *runs, size_t n, size_t *order);
/**@}*/

/** @name Running the program (record_program.c, measure.c, verify.c,
 *  allocator_own.c)
 *  The program diagnosed is run for real: once under the recorder, maybe
 *  again as it is (measure.c), and under the recommended setting for
 *  --verify.  None of these functions prints on stderr: what they do is
 *  told on dx_program_opts::notes, what went wrong left in
 *  hl_last_error(). */
/**@{*/
/** How the program is run. */
typedef struct dx_program_opts {
	const char *recorder;   /**< the path of libheaplab-record.so */
	long long sample_ms;    /**< how often its RSS is read, in milliseconds
				     (the recorder's HEAPLAB_RECORD_MS too) */
	bool output_aside;      /**< its standard output goes to the standard
				     error (--json=-: heaplab's own carries the JSON) */
	FILE *notes;            /**< where each step is told ("heaplab diagnose:
				     recording ..."), or NULL: nowhere */
	/** Reads a recording as far as it goes (a run ended by a signal leaves
	 *  it without its end), telling its warnings; NULL after telling why
	 *  it cannot.  The caller's, so that the reader's words reach the user
	 *  as every other command shows them. */
	hl_trace_t *(*load)(const char *path);
	unsigned draws;         /**< how many times a CPython program with
				     threads is recorded (1..DX_DRAWS_MAX;
				     0: DX_DRAWS) */
} dx_program_opts_t;

/** Can the recorder go into program @p prog (a path, or a name looked up
 *  in PATH as execvp would)?  0; or 2 with hl_last_error() saying why in
 *  a line: it cannot be run, it is linked statically (LD_PRELOAD does
 *  nothing there), this heaplab is built with sanitizers (their runtime
 *  owns malloc), or @p recorder is missing. */
int dx_recordable(const char *prog, const char *recorder);

/** How many times a CPython program with threads is recorded unless
 *  told (--draws): the recording of median live peak (hl_trace_live_peak)
 *  is diagnosed. */
#define DX_DRAWS 3
/** The most --draws allows. */
#define DX_DRAWS_MAX 15

/** A program recorded (dx_record_program), or a recording given
 *  (dx_recording_given): the trace and what is known of the run. */
typedef struct dx_recorded {
	hl_trace_t *trace;      /**< the recording, as dx_program_opts::load read
				     it (NULL: none) */
	char dir[4096];         /**< the temporary folder the recorder wrote in
				     ("": none; dx_recorded_free removes it) */
	char path[4200];        /**< the recording diagnosed: the largest in
				     @c dir, or the file given */
	bool cpython;           /**< CPython, recorded with PYTHONMALLOC=malloc */
	const char *recorded_with;   /**< the setting the recording ran under that
					  the program does not
					  ("PYTHONMALLOC=malloc"), or NULL */
	int ended;              /**< how the recorded run ended: exit status,
				     128 + signal, or -1 when not known */
	char others[1024];      /**< the other processes recorded, "process PID
				     (N B of recording)" each, or "" */
	size_t asis_peak;       /**< CPython run as it is: its measured peak RSS
				     (0: not run) */
	size_t asis_final;      /**< and its final RSS (0: not run) */
	const char *pace;       /**< the recording's HEAPLAB_RECORD_PACE: what its
				     timed waits did not count ("allocator",
				     "recorder"), or NULL: none */
	int pace_call_ns;       /**< and what each allocator call counted of the
				     program's time, ns ("allocator:NS") */
	unsigned ndraws;        /**< recordings made of the program (0: one) */
	unsigned draw_picked;   /**< which of them is diagnosed: the median */
	size_t draw_live_peaks[DX_DRAWS_MAX];   /**< the most bytes live at once in each */
} dx_recorded_t;

/** A recording made before (--trace), already read: @p t is owned by
 *  @p rec from now on. */
void dx_recording_given(hl_trace_t *t, const char *path, dx_recorded_t *rec);
/**
 * Records @p argv (dx_recordable said yes) on the C library's malloc with
 * the recorder preloaded, and reads the recording.  A CPython program is
 * recorded with PYTHONMALLOC=malloc and measured once as it is
 * (dx_run_measured).  CPython's timed waits are counted in its own time
 * (HEAPLAB_RECORD_PACE, shim/record_pace.c: the recorder's work left out,
 * and the C allocator's when the program runs on pymalloc, each call then
 * counted as pymalloc's), so that its
 * threads take turns after as much of their work as without the recorder;
 * one with several threads is recorded dx_program_opts::draws times, and
 * the recording of median live peak diagnosed.
 * @return 0; 2 with hl_last_error() saying why; 1 when the reason was
 *         told already (@p o->load could not read the recording, or the
 *         program exited with status 127 at once: a wrapper that could
 *         not start its command says so itself).  @p rec is to be freed
 *         with dx_recorded_free in every case.
 */
int dx_record_program(char **argv, const dx_program_opts_t *o, dx_recorded_t *rec);

/** Copies the recording of @p rec to @p to (--keep); 0, or 2 with
 *  hl_last_error() "cannot write TO". */
int dx_recording_keep(const dx_recorded_t *rec, const char *to);
/** Frees the trace and removes the temporary folder, if any. */
void dx_recorded_free(dx_recorded_t *rec);

/** A program run for real, its RSS read from /proc/PID/statm. */
typedef struct dx_measured {
	size_t peak;            /**< the largest resident bytes read (with the
				     kernel's high-water mark, when asked) */
	size_t final;           /**< resident bytes at its exit, held there by
				     ptrace; the last reading where ptrace is
				     refused */
	size_t samples;         /**< the readings that counted */
	int status;             /**< exit status, or 128 + signal */
} dx_measured_t;
/**
 * Runs @p argv with @p setting's variables set ("VAR=VALUE ...", "" for
 * none), reading its RSS every dx_program_opts::sample_ms and once more
 * with the program held at its exit (ptrace's exit event: every free it
 * made is done, nothing is unmapped yet; CPython frees its objects in its
 * last milliseconds, which a reading every 10 ms misses).  With @p hwm,
 * the peak is at least the kernel's high-water mark of the child (only
 * right when this process was small when it forked: the copy counts).
 * @return 0; 2 with hl_last_error() when it could not be started (status
 *         127 included)
 */
int dx_run_measured(char **argv, const char *setting, bool hwm, const dx_program_opts_t *o, dx_measured_t *m);
/** Sets each "VAR=VALUE" word of @p setting (separated by spaces) in
 *  this process's environment: a child's, before it runs the program. */
void dx_set_variables(const char *setting);
/** The resident bytes a line of /proc/PID/statm gives (its second field,
 *  in pages), or 0 when it is not one. */
size_t dx_statm_bytes(const char *statm);

/** Each candidate of @p cands that preloads a real allocator gets, in
 *  @p runs[k].own_bytes, that allocator's own memory at start which its
 *  model does not hold: what a process that starts it holds beyond one on
 *  the C library's malloc, less what the model holds beyond the model of
 *  glibc (options @p model) after one malloc.  Measured here, by running
 *  `cat /proc/self/statm` under each. */
void dx_allocators_own(const dx_candidate_t *cands, dx_run_t *runs, size_t n, const char *model);
/**@}*/

/** @name The report (report.c) */
/**@{*/
/** Resolves the sites @p want to "function (file:line)" with addr2line:
 *  what[s] for site s (NULL for sites not wanted, and for 0), or
 *  "module+0xoff" (or the bare address) when addr2line cannot. */
char **dx_sites_resolve(const hl_trace_t *t, const unsigned *want, size_t nwant);
/** Frees what dx_sites_resolve returned for @p t (NULL: nothing). */
void dx_sites_free(char **what, const hl_trace_t *t);
/** Everything a report says (struct dx_report). */
typedef struct dx_report dx_report_t;
/** `--verify`: the program run again, without the recorder, under the
 *  recommended real setting, its RSS read from /proc/PID/statm. */
typedef struct dx_verify {
	char setting[256];      /**< what was set ("" = the allocator as it is) */
	const dx_run_t *run;    /**< the candidate's replay: the prediction */
	bool ok;                /**< the program ran and was sampled */
	int status;             /**< its exit status */
	size_t samples;         /**< statm reads */
	size_t peak;            /**< the measured peak resident bytes */
	size_t final;           /**< the measured final resident bytes */
	size_t asis_peak;       /**< the peak without the setting (0: not run) */
	size_t asis_final;      /**< the final without the setting (0: not run) */
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
/** The most that can lie outside the heap: the resident bytes smaps puts
 *  outside the C allocator (the program's files and libraries, stacks, its
 *  own anonymous mappings: every layer but heap, mapped and recorder) at
 *  the peak or at the end of the recording, the larger; -1 when the
 *  recording has no layers.  What lies outside the heap is taken at most
 *  this large, each sample's and the median: measured RSS less the model's
 *  resident bytes beyond it is the model of the recorded allocator holding
 *  less than the allocator did in that run (a recorded thread's arena
 *  let go of before the next thread took one, where glibc gave that one an
 *  arena of its own), an error of that model not to be passed on to the
 *  other candidates.  Single-threaded programs stay below it (the twelve
 *  of bench/accuracy: by 0 to 5 MiB). */
long long dx_outside_cap(const dx_report_t *r);
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

/** What `heaplab diagnose` reports: the recording, the attribution, every
 *  candidate ranked, and what is known of the program's run. */
struct dx_report {
	const hl_trace_t *trace;      /**< the recording */
	const char *command;          /**< the program, as run */
	const dx_run_t *base;         /**< the attribution (bins) */
	const dx_run_t *runs;         /**< every candidate */
	const dx_candidate_t *cands;  /**< the candidate of each run */
	const size_t *order;          /**< runs best first */
	size_t nruns;                 /**< how many runs (and candidates) */
	char **sites;                 /**< dx_sites_resolve */
	const dx_verify_t *verify;    /**< --verify's measurement, or NULL */
	dx_layers_t layers_peak;      /**< the layers at the largest RSS sample, from
					   the recording (ok false: none) */
	dx_layers_t layers_final;     /**< the layers at the end (ok false: none) */
	const char *recorded_with;    /**< the setting the recording ran under that the
					   program does not (PYTHONMALLOC=malloc), or NULL */
	size_t asis_peak;             /**< the program run as it is: its measured peak
					   RSS (0: not run) */
	size_t asis_final;            /**< and its measured final RSS (0: not run) */
	int ended;                    /**< how the recorded run ended: exit status,
					   128 + signal, or -1 when not known */
	const char *others;           /**< the other processes recorded (children that
					   executed a program, which records apart), or NULL/"" */
	const dx_run_t *recorded;     /**< the model of the allocator the recorded run
					   ran on, where it is not @c base (CPython
					   recorded with PYTHONMALLOC=malloc: bins), or NULL */
	const char *pace;             /**< what the recording's timed waits did not
					   count ("allocator": the C allocator's
					   calls and the recorder's work;
					   "recorder": its work), or NULL: the
					   clock's time, all of it */
	int pace_call_ns;             /**< each allocator call counted as this many
					   ns of the program's time */
	unsigned ndraws;              /**< recordings made of the program (0: one) */
	unsigned draw_picked;         /**< the one diagnosed, of median live peak */
	const size_t *draw_live_peaks; /**< the most bytes live at once in each (ndraws) */
};
/** What part of the measured RSS the model accounts for: the attribution's
 *  resident bytes at its peak over the measured peak (@p peak) and at the
 *  end over the last measurement (@p final), in percent; false when
 *  nothing was measured. */
bool dx_coverage(const dx_report_t *r, double *peak, double *final);
/** The model the coverage holds against the measured RSS: the recorded
 *  run's allocator's (r->recorded) when the measured RSS is the
 *  recording's own and the recording went past the program's front
 *  allocator (a CPython recording diagnosed from its file), else r->base. */
const dx_run_t *dx_covering(const dx_report_t *r);
/** The summary, as `heaplab diagnose` prints it, to @p out. */
void dx_report_text(FILE *out, const dx_report_t *r);
/** The measured peak and final RSS the coverage is reckoned against: the
 *  program run as it is (asis_*) when there is one, else the recording's
 *  samples; false when neither. */
bool dx_measured(const dx_report_t *r, size_t *peak, size_t *final);
/** `--json`: every figure of the summary as one JSON object (report_json.c). */
int dx_report_json(FILE *out, const dx_report_t *r);
/** The self-contained HTML page of the report (-o); 0, or -1 when
 *  writing @p out failed. */
int dx_report_html(FILE *out, const dx_report_t *r);
/**@}*/

/** @name The diagnosis (diagnosis.c, verify.c) */
/**@{*/
/** What the diagnosis replays. */
typedef struct dx_diagnose_opts {
	const char *policies;   /**< --policies: a comma list (NULL: all) */
	const char *knobs;      /**< --knobs: candidates added ("POLICY/CONF;..."), or NULL */
	const char *model;      /**< --model: options of the model of glibc ("": its defaults) */
	unsigned jobs;          /**< replays at once (dx_replay_many's workers) */
	vis_progress_fn progress;   /**< hears of the replays, or NULL */
} dx_diagnose_opts_t;

/** A recording diagnosed: the report and everything it points to. */
typedef struct dx_diagnosis {
	dx_report_t report;     /**< what dx_report_text, _json and _html take */
	dx_run_t base;          /**< the attribution: the allocator the program
				     runs on as it is */
	dx_run_t recorded;      /**< the model of the allocator the recorded run
				     ran on, where it is not the base (CPython:
				     bins); not ok when none */
	dx_candidate_t *cands;  /**< the grid (dx_grid or dx_grid_cpython) */
	dx_run_t *runs;         /**< one replay per candidate */
	size_t *order;          /**< runs best first (dx_rank) */
	size_t n;               /**< how many candidates */
} dx_diagnosis_t;

/**
 * Diagnoses the recording of @p rec, the program @p command: replays it
 * with attribution under the allocator the program runs on as it is, and
 * every candidate of the grid (and, for CPython, the allocator the
 * recorded run ran on) in up to dx_diagnose_opts::jobs processes; adds
 * the real allocators' own memory at start (dx_allocators_own), ranks
 * them and resolves the sites that hold the most.  @p d->report is ready
 * for the writers; --verify's measurement is the caller's to add
 * (dx_verify).
 * @return 0; 2 with hl_last_error() saying why.  @p d is to be freed
 *         with dx_diagnosis_free in every case.
 */
int dx_diagnose(const dx_recorded_t *rec, const char *command, const dx_diagnose_opts_t *o, dx_diagnosis_t *d);
/** Frees what @p d holds (not the recording). */
void dx_diagnosis_free(dx_diagnosis_t *d);
/** --verify: runs @p argv twice more without the recorder, under the
 *  setting @p r recommends (when it is one a shell would take: "VAR=VALUE
 *  ...") and as it is, and measures both (dx_run_measured) into @p v. */
void dx_verify(char **argv, const dx_report_t *r, const dx_program_opts_t *o, dx_verify_t *v);
/**@}*/
#endif
