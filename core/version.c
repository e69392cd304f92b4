/* The library's version string (libheaplab's own translation unit). */
#include "config.h"
#include "heaplab.h"

HL_API const char *hl_version(void);

const char *hl_version(void)
{
	return PACKAGE_VERSION;
}
