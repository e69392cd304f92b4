# Policy 'student': its sources join the core library when configured in.
if HL_POLICY_STUDENT
libhlcore_la_SOURCES += policies/student/student.h policies/student/student.c
endif
# libc_tests.table: its departures in the C libraries' malloc tests (tests/programs/libc_malloc_tests.sh).
EXTRA_DIST += policies/student/libc_tests.table
