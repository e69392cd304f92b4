# The Check suites (C).  Every one links testlib (the policies' suites too:
# policies/gen-local-mk.sh adds testlib and testlib_events to each, and
# slab's and percpu's side_state).

# Suites that run against every compiled-in policy.
check_PROGRAMS += tests/unit/test_conformance tests/unit/test_core
TESTS += tests/unit/test_conformance tests/unit/test_core
tests_unit_test_conformance_SOURCES = tests/unit/test_conformance.c tests/unit/testlib.h tests/unit/testlib.c
tests_unit_test_conformance_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_test_conformance_LDADD = libhlcore.la $(CHECK_LIBS)
tests_unit_test_core_SOURCES = tests/unit/test_core.c tests/unit/testlib.h tests/unit/testlib.c
tests_unit_test_core_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_test_core_LDADD = libhlcore.la $(CHECK_LIBS)
# The kernel refusing memory: the page source's fault seam walked through
# every policy's calls (the limits a real program meets are
# tests/programs/limits.sh).
check_PROGRAMS += tests/unit/test_faults
TESTS += tests/unit/test_faults
tests_unit_test_faults_SOURCES = tests/unit/test_faults.c tests/unit/testlib.h tests/unit/testlib.c
tests_unit_test_faults_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_test_faults_LDADD = libhlcore.la $(CHECK_LIBS) -lpthread
# Decision events: each policy's events against its counters.
check_PROGRAMS += tests/unit/test_events
TESTS += tests/unit/test_events
tests_unit_test_events_SOURCES = tests/unit/test_events.c tests/unit/testlib.h tests/unit/testlib.c tests/unit/testlib_events.h tests/unit/testlib_events.c
tests_unit_test_events_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_test_events_LDADD = libhlcore.la $(CHECK_LIBS) -lpthread
# heaplab diagnose's library running the program (diagnose/local.mk), without
# the command: the recordability checks, a program that cannot start, the
# measured run.
check_PROGRAMS += tests/unit/test_diagnose_program
TESTS += tests/unit/test_diagnose_program
tests_unit_test_diagnose_program_SOURCES = tests/unit/test_diagnose_program.c tests/unit/testlib.h tests/unit/testlib.c
tests_unit_test_diagnose_program_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_test_diagnose_program_LDADD = libhldiagnose.la libhlvis.la libhlcore.la $(CHECK_LIBS)
# Which calls of a recorded CPython program reach pymalloc
# (trace/pymalloc_sites.c), and the replay sending the others to pools'
# fallback, given the table or by a recording's "#@front pymalloc".
check_PROGRAMS += tests/unit/test_pymalloc_sites
TESTS += tests/unit/test_pymalloc_sites
tests_unit_test_pymalloc_sites_SOURCES = tests/unit/test_pymalloc_sites.c tests/unit/testlib.h tests/unit/testlib.c
tests_unit_test_pymalloc_sites_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_test_pymalloc_sites_LDADD = libhlcore.la $(CHECK_LIBS)
# The pictures (visualize/local.mk): snapshot facts for every compiled-in
# policy.
check_PROGRAMS += tests/unit/test_visualize
tests_unit_test_visualize_SOURCES = tests/unit/test_visualize.c tests/unit/testlib.h tests/unit/testlib.c
tests_unit_test_visualize_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_test_visualize_LDADD = libhlvis.la libhlcore.la $(CHECK_LIBS)
TESTS += tests/unit/test_visualize
