# Policy 'pools': its sources join the core library when configured in.
if HL_POLICY_POOLS
libhlcore_la_SOURCES += policies/pools/pools.h policies/pools/pools_fast.h policies/pools/pools.c \
	policies/pools/pools_arena.c policies/pools/pools_map.c \
	policies/pools/pools_check.c policies/pools/pools_dot.c \
	policies/pools/pools_stats.c policies/pools/pools_lock.c

# its Check suite (policies/local.mk wires test_pools.c) starts threads
HL_THREADED_TESTS += policies/pools/test_pools
endif
# misuse.table: what it does with the classic heap mistakes (tests/programs/misuse.sh).
EXTRA_DIST += policies/pools/misuse.table
# libc_tests.table: its departures in the C libraries' malloc tests (tests/programs/libc_malloc_tests.sh).
EXTRA_DIST += policies/pools/libc_tests.table
