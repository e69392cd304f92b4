/* heaplab stand-in: the alignment glibc's malloc promises on x86-64
   (2 * sizeof (size_t), as long double needs 16) */
#include <stddef.h>
#define SIZE_SZ (sizeof (size_t))
#define MALLOC_ALIGNMENT (2 * SIZE_SZ)
#define MALLOC_ALIGN_MASK (MALLOC_ALIGNMENT - 1)
