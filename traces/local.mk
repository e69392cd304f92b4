# The shipped traces: data for replay, the tests and the benchmarks.
EXTRA_DIST += traces
