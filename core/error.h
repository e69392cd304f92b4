/**
 * @file error.h
 * @brief How heaplab reports what went wrong: the per-thread "last error"
 *        text that a failing call leaves behind, and the one-line abort for
 *        heap corruption.  Every layer (core, policies, trace reader,
 *        visualize) reports through these two; only the command prints.
 */
#ifndef HL_ERROR_H
#define HL_ERROR_H

#include <stddef.h>

struct hl_policy;

/** Reports heap corruption as "heaplab: NAME: WHAT (PTR)" and aborts,
 *  NAME being @p policy's `.name` from its table (NULL: "core"), so no
 *  caller types a policy's name: a policy passes its own table
 *  (&hl_policy_NAME), the core the heap's.  Uses write(2) only; safe
 *  anywhere. */
__attribute__((noreturn)) void hl_fatal(const struct hl_policy *policy, const char *what, const void *p);
/** Lets every hl_fatal line this thread prints end with what it was doing:
 *  @p describe(@p arg) writes it, e.g. "op 4 'f 2' (trace.rep:6)", only when
 *  a line is printed.  NULL: nothing. */
void hl_fatal_context(void (*describe)(void *arg, char *buf, size_t len), void *arg);
/** Sets this thread's hl_last_error() text (printf-style). */
void hl_set_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/** Copies the first @p n bytes of what a user wrote into @p buf for a
 *  message: printable ASCII as it is, any other byte as \\xHH, so that the
 *  message stays one clean line whatever the input held.  Never allocates.
 *  @return @p buf. */
const char *hl_printable(const char *s, size_t n, char *buf, size_t len);

#endif
