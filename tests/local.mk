# Suites that run against every compiled-in policy.
check_PROGRAMS += tests/test_conformance tests/test_core
TESTS += tests/test_conformance tests/test_core
tests_test_conformance_SOURCES = tests/test_conformance.c tests/testlib.h tests/testlib.c
tests_test_conformance_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_conformance_LDADD = libhlcore.la $(CHECK_LIBS)
tests_test_core_SOURCES = tests/test_core.c tests/testlib.h tests/testlib.c
tests_test_core_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_core_LDADD = libhlcore.la $(CHECK_LIBS)
# The kernel refusing memory: the page source's fault seam walked through
# every policy's calls (tests/test_faults.c), and the limits a real program
# meets, RLIMIT_DATA and RLIMIT_AS, beside glibc (tests/limits.sh).
check_PROGRAMS += tests/test_faults tests/limits_program
TESTS += tests/test_faults tests/limits.sh
EXTRA_DIST += tests/limits.sh
tests_test_faults_SOURCES = tests/test_faults.c tests/testlib.h tests/testlib.c
tests_test_faults_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_faults_LDADD = libhlcore.la $(CHECK_LIBS) -lpthread
tests_limits_program_SOURCES = tests/limits_program.c
tests_limits_program_LDADD = -lpthread -ldl
# never instrumented: the same binary runs on the real glibc as the reference
tests_limits_program_CFLAGS = $(HL_CFLAGS)
# The rest of the C library's malloc API (mallinfo, mallinfo2, mallopt,
# malloc_stats, malloc_info, malloc_trim) under each policy beside its real
# allocator (tests/malloc_api.sh, with tests/malloc_api_probe.c).
check_PROGRAMS += tests/malloc_api_probe
TESTS += tests/malloc_api.sh
EXTRA_DIST += tests/malloc_api.sh
tests_malloc_api_probe_SOURCES = tests/malloc_api_probe.c
tests_malloc_api_probe_LDADD = -lpthread
# never instrumented: the same binary runs on the real allocators
tests_malloc_api_probe_CFLAGS = $(HL_CFLAGS)
# Decision events: each policy's events against its counters.
check_PROGRAMS += tests/test_events
TESTS += tests/test_events
tests_test_events_SOURCES = tests/test_events.c tests/testlib.h tests/testlib.c tests/testlib_events.h tests/testlib_events.c
tests_test_events_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_test_events_LDADD = libhlcore.la $(CHECK_LIBS) -lpthread

# What the test scripts share (the compiled-in policies, the sanitizer
# skip, temporary folders, where the build is), and the check that no
# script repeats it.
TESTS += tests/lib_used.sh
EXTRA_DIST += tests/lib.sh tests/lib_used.sh

# Real programs and every shipped trace, under every policy.
check_PROGRAMS += tests/mt_program
tests_mt_program_SOURCES = tests/mt_program.c
tests_mt_program_LDADD = -lpthread
# never instrumented: it is the system allocator's reference run (and a
# sanitizer's malloc can deadlock in a child forked while threads allocate)
tests_mt_program_CFLAGS = $(HL_CFLAGS)
# the same program on a heaplab heap through the API (no LD_PRELOAD)
check_PROGRAMS += tests/mt_api
tests_mt_api_SOURCES = tests/mt_program.c
tests_mt_api_CPPFLAGS = $(AM_CPPFLAGS) -DMT_PROGRAM_API
tests_mt_api_LDADD = libhlcore.la
TESTS += tests/real_programs.sh tests/python_regrtest.sh tests/replay_traces.sh tests/bad_input.sh
EXTRA_DIST += tests/real_programs.sh tests/python_regrtest.sh tests/replay_traces.sh tests/bad_input.sh
# every command of README.md and of heaplab(1)'s EXAMPLES, run as written in a copy of the tree
TESTS += tests/readme_commands.sh
EXTRA_DIST += tests/readme_commands.sh
# heaplab replay --explain[=json] under every policy
TESTS += tests/explain.sh
EXTRA_DIST += tests/explain.sh
# heaplab bound: the bound against optima known by construction or search
TESTS += tests/bound.sh tests/adversary.sh
EXTRA_DIST += tests/bound.sh tests/bound_optimum.py tests/adversary.sh

