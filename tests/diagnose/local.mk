# The recorder and heaplab diagnose, and the meters of bench/accuracy.  The
# C files here are the programs they record.

# heaplab diagnose: causes of a hand-built recording (hand.rep), bad input,
# a program recorded with its sites (anchors.c)
check_PROGRAMS += tests/diagnose/diagnose_anchors
tests_diagnose_diagnose_anchors_SOURCES = tests/diagnose/anchors.c
tests_diagnose_diagnose_anchors_CFLAGS = $(AM_CFLAGS) -fno-builtin -g
# and one whose memory comes back, for --verify (breathe.c)
check_PROGRAMS += tests/diagnose/diagnose_breathe
tests_diagnose_diagnose_breathe_SOURCES = tests/diagnose/breathe.c
tests_diagnose_diagnose_breathe_CFLAGS = $(AM_CFLAGS) -fno-builtin
TESTS += tests/diagnose/diagnose.sh
EXTRA_DIST += tests/diagnose/diagnose.sh tests/diagnose/hand.rep
# a default CPython program: the coverage line, its layers, pymalloc modelled
TESTS += tests/diagnose/diagnose_python.sh
EXTRA_DIST += tests/diagnose/diagnose_python.sh
# a large buffer written in part (sort): the recorder's #@touched, replayed
TESTS += tests/diagnose/diagnose_touched.sh
EXTRA_DIST += tests/diagnose/diagnose_touched.sh
# each real allocator's own memory at start, added to its predictions (perl)
TESTS += tests/diagnose/diagnose_own.sh
EXTRA_DIST += tests/diagnose/diagnose_own.sh
# bench/accuracy/run.py: its arguments and one program of its corpus end to end
TESTS += tests/diagnose/accuracy.sh tests/diagnose/peak_final.sh
EXTRA_DIST += tests/diagnose/accuracy.sh tests/diagnose/peak_final.sh
# thread exit recorded and replayed, against glibc's arenas (waves.c)
check_PROGRAMS += tests/diagnose/diagnose_waves
tests_diagnose_diagnose_waves_SOURCES = tests/diagnose/waves.c
tests_diagnose_diagnose_waves_CFLAGS = $(AM_CFLAGS) -fno-builtin -pthread
TESTS += tests/diagnose/thread_exit.sh
EXTRA_DIST += tests/diagnose/thread_exit.sh

# The recorder's pace: the program's timed waits stretched by its slowdown.
check_PROGRAMS += tests/diagnose/record_pace_probe
tests_diagnose_record_pace_probe_SOURCES = tests/diagnose/record_pace_probe.c
tests_diagnose_record_pace_probe_LDADD = -lpthread
TESTS += tests/diagnose/record_pace.sh
EXTRA_DIST += tests/diagnose/record_pace.sh

# A sampled recording: one block in K with all its ops, a budget that
# halves the rate, the error stated against the whole recording's replay.
TESTS += tests/diagnose/sampling.sh
EXTRA_DIST += tests/diagnose/sampling.sh
