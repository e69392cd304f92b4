# book: the chapters, the question bank and its checks, the figures drawn
# from real heaps, and `make doc` (appends to the lists in Makefile.am).

HL_BOOK_CHAPTERS = \
	book/00-index.md book/01-layers.md book/02-getting-memory.md \
	book/03-bump-regions.md book/04-free-lists.md book/05-size-classes.md \
	book/06-boundary-tags-bins.md book/07-thread-caches-arenas.md \
	book/08-slabs-decay.md book/09-sharded.md book/10-pools.md \
	book/11-giving-back.md book/12-measuring.md book/13-security.md \
	book/14-choosing.md book/15-instructor-guide.md book/16-percpu.md book/17-costs.md book/18-containers-reports.md book/course-path.md \
	book/glossary.md book/index-terms.md book/visual-language.md book/claims.md
EXTRA_DIST += $(HL_BOOK_CHAPTERS) book/Doxyfile.in book/traces/reuse.rep \
	book/traces/big-twice.rep book/traces/small.rep \
	book/traces/survivors.rep book/traces/top-200k.rep \
	book/traces/many-small.rep book/traces/layers.rep \
	book/traces/unsorted.rep book/traces/fast-max.rep \
	book/traces/stash.rep book/traces/tcache-full.rep \
	book/traces/one-25.rep book/traces/small-large.rep book/traces/paths.rep \
	book/traces/explain.rep book/traces/hugepages.rep \
	book/gen_explain.sh
# Chapters 1-8's worked examples and every chapter's embedded stepper
# (book/gen_examples.sh, book/gen_steppers.sh), with their traces.
EXTRA_DIST += book/gen_examples.sh book/gen_steppers.sh \
	book/traces/bump-arith.rep book/traces/bump-align.rep book/traces/fits.rep book/traces/classes.rep \
	book/traces/coalesce.rep book/traces/tcache-order.rep book/traces/decay.rep \
	book/traces/held.rep book/traces/buddy.rep

# The question bank: read by `heaplab quiz` from the source tree or, once
# installed, from $(pkgdatadir) (quiz/quiz_bank.c; quiz/local.mk).
bookdir = $(pkgdatadir)
dist_book_DATA = book/questions.txt

# The index of terms (book/index-terms.md), written from the chapters by
# book/gen_index.sh and checked against it, links and all
# (tests/book/book_index.sh).
EXTRA_DIST += book/gen_index.sh

# The figures: one small program performs each chapter's script on a real
# heap, writes hl_snapshot_dot() output and renders it with the visualize
# library (libhlvis), as `heaplab render` does.
noinst_PROGRAMS += book/gen_figures
book_gen_figures_SOURCES = book/gen_figures.c
book_gen_figures_LDADD = libhlvis.la libhlcore.la

# Chapters 9 to 14's worked examples and steppers, and chapter 17's walk of
# pairs.rep (book/gen_worked.sh, run by make doc), checked by
# tests/book/book_worked.sh (tests/book/local.mk wires the book's checks).
EXTRA_DIST += book/gen_worked.sh book/traces/remote.rep \
	book/traces/pool-life.rep book/traces/pinned-top.rep \
	book/traces/scattered.rep book/traces/freed-twice.rep \
	book/traces/secure-order.rep book/traces/mixed-day.rep \
	book/traces/pairs.rep

# What Doxygen reads: the chapters, the design notes (HL_NOTES,
# Makefile.am), the public header, the contract a policy
# (a student's too) is written against, heaplab diagnose's library
# (diagnose.h), and the headers that hold each policy's central structures.  Any Doxygen warning, about a chapter or a
# header, fails `make doc` (HL_DOC_TOLERATED can name files to let through
# while one is being written).
HL_DOC_HDRS = core/heaplab.h core/policy.h core/error.h core/os.h diagnose/diagnose.h \
	$(foreach p,$(HL_EVERY_POLICY),policies/$(p)/$(p).h)
# (a regular expression matched on the end of the path, since Doxygen
# prints it canonicalised, not as $(abs_top_srcdir) spells it, e.g.
# ".../_build/.."; a warning's continuation lines go with it).  Empty:
# nothing is let through.
HL_DOC_TOLERATED =

# The options appendix: generated at build time from the option tables
# (core/conf.c's and each policy's), the one place options are described.
noinst_DATA = book/appendix-options.md
CLEANFILES += book/appendix-options.md
book/appendix-options.md: heaplab$(EXEEXT)
	$(AM_V_GEN)$(MKDIR_P) book && ./heaplab$(EXEEXT) options --markdown > $@.tmp && mv $@.tmp $@

