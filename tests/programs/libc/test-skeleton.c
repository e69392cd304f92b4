/* heaplab stand-in for glibc's old test skeleton: the older tests include
   "../test-skeleton.c", which is now the driver.  */
#include <support/test-driver.c>
