/**
 * @file recorder.h
 * @brief HEAPLAB_TRACE: records every operation of a running program as a
 *        trace that `heaplab replay` accepts.  Used by the malloc shim, so
 *        it never allocates: ids live in a table mapped from the kernel and
 *        lines (or binary records) go out through write(2) from a fixed
 *        buffer of 1 MiB.
 */
#ifndef HL_RECORDER_H
#define HL_RECORDER_H

#include <stddef.h>
#include <stdint.h>

/** Starts recording to @p path (truncated) as text.  0 on success. */
int hl_rec_open(const char *path);
/** The same in the binary form (trace_binary.h): ops are records of a few
 *  bytes coded into the buffer, no number formatted; the "#@" lines go as
 *  TEXT records; hl_rec_finish writes the END record. */
int hl_rec_open_binary(const char *path);
void hl_rec_malloc(const void *p, size_t n);
void hl_rec_calloc(const void *p, size_t count, size_t size);
void hl_rec_memalign(const void *p, size_t align, size_t n);
void hl_rec_realloc(const void *old, const void *p, size_t n);
void hl_rec_free(const void *p);
/** Flushes what is buffered (at exit). */
void hl_rec_flush(void);

/** @name Recording with allocation sites (libheaplab-record.so)
 * The same operations with the caller's return address @p site: each new
 * address gets a number and a line "#@site N 0xADDR" before the first op
 * that names it; the op line ends with " @N".  Every @p rss_every_ms (0:
 * never) of operations, a line "#@rss MS BYTES" gives the process's
 * resident bytes (/proc/self/statm, less the recorder's own tables) at MS
 * milliseconds since the start.
 * hl_rec_finish writes the loaded modules ("#@module LO HI BASE PATH", one
 * per executable segment) so that sites can be resolved to module+offset
 * after the program is gone, a last "#@rss" line, and flushes.
 */
/**@{*/
void hl_rec_sample_every(long rss_every_ms);
void hl_rec_malloc_at(const void *p, size_t n, const void *site);
void hl_rec_calloc_at(const void *p, size_t count, size_t size, const void *site);
void hl_rec_memalign_at(const void *p, size_t align, size_t n, const void *site);
void hl_rec_realloc_at(const void *old, const void *p, size_t n, const void *site);
void hl_rec_finish(void);
/** Takes a sample now when one is due (a sampling thread calls it every
 *  hl_rec_sample_ms() milliseconds, so that a program that does not call
 *  malloc is sampled all the same); nothing after hl_rec_finish. */
void hl_rec_sample_now(void);
long hl_rec_sample_ms(void);
/** The calling thread is exiting: writes "#@exit N" for its number N
 *  (nothing when it never allocated) and frees the number for the next new
 *  thread.  An op the thread makes afterwards numbers it anew.  No
 *  allocation: safe in a pthread key destructor. */
void hl_rec_thread_exit(void);
/** The program as it runs has allocator @p name in front of malloc, and
 *  this recording went past it (CPython run with PYTHONMALLOC=malloc:
 *  "pymalloc"): a "#@front NAME" line, so that a later reader replays the
 *  program as it runs.  @p name: letters, digits and '_', else nothing. */
void hl_rec_front(const char *name);
/** Stops recording in a child after fork (its ops are not the parent's). */
void hl_rec_forget(void);
/**@}*/

/** @name Sampling (HEAPLAB_RECORD_SAMPLE, HEAPLAB_RECORD_MAX)
 * A program too long to record whole is recorded one new block in @p k:
 * a block kept keeps every op of it (its realloc chain, its free), a block
 * not kept leaves no line, so the recording is a whole program of its
 * own, whose heap stands for 1/k of the program's.  Which blocks: a hash
 * of the block's number among the program's new blocks and @p seed.  A
 * line "#@sample 1/K" says from where on the rate is K (the first before
 * any op); "#@sampled N" at the end, how many ops the program made, kept
 * or not.  With @p max_bytes (0: none), the rate halves each time the
 * recording reaches the next of max_bytes * 1/2, 2/3, 3/4, ...: new
 * blocks are kept at half the rate from its "#@sample" line on, and a
 * reader keeps each block kept before with the chance that brings it to
 * the last rate (trace/sample.c: hl_trace_thin), so that the replay is
 * one rate throughout.  The "#@rss" samples are all kept.  k 1 without max_bytes
 * records every op, as without the call.  0, or -1 when not recording or
 * @p k is 0. */
/**@{*/
int hl_rec_sample_blocks(unsigned long k, unsigned long long max_bytes, uint64_t seed);
/** The rate in force: one new block in this many is kept. */
unsigned long hl_rec_sample_rate(void);
/**@}*/

/** @name The layers of the process's memory (record_layers.c, record_mmap.c)
 * With a hook set, the recorder writes at the end two lines
 * "#@layers peak|final MS RSS heap=B mapped=B mmap=B stack=B exe=B alloc=B
 * libs=B files=B recorder=B other=B": the resident bytes of each layer of
 * /proc/self/smaps, read at the largest RSS sample (read again whenever a
 * sample passes the last one read by more than 1/64) and at the end.
 * record_mmap.c notes the anonymous mappings the program makes with mmap
 * and the recorder's own, so that they are told from the C allocator's
 * (which it makes through glibc's internal entry, unseen). */
/**@{*/
/** Bytes of [lo, hi) the program mapped itself with mmap (the recorder's
 *  own tables' bytes into @p own). */
size_t hl_rec_mapped_overlap(uintptr_t lo, uintptr_t hi, size_t *own);
/** Writes one "#@layers WHEN MS RSS ..." line, newline included, into
 *  @p out; its length, or 0 when smaps could not be read. */
typedef size_t (*hl_rec_layers_fn)(char *out, size_t len, const char *when, long long ms, unsigned long long rss);
void hl_rec_layers_hook(hl_rec_layers_fn fn);
/** Sets record_layers.c's hook (libheaplab-record.so). */
void hl_rec_layers_start(void);
/** Finds the C library's mmap for record_mmap.c's interposer: before the
 *  first recorded op (dlsym may allocate). */
void hl_rec_mmap_start(void);
/** Reads HEAPLAB_RECORD_PACE and finds the C library's timed waits for
 *  record_pace.c's interposer (the program's timed waits stretched by the
 *  recorder's slowdown). */
void hl_rec_pace_start(void);
/**@}*/
#endif
