# heaplab quiz as a library: the question bank read and checked
# (quiz_bank.c), an answer judged (quiz_answer.c), the drill (quiz_drill.c),
# --verify (quiz_verify.c) and the which-path questions of a trace
# (quiz_paths.c, on libhlvis's decision paths, which it sits above);
# cli/cmd_quiz.c only parses the arguments and calls it.  The bank is looked
# for in the source tree's book/ and in $(pkgdatadir), where book/local.mk
# installs it.
noinst_LTLIBRARIES += libhlquiz.la
libhlquiz_la_SOURCES = quiz/quiz.h quiz/quiz.c quiz/quiz_drill.c quiz/quiz_verify.c quiz/quiz_paths.c \
	quiz/quiz_bank.c quiz/quiz_answer.c quiz/quiz_text.c
libhlquiz_la_CPPFLAGS = $(AM_CPPFLAGS) -DHL_BOOK_DIR='"$(abs_top_srcdir)/book"' -DHL_PKGDATADIR='"$(pkgdatadir)"'
