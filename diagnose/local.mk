# heaplab diagnose as a library: reading a recording's sites and layers
# (attribute.c, layers.c), the what-if candidates replayed under each model
# (whatif.c), a sampled recording scaled back (sample.c), side by side in one process per CPU (parallel.c), and the report in text, HTML and JSON (report.c,
# report_json.c).  It draws its plots through libhlvis, which it sits above;
# cli/cmd_diagnose.c only parses the arguments and calls it.
noinst_LTLIBRARIES += libhldiagnose.la
libhldiagnose_la_SOURCES = diagnose/diagnose.h diagnose/attribute.c diagnose/layers.c diagnose/whatif.c diagnose/parallel.c \
	diagnose/report.c diagnose/report_json.c diagnose/sample.c
libhldiagnose_la_LIBADD = -lm
