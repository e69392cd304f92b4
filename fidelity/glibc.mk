# Probes and rows of the glibc family (see fidelity/README.md).  The rows
# file is installed by fidelity/local.mk.
pkglibexec_PROGRAMS += fidelity/probes/sizes fidelity/probes/reuse fidelity/probes/halfgig \
	fidelity/probes/glibc_mmap fidelity/probes/glibc_trim fidelity/probes/glibc_arenas \
	fidelity/probes/glibc_arena_keep fidelity/probes/glibc_top_first fidelity/probes/packing fidelity/probes/realloc_zero \
	fidelity/probes/placement fidelity/probes/address_room fidelity/probes/calloc_fresh
noinst_HEADERS += fidelity/probes/glibc_chunk.h
fidelity_probes_sizes_SOURCES = fidelity/probes/sizes.c
fidelity_probes_reuse_SOURCES = fidelity/probes/reuse.c
fidelity_probes_packing_SOURCES = fidelity/probes/packing.c
fidelity_probes_halfgig_SOURCES = fidelity/probes/halfgig.c
fidelity_probes_glibc_mmap_SOURCES = fidelity/probes/glibc_mmap.c
fidelity_probes_glibc_trim_SOURCES = fidelity/probes/glibc_trim.c
fidelity_probes_glibc_arenas_SOURCES = fidelity/probes/glibc_arenas.c
fidelity_probes_glibc_arenas_LDADD = -lpthread
fidelity_probes_glibc_arena_keep_SOURCES = fidelity/probes/glibc_arena_keep.c
fidelity_probes_glibc_arena_keep_LDADD = -lpthread
fidelity_probes_glibc_top_first_SOURCES = fidelity/probes/glibc_top_first.c
# realloc(p, 0), shared by the rows of every family
fidelity_probes_realloc_zero_SOURCES = fidelity/probes/realloc_zero.c
# address space held at start, shared by every family
fidelity_probes_address_room_SOURCES = fidelity/probes/address_room.c
fidelity_probes_address_room_LDADD = -lpthread
fidelity_probes_address_room_CFLAGS = $(AM_CFLAGS) -fno-builtin
# calloc of a fresh 64 MiB block, or of a reused one: cleared how, shared by every family
fidelity_probes_calloc_fresh_SOURCES = fidelity/probes/calloc_fresh.c
fidelity_probes_calloc_fresh_CFLAGS = $(AM_CFLAGS) -fno-builtin
# the driver of heaplab fidelity --placement, shared by every family
fidelity_probes_placement_SOURCES = fidelity/probes/placement.c
