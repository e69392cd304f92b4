# Policy 'firstfit': its sources join the core library when configured in.
if HL_POLICY_FIRSTFIT
libhlcore_la_SOURCES += policies/firstfit/firstfit.h policies/firstfit/firstfit.c \
	policies/firstfit/firstfit_blocks.c policies/firstfit/firstfit_list.c \
	policies/firstfit/firstfit_check.c policies/firstfit/firstfit_dot.c \
	policies/firstfit/firstfit_stats.c

check_PROGRAMS += policies/firstfit/test_firstfit
TESTS += policies/firstfit/test_firstfit
policies_firstfit_test_firstfit_SOURCES = policies/firstfit/test_firstfit.c tests/testlib.h tests/testlib.c
policies_firstfit_test_firstfit_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests
policies_firstfit_test_firstfit_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
policies_firstfit_test_firstfit_LDADD = libhlcore.la $(CHECK_LIBS)
endif
