# Fuzzing (tests/fuzz/README.md).  Three harnesses, each linked twice: with
# a plain main that replays its seed corpus, in every build (`make check`),
# and with libFuzzer in a build configured with --enable-fuzzers (clang),
# for `make fuzz`.
FUZZ_HARNESSES = trace conf ops
FUZZ_COMMON = tests/fuzz/fuzz.h tests/fuzz/fuzz_bug.c

check_PROGRAMS += tests/fuzz/replay_trace tests/fuzz/replay_conf tests/fuzz/replay_ops
tests_fuzz_replay_trace_SOURCES = tests/fuzz/fuzz_trace.c tests/fuzz/replay_main.c $(FUZZ_COMMON)
tests_fuzz_replay_trace_LDADD = libhlcore.la
tests_fuzz_replay_conf_SOURCES = tests/fuzz/fuzz_conf.c tests/fuzz/replay_main.c $(FUZZ_COMMON)
tests_fuzz_replay_conf_LDADD = libhlcore.la
tests_fuzz_replay_ops_SOURCES = tests/fuzz/fuzz_ops.c tests/fuzz/replay_main.c $(FUZZ_COMMON)
tests_fuzz_replay_ops_LDADD = libhlcore.la
TESTS += tests/fuzz/replay_corpus.sh
EXTRA_DIST += tests/fuzz/replay_corpus.sh tests/fuzz/run.sh tests/fuzz/README.md tests/fuzz/corpus

if HL_FUZZERS
noinst_PROGRAMS += tests/fuzz/fuzz_trace tests/fuzz/fuzz_conf tests/fuzz/fuzz_ops
tests_fuzz_fuzz_trace_SOURCES = tests/fuzz/fuzz_trace.c $(FUZZ_COMMON)
tests_fuzz_fuzz_trace_LDADD = libhlcore.la
tests_fuzz_fuzz_trace_LDFLAGS = $(HL_FUZZ_LDFLAGS)
tests_fuzz_fuzz_conf_SOURCES = tests/fuzz/fuzz_conf.c $(FUZZ_COMMON)
tests_fuzz_fuzz_conf_LDADD = libhlcore.la
tests_fuzz_fuzz_conf_LDFLAGS = $(HL_FUZZ_LDFLAGS)
tests_fuzz_fuzz_ops_SOURCES = tests/fuzz/fuzz_ops.c $(FUZZ_COMMON)
tests_fuzz_fuzz_ops_LDADD = libhlcore.la
tests_fuzz_fuzz_ops_LDFLAGS = $(HL_FUZZ_LDFLAGS)

# make fuzz [FUZZ_SECONDS=60]: each harness in turn on its corpus.
FUZZ_SECONDS = 60
fuzz: tests/fuzz/fuzz_trace tests/fuzz/fuzz_conf tests/fuzz/fuzz_ops
	$(SHELL) $(srcdir)/tests/fuzz/run.sh '$(srcdir)/tests/fuzz' tests/fuzz '$(FUZZ_SECONDS)' $(FUZZ_HARNESSES)
else
fuzz:
	@echo "make fuzz: this build has no fuzzers; configure one with: ../configure CC=clang --enable-fuzzers" >&2; exit 1
endif
PHONY_TARGETS += fuzz
