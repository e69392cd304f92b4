/**
 * @file quiz.h
 * @brief libhlquiz: `heaplab quiz`, the question bank drilled in a terminal
 *        and verified for `make check`, and the "which path will the next
 *        call take?" questions generated from a trace.
 *
 * The bank's format is described at the top of book/questions.txt: blocks of
 * "key: value" lines (id, chapter, q, choice, a, why, needs, run) separated
 * by blank lines.  An answer is right when, after normalising (case, white
 * space, a trailing full stop, thousands separators, a leading article,
 * "bytes" after a number), it equals one of the alternatives of `a:`
 * (separated by " | "), or the letter or the text of the right choice.
 *
 * Where the bank is found, first match wins:
 *   the file given (--bank FILE);  $HEAPLAB_BOOK_DIR/questions.txt;
 *   qz_source_book_dir/questions.txt (the source tree's book/, compiled in);
 *   qz_installed_book_dir/questions.txt (where `make install` puts it).
 *
 * The drill's order is shuffled with a seed (the same seed gives the same
 * order; 0 keeps the bank's order).  Answers are read one per line from
 * standard input, so a script can pipe them in; colour is used only when
 * stdout is a tty.  Errors are one line on stderr, "heaplab: ...", and
 * the functions return the command's exit status (0, 1 a check failed,
 * 2 bad usage or bad input).
 *
 * Layers (top to bottom: tests/house/layers.sh checks this list)
 *   quiz.c                   the bank's command: loaded, then drilled or verified
 *   quiz_drill.c             the drill: the order, the questions, the score
 *   quiz_verify.c            --verify: each question's command run and judged
 *   quiz_paths.c             --paths, --path-of, --emit-bank from a trace
 *   quiz_bank.c              the bank read, checked, found
 *   quiz_answer.c            an answer's normal form, right or wrong, shown
 *   quiz_text.c              the error line, trimming
 *   quiz.h                   types
 */
#ifndef HL_QUIZ_H
#define HL_QUIZ_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "heaplab.h"

enum { QZ_MAX_CHOICES = 8, QZ_LINE = 4096 };

/** One question of the bank. */
typedef struct qz_question {
	char *id;                       /**< unique short name */
	int chapter;                    /**< book chapter number */
	char *q;                        /**< question text */
	char *choice[QZ_MAX_CHOICES];   /**< options of a multiple-choice question */
	int nchoices;                   /**< 0 for a free-answer question */
	char *a;                        /**< answer; alternatives split by " | " */
	char *why;                      /**< explanation shown after answering */
	char *needs;                    /**< policies the command needs, or NULL */
	char *run;                      /**< verifying shell command, or NULL */
	unsigned line;                  /**< line of the block's first key */
} qz_question_t;

/** The whole bank. */
typedef struct qz_bank {
	qz_question_t *v;   /**< questions in file order */
	size_t n, cap;      /**< used and allocated entries */
	char path[PATH_MAX];/**< file it came from */
	bool answerless;    /**< no question has a: or why: (the student's
				 edition): asked without a score */
} qz_bank_t;

/** What the bank's command does (quiz.c). */
typedef struct qz_opts {
	const char *bank;   /**< the bank's file, or NULL: looked for */
	bool verify;        /**< run the questions' commands, not the drill */
	int chapter;        /**< only this chapter's questions (0: all) */
	uint64_t seed;      /**< the drill's shuffle (0: the bank's order) */
	size_t count;       /**< stop after this many (0: all) */
} qz_opts_t;

/** heaplab quiz --paths / --path-of: "which path will the next call take?"
 *  questions generated from a trace (quiz_paths.c). */
typedef struct qz_paths_args {
	const char *trace, *policy, *conf;
	long long op;            /**< --path-of N: print op N's path (0: not asked) */
	bool emit;               /**< --emit-bank: print bank entries for --ops */
	const char *ops;         /**< "3,7,10" */
	const char *trace_as;    /**< the trace's name in emitted entries */
	int chapter;             /**< chapter of emitted entries */
	long long count;         /**< stop the drill after this many (0: all) */
} qz_paths_args_t;

/* ---- quiz.c ---- */

/** Loads the bank, then drills it or verifies it; the exit status. */
int qz_run(const qz_opts_t *o);

/* ---- quiz_drill.c ---- */

/** Asks @p count questions (0: all) of @p chapter (0: all) in the order
 *  @p seed gives; prints the score. */
int qz_drill(const qz_bank_t *b, int chapter, uint64_t seed, size_t count);

/* ---- quiz_verify.c ---- */

/** Runs every question's `run:` command and compares what it prints with
 *  the answer; 0 when none failed, 1 otherwise. */
int qz_verify(const qz_bank_t *b);

/* ---- quiz_paths.c ---- */

/** Runs the drill, --path-of or --emit-bank; returns the exit status. */
int qz_paths(const qz_paths_args_t *a);

/* ---- quiz_bank.c ---- */

/** The folders looked in after $HEAPLAB_BOOK_DIR: the source tree's book/
 *  and the installed data folder (compiled in). */
extern const char qz_source_book_dir[], qz_installed_book_dir[];
/** Reads and checks the bank; 0, or -1 after the problems on stderr. */
int qz_load(qz_bank_t *b, const char *path);
void qz_free(qz_bank_t *b);
/** The bank's path: @p given, or the first of the places above that has
 *  one (into @p buf). */
const char *qz_find_bank(const char *given, char *buf, size_t len);
/** The bank's folder into @p buf: what $BOOK means in a run: line. */
const char *qz_book_dir(const qz_bank_t *b, char *buf, size_t len);

/* ---- quiz_answer.c ---- */

/** The form answers are compared in: lower case, no white space, no
 *  trailing '.', no ',' between digits, no leading article, no "bytes"
 *  after a number. */
void qz_normalise(const char *in, char *out, size_t len);
/** True when @p given matches an alternative of q->a (or its choice text). */
bool qz_is_right(const qz_question_t *q, const char *given);
/** The first alternative, with the choice's text for a lettered answer. */
void qz_show_answer(const qz_question_t *q, char *out, size_t len);

/* ---- quiz_text.c ---- */

/** Prints "heaplab: <msg>" to stderr and returns 2. */
int qz_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/** @p s without its leading and trailing white space (cut in place). */
char *qz_trim(char *s);

#endif
