# Policy 'buddy': its sources join the core library when configured in.
if HL_POLICY_BUDDY
libhlcore_la_SOURCES += policies/buddy/buddy.h policies/buddy/buddy.c \
	policies/buddy/buddy_view.c policies/buddy/buddy_block.c
endif
# misuse.table: what it does with the classic heap mistakes (tests/programs/misuse.sh).
EXTRA_DIST += policies/buddy/misuse.table
# libc_tests.table: its departures in the C libraries' malloc tests (tests/programs/libc_malloc_tests.sh).
EXTRA_DIST += policies/buddy/libc_tests.table
