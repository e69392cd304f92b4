/**
 * @file recorder.h
 * @brief HEAPLAB_TRACE: records every operation of a running program as a
 *        trace that `heaplab replay` accepts.  Used by the malloc shim, so
 *        it never allocates: ids live in a table mapped from the kernel and
 *        lines go out through write(2) from a fixed buffer.
 */
#ifndef HL_RECORDER_H
#define HL_RECORDER_H

#include <stddef.h>

/** Starts recording to @p path (truncated).  0 on success. */
int hl_rec_open(const char *path);
void hl_rec_malloc(const void *p, size_t n);
void hl_rec_calloc(const void *p, size_t count, size_t size);
void hl_rec_memalign(const void *p, size_t align, size_t n);
void hl_rec_realloc(const void *old, const void *p, size_t n);
void hl_rec_free(const void *p);
/** Flushes what is buffered (at exit). */
void hl_rec_flush(void);
#endif
