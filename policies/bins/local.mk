# Policy 'bins': its sources join the core library when configured in.
if HL_POLICY_BINS
libhlcore_la_SOURCES += policies/bins/bins.h policies/bins/bins.c \
	policies/bins/bins_arena.c policies/bins/bins_sys.c policies/bins/bins_list.c \
	policies/bins/bins_tcache.h policies/bins/bins_fast.h policies/bins/bins_tcache.c \
	policies/bins/bins_check.c policies/bins/bins_stats.c policies/bins/bins_dot.c \
	policies/bins/bins_libc.c

check_PROGRAMS += policies/bins/test_bins
TESTS += policies/bins/test_bins
HL_THREADED_TESTS += policies/bins/test_bins
policies_bins_test_bins_SOURCES = policies/bins/test_bins.c tests/testlib.h tests/testlib.c
policies_bins_test_bins_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests
policies_bins_test_bins_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
policies_bins_test_bins_LDADD = libhlcore.la $(CHECK_LIBS)
endif
