# Claims of book/claims.md checked on the real allocators that heaplab has
# no model for (tests/fidelity/claims_real.sh), and the probe of the glibc rows on
# growth by realloc.  claims_musl.c is built by the test itself, with
# musl-gcc and with the system compiler; claims_python_fix.py runs in python3.
pkglibexec_PROGRAMS += fidelity/probes/claims_jeprof fidelity/probes/claims_tcmalloc_tiers \
	fidelity/probes/claims_realloc
fidelity_probes_claims_jeprof_SOURCES = fidelity/probes/claims_jeprof.c
# (libtool's -rdynamic) the probe finds its own function's address range with dladdr1
fidelity_probes_claims_jeprof_LDFLAGS = -export-dynamic
fidelity_probes_claims_tcmalloc_tiers_SOURCES = fidelity/probes/claims_tcmalloc_tiers.c
fidelity_probes_claims_realloc_SOURCES = fidelity/probes/claims_realloc.c
EXTRA_DIST += fidelity/probes/claims_musl.c fidelity/probes/claims_python_fix.py
