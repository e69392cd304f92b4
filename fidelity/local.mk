# heaplab fidelity: probe programs, one fragment per allocator family.
# (heaplab fidelity finds them in the build tree, or installed in pkglibexecdir.)
EXTRA_DIST += fidelity/README.md
noinst_HEADERS += fidelity/probes/probe.h
include fidelity/glibc.mk
include fidelity/jemalloc.mk
include fidelity/mimalloc.mk
include fidelity/pymalloc.mk
