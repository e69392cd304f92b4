/* What the preload library's files share (shim.c, malloc_api.c). */
#ifndef HL_SHIM_H
#define HL_SHIM_H

#include "heaplab.h"

/** The preload library's default heap, built if need be (shim.c); NULL
 *  while this thread is building it or when it could not be built. */
hl_heap_t *hl_shim_heap(void);

#endif
