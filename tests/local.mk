# The tests, by kind: each folder below wires its own tests in its local.mk
# (Makefile.am includes them all):
#   tests/unit/       the Check suites (C) of the core, the events, the
#                     faults, diagnose's library and the pictures, and the
#                     testlib every Check suite shares (the policies' too)
#   tests/programs/   real programs and the shipped traces under every
#                     policy, beside the real allocators: the preload
#                     library, limits, the malloc API, misuse, fork, out
#                     of memory, the C libraries' malloc tests, replay,
#                     explain, bound, adversary, the binary trace
#   tests/diagnose/   the recorder and heaplab diagnose, bench/accuracy's
#                     meters, and the programs they record
#   tests/fidelity/   each model against its real allocator: the fidelity
#                     rows, placement, the book's claims on real allocators
#   tests/visualize/  the pictures and pages: render, plot, the stepper,
#                     the lockstep, the readable heaps, pages in a browser
#   tests/book/       the book, the labs' rubrics, the quiz and grade
#   tests/house/      the code's own rules: layers, seams, policy names,
#                     the shared lib.sh used, a policy added by its folder,
#                     ignored outputs, the man pages and the README's
#                     commands true, bad input
#   tests/fuzz/       the fuzzing harnesses and their corpus
# Every shell test sources this folder's lib.sh.

# What the test scripts share (the compiled-in policies, the sanitizer
# skip, temporary folders, where the build is); tests/house/lib_used.sh
# checks that no script repeats it.
EXTRA_DIST += tests/lib.sh

# The suites that start threads (and fork beside them): what a
# --enable-sanitizers=thread build runs, `make check-threads` (the ones whose
# policy is not compiled in drop out; of test_conformance, only its tcase
# that starts threads: the others are tagged single-threaded).
# (TSan's lock-order detector is off for every test: see AM_TESTS_ENVIRONMENT
# in Makefile.am for why.)
# (each policy's folder adds its own Check suite when it starts threads)
HL_THREADED_TESTS += tests/unit/test_conformance tests/unit/test_core tests/unit/test_faults tests/programs/real_programs.sh \
	exercises/08-arenas-tcache/lab exercises/10-cross-thread/lab exercises/13-threads-outnumber-cpus/lab
check-threads:
	CK_EXCLUDE_TAGS=single-threaded $(MAKE) $(AM_MAKEFLAGS) check TESTS='$(filter $(HL_THREADED_TESTS),$(TESTS))'
PHONY_TARGETS += check-threads
