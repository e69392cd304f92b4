# The two preload libraries, the top of the model stack: each replaces a
# program's malloc family.

# libheaplab-preload: the core and the policies behind the malloc family,
# for LD_PRELOAD (heaplab run).  shim.c calls each policy's fast path
# directly (shim/fast_paths.h).
libheaplab_preload_la_SOURCES = shim/shim.h shim/shim.c shim/fast_paths.h shim/fast_rows.h
libheaplab_preload_la_LIBADD = libhlcore.la
libheaplab_preload_la_LDFLAGS = -avoid-version -shared -Wl,-Bsymbolic-functions

# libheaplab-record: the C library's own malloc, recorded with allocation
# sites, the process's own mappings and resident-set samples (heaplab
# diagnose, heaplab fidelity's `model_by replay` rows).
libheaplab_record_la_SOURCES = shim/record_shim.c shim/record_layers.c shim/record_mmap.c shim/record_pace.c \
	shim/record_pace.h
libheaplab_record_la_LIBADD = libhlcore.la
libheaplab_record_la_LDFLAGS = -avoid-version -shared -Wl,-Bsymbolic-functions

# The rest of the C library's malloc API in the preload library (mallinfo,
# mallinfo2, mallopt, malloc_stats, malloc_info, malloc_trim): a policy
# answers through its table's libc_api (core/malloc_api.h), or the call
# goes on to the C library's own, as under an allocator that exports none.
libheaplab_preload_la_SOURCES += shim/malloc_api.c core/malloc_api.h
