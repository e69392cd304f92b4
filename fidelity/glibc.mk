# Probes and rows of the glibc family (see fidelity/README.md).
EXTRA_DIST += fidelity/glibc.rows
