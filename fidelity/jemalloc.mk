# Probes and rows of the jemalloc family (see fidelity/README.md).
EXTRA_DIST += fidelity/jemalloc.rows
JEMALLOC_PROBES = \
	fidelity/probes/jemalloc_ladder \
	fidelity/probes/jemalloc_reuse \
	fidelity/probes/jemalloc_decay
noinst_PROGRAMS += $(JEMALLOC_PROBES)
fidelity_probes_jemalloc_ladder_SOURCES = fidelity/probes/jemalloc_ladder.c
fidelity_probes_jemalloc_reuse_SOURCES = fidelity/probes/jemalloc_reuse.c
fidelity_probes_jemalloc_decay_SOURCES = fidelity/probes/jemalloc_decay.c
