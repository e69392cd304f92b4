# Policy 'slab': its sources join the core library when configured in.
if HL_POLICY_SLAB
libhlcore_la_SOURCES += policies/slab/slab.h policies/slab/slab_fast.h policies/slab/slab.c \
	policies/slab/slab_sz.c policies/slab/slab_rtree.c policies/slab/slab_extent.c \
	policies/slab/slab_arena.c policies/slab/slab_tcache.c policies/slab/slab_decay.c policies/slab/slab_decay.h \
	policies/slab/slab_check.c policies/slab/slab_stats.c policies/slab/slab_dot.c

# its Check suite (policies/local.mk wires test_slab.c) starts threads
HL_THREADED_TESTS += policies/slab/test_slab
policies_slab_test_slab_SOURCES += tests/unit/side_state.h tests/unit/side_state.c
endif
# misuse.table: what it does with the classic heap mistakes (tests/programs/misuse.sh).
EXTRA_DIST += policies/slab/misuse.table
# libc_tests.table: its departures in the C libraries' malloc tests (tests/programs/libc_malloc_tests.sh).
EXTRA_DIST += policies/slab/libc_tests.table