# Classic mistakes under every policy, with and without debug mode, next to
# the real allocators (tests/misuse.sh says what each cell expects).
check_PROGRAMS += tests/misuse_program
tests_misuse_program_SOURCES = tests/misuse_program.c
if HL_HAVE_PYEMBED
# the same mistakes on CPython's own pymalloc, beside `pools`
check_PROGRAMS += tests/misuse_pymalloc
tests_misuse_pymalloc_SOURCES = tests/misuse_program.c
tests_misuse_pymalloc_CPPFLAGS = $(AM_CPPFLAGS) $(PYEMBED_CFLAGS) -DMISUSE_PYMALLOC
tests_misuse_pymalloc_LDADD = $(PYEMBED_LIBS)
endif
TESTS += tests/misuse.sh

# the preload library's fast path keeps the operation counters right
check_PROGRAMS += tests/shim_counts
tests_shim_counts_SOURCES = tests/shim_counts.c
# the calls are what it counts: the compiler may not drop a malloc/free pair
tests_shim_counts_CFLAGS = $(AM_CFLAGS) -fno-builtin
TESTS += tests/shim_counts.sh
EXTRA_DIST += tests/shim_counts.sh

# The recorder's pace: the program's timed waits stretched by its slowdown.
check_PROGRAMS += tests/record_pace_probe
tests_record_pace_probe_SOURCES = tests/record_pace_probe.c
tests_record_pace_probe_LDADD = -lpthread
TESTS += tests/record_pace.sh tests/sampling.sh
EXTRA_DIST += tests/record_pace.sh tests/sampling.sh
EXTRA_DIST += tests/misuse.sh tests/misuse/double-free.rep

# the book's cost model (chapter 17): bench/costs counted, never timed: the
# faults a page, the tcache's instructions on and off, in glibc and in bins
TESTS += tests/book_costs.sh
EXTRA_DIST += tests/book_costs.sh
# the book's chapter 18 (containers, the allocators' own reports,
# transparent huge pages): bench/reports in a cgroup v1 memory group, under
# each real allocator and heaplab run --stats, with and without
# MADV_HUGEPAGE; never timed, each part skipped where the machine cannot
TESTS += tests/book_reports.sh
EXTRA_DIST += tests/book_reports.sh
# the book's chapter 12, a Python service step by step:
# bench/diagnose/service.py on the real CPython 3.11 (counts, tracemalloc's
# first line, a trim), heaplab diagnose's first row and the real jemalloc
# against the chapter's figures; RSS by order only, never timed
TESTS += tests/book_python.sh
EXTRA_DIST += tests/book_python.sh
# the book's chapter 7, glibc after 2.36: bench/glibcver's fastbin reports,
# M_MXFAST and a large chunk's tcache on glibc 2.36 and on bins as 2.36
# (the same output), 2.42 and 2.43 (as their malloc.c says)
TESTS += tests/book_glibc.sh
EXTRA_DIST += tests/book_glibc.sh
# every trace's placement, address by address, real allocator beside model
TESTS += tests/placement.sh
EXTRA_DIST += tests/placement.sh

# The seams: no file but core/os.c makes a kernel memory call, no policy
# reads the clock or starts a thread itself (core/clock.c does).
TESTS += tests/os_seam.sh
EXTRA_DIST += tests/os_seam.sh tests/os_seam.py tests/clock_seam.py

# Calls only downward between a policy's files: sharded and bins list
# their layers in their header; no file calls a layer above its own.
TESTS += tests/layers.sh
EXTRA_DIST += tests/layers.sh tests/layers.py

# No file outside policies/NAME/ names a policy in its code (the files that
# still do are listed in the test, and the list only shrinks).
TESTS += tests/policy_names.sh
EXTRA_DIST += tests/policy_names.sh tests/policy_names.py

# A policy is added by its folder, its tests and one line in
# policies/policies.list (shown on a copy of the tree with a dummy policy).
TESTS += tests/add_policy.sh
EXTRA_DIST += tests/add_policy.sh

# A tree built in place leaves git status clean: every file the Makefile
# builds is ignored by .gitignore.
TESTS += tests/ignored_outputs.sh
EXTRA_DIST += tests/ignored_outputs.sh

# heaplab fidelity: every row of every family (each model against its real
# allocator), and the runner itself on rows made for the test.
TESTS += tests/fidelity.sh tests/fidelity_runner.sh
EXTRA_DIST += tests/fidelity.sh tests/fidelity_runner.sh tests/fidelity/glibc.rows \
	tests/fidelity/jemalloc.rows tests/fidelity/damaged/glibc.rows

