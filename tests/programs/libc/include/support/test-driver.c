/* heaplab's stand-in for glibc's test driver (heaplab's own code): runs
   TEST_FUNCTION, or do_test (), and exits 0 when it passed, 77 when it
   says it is unsupported, 1 otherwise.  With EXPECTED_SIGNAL the test
   runs in a child, which must die of that signal.  The driver sets no
   timer: tests/programs/libc_malloc_tests.sh runs every test under timeout(1).  */
#include <support/standin.h>

#ifndef TEST_FUNCTION
#define TEST_FUNCTION do_test ()
#endif

/* TEST_FUNCTION is either a call, do_test (), or the function, do_test */
static int
standin_call (int (*fn) (void))
{
  return fn ();
}

static int
standin_value (int r)
{
  return r;
}

static int
standin_run (void)
{
  int r = _Generic ((TEST_FUNCTION), int (*) (void): standin_call,
                    default: standin_value) (TEST_FUNCTION);
  if (r == 77)
    return 77;
  return r != 0 || standin_failures > 0;
}

int
main (void)
{
  setvbuf (stdout, NULL, _IONBF, 0);
#ifdef EXPECTED_SIGNAL
  pid_t pid = xfork ();
  if (pid == 0)
    _exit (standin_run ());
  int status;
  if (TEMP_FAILURE_RETRY (waitpid (pid, &status, 0)) != pid)
    FAIL_EXIT1 ("waitpid: %m");
  if (!WIFSIGNALED (status) || WTERMSIG (status) != EXPECTED_SIGNAL)
    {
      printf ("error: expected the test to die of signal %d; status %#x\n",
              EXPECTED_SIGNAL, status);
      return 1;
    }
  return 0;
#else
  return standin_run ();
#endif
}
