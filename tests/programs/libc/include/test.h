/* heaplab's stand-in for libc-test's test.h and its helpers (heaplab's
   own code, written from what the malloc regressions call):
   t_error records a failure, t_status is the exit status,
   t_vmfill fills the address space with inaccessible mappings (and
   reports the largest), t_memfill leaves the heap no memory.  */
#ifndef HL_LIBC_TEST_H
#define HL_LIBC_TEST_H
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>

static int t_status;

static void __attribute__ ((format (printf, 1, 2)))
t_error (const char *fmt, ...)
{
  va_list ap;
  t_status = 1;
  va_start (ap, fmt);
  vfprintf (stdout, fmt, ap);
  va_end (ap);
}

/* Map PROT_NONE regions, halving the size on each refusal, until not even
   a page fits.  Returns the number of mappings (-1 if none); *p and *n
   get the largest.  FAULT is accepted and ignored: nothing is touched.  */
static int
t_vmfill (void **p, size_t *n, int fault)
{
  (void) fault;
  int count = 0;
  size_t best = 0;
  void *bestp = 0;
  for (size_t size = (size_t) 1 << 46; size >= 4096; size /= 2)
    for (;;)
      {
        void *q = mmap (0, size, PROT_NONE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (q == MAP_FAILED)
          break;
        count++;
        if (size > best)
          {
            best = size;
            bestp = q;
          }
      }
  if (p)
    *p = bestp;
  if (n)
    *n = best;
  return count ? count : -1;
}

/* No address space left, no data segment allowed, and whatever the
   allocator kept in reserve used up by small allocations.  */
static int
t_memfill (void)
{
  int r = 0;
  if (t_vmfill (0, 0, 0) < 0)
    r = -1;
  struct rlimit rl = { 0, 0 };
  if (getrlimit (RLIMIT_DATA, &rl) == 0)
    {
      rl.rlim_cur = 0;
      if (setrlimit (RLIMIT_DATA, &rl) != 0)
        r = -1;
    }
  else
    r = -1;
  if (r == 0)
    while (malloc (1))
      ;
  return r;
}
#endif
