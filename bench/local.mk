# Benchmarks (not tests): standalone workloads that use the C library's
# malloc, run under every policy and every real allocator by bench/run.sh.
EXTRA_PROGRAMS = bench/ring bench/halfgig bench/xthread bench/cliff bench/pagemates bench/twofill
bench_ring_SOURCES = bench/workloads/ring.c bench/workloads/bench_util.h
bench_halfgig_SOURCES = bench/workloads/halfgig.c bench/workloads/bench_util.h
bench_xthread_SOURCES = bench/workloads/xthread.c bench/workloads/bench_util.h
bench_cliff_SOURCES = bench/workloads/cliff.c bench/workloads/bench_util.h
bench_pagemates_SOURCES = bench/workloads/pagemates.c bench/workloads/bench_util.h
bench_twofill_SOURCES = bench/workloads/twofill.c bench/workloads/bench_util.h
HL_BENCH_BINARIES = bench/ring$(EXEEXT) bench/halfgig$(EXEEXT) bench/xthread$(EXEEXT) bench/cliff$(EXEEXT) \
	bench/pagemates$(EXEEXT) bench/twofill$(EXEEXT)

# sysreplay: malloc-lab traces on the C library's own malloc, for the
# utilization of the real allocator next to heaplab replay's (not run by
# make bench; make check builds it for policies/bins/glibc_side_by_side.sh).
check_PROGRAMS += bench/sysreplay
bench_sysreplay_SOURCES = bench/workloads/sysreplay.c
bench_sysreplay_LDADD = libheaplab.la -lpthread
bench_sysreplay_LDFLAGS = -static-libtool-libs
HL_BENCH_BINARIES += bench/sysreplay$(EXEEXT)

# costs: the cost model of the book's chapter 17 (a tcache hit, the tcache
# off, a system call, a mapping, a page fault, madvise, a cache line two
# CPUs share) as ratios to a tcache hit; bench/costs.sh (make costs) counts
# and times it under every allocator.  make check builds it for
# tests/book/book_costs.sh.
check_PROGRAMS += bench/costs
bench_costs_SOURCES = bench/workloads/costs.c bench/workloads/bench_util.h
bench_costs_LDADD = -lpthread
HL_BENCH_BINARIES += bench/costs$(EXEEXT)

costs: bench/costs$(EXEEXT) libheaplab-preload.la
	bash $(srcdir)/bench/costs.sh $(builddir) $(COSTS_ROUNDS)
COSTS_ROUNDS ?= 7
PHONY_TARGETS += costs

# reports: the small program of the book's chapter 18 (a limit on held
# memory, the page cache, each allocator's own report, huge pages); make
# check builds it for tests/book/book_reports.sh.
check_PROGRAMS += bench/reports
bench_reports_SOURCES = bench/workloads/reports.c bench/workloads/bench_util.h
HL_BENCH_BINARIES += bench/reports$(EXEEXT)

# glibcver: what glibc 2.42 and 2.43 change in the C library's own reports
# (mallinfo2's fastbin fields, malloc_info's fast total, M_MXFAST, a large
# chunk in the tcache), for the book's chapter 7; make check builds it for
# tests/book/book_glibc.sh, which runs it on glibc 2.36 and on bins as 2.36,
# 2.42 and 2.43.
check_PROGRAMS += bench/glibcver
bench_glibcver_SOURCES = bench/workloads/glibcver.c
HL_BENCH_BINARIES += bench/glibcver$(EXEEXT)

# pyring: the ring workload on the real CPython pymalloc, when configure
# found an embeddable libpython.
if HL_HAVE_PYEMBED
EXTRA_PROGRAMS += bench/pyring
bench_pyring_SOURCES = bench/workloads/pyring.c bench/workloads/bench_util.h
bench_pyring_CPPFLAGS = $(AM_CPPFLAGS) $(PYEMBED_CFLAGS)
bench_pyring_LDADD = $(PYEMBED_LIBS)
HL_BENCH_BINARIES += bench/pyring$(EXEEXT)
endif
CLEANFILES += $(HL_BENCH_BINARIES)
EXTRA_DIST += bench/cgroup.sh bench/costs.sh bench/run.sh bench/allocators.sh bench/instructions.sh bench/rounds.sh bench/scaling.sh bench/demo.sh \
	bench/results.sh bench/results.rows bench/RESULTS.md bench/HISTORY.md bench/FIDELITY.md \
	bench/diagnose/repro.py bench/diagnose/repro_interleaved.py bench/diagnose/repro_live.py bench/diagnose/repro_phases.py bench/diagnose/tuples.py bench/diagnose/service.py bench/diagnose/peak_final.py bench/ACCURACY.md bench/accuracy/run.py \
	bench/accuracy/corpus.py bench/accuracy/workload.py bench/accuracy/workload.pl bench/accuracy/workload.sql
BENCH ?=

bench: $(HL_BENCH_BINARIES) heaplab$(EXEEXT) libheaplab-preload.la
	bash $(srcdir)/bench/run.sh $(builddir) $(srcdir) $(BENCH)

# bench-instructions: instructions per free+malloc pair on the fixed-size
# ring, counted with callgrind for every policy and real allocator
# (bench/instructions.sh; deterministic, so comparable between commits).
bench-instructions: bench/ring$(EXEEXT) heaplab$(EXEEXT) libheaplab-preload.la
	bash $(srcdir)/bench/instructions.sh $(builddir)

demo: bench/halfgig$(EXEEXT) heaplab$(EXEEXT) libheaplab-preload.la
	bash $(srcdir)/bench/demo.sh $(builddir)

# results: bench/RESULTS.md, the current figures, row by row
# (bench/results.sh; RESULTS=--cheap, RESULTS='memory.*', RESULTS=--list).
RESULTS ?= --cheap
results: $(HL_BENCH_BINARIES) heaplab$(EXEEXT) libheaplab-preload.la
	bash $(srcdir)/bench/results.sh $(builddir) $(RESULTS)
PHONY_TARGETS += bench bench-instructions demo results

# stress: a long run of one policy through the public API — threads,
# cross-thread frees, realloc chains, forks, hl_check, contents checked,
# nothing live at the end (not a test: it runs for minutes).
#   make stress STRESS_SECONDS=600 STRESS_POLICIES='bins slab' STRESS_THREADS=4
EXTRA_PROGRAMS += bench/stress
bench_stress_SOURCES = bench/stress.c
bench_stress_LDADD = libheaplab.la
bench_stress_LDFLAGS = -static-libtool-libs
CLEANFILES += bench/stress$(EXEEXT)
STRESS_SECONDS ?= 60
STRESS_THREADS ?= 4
STRESS_SEED ?= 1
STRESS_POLICIES ?=

stress: bench/stress$(EXEEXT)
	@policies='$(STRESS_POLICIES)'; \
	test -n "$$policies" || policies=`./bench/stress$(EXEEXT) --list`; \
	status=0; \
	for p in $$policies; do \
	  ./bench/stress$(EXEEXT) --policy=$$p --threads=$(STRESS_THREADS) \
	    --seconds=$(STRESS_SECONDS) --seed=$(STRESS_SEED) || status=1; \
	done; exit $$status
PHONY_TARGETS += stress
