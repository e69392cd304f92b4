# The book (book/), its labs' texts, the quiz and grade: what the chapters
# say is what the code and the machine do.  The scripts share book_lib.sh.
EXTRA_DIST += tests/book/book_lib.sh

# The question bank: every verifying command agrees with its answer; the
# drill scores scripted answers right; every chapter shows its figures and
# links its code and lab; the quiz's paths drill.
TESTS += tests/book/book_questions.sh tests/book/book_quiz.sh tests/book/book_chapters.sh tests/book/quiz_paths.sh
dist_noinst_SCRIPTS += tests/book/book_questions.sh tests/book/book_quiz.sh tests/book/book_chapters.sh tests/book/quiz_paths.sh
# The index of terms is what book/gen_index.sh writes from the chapters.
TESTS += tests/book/book_index.sh
dist_noinst_SCRIPTS += tests/book/book_index.sh
# The course path, the glossary, the visual language and the answer keys:
# every chapter and lab on the path and cross-referenced both ways; the
# glossary sorted, each term once, linked from every chapter; every block
# state and list style the code draws explained; every lab question and
# prediction answered in the instructor's edition.
TESTS += tests/book/book_path.sh tests/book/book_glossary.sh tests/book/book_visual.sh tests/book/book_answers.sh
dist_noinst_SCRIPTS += tests/book/book_path.sh tests/book/book_glossary.sh tests/book/book_visual.sh tests/book/book_answers.sh
# Each policy chapter walks book/traces/explain.rep with replay --explain
# output generated at build time (book/gen_explain.sh).
TESTS += tests/book/book_explain.sh
dist_noinst_SCRIPTS += tests/book/book_explain.sh
# Chapters 1-8 teach from generated examples and embed their steppers
# (tests/book/book_examples.sh); one embedded stepper is driven in headless
# Chromium (tests/book/book_stepper_browser.sh, with tests/visualize/browser_lib.sh).
TESTS += tests/book/book_examples.sh tests/book/book_stepper_browser.sh
dist_noinst_SCRIPTS += tests/book/book_examples.sh tests/book/book_stepper_browser.sh
EXTRA_DIST += tests/book/book_stepper_browser.mjs
# Chapters 9 to 14's worked examples and steppers (book/gen_worked.sh).
TESTS += tests/book/book_worked.sh
dist_noinst_SCRIPTS += tests/book/book_worked.sh
# The student's handout (make dist-student, book/editions.mk): built,
# searched for every answer, its labs built.
TESTS += tests/book/book_editions.sh
dist_noinst_SCRIPTS += tests/book/book_editions.sh

# the book's cost model (chapter 17): bench/costs counted, never timed: the
# faults a page, the tcache's instructions on and off, in glibc and in bins
TESTS += tests/book/book_costs.sh
EXTRA_DIST += tests/book/book_costs.sh
# the book's chapter 18 (containers, the allocators' own reports,
# transparent huge pages): bench/reports in a cgroup v1 memory group, under
# each real allocator and heaplab run --stats, with and without
# MADV_HUGEPAGE; never timed, each part skipped where the machine cannot
TESTS += tests/book/book_reports.sh
EXTRA_DIST += tests/book/book_reports.sh
# the book's chapter 12, a Python service step by step:
# bench/diagnose/service.py on the real CPython 3.11 (counts, tracemalloc's
# first line, a trim), heaplab diagnose's first row and the real jemalloc
# against the chapter's figures; RSS by order only, never timed
TESTS += tests/book/book_python.sh
EXTRA_DIST += tests/book/book_python.sh
# the book's chapter 7, glibc after 2.36: bench/glibcver's fastbin reports,
# M_MXFAST and a large chunk's tcache on glibc 2.36 and on bins as 2.36
# (the same output), 2.42 and 2.43 (as their malloc.c says)
TESTS += tests/book/book_glibc.sh
EXTRA_DIST += tests/book/book_glibc.sh

# The labs (exercises/): every lab README states its deliverables and a
# rubric adding up to the total of chapter 15's "Grading the labs", in the
# student's edition too.
TESTS += tests/book/lab_rubrics.sh
dist_noinst_SCRIPTS += tests/book/lab_rubrics.sh
# heaplab grade: each part of the malloc lab's score sheet, firstfit against
# the student skeleton (valgrind counts the instructions).
TESTS += tests/book/grade_components.sh
EXTRA_DIST += tests/book/grade_components.sh
