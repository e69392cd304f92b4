# Probes and rows of the jemalloc family (see fidelity/README.md).
EXTRA_DIST += fidelity/jemalloc.rows
