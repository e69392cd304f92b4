# visualize: seeing the heap: `heaplab render`, `step` (HTML page
# and terminal walk with the quiz) and `plot`, their tests, and the example
# stepper pages (`make examples`).  Appends to the lists in Makefile.am.

# libhlvis: a library of its own (walks, Graphviz, the stepper page, the
# terminal walk, plots) that reports errors through hl_last_error() and
# progress through a callback.  The heaplab command is one caller; the
# book's figure generator and the C tests are others.  Link it before
# libhlcore.la, which it builds on.
noinst_LTLIBRARIES += libhlvis.la
libhlvis_la_SOURCES = visualize/vis.h visualize/text.c visualize/render.c visualize/walk.c visualize/diff.c \
	visualize/html.c visualize/tty.c visualize/plot.c visualize/explain.c visualize/paths.c \
	visualize/bound.h visualize/bound.c visualize/adversary.h visualize/adversary.c
libhlvis_la_LIBADD = -lm

# The stepper's style and script live in their own files and are compiled
# into heaplab as strings, so a page needs nothing but itself.
HL_VIS_ASSETS = visualize/stepper.css visualize/heapdiff.js visualize/moves.js visualize/stepper.js \
	visualize/lockstep.css visualize/lockstep.js
nodist_libhlvis_la_SOURCES = visualize/stepper_assets.c
BUILT_SOURCES += visualize/stepper_assets.c
CLEANFILES += visualize/stepper_assets.c
EXTRA_DIST += $(HL_VIS_ASSETS) visualize/embed.awk visualize/traces
visualize/stepper_assets.c: $(HL_VIS_ASSETS:%=$(srcdir)/%) $(srcdir)/visualize/embed.awk
	$(AM_V_GEN)$(MKDIR_P) visualize && \
	cd $(srcdir) && $(AWK) -f visualize/embed.awk $(HL_VIS_ASSETS) > $(abs_builddir)/$@-t && \
	mv $(abs_builddir)/$@-t $(abs_builddir)/$@

# The lockstep: one trace on several policies, a column each (heaplab step
# --policy=A,B: the page's columns and the terminal's table).
libhlvis_la_SOURCES += visualize/lockstep.c
# (its tests: tests/visualize/local.mk)
EXTRA_DIST += visualize/lockstep-browser-test.mjs

# Tests: the Check suite test_visualize (tests/unit/local.mk) and the
# scripts that drive the heaplab command (tests/visualize/local.mk); what
# they run from here:
dist_noinst_SCRIPTS += visualize/check-pictures.sh visualize/ci-deps.sh \
	visualize/picture_geometry.py
EXTRA_DIST += visualize/browser-test.mjs visualize/diagnose-browser-test.mjs visualize/browser-lib.mjs

# The pictures of each policy (visualize/check-pictures.sh): every picture
# of the short traces renders without a Graphviz warning, and the
# snapshots of the traces policies/POLICY/golden.test lists equal
# policies/POLICY/golden/*.dot.  A policy that is not compiled in is reported
# as SKIP.  (.test is automake's default test extension; only these files
# use it.)
# (HL_GOLDEN_TESTS and HL_GOLDEN_DIRS: one per allocator model of
# policies/policies.list whose folder has a golden.test, written by
# ./bootstrap into policies/local.mk)
TESTS += $(HL_GOLDEN_TESTS)
TEST_LOG_COMPILER = $(SHELL) $(srcdir)/visualize/check-pictures.sh
# The golden folders and lists by name: a policy's whole folder would also
# carry a build tree's test logs into the tarball (make dist copies a
# listed folder from the build tree as well as from the sources).
EXTRA_DIST += $(HL_GOLDEN_TESTS) $(HL_GOLDEN_DIRS)

# `make examples`: one stepper page per compiled-in policy for teach.rep,
# and an index, in examples/ (open examples/index.html from disk).
EXAMPLES += examples/index.html
examples/index.html: heaplab$(EXEEXT) $(srcdir)/visualize/traces/teach.rep $(srcdir)/visualize/make-examples.sh
	$(AM_V_GEN)$(SHELL) $(srcdir)/visualize/make-examples.sh ./heaplab$(EXEEXT) \
		$(srcdir)/visualize/traces/teach.rep examples
dist_noinst_SCRIPTS += visualize/make-examples.sh
CLEANFILES += examples/*.html
