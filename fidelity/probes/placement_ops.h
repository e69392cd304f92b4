/* The flat form of a trace that `heaplab fidelity --placement` hands to the
 * placement driver (fidelity/probes/placement.c), and the addresses the
 * driver hands back.  The driver links nothing of heaplab's, so it cannot
 * read a .rep file: the fidelity library reads the trace and writes this
 * form to a file, which the driver maps. */
#ifndef HL_FIDELITY_PLACEMENT_OPS_H
#define HL_FIDELITY_PLACEMENT_OPS_H

#include <stddef.h>
#include <stdint.h>

/** One block operation. */
typedef struct pl_op {
	char kind;     /**< a (malloc), c (calloc), m (memalign), r (realloc), f (free) */
	long id;       /**< the trace's block id, >= 0 */
	size_t size;   /**< bytes (per element for c) */
	size_t aux;    /**< c: element count; m: alignment */
	char model_only; /**< 1: performed on the model side only, before the
			      trace (what the real library does at load, which
			      the model's library does not): never compared */
} pl_op_t;

/** The ops file: this head, then nops pl_op_t. */
typedef struct pl_ops {
	uint64_t magic; /**< PL_MAGIC */
	size_t nops;
	long nids;      /**< largest block id + 1 */
	pl_op_t op[];
} pl_ops_t;

/** The addresses file: one uintptr_t per op, the block the op returned (0
 *  for a free, or for an op that failed). */
enum { PL_MAGIC = 0x706c6163656d6e74 };

#endif
