# Probes and rows of the jemalloc family (see fidelity/README.md).
EXTRA_DIST += fidelity/jemalloc.rows
JEMALLOC_PROBES = \
	fidelity/probes/jemalloc_ladder \
	fidelity/probes/jemalloc_reuse \
	fidelity/probes/jemalloc_decay \
	fidelity/probes/jemalloc_oversize \
	fidelity/probes/jemalloc_large_churn
noinst_PROGRAMS += $(JEMALLOC_PROBES)
fidelity_probes_jemalloc_ladder_SOURCES = fidelity/probes/jemalloc_ladder.c
fidelity_probes_jemalloc_reuse_SOURCES = fidelity/probes/jemalloc_reuse.c
fidelity_probes_jemalloc_decay_SOURCES = fidelity/probes/jemalloc_decay.c
fidelity_probes_jemalloc_oversize_SOURCES = fidelity/probes/jemalloc_oversize.c
fidelity_probes_jemalloc_large_churn_SOURCES = fidelity/probes/jemalloc_large_churn.c
