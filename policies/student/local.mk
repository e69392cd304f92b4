# Policy 'student': its sources join the core library when configured in.
if HL_POLICY_STUDENT
libhlcore_la_SOURCES += policies/student/student.h policies/student/student.c
endif
