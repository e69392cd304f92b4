/**
 * @file stats.h
 * @brief One way for every policy to emit statistics, three readers of it.
 *
 * A policy's stats() function calls the hl_statw_* emitters once; the
 * writer behind them prints JSON, prints indented text, or looks for one
 * path ("policy_stats.tcache_hits") and keeps its number.  So the JSON a
 * student reads, the text `HEAPLAB_STATS=1` prints and the numbers tests
 * assert on can never disagree.
 */
#ifndef HL_STATS_H
#define HL_STATS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef struct hl_statw hl_statw_t;

/** Opens a nested object named @p key (NULL inside a list). */
void hl_statw_object(hl_statw_t *w, const char *key);
/** Opens a list named @p key; its items are objects or values with key NULL. */
void hl_statw_list(hl_statw_t *w, const char *key);
/** Closes the innermost object or list. */
void hl_statw_end(hl_statw_t *w);
void hl_statw_u64(hl_statw_t *w, const char *key, uint64_t v);
void hl_statw_i64(hl_statw_t *w, const char *key, int64_t v);
void hl_statw_f64(hl_statw_t *w, const char *key, double v);
void hl_statw_bool(hl_statw_t *w, const char *key, bool v);
void hl_statw_str(hl_statw_t *w, const char *key, const char *v);

/* --- writers (used by the core) --- */
enum hl_statw_mode { HL_STATW_JSON, HL_STATW_TEXT, HL_STATW_LOOKUP, HL_STATW_VISIT };
#define HL_STATW_DEPTH 16
struct hl_statw {
	enum hl_statw_mode mode;
	FILE *out;
	int depth;
	bool first[HL_STATW_DEPTH];   /**< no member printed yet at this depth */
	bool is_list[HL_STATW_DEPTH];
	int index[HL_STATW_DEPTH];    /**< item number inside a list */
	char path[256];               /**< current path, for lookups */
	size_t pathlen[HL_STATW_DEPTH];
	const char *want;             /**< lookup target; the prefix a visit keeps */
	bool found;
	double value;
	void (*visit)(const char *path, double v, void *arg);   /**< HL_STATW_VISIT */
	void *visit_arg;
};
void hl_statw_init(hl_statw_t *w, enum hl_statw_mode mode, FILE *out, const char *want);
void hl_statw_finish(hl_statw_t *w);
#endif
