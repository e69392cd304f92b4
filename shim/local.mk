# The two preload libraries, the top of the model stack: each replaces a
# program's malloc family.

# libheaplab-preload: the core and the policies behind the malloc family,
# for LD_PRELOAD (heaplab run).  shim.c calls each policy's fast path
# directly (shim/fast_paths.h).
libheaplab_preload_la_SOURCES = shim/shim.c shim/fast_paths.h shim/fast_rows.h
libheaplab_preload_la_LIBADD = libhlcore.la
libheaplab_preload_la_LDFLAGS = -avoid-version -shared -Wl,-Bsymbolic-functions

# libheaplab-record: the C library's own malloc, recorded with allocation
# sites, the process's own mappings and resident-set samples (heaplab
# diagnose, heaplab fidelity's `model_by replay` rows).
libheaplab_record_la_SOURCES = shim/record_shim.c shim/record_layers.c shim/record_mmap.c
libheaplab_record_la_LIBADD = libhlcore.la
libheaplab_record_la_LDFLAGS = -avoid-version -shared -Wl,-Bsymbolic-functions
