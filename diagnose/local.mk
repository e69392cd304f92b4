# heaplab diagnose as a library: the program found, checked and recorded
# (record_program.c), run for real and measured (measure.c), the real
# allocators' own memory at start (allocator_own.c); reading a recording's
# sites and layers (attribute.c, layers.c), the what-if candidates replayed
# under each model (whatif.c), side by side in one process per CPU
# (parallel.c), a sampled recording scaled back (sample.c), the diagnosis
# that ties them (diagnosis.c) and --verify (verify.c), and the report in text, HTML and JSON (report.c,
# report_json.c).  It draws its plots through libhlvis, which it sits above;
# cli/cmd_diagnose.c only parses the arguments, calls it and writes the
# report where asked.
noinst_LTLIBRARIES += libhldiagnose.la
libhldiagnose_la_SOURCES = diagnose/diagnose.h diagnose/attribute.c diagnose/layers.c diagnose/whatif.c diagnose/parallel.c \
	diagnose/report.c diagnose/report_json.c diagnose/record_program.c diagnose/measure.c diagnose/allocator_own.c \
	diagnose/diagnosis.c diagnose/verify.c diagnose/sample.c
libhldiagnose_la_LIBADD = -lm
# Its tests: the library running the program, without the command
# (tests/unit/test_diagnose_program.c), and the command (tests/diagnose/).
