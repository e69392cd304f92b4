# Policy 'sharded': its sources join the core library when configured in.
if HL_POLICY_SHARDED
libhlcore_la_SOURCES += policies/sharded/sharded.h policies/sharded/sharded.c \
	policies/sharded/sharded_heap.h policies/sharded/sharded_heap.c \
	policies/sharded/sharded_segment.h policies/sharded/sharded_segment.c \
	policies/sharded/sharded_page.h policies/sharded/sharded_page.c \
	policies/sharded/sharded_fast.h \
	policies/sharded/sharded_check.c policies/sharded/sharded_stats.c \
	policies/sharded/sharded_dot.c policies/sharded/sharded_cache.c

check_PROGRAMS += policies/sharded/test_sharded
TESTS += policies/sharded/test_sharded
HL_THREADED_TESTS += policies/sharded/test_sharded
policies_sharded_test_sharded_SOURCES = policies/sharded/test_sharded.c tests/testlib.h tests/testlib.c
policies_sharded_test_sharded_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests
policies_sharded_test_sharded_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
policies_sharded_test_sharded_LDADD = libhlcore.la $(CHECK_LIBS)
endif
