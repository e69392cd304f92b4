/**
 * @file student.h
 * @brief The `student` policy: the skeleton of a malloc-lab assignment.
 *
 * This is the starting point you complete, like the `mm.c` of the CMU
 * malloc lab.  As shipped it is correct but poor: an *implicit* free list
 * (every block, live or free, is found by walking from the first one),
 * first fit, no splitting, no coalescing, nothing ever given back.  It
 * never crashes and `heaplab grade --policy=student` scores it low.  Each
 * `TODO(student)` in student.c is a step that raises the score.
 *
 * Glossary
 *   block    a run of heap bytes [b, b + size) with a header word at b and
 *            a footer word at b + size - 8 (both hold size | alloc bit)
 *   payload  what the program gets: b + 8, always 16-byte aligned
 *   lo       first block (brk base + 8, so payloads land on 16)
 *   hi       end of the last block; the epilogue word sits at hi
 *   top      [hi, break - 8): space the break already covers, not yet a
 *            block ("the wilderness"); new blocks are carved from it
 *   asize    block size for a request n: max(MIN, round16(n + 16))
 *   MIN      32 bytes: header + 16 payload bytes + footer
 *
 * The heap (one emulated program break):
 *
 *   base lo                                        hi            break
 *   ├─8─┼──────┬────────┬──────┬──────────────────┼─8─┬─────────┤
 *   │pad│ live │  free  │ live │ live             │epi│   top   │
 *   └───┴──────┴────────┴──────┴──────────────────┴───┴─────────┘
 *         ▲ malloc walks every block from lo (implicit list, first fit)
 *
 *   one block:  │ size|a │ payload ........................ │ size|a │
 *               b        b+8                          b+size-8      b+size
 *
 * Layers (top to bottom: tests/house/layers.sh checks this list)
 *   student.c                the whole policy
 *   student.h                types
 *
 * Invariants (for st_check to check, under the lock: TODO(student))
 *   lo = base + 8,  lo ≤ hi,  hi + 8 ≤ break
 *   Σ size(b) over every block from lo  = hi - lo
 *   size(b) ≡ 0 (mod 16),  size(b) ≥ MIN,  (b + 8) ≡ 0 (mod 16)
 *   header(b) = footer(b)
 *   word at hi = 0 | 1                    (epilogue: size 0, allocated)
 *   TODO(student), once free coalesces:   ¬free(b) ∨ ¬free(next(b))
 */
#ifndef HL_STUDENT_H
#define HL_STUDENT_H

#include <pthread.h>
#include <stdint.h>
#include "policy.h"
#include "os.h"

/** Everything the policy knows about one heap (lives in a metadata page). */
typedef struct st_state {
	hl_heap_t *heap;        /**< the heap this state belongs to; set by init */
	hl_os_t *os;            /**< its page source; set by init */
	pthread_mutex_t lock;   /**< guards every field below and the heap bytes */
	hl_brk_t brk;           /**< the program break; moved by st_extend */
	char *lo;               /**< first block; set once by init */
	char *hi;               /**< end of the last block; raised by carving */
	/* counters, for `heaplab replay --stats` (under lock) */
	uint64_t blocks;        /**< blocks between lo and hi */
	uint64_t free_blocks;   /**< of those, free */
	uint64_t free_bytes;    /**< bytes in free blocks */
	uint64_t visited;       /**< blocks looked at by fit searches */
	uint64_t extends;       /**< times the break moved up */
} st_state_t;

/** The policy table of `student`, defined at the end of student.c: its
 *  name, options and the st_* entry points.  The core finds it through
 *  its list of compiled-in policies (configure --with-policy=student). */
extern const hl_policy_t hl_policy_student;

#endif
