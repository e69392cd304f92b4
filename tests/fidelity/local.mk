# Each model against the real allocator it models, on this machine.

# heaplab fidelity: every row of every family (each model against its real
# allocator), and the runner itself on rows made for the test (this
# folder's .rows files).
TESTS += tests/fidelity/fidelity.sh tests/fidelity/fidelity_runner.sh
EXTRA_DIST += tests/fidelity/fidelity.sh tests/fidelity/fidelity_runner.sh tests/fidelity/glibc.rows \
	tests/fidelity/jemalloc.rows tests/fidelity/damaged/glibc.rows
# every trace's placement, address by address, real allocator beside model
TESTS += tests/fidelity/placement.sh
EXTRA_DIST += tests/fidelity/placement.sh
# Claims of book/claims.md checked on the real allocators that heaplab has
# no model for (its probes: fidelity/claims.mk).
TESTS += tests/fidelity/claims_real.sh
EXTRA_DIST += tests/fidelity/claims_real.sh
