# Suites that run against every compiled-in policy.
check_PROGRAMS += tests/test_conformance tests/test_core
TESTS += tests/test_conformance tests/test_core
tests_test_conformance_SOURCES = tests/test_conformance.c tests/testlib.h tests/testlib.c
tests_test_conformance_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_conformance_LDADD = libhlcore.la $(CHECK_LIBS)
tests_test_core_SOURCES = tests/test_core.c tests/testlib.h tests/testlib.c
tests_test_core_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_core_LDADD = libhlcore.la $(CHECK_LIBS)

# Real programs and every shipped trace, under every policy.
check_PROGRAMS += tests/mt_program
tests_mt_program_SOURCES = tests/mt_program.c
tests_mt_program_LDADD = -lpthread
TESTS += tests/real_programs.sh tests/replay_traces.sh tests/bad_input.sh
EXTRA_DIST += tests/real_programs.sh tests/replay_traces.sh tests/bad_input.sh

# bins next to the real glibc: peak bytes trace by trace (bench/sysreplay).
TESTS += tests/glibc_side_by_side.sh
EXTRA_DIST += tests/glibc_side_by_side.sh

# heaplab fidelity: every row of every family (each model against its real
# allocator), and the runner itself on rows made for the test.
TESTS += tests/fidelity.sh tests/fidelity_runner.sh
EXTRA_DIST += tests/fidelity.sh tests/fidelity_runner.sh tests/fidelity/glibc.rows \
	tests/fidelity/jemalloc.rows tests/fidelity/damaged/glibc.rows
