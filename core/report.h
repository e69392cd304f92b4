/**
 * @file report.h
 * @brief Where a checker writes the invariants it found broken.
 */
#ifndef HL_REPORT_H
#define HL_REPORT_H

#include <stdio.h>

typedef struct hl_report {
	FILE *out;          /**< may be NULL: count only */
	const char *policy; /**< prefix of each line */
	int problems;       /**< how many were reported */
	char *first;        /**< may be NULL; else receives the first problem's
				 text (debug mode makes one line of it) */
	size_t first_len;
} hl_report_t;

/** Records one broken invariant ("heaplab: <policy>: check: <msg>"). */
void hl_report(hl_report_t *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/** Checks @p cond; reports @p fmt when it does not hold.  Returns cond. */
#define HL_EXPECT(r, cond, ...) ((cond) ? 1 : (hl_report((r), __VA_ARGS__), 0))
#endif
