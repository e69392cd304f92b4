/* heaplab's stand-in for the parts of glibc's test support library that
   the vendored malloc tests use (written for heaplab from what those
   tests call; not glibc's code).  Every test is one translation unit, so
   everything here is static.  A helper whose call fails ends the test
   with status 1 and one line saying which call failed.  */
#ifndef HL_LIBC_STANDIN_H
#define HL_LIBC_STANDIN_H

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* seconds the driver gives a test; the tests that run for a fixed time
   run for one second less (the script's timeout is the real limit) */
#define DEFAULT_TIMEOUT 2

static int standin_failures;

static void
support_record_failure (void)
{
  standin_failures++;
}

static void __attribute__ ((noreturn, format (printf, 3, 4)))
standin_exit1 (const char *file, int line, const char *fmt, ...)
{
  va_list ap;
  fflush (stdout);
  fprintf (stderr, "%s:%d: error: ", file, line);
  va_start (ap, fmt);
  vfprintf (stderr, fmt, ap);
  va_end (ap);
  fputc ('\n', stderr);
  exit (1);
}

#define FAIL_EXIT1(...) standin_exit1 (__FILE__, __LINE__, __VA_ARGS__)
#define FAIL(...)                                                       \
  (support_record_failure (),                                           \
   fprintf (stderr, "%s:%d: error: ", __FILE__, __LINE__),              \
   fprintf (stderr, __VA_ARGS__), fputc ('\n', stderr))
#define FAIL_RET(...) do { FAIL (__VA_ARGS__); return 1; } while (0)
#define TEST_VERIFY(e)                                                  \
  ((e) ? (void) 0                                                       \
       : (void) FAIL ("test verify failed: %s", #e))
#define TEST_VERIFY_EXIT(e)                                             \
  ((e) ? (void) 0                                                       \
       : FAIL_EXIT1 ("test verify failed: %s", #e))
#define TEST_COMPARE(a, b)                                              \
  ((long long) (a) == (long long) (b) ? (void) 0                        \
   : (void) FAIL ("%s == %s: %lld != %lld", #a, #b,                     \
                  (long long) (a), (long long) (b)))

#ifndef TEMP_FAILURE_RETRY
#define TEMP_FAILURE_RETRY(e)                                           \
  (__extension__ ({ long r_; do r_ = (long) (e);                        \
                    while (r_ == -1L && errno == EINTR); r_; }))
#endif

/* async-signal-safe: the fork tests call it from a handler */
static void
write_message (const char *s)
{
  ssize_t r = write (STDOUT_FILENO, s, strlen (s));
  (void) r;
}

static void *
xmalloc (size_t n)
{
  void *p = malloc (n);
  if (p == NULL)
    FAIL_EXIT1 ("malloc (%zu): %m", n);
  return p;
}

static void *
xcalloc (size_t n, size_t m)
{
  void *p = calloc (n, m);
  if (p == NULL)
    FAIL_EXIT1 ("calloc (%zu, %zu): %m", n, m);
  return p;
}

/* memory shared with forked children: its own mapping, not the heap */
static void *
support_shared_allocate (size_t n)
{
  void *p = mmap (NULL, n, PROT_READ | PROT_WRITE,
                  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    FAIL_EXIT1 ("mmap (shared, %zu): %m", n);
  return p;
}

static void
support_shared_free (void *p)
{
  (void) p; /* the mapping ends with the process */
}

static void *
xmmap (void *addr, size_t n, int prot, int flags, int fd)
{
  void *p = mmap (addr, n, prot, flags, fd, 0);
  if (p == MAP_FAILED)
    FAIL_EXIT1 ("mmap (%zu bytes): %m", n);
  return p;
}

static int
xopen (const char *path, int flags, mode_t mode)
{
  int fd = open (path, flags, mode);
  if (fd < 0)
    FAIL_EXIT1 ("open (%s): %m", path);
  return fd;
}

static pid_t
xfork (void)
{
  pid_t pid = fork ();
  if (pid < 0)
    FAIL_EXIT1 ("fork: %m");
  return pid;
}

static void
xsignal (int sig, void (*handler) (int))
{
  if (signal (sig, handler) == SIG_ERR)
    FAIL_EXIT1 ("signal (%d): %m", sig);
}

/* pthread calls return the error number; the wrappers check it */
#define STANDIN_PT(call)                                                \
  do { int e_ = (call); if (e_ != 0)                                    \
         { errno = e_; FAIL_EXIT1 ("%s: %m", #call); } } while (0)

static pthread_t
xpthread_create (pthread_attr_t *attr, void *(*fn) (void *), void *arg)
{
  pthread_t t;
  STANDIN_PT (pthread_create (&t, attr, fn, arg));
  return t;
}

static void *
xpthread_join (pthread_t t)
{
  void *r;
  STANDIN_PT (pthread_join (t, &r));
  return r;
}

static void
xpthread_kill (pthread_t t, int sig)
{
  STANDIN_PT (pthread_kill (t, sig));
}

static void
xpthread_barrier_init (pthread_barrier_t *b, pthread_barrierattr_t *a,
                       unsigned n)
{
  STANDIN_PT (pthread_barrier_init (b, a, n));
}

static int
xpthread_barrier_wait (pthread_barrier_t *b)
{
  int e = pthread_barrier_wait (b);
  if (e != 0 && e != PTHREAD_BARRIER_SERIAL_THREAD)
    {
      errno = e;
      FAIL_EXIT1 ("pthread_barrier_wait: %m");
    }
  return e == PTHREAD_BARRIER_SERIAL_THREAD;
}

static void
xpthread_barrier_destroy (pthread_barrier_t *b)
{
  STANDIN_PT (pthread_barrier_destroy (b));
}

static void
xpthread_barrierattr_init (pthread_barrierattr_t *a)
{
  STANDIN_PT (pthread_barrierattr_init (a));
}

static void
xpthread_barrierattr_setpshared (pthread_barrierattr_t *a, int v)
{
  STANDIN_PT (pthread_barrierattr_setpshared (a, v));
}

static void
xpthread_barrierattr_destroy (pthread_barrierattr_t *a)
{
  STANDIN_PT (pthread_barrierattr_destroy (a));
}

/* temporary files, removed when the test exits */
static char *standin_temp[8];
static int standin_ntemp;

static void
standin_remove_temps (void)
{
  for (int i = 0; i < standin_ntemp; i++)
    unlink (standin_temp[i]);
}

static int
create_temp_file (const char *base, char **name)
{
  const char *dir = getenv ("TMPDIR");
  char path[4096];
  snprintf (path, sizeof path, "%s/%sXXXXXX", dir && *dir ? dir : "/tmp",
            base);
  int fd = mkstemp (path);
  if (fd < 0)
    return -1;
  if (standin_ntemp == 0)
    atexit (standin_remove_temps);
  if (standin_ntemp < 8)
    standin_temp[standin_ntemp++] = strdup (path);
  if (name != NULL)
    *name = strdup (path);
  return fd;
}

#endif
