/**
 * @file cli.h
 * @brief The heaplab command: one function per sub-command, and the
 *        helpers they share.  Sub-commands parse arguments and call the
 *        library; nothing a lab or test needs lives only here.
 */
#ifndef HL_CLI_H
#define HL_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "heaplab.h"

/** Each sub-command: argv[0] is its own name.  Returns the exit status:
 *  0 ok, 1 a check failed, 2 bad usage or bad input. */
int cmd_policies(int argc, char **argv);
int cmd_options(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_bound(int argc, char **argv);
int cmd_adversary(int argc, char **argv);
int cmd_sizes(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_render(int argc, char **argv);
int cmd_step(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_quiz(int argc, char **argv);
int cmd_grade(int argc, char **argv);
int cmd_fidelity(int argc, char **argv);
int cmd_diagnose(int argc, char **argv);

/** Prints "heaplab: <msg>" to stderr and returns 2 (for `return cli_usage_error(...)`). */
int cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/** If @p arg is "--name=value" or "--name value", stores value and returns
 *  1 (advancing *i for the two-word form); 0 when @p arg is not --name;
 *  -1 (after an error message) when the value is missing. */
int cli_opt(int argc, char **argv, int *i, const char *name, const char **value);
/** Parses a non-negative size with optional K/M/G; -1 on error. */
long long cli_parse_size(const char *s);
/** Splits "all" or "a,b,c" into policy names; validates each.  Returns the
 *  count (0 after an error message). */
int cli_policy_list(const char *arg, const char **names, int max);
/** A progress line on stderr, at most every 200 ms, only after the first
 *  second and only when stderr is a terminal; cli_progress_done clears it. */
void cli_progress(const char *what, size_t done, size_t total);
void cli_progress_done(void);
/** cli_progress as a visualize progress callback: clears the line when
 *  done == total. */
void cli_progress_cb(const char *what, size_t done, size_t total);
/** Prints hl_last_error() as "heaplab: <msg>" and returns 2. */
int cli_last_error(void);
/** Loads a trace: NULL after printing "file:line: message"; the reader's
 *  warnings go to stderr.  @p lenient reads a trace cut short as far as it
 *  goes (hl_trace_load_lenient). */
hl_trace_t *cli_load_trace(const char *path, bool lenient);
/** Prints "key":"v" (v escaped for JSON; NULL as "") and a comma if asked. */
void cli_json_str(const char *key, const char *v, bool comma);
/** Seconds since an arbitrary start (monotonic). */
double cli_now(void);
/** Path of libheaplab-preload.so (env HEAPLAB_PRELOAD, build tree, libdir). */
const char *cli_preload_path(void);
/** Puts @p lib first in this process's LD_PRELOAD, keeping what was there;
 *  0, or cli_error's code with @p who ("run", "diagnose") and @p env_hint
 *  (the variable that names the library) when it is missing. */
int cli_prepend_preload(const char *who, const char *lib, const char *env_hint);
/** Path of libheaplab-record.so (HEAPLAB_RECORDER overrides). */
const char *cli_record_path(void);
#endif
