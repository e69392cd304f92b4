# Probes and rows of the pymalloc family (see fidelity/README.md).
EXTRA_DIST += fidelity/pymalloc.rows
