/* heaplab stand-in: see standin.h */
#include <support/standin.h>