# Two editions from the same sources: the student's (doc/html) and the
# instructor's (doc/instructor/html), which adds the lab READMEs' model
# answers (the `\if instructor` ... `\endif` sections, Doxygen's
# ENABLED_SECTIONS).  Both include the lab READMEs, so the course path can
# link to them; each edition keeps its own warnings.log, and a warning in
# either fails `make doc`.
HL_DOC_LABS = $(LAB_NAMES:%=exercises/%/README.md)
HL_DOC_EDITIONS = doc:student doc/instructor:instructor

doc: book/gen_figures$(EXEEXT) book/Doxyfile book/appendix-options.md
	@test -n "$(DOXYGEN)" || { echo "make doc: doxygen not found (Debian: apt-get install doxygen), re-run configure" >&2; exit 1; }
	@test -n "$(DOT)" || { echo "make doc: dot not found (Debian: apt-get install graphviz), re-run configure" >&2; exit 1; }
	rm -rf doc/html doc/instructor doc/figures doc/warnings.log
	$(MKDIR_P) doc/figures
	$(SHELL) $(srcdir)/book/gen_worked.sh ./heaplab$(EXEEXT) doc/figures
	./book/gen_figures doc/figures
	$(SHELL) $(srcdir)/book/gen_explain.sh ./heaplab$(EXEEXT) doc/figures
	$(SHELL) $(srcdir)/book/gen_examples.sh ./heaplab$(EXEEXT) doc/figures
	$(SHELL) $(srcdir)/book/gen_steppers.sh ./heaplab$(EXEEXT) doc/figures
	@for ed in $(HL_DOC_EDITIONS); do \
	  out=$${ed%%:*}; sections=$${ed#*:}; \
	  test "$$sections" = student && sections=; \
	  echo "  DOXYGEN  $$out/html"; \
	  $(MKDIR_P) $$out || exit 1; \
	  HL_DOC_INPUT="$(HL_BOOK_CHAPTERS:%=$(abs_top_srcdir)/%) $(HL_DOC_LABS:%=$(abs_top_srcdir)/%) $(HL_NOTES:%=$(abs_top_srcdir)/%) $(abs_top_builddir)/book/appendix-options.md $(HL_DOC_HDRS:%=$(abs_top_srcdir)/%)" \
	  HL_DOC_IMAGES="$(abs_top_builddir)/doc/figures" HL_DOC_OUT="$(abs_top_builddir)/$$out" \
	  HL_DOC_SECTIONS="$$sections" HL_DOC_EDITION="$${sections:+ (instructor edition)}" \
	    $(DOXYGEN) book/Doxyfile || exit 1; \
	  for s in doc/figures/*-stepper.html; do test ! -f "$$s" || cp "$$s" $$out/html/ || exit 1; done; \
	  ln -sfn "$(abs_top_srcdir)/policies" $$out/policies; \
	  ln -sfn "$(abs_top_srcdir)/exercises" $$out/exercises; \
	  touch $$out/warnings.log; \
	  bad=`awk -v tol='$(HL_DOC_TOLERATED)' \
	    '/^[ \t]/ { if (!ok) print; next } { ok = tol != "" && $$0 ~ tol; if (!ok) print }' $$out/warnings.log`; \
	  if test -n "$$bad"; then \
	    echo "$$bad" >&2; \
	    echo "make doc: Doxygen warned (above, $$out/warnings.log): document what it names" >&2; \
	    exit 1; \
	  fi; \
	done
	@# the instructor's edition must differ from the student's by the answers
	@# (the student's handout, make dist-student, has none to put anywhere)
	@test "`cat $(srcdir)/EDITION 2>/dev/null`" = student || \
	{ grep -q 'Answer\.' doc/instructor/html/*README.html && ! grep -q 'Answer\.' doc/html/*README.html; } || \
	  { echo "make doc: the answers are not where they belong (instructor's edition only)" >&2; exit 1; }
	@echo "make doc: open doc/html/index.html (student's edition), doc/instructor/html/index.html (instructor's)"
PHONY_TARGETS += doc

# `make clean` removes the site (other fragments may add their own
# prerequisites to clean-local; keep it recipe-less here).
clean-local: book-clean-doc
book-clean-doc:
	rm -rf doc/html doc/instructor doc/figures doc/warnings.log doc/policies doc/exercises
PHONY_TARGETS += book-clean-doc

# The student's and the instructor's handouts (make dist-student,
# make dist-instructor) and their test.
include book/editions.mk
