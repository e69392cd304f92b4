/**
 * @file lab.h
 * @brief What every lab program shares: heaps that may be missing, checks
 *        that count, figures printed the same way, snapshots on request.
 *
 * A lab program prints its figures and checks the phenomenon it shows, so
 * the same binary is the lab (`make run`, with --pictures) and its test
 * (`make check` runs it without arguments).  Exit status follows the
 * automake test protocol: 0 every check held, 1 one failed, 77 nothing
 * could be checked because a policy it needs is not compiled in.
 *
 * Every check compares figures of heaplab with each other (bytes, counts,
 * ratios), never a wall-clock time.
 */
#ifndef HL_LAB_H
#define HL_LAB_H

#include <stdbool.h>
#include <stddef.h>
#include "heaplab.h"

/** Reads the common options: --pictures DIR (write snapshots there),
 *  --full (the lab's full-size experiment instead of the quick one). */
void lab_begin(int argc, char **argv, const char *title);
/** True when run with --full. */
bool lab_full(void);
/** True when @p policy is compiled in; says so once when it is not. */
bool lab_has(const char *policy);
/** A heap, or NULL (after a note) when the policy is not compiled in;
 *  exits 2 when the policy exists but rejects @p conf.  debug:off is
 *  added unless @p conf names debug. */
hl_heap_t *lab_heap(const char *policy, const char *conf);
/** A statistic by path; exits 2 when the heap does not have it. */
double lab_stat(hl_heap_t *h, const char *path);
/** Resident bytes of the heap, in MiB. */
double lab_resident_mib(hl_heap_t *h);
/** Records one check: prints "check: <what>: ok" or "... FAILED". */
bool lab_expect(bool cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** A check that could not run (its policy is missing). */
void lab_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/** Writes DIR/NAME.dot when --pictures was given. */
void lab_snapshot(hl_heap_t *h, const char *name, const char *title);
/** A row of a bar chart: label, value, a bar scaled to @p max over 40 columns. */
void lab_bar(const char *label, double value, double max, const char *unit);
/** Prints the verdict and returns the exit status (0, 1 or 77). */
int lab_end(void);

/** The policies a lab compares across, in a fixed order (NULL-terminated). */
extern const char *const lab_policies[];

#endif
