# Policy 'bump': its sources join the core library when configured in.
# regions.rep: the trace of its golden picture of many regions (golden.test).
EXTRA_DIST += policies/bump/regions.rep
if HL_POLICY_BUMP
libhlcore_la_SOURCES += policies/bump/bump.h policies/bump/bump.c

check_PROGRAMS += tests/test_bump
TESTS += tests/test_bump
tests_test_bump_SOURCES = tests/test_bump.c tests/testlib.h tests/testlib.c
tests_test_bump_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_bump_LDADD = libhlcore.la $(CHECK_LIBS)
endif
