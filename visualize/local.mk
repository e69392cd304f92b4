# visualize: seeing the heap (issue 7): `heaplab render`, `step` (HTML page
# and terminal walk with the quiz) and `plot`, their tests, and the example
# stepper pages (`make examples`).  Appends to the lists in Makefile.am.

heaplab_SOURCES += visualize/vis.h visualize/render.c visualize/walk.c \
	visualize/html.c visualize/tty.c visualize/plot.c
heaplab_LDADD += -lm

# The stepper's style and script live in their own files and are compiled
# into heaplab as strings, so a page needs nothing but itself.
HL_VIS_ASSETS = visualize/stepper.css visualize/stepper.js
nodist_heaplab_SOURCES = visualize/stepper_assets.c
BUILT_SOURCES += visualize/stepper_assets.c
CLEANFILES += visualize/stepper_assets.c
EXTRA_DIST += $(HL_VIS_ASSETS) visualize/embed.awk visualize/traces
visualize/stepper_assets.c: $(HL_VIS_ASSETS:%=$(srcdir)/%) $(srcdir)/visualize/embed.awk
	$(AM_V_GEN)$(MKDIR_P) visualize && \
	cd $(srcdir) && $(AWK) -f visualize/embed.awk $(HL_VIS_ASSETS) > $(abs_builddir)/$@-t && \
	mv $(abs_builddir)/$@-t $(abs_builddir)/$@
