# Policy 'bins': its sources join the core library when configured in.
if HL_POLICY_BINS
libhlcore_la_SOURCES += policies/bins/bins.h policies/bins/bins.c \
	policies/bins/bins_arena.c policies/bins/bins_sys.c policies/bins/bins_list.c \
	policies/bins/bins_tcache.h policies/bins/bins_fast.h policies/bins/bins_tcache.c \
	policies/bins/bins_check.c policies/bins/bins_stats.c policies/bins/bins_dot.c \
	policies/bins/bins_libc.c

# its Check suite (policies/local.mk wires test_bins.c) starts threads
HL_THREADED_TESTS += policies/bins/test_bins

# beside the real glibc: peak bytes trace by trace (bench/sysreplay), and
# nine threads out of memory under an address-space limit
TESTS += policies/bins/glibc_side_by_side.sh policies/bins/bins_oom_threads.sh
endif
EXTRA_DIST += policies/bins/glibc_side_by_side.sh policies/bins/bins_oom_threads.sh
# misuse.table: what it does with the classic heap mistakes (tests/programs/misuse.sh).
EXTRA_DIST += policies/bins/misuse.table
