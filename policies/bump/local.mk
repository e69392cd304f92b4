# Policy 'bump': its sources join the core library when configured in.
# regions.rep: the trace of its golden picture of many regions (golden.test).
# misuse.table: what it does with the classic heap mistakes (tests/programs/misuse.sh).
EXTRA_DIST += policies/bump/regions.rep policies/bump/misuse.table
if HL_POLICY_BUMP
libhlcore_la_SOURCES += policies/bump/bump.h policies/bump/bump.c
# heaplab adversary finds its worst case: waves, four times the bound and more
TESTS += policies/bump/bump_adversary.sh
# its pictures of many regions and of many small blocks stay readable
TESTS += policies/bump/bump_readable.sh
endif
EXTRA_DIST += policies/bump/bump_adversary.sh policies/bump/bump_readable.sh
# libc_tests.table: its departures in the C libraries' malloc tests (tests/programs/libc_malloc_tests.sh).
EXTRA_DIST += policies/bump/libc_tests.table
