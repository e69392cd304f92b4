# Probes of the mimalloc family (see fidelity/README.md); the rows file is
# installed by fidelity/local.mk.
FIDELITY_MIMALLOC_PROBES = \
	fidelity/probes/mimalloc_reuse \
	fidelity/probes/mimalloc_purge \
	fidelity/probes/mimalloc_xthread \
	fidelity/probes/mimalloc_huge_remote \
	fidelity/probes/mimalloc_halfgig \
	fidelity/probes/mimalloc_segment
pkglibexec_PROGRAMS += $(FIDELITY_MIMALLOC_PROBES)
fidelity_probes_mimalloc_reuse_SOURCES = fidelity/probes/mimalloc_reuse.c
fidelity_probes_mimalloc_purge_SOURCES = fidelity/probes/mimalloc_purge.c
fidelity_probes_mimalloc_xthread_SOURCES = fidelity/probes/mimalloc_xthread.c
fidelity_probes_mimalloc_xthread_LDADD = -lpthread
fidelity_probes_mimalloc_huge_remote_SOURCES = fidelity/probes/mimalloc_huge_remote.c
fidelity_probes_mimalloc_huge_remote_LDADD = -lpthread
noinst_HEADERS += fidelity/probes/probe_util.h
fidelity_probes_mimalloc_halfgig_SOURCES = fidelity/probes/mimalloc_halfgig.c
fidelity_probes_mimalloc_segment_SOURCES = fidelity/probes/mimalloc_segment.c
