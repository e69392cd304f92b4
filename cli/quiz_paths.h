/* heaplab quiz --paths / --path-of: "which path will the next call take?"
 * questions generated from a trace (quiz_paths.c). */
#ifndef HL_CLI_QUIZ_PATHS_H
#define HL_CLI_QUIZ_PATHS_H

#include <stdbool.h>

typedef struct quiz_paths_args {
	const char *trace, *policy, *conf;
	long long op;            /* --path-of N: print op N's path (0: not asked) */
	bool emit;               /* --emit-bank: print bank entries for --ops */
	const char *ops;         /* "3,7,10" */
	const char *trace_as;    /* the trace's name in emitted entries */
	int chapter;             /* chapter of emitted entries */
	long long count;         /* stop the drill after this many (0: all) */
} quiz_paths_args_t;

/** Runs one of the three; returns the exit status. */
int quiz_paths(const quiz_paths_args_t *a);
#endif
