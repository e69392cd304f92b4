# Policy 'student': its sources join the core library when configured in.
if HL_POLICY_STUDENT
libhlcore_la_SOURCES += policies/student/student.h policies/student/student.c

check_PROGRAMS += tests/test_student
TESTS += tests/test_student
tests_test_student_SOURCES = tests/test_student.c tests/testlib.h tests/testlib.c
tests_test_student_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_student_LDADD = libhlcore.la $(CHECK_LIBS)
endif
