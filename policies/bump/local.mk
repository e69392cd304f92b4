# Policy 'bump': its sources join the core library when configured in.
if HL_POLICY_BUMP
libhlcore_la_SOURCES += policies/bump/bump.h policies/bump/bump.c

check_PROGRAMS += policies/bump/test_bump
TESTS += policies/bump/test_bump
policies_bump_test_bump_SOURCES = policies/bump/test_bump.c tests/testlib.h tests/testlib.c
policies_bump_test_bump_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests
policies_bump_test_bump_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
policies_bump_test_bump_LDADD = libhlcore.la $(CHECK_LIBS)
endif
