# Probes of the pymalloc family (see fidelity/README.md); the rows file is
# installed by fidelity/local.mk.  One program, `pymalloc WHAT ...`, as
# every probe embeds libpython: without it the program is not built and
# heaplab fidelity reports the rows as SKIP.
noinst_HEADERS += fidelity/probes/pymalloc_side.h
if HL_HAVE_PYEMBED
pkglibexec_PROGRAMS += fidelity/probes/pymalloc
fidelity_probes_pymalloc_SOURCES = fidelity/probes/pymalloc_main.c \
	fidelity/probes/pymalloc_route.c fidelity/probes/pymalloc_keep.c \
	fidelity/probes/pymalloc_arenas.c fidelity/probes/pymalloc_classes.c
fidelity_probes_pymalloc_CPPFLAGS = $(AM_CPPFLAGS) $(PYEMBED_CFLAGS)
fidelity_probes_pymalloc_LDADD = $(PYEMBED_LIBS)
endif
