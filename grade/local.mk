# heaplab grade as a library: the traces to grade (grade_traces.c), each
# replayed on the graded and the reference policy in child processes and
# counted by callgrind (grade_run.c), the policy's heap checker judged on a
# sound heap and on damaged ones (grade_checker.c), and the score sheet
# (grade_sheet.c).  It draws the best layouts through libhlvis, which it
# sits above; cli/cmd_grade.c only parses the arguments and calls it.
noinst_LTLIBRARIES += libhlgrade.la
libhlgrade_la_SOURCES = grade/grade.h grade/grade_traces.c grade/grade_run.c grade/grade_checker.c \
	grade/grade_sheet.c
libhlgrade_la_CPPFLAGS = $(AM_CPPFLAGS) -DHL_BOOK_DIR='"$(abs_top_srcdir)/book"'