# The suites that start threads (and fork beside them): what a
# --enable-sanitizers=thread build runs, `make check-threads` (the ones whose
# policy is not compiled in drop out; of test_conformance, only its tcase
# that starts threads: the others are tagged single-threaded).
# (TSan's lock-order detector is off for every test: see AM_TESTS_ENVIRONMENT
# in Makefile.am for why.)
# (each policy's folder adds its own Check suite when it starts threads)
HL_THREADED_TESTS += tests/test_conformance tests/test_core tests/test_faults tests/real_programs.sh \
	exercises/08-arenas-tcache/lab exercises/10-cross-thread/lab exercises/13-threads-outnumber-cpus/lab
check-threads:
	CK_EXCLUDE_TAGS=single-threaded $(MAKE) $(AM_MAKEFLAGS) check TESTS='$(filter $(HL_THREADED_TESTS),$(TESTS))'
PHONY_TARGETS += check-threads

# heaplab diagnose: causes of a hand-built recording, bad input, a program
# recorded with its sites (tests/diagnose/anchors.c)
check_PROGRAMS += tests/diagnose_anchors
tests_diagnose_anchors_SOURCES = tests/diagnose/anchors.c
tests_diagnose_anchors_CFLAGS = $(AM_CFLAGS) -fno-builtin -g
# and one whose memory comes back, for --verify (tests/diagnose/breathe.c)
check_PROGRAMS += tests/diagnose_breathe
tests_diagnose_breathe_SOURCES = tests/diagnose/breathe.c
tests_diagnose_breathe_CFLAGS = $(AM_CFLAGS) -fno-builtin
TESTS += tests/diagnose.sh
EXTRA_DIST += tests/diagnose.sh tests/diagnose/hand.rep
# a default CPython program: the coverage line, its layers, pymalloc modelled
TESTS += tests/diagnose_python.sh
EXTRA_DIST += tests/diagnose_python.sh
# a large buffer written in part (sort): the recorder's #@touched, replayed
TESTS += tests/diagnose_touched.sh
EXTRA_DIST += tests/diagnose_touched.sh
# each real allocator's own memory at start, added to its predictions (perl)
TESTS += tests/diagnose_own.sh
EXTRA_DIST += tests/diagnose_own.sh
# bench/accuracy/run.py: its arguments and one program of its corpus end to end
TESTS += tests/accuracy.sh tests/peak_final.sh
EXTRA_DIST += tests/accuracy.sh tests/peak_final.sh
# thread exit recorded and replayed, against glibc's arenas (tests/diagnose/waves.c)
check_PROGRAMS += tests/diagnose_waves
tests_diagnose_waves_SOURCES = tests/diagnose/waves.c
tests_diagnose_waves_CFLAGS = $(AM_CFLAGS) -fno-builtin -pthread
TESTS += tests/thread_exit.sh tests/trace_binary.sh
EXTRA_DIST += tests/thread_exit.sh tests/trace_binary.sh

# fork from a signal handler, and fork against stdio's locks, under every
# policy beside its real allocator (tests/fork_faults.sh)
check_PROGRAMS += tests/fork_signal tests/fork_stdio
tests_fork_signal_SOURCES = tests/fork/signal_fork.c
tests_fork_stdio_SOURCES = tests/fork/stdio_fork.c
tests_fork_stdio_CFLAGS = $(AM_CFLAGS) -pthread
TESTS += tests/fork_faults.sh
EXTRA_DIST += tests/fork_faults.sh

# nine threads run out of memory under an address-space limit (a program
# for policies/bins/bins_oom_threads.sh)
check_PROGRAMS += tests/oom_threads_to_limit
tests_oom_threads_to_limit_SOURCES = tests/oom/threads_to_limit.c
tests_oom_threads_to_limit_CFLAGS = $(AM_CFLAGS) -pthread
# glibc 2.36's and libc-test's own malloc tests, vendored unchanged under
# their licences in tests/libc/ (tests/libc/README), under the real
# allocators and every policy (tests/libc_malloc_tests.sh)
TESTS += tests/libc_malloc_tests.sh
EXTRA_DIST += tests/libc_malloc_tests.sh tests/libc
# heaplab grade: each part of the malloc lab's score sheet, firstfit against
# the student skeleton (valgrind counts the instructions).
TESTS += tests/grade_components.sh
EXTRA_DIST += tests/grade_components.sh
