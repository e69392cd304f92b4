# heaplab fidelity: rows and probe programs, one fragment per allocator family,
# and the library that reads the rows and runs one on both sides
# (cli/cmd_fidelity.c prints the table).
noinst_LTLIBRARIES += libhlfidelity.la
libhlfidelity_la_SOURCES = fidelity/fidelity.h fidelity/fidelity_rows.c fidelity/fidelity_run.c \
	fidelity/fidelity_spawn.h fidelity/fidelity_spawn.c fidelity/fidelity_placement.c
libhlfidelity_la_LIBADD = -lm
# heaplab fidelity reads the rows from the source tree (HL_FIDELITY_DIR) or,
# once installed, from $(fidelitydir); the probes from the build tree's
# fidelity/probes/ or, once installed, from $(pkglibexecdir).
fidelitydir = $(pkgdatadir)/fidelity
# The rows live in the folder of the policy that models their family
# (policies/NAME/FAMILY.rows, listed by bootstrap), installed side by side.
dist_fidelity_DATA = fidelity/README.md $(HL_FIDELITY_ROWS)
noinst_HEADERS += fidelity/probes/probe.h fidelity/probes/placement_ops.h
heaplab_CPPFLAGS += -DHL_FIDELITY_DIR='"$(abs_top_srcdir)/fidelity"' \
	-DHL_PKGLIBEXECDIR='"$(pkglibexecdir)"'
# Each family's fragment adds its probes: pkglibexec_PROGRAMS += fidelity/probes/NAME
pkglibexec_PROGRAMS =
include fidelity/glibc.mk
include fidelity/jemalloc.mk
include fidelity/mimalloc.mk
include fidelity/pymalloc.mk
include fidelity/claims.mk
