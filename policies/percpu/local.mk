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

check_PROGRAMS += policies/percpu/test_percpu
TESTS += policies/percpu/test_percpu
HL_THREADED_TESTS += policies/percpu/test_percpu
policies_percpu_test_percpu_SOURCES = policies/percpu/test_percpu.c tests/testlib.h tests/testlib.c tests/side_state.h tests/side_state.c
policies_percpu_test_percpu_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests
policies_percpu_test_percpu_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
policies_percpu_test_percpu_LDADD = libhlcore.la $(CHECK_LIBS)

# front:thread beside the real gperftools tcmalloc: usable sizes
check_PROGRAMS += tests/usable_probe
tests_usable_probe_SOURCES = tests/usable_probe.c
tests_usable_probe_CFLAGS = $(HL_CFLAGS)
TESTS += tests/percpu_tcmalloc.sh
endif
EXTRA_DIST += tests/percpu_tcmalloc.sh
