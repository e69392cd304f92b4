# The trace layer, above the allocator core and the policies: the trace
# format (trace.c; its binary form, trace_binary.c; a sampled recording's
# rates, sample.c; which of a CPython recording's calls reach pymalloc,
# pymalloc_sites.c), replaying a trace on a heap (replay.c) and the recorder
# that writes one from a running program (recorder.c).  It is compiled into
# libhlcore.la with them; the preload libraries that drive the recorder are
# in shim/.
libhlcore_la_SOURCES += trace/trace.h trace/trace.c trace/trace_binary.h trace/trace_binary.c trace/replay.c \
	trace/sample.c trace/pymalloc_sites.c \
	trace/recorder.h trace/recorder.c
