# Policy 'slab': its sources join the core library when configured in.
if HL_POLICY_SLAB
libhlcore_la_SOURCES += policies/slab/slab.h policies/slab/slab_fast.h policies/slab/slab.c \
	policies/slab/slab_sz.c policies/slab/slab_rtree.c policies/slab/slab_extent.c \
	policies/slab/slab_arena.c policies/slab/slab_tcache.c policies/slab/slab_decay.c policies/slab/slab_decay.h \
	policies/slab/slab_check.c policies/slab/slab_stats.c policies/slab/slab_dot.c

check_PROGRAMS += tests/test_slab
TESTS += tests/test_slab
tests_test_slab_SOURCES = tests/test_slab.c tests/testlib.h tests/testlib.c tests/side_state.h tests/side_state.c
tests_test_slab_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_slab_LDADD = libhlcore.la $(CHECK_LIBS)
endif
