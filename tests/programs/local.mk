# Real programs and every shipped trace, under every policy (mostly through
# the preload library, beside the real allocators).

# Real programs under heaplab run: a threaded program of this folder, sort,
# python3; a share of CPython's regression tests; every shipped trace
# replayed clean.
check_PROGRAMS += tests/programs/mt_program
tests_programs_mt_program_SOURCES = tests/programs/mt_program.c
tests_programs_mt_program_LDADD = -lpthread
# never instrumented: it is the system allocator's reference run (and a
# sanitizer's malloc can deadlock in a child forked while threads allocate)
tests_programs_mt_program_CFLAGS = $(HL_CFLAGS)
# the same program on a heaplab heap through the API (no LD_PRELOAD)
check_PROGRAMS += tests/programs/mt_api
tests_programs_mt_api_SOURCES = tests/programs/mt_program.c
tests_programs_mt_api_CPPFLAGS = $(AM_CPPFLAGS) -DMT_PROGRAM_API
tests_programs_mt_api_LDADD = libhlcore.la
TESTS += tests/programs/real_programs.sh tests/programs/python_regrtest.sh tests/programs/replay_traces.sh
EXTRA_DIST += tests/programs/real_programs.sh tests/programs/python_regrtest.sh tests/programs/replay_traces.sh
# heaplab replay --explain[=json] under every policy
TESTS += tests/programs/explain.sh
EXTRA_DIST += tests/programs/explain.sh
# heaplab bound: the bound against optima known by construction or search
TESTS += tests/programs/bound.sh tests/programs/adversary.sh
EXTRA_DIST += tests/programs/bound.sh tests/programs/bound_optimum.py tests/programs/adversary.sh
# the binary form of a trace, what the recorder writes by default
TESTS += tests/programs/trace_binary.sh
EXTRA_DIST += tests/programs/trace_binary.sh

# The limits a real program meets, RLIMIT_DATA and RLIMIT_AS, beside glibc
# (the page source's fault seam is tests/unit/test_faults.c).
check_PROGRAMS += tests/programs/limits_program
TESTS += tests/programs/limits.sh
EXTRA_DIST += tests/programs/limits.sh
tests_programs_limits_program_SOURCES = tests/programs/limits_program.c
tests_programs_limits_program_LDADD = -lpthread -ldl
# never instrumented: the same binary runs on the real glibc as the reference
tests_programs_limits_program_CFLAGS = $(HL_CFLAGS)
# The rest of the C library's malloc API (mallinfo, mallinfo2, mallopt,
# malloc_stats, malloc_info, malloc_trim) under each policy beside its real
# allocator (tests/programs/malloc_api.sh, with tests/programs/malloc_api_probe.c).
check_PROGRAMS += tests/programs/malloc_api_probe
TESTS += tests/programs/malloc_api.sh
EXTRA_DIST += tests/programs/malloc_api.sh
tests_programs_malloc_api_probe_SOURCES = tests/programs/malloc_api_probe.c
tests_programs_malloc_api_probe_LDADD = -lpthread
# never instrumented: the same binary runs on the real allocators
tests_programs_malloc_api_probe_CFLAGS = $(HL_CFLAGS)

# Classic mistakes under every policy, with and without debug mode, next to
# the real allocators (tests/programs/misuse.sh says what each cell expects).
check_PROGRAMS += tests/programs/misuse_program
tests_programs_misuse_program_SOURCES = tests/programs/misuse_program.c
if HL_HAVE_PYEMBED
# the same mistakes on CPython's own pymalloc, beside `pools`
check_PROGRAMS += tests/programs/misuse_pymalloc
tests_programs_misuse_pymalloc_SOURCES = tests/programs/misuse_program.c
tests_programs_misuse_pymalloc_CPPFLAGS = $(AM_CPPFLAGS) $(PYEMBED_CFLAGS) -DMISUSE_PYMALLOC
tests_programs_misuse_pymalloc_LDADD = $(PYEMBED_LIBS)
endif
TESTS += tests/programs/misuse.sh
EXTRA_DIST += tests/programs/misuse.sh tests/programs/misuse/double-free.rep

# the preload library's fast path keeps the operation counters right
check_PROGRAMS += tests/programs/shim_counts
tests_programs_shim_counts_SOURCES = tests/programs/shim_counts.c
# the calls are what it counts: the compiler may not drop a malloc/free pair
tests_programs_shim_counts_CFLAGS = $(AM_CFLAGS) -fno-builtin
TESTS += tests/programs/shim_counts.sh
EXTRA_DIST += tests/programs/shim_counts.sh

# fork from a signal handler, and fork against stdio's locks, under every
# policy beside its real allocator (tests/programs/fork_faults.sh)
check_PROGRAMS += tests/programs/fork_signal tests/programs/fork_stdio
tests_programs_fork_signal_SOURCES = tests/programs/fork/signal_fork.c
tests_programs_fork_stdio_SOURCES = tests/programs/fork/stdio_fork.c
tests_programs_fork_stdio_CFLAGS = $(AM_CFLAGS) -pthread
TESTS += tests/programs/fork_faults.sh
EXTRA_DIST += tests/programs/fork_faults.sh

# nine threads run out of memory under an address-space limit (a program
# for policies/bins/bins_oom_threads.sh)
check_PROGRAMS += tests/programs/oom_threads_to_limit
tests_programs_oom_threads_to_limit_SOURCES = tests/programs/oom/threads_to_limit.c
tests_programs_oom_threads_to_limit_CFLAGS = $(AM_CFLAGS) -pthread
# (front:thread's usable sizes beside the real tcmalloc, usable_probe.c, is
# built by policies/percpu/local.mk, when percpu is compiled in)

# glibc 2.36's and libc-test's own malloc tests, vendored unchanged under
# their licences in tests/programs/libc/ (tests/programs/libc/README), under
# the real allocators and every policy (tests/programs/libc_malloc_tests.sh)
TESTS += tests/programs/libc_malloc_tests.sh
EXTRA_DIST += tests/programs/libc_malloc_tests.sh tests/programs/libc
