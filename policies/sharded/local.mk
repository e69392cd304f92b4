# Policy 'sharded': its sources join the core library when configured in.
if HL_POLICY_SHARDED
libhlcore_la_SOURCES += policies/sharded/sharded.h policies/sharded/sharded.c \
	policies/sharded/sharded_heap.h policies/sharded/sharded_heap.c \
	policies/sharded/sharded_segment.h policies/sharded/sharded_segment.c \
	policies/sharded/sharded_page.h policies/sharded/sharded_page.c \
	policies/sharded/sharded_fast.h \
	policies/sharded/sharded_check.c policies/sharded/sharded_stats.c \
	policies/sharded/sharded_dot.c policies/sharded/sharded_cache.c

# its Check suite (policies/local.mk wires test_sharded.c) starts threads
HL_THREADED_TESTS += policies/sharded/test_sharded
endif
# misuse.table: what it does with the classic heap mistakes (tests/programs/misuse.sh).
EXTRA_DIST += policies/sharded/misuse.table
# libc_tests.table: its departures in the C libraries' malloc tests (tests/programs/libc_malloc_tests.sh).
EXTRA_DIST += policies/sharded/libc_tests.table
