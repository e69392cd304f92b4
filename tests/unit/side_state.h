/**
 * @file side_state.h
 * @brief For tests that damage a policy's structures and read its
 *        checker's report: a second state of the policy, made inside a
 *        heap through the policy's table and called with a thread record
 *        of its own, so that the test reaches the structures by their
 *        types (the heap's own state is opaque) and the heap's record
 *        keeps its policy_tls.  Its blocks are in no ledger.
 */
#ifndef HL_TESTS_SIDE_STATE_H
#define HL_TESTS_SIDE_STATE_H

#include <stddef.h>
#include "../../core/policy.h"

/** A heap, the policy, the second state and its thread record. */
typedef struct tl_side {
	hl_heap_t *h;                  /**< heap of the policy, ledger on */
	const hl_policy_t *pol;        /**< the policy's table */
	void *state;                   /**< the second state */
	hl_thread_t t;                 /**< the second state's thread record */
} tl_side_t;

/** Makes @p x: a heap of @p policy and a second state with @p conf;
 *  fails the test when either cannot be made.  @return x->state. */
void *tl_side_open(tl_side_t *x, const char *policy, const char *conf);
/** Runs the second state's checker.  @return problems found; the report
 *  (lines "heaplab: POLICY: check: ...") in @p text. */
int tl_side_check(tl_side_t *x, char *text, size_t len);
/** Fails the test unless the second state's checker finds nothing. */
void tl_side_clean(tl_side_t *x);
/** Fails the test unless the checker finds a problem whose line contains
 *  @p want. */
void tl_side_finds(tl_side_t *x, const char *want);
/** The damage undone: checks the state clean and destroys the heap. */
void tl_side_close(tl_side_t *x);
#endif
