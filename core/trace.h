/**
 * @file trace.h
 * @brief Traces inside the core: the parsed form of a `.rep` file.
 *
 * Format (CMU malloc lab, both header styles, plus heaplab's extensions):
 *
 *   20000          <- optional header: four numbers, one per line
 *   3                 (classic: heap size, ids, ops, weight;
 *   4                  64-bit lab: weight, ids, ops, max alloc —
 *   1                  both have ids second and ops third)
 *   a 0 512        malloc: block 0 gets 512 bytes
 *   r 0 1024       realloc block 0
 *   c 1 10 16      calloc(10, 16) as block 1
 *   m 2 4096 100   memalign(4096, 100) as block 2
 *   t 1            following ops run on thread 1
 *   s after-free   take a snapshot named "after-free"
 *   f 0            free block 0 ("f -1" is free(NULL); an f of a block
 *                  already freed is replayed as a double free, with a
 *                  warning: the mistake of the program it came from)
 *   # comment
 *
 * Block ids run from 0 to 4194303 (they index arrays, so the bound keeps
 * a tiny trace from asking for gigabytes); thread ids from 0 to 255.
 */
#ifndef HL_TRACE_H
#define HL_TRACE_H

#include <stddef.h>
#include "heaplab.h"

typedef struct hl_trace_op {
	char kind;        /**< a f r c m t s */
	unsigned tid;     /**< thread the op runs on */
	long id;          /**< block id (-1 for free(NULL)); tid for 't' */
	size_t size;      /**< bytes (per element for c) */
	size_t aux;       /**< c: element count; m: alignment; s: label offset;
			       f: 1 when the block was freed before (a double free) */
	unsigned line;    /**< line in the file */
} hl_trace_op_t;

struct hl_trace {
	char *path;
	hl_trace_op_t *ops;
	size_t nops, cap;
	long max_id;          /**< largest block id + 1 */
	unsigned nthreads;    /**< largest tid + 1 */
	long header[4];       /**< the four header numbers, if any */
	bool has_header;
	char *labels;         /**< label text, NUL-separated */
	size_t labels_len, labels_cap;
	char *warnings;       /**< "file:line: warning: ..." lines */
	size_t warnings_len;
};

/** Reads a trace held in memory (@p len bytes of @p text, no NUL needed),
 *  named @p name in its messages: what hl_trace_load does with a file's
 *  bytes (the fuzzer feeds the reader this way). */
hl_trace_t *hl_trace_parse(const char *name, const char *text, size_t len);
#endif
