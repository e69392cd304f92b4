/**
 * @file error.h
 * @brief How heaplab reports what went wrong: the per-thread "last error"
 *        text that a failing call leaves behind, and the one-line abort for
 *        heap corruption.  Every layer (core, policies, trace reader,
 *        visualize) reports through these two; only the command prints.
 */
#ifndef HL_ERROR_H
#define HL_ERROR_H

/** Reports heap corruption as "heaplab: <policy>: <what> (<ptr>)" and aborts.
 *  Uses write(2) only; safe anywhere. */
__attribute__((noreturn)) void hl_fatal(const char *policy, const char *what, const void *p);
/** Sets this thread's hl_last_error() text (printf-style). */
void hl_set_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
