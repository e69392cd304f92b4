# Policy 'firstfit': its sources join the core library when configured in.
if HL_POLICY_FIRSTFIT
libhlcore_la_SOURCES += policies/firstfit/firstfit.h policies/firstfit/firstfit.c \
	policies/firstfit/firstfit_blocks.c policies/firstfit/firstfit_list.c \
	policies/firstfit/firstfit_check.c policies/firstfit/firstfit_dot.c \
	policies/firstfit/firstfit_stats.c
endif
# misuse.table: what it does with the classic heap mistakes (tests/programs/misuse.sh).
EXTRA_DIST += policies/firstfit/misuse.table
# libc_tests.table: its departures in the C libraries' malloc tests (tests/programs/libc_malloc_tests.sh).
EXTRA_DIST += policies/firstfit/libc_tests.table
