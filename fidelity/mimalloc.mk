# Probes and rows of the mimalloc family (see fidelity/README.md).
EXTRA_DIST += fidelity/mimalloc.rows
FIDELITY_MIMALLOC_PROBES = \
	fidelity/probes/mimalloc_ladder \
	fidelity/probes/mimalloc_reuse \
	fidelity/probes/mimalloc_purge
noinst_PROGRAMS += $(FIDELITY_MIMALLOC_PROBES)
fidelity_probes_mimalloc_ladder_SOURCES = fidelity/probes/mimalloc_ladder.c
fidelity_probes_mimalloc_reuse_SOURCES = fidelity/probes/mimalloc_reuse.c
fidelity_probes_mimalloc_purge_SOURCES = fidelity/probes/mimalloc_purge.c
