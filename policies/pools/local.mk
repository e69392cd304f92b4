# Policy 'pools': its sources join the core library when configured in.
if HL_POLICY_POOLS
libhlcore_la_SOURCES += policies/pools/pools.h policies/pools/pools_fast.h policies/pools/pools.c \
	policies/pools/pools_arena.c policies/pools/pools_map.c \
	policies/pools/pools_check.c policies/pools/pools_dot.c \
	policies/pools/pools_stats.c policies/pools/pools_lock.c

check_PROGRAMS += policies/pools/test_pools
TESTS += policies/pools/test_pools
HL_THREADED_TESTS += policies/pools/test_pools
policies_pools_test_pools_SOURCES = policies/pools/test_pools.c tests/testlib.h tests/testlib.c
policies_pools_test_pools_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests
policies_pools_test_pools_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
policies_pools_test_pools_LDADD = libhlcore.la $(CHECK_LIBS)
endif
