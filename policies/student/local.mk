# Policy 'student': its sources join the core library when configured in.
if HL_POLICY_STUDENT
libhlcore_la_SOURCES += policies/student/student.h policies/student/student.c

check_PROGRAMS += policies/student/test_student
TESTS += policies/student/test_student
policies_student_test_student_SOURCES = policies/student/test_student.c tests/testlib.h tests/testlib.c
policies_student_test_student_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests
policies_student_test_student_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
policies_student_test_student_LDADD = libhlcore.la $(CHECK_LIBS)
endif
