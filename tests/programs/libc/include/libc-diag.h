/* heaplab stand-in: glibc's warning-control macros for its tests */
#define DIAG_PUSH_NEEDS_COMMENT _Pragma ("GCC diagnostic push")
#define DIAG_POP_NEEDS_COMMENT _Pragma ("GCC diagnostic pop")
#define DIAG_STR_(x) #x
#define DIAG_PRAGMA_(x) _Pragma (DIAG_STR_ (x))
#define DIAG_IGNORE_NEEDS_COMMENT(version, option) \
  DIAG_PRAGMA_ (GCC diagnostic ignored option)
#define DIAG_IGNORE_Os_NEEDS_COMMENT(version, option) \
  DIAG_PRAGMA_ (GCC diagnostic ignored option)
