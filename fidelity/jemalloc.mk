# Probes and rows of the jemalloc family (see fidelity/README.md).  The rows
# file is installed by fidelity/local.mk; the family also uses the generic
# probes sizes, reuse and halfgig.
pkglibexec_PROGRAMS += fidelity/probes/jemalloc_reuse fidelity/probes/jemalloc_decay \
	fidelity/probes/jemalloc_oversize fidelity/probes/jemalloc_large_churn \
	fidelity/probes/jemalloc_arenas fidelity/probes/idle_gap \
	fidelity/probes/jemalloc_dirty_fit fidelity/probes/jemalloc_thread_exit
# idle_gap: also the mimalloc rows' (an idle gap replayed on the recording's clock)
fidelity_probes_idle_gap_SOURCES = fidelity/probes/idle_gap.c
fidelity_probes_jemalloc_reuse_SOURCES = fidelity/probes/jemalloc_reuse.c
fidelity_probes_jemalloc_decay_SOURCES = fidelity/probes/jemalloc_decay.c
fidelity_probes_jemalloc_oversize_SOURCES = fidelity/probes/jemalloc_oversize.c
fidelity_probes_jemalloc_dirty_fit_SOURCES = fidelity/probes/jemalloc_dirty_fit.c
fidelity_probes_jemalloc_large_churn_SOURCES = fidelity/probes/jemalloc_large_churn.c
fidelity_probes_jemalloc_arenas_SOURCES = fidelity/probes/jemalloc_arenas.c
fidelity_probes_jemalloc_arenas_LDADD = -lpthread
fidelity_probes_jemalloc_thread_exit_SOURCES = fidelity/probes/jemalloc_thread_exit.c
fidelity_probes_jemalloc_thread_exit_LDADD = -lpthread
