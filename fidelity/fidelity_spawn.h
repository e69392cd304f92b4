/* heaplab fidelity, inside the library: how a program runs on one side
 * (the real allocator or a model) — fidelity_spawn.c.  The rows
 * (fidelity_run.c) and the placement comparison (fidelity_placement.c)
 * both run their programs through it. */
#ifndef HL_FIDELITY_SPAWN_H
#define HL_FIDELITY_SPAWN_H

#include <stdbool.h>
#include <stddef.h>
#include "fidelity.h"

enum { FID_OUT_MAX = 1 << 20, FID_ERR_TAIL = 200 };

/** A growable NULL-terminated list of strings (argv or envp). */
typedef struct fid_words {
	char **v;
	size_t n, cap;
} fid_words_t;

void fid_words_add(fid_words_t *w, const char *s);
void fid_words_addf(fid_words_t *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** Splits @p text on blanks and adds each word (NULL adds none). */
void fid_words_split(fid_words_t *w, const char *text);
void fid_words_free(fid_words_t *w);

/** What one side needs to run. */
typedef struct fid_side {
	const char *name;     /**< "real" or "model" (FIDELITY_SIDE) */
	const char *preload;  /**< library for LD_PRELOAD, "" for none */
	const char *policy;   /**< model side: HEAPLAB_POLICY */
	const char *conf;     /**< model side: HEAPLAB_CONF, may be NULL */
	const char *env;      /**< extra NAME=value words */
	double timeout;       /**< seconds */
} fid_side_t;

/** How a run ended, and what it printed. */
typedef struct fid_outcome {
	int status;           /**< waitpid status */
	bool timed_out;
	char out[FID_OUT_MAX]; /**< stdout (truncated) */
	size_t out_len;
	char err[FID_ERR_TAIL]; /**< the end of stderr */
} fid_outcome_t;

/** Runs @p argv on side @p s; false (with o->err saying why) when it could
 *  not even start. */
bool fid_side_run(const fid_side_t *s, const fid_words_t *argv, fid_outcome_t *o);

/** The last line of what the program said on stderr (trailing newlines
 *  dropped from o->err). */
const char *fid_outcome_last_line(fid_outcome_t *o);

/** Writes a verdict or report into @p buf and sets *status to @p st. */
void fid_say(char *buf, size_t len, fid_status_t *status, fid_status_t st, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

#endif
