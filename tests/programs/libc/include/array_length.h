/* heaplab stand-in: number of elements of an array */
#define array_length(a) (sizeof (a) / sizeof ((a)[0]))
