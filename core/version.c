/* The library's version string (libheaplab's own translation unit). */
#include "config.h"
#include "heaplab.h"

HL_API const char *hl_version(void);

const char *hl_version(void)
{
	return PACKAGE_VERSION;
}

/* libheaplab never replaces malloc: there is no default heap here (the
 * preload library's own definition is in shim/shim.c). */
hl_heap_t *hl_default_heap(void)
{
	return NULL;
}
