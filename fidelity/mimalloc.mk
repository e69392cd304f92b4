# Probes and rows of the mimalloc family (see fidelity/README.md).
EXTRA_DIST += fidelity/mimalloc.rows
