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
	const void *first_at; /**< the block the first problem is about, when
				   its checker names one (HL_EXPECT_AT) */
} hl_report_t;

/** Records one broken invariant ("heaplab: <policy>: check: <msg>"). */
void hl_report(hl_report_t *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/** Same, about the block the program knows as @p at (a payload address). */
void hl_report_at(hl_report_t *r, const void *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/** Checks @p cond; reports @p fmt when it does not hold.  Returns cond. */
#define HL_EXPECT(r, cond, ...) ((cond) ? 1 : (hl_report((r), __VA_ARGS__), 0))
/** Same, naming the block @p at the problem is about (debug mode prints it
 *  as the address of its one line). */
#define HL_EXPECT_AT(r, cond, at, ...) ((cond) ? 1 : (hl_report_at((r), (at), __VA_ARGS__), 0))
#endif
