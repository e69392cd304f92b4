# Policy 'percpu': its sources join the core library when configured in.
if HL_POLICY_PERCPU
libhlcore_la_SOURCES += policies/percpu/percpu.h policies/percpu/percpu.c \
	policies/percpu/percpu_size.c policies/percpu/percpu_pagemap.c \
	policies/percpu/percpu_pageheap.c policies/percpu/percpu_hugepage.c \
	policies/percpu/percpu_central.c \
	policies/percpu/percpu_transfer.c policies/percpu/percpu_rseq.h \
	policies/percpu/percpu_fast.h \
	policies/percpu/percpu_rseq.c policies/percpu/percpu_cpu.c \
	policies/percpu/percpu_thread.c policies/percpu/percpu_check.c \
	policies/percpu/percpu_stats.c policies/percpu/percpu_dot.c policies/percpu/percpu_libc.c

# its Check suite (policies/local.mk wires test_percpu.c) starts threads
HL_THREADED_TESTS += policies/percpu/test_percpu
policies_percpu_test_percpu_SOURCES += tests/unit/side_state.h tests/unit/side_state.c

# front:thread beside the real gperftools tcmalloc: usable sizes
check_PROGRAMS += tests/programs/usable_probe
tests_programs_usable_probe_SOURCES = tests/programs/usable_probe.c
tests_programs_usable_probe_CFLAGS = $(HL_CFLAGS)
TESTS += policies/percpu/percpu_tcmalloc.sh policies/percpu/percpu_thread_rss.sh
endif
EXTRA_DIST += policies/percpu/percpu_tcmalloc.sh policies/percpu/percpu_thread_rss.sh
# misuse.table: what it does with the classic heap mistakes (tests/programs/misuse.sh).
EXTRA_DIST += policies/percpu/misuse.table
# libc_tests.table: its departures in the C libraries' malloc tests (tests/programs/libc_malloc_tests.sh).
EXTRA_DIST += policies/percpu/libc_tests.table
