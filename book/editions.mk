# The course's two handouts (book/make-edition.sh does the work):
#   make dist-student     heaplab-student-VERSION.tar.gz: the labs, the book
#                         in its student's edition, the student skeleton and
#                         the tools, with no answer and no firstfit source
#                         (firstfit ships compiled, for x86-64 Linux)
#   make dist-instructor  heaplab-instructor-VERSION.tar.gz: the whole tree,
#                         every answer and firstfit's sources
# Both start from the release's file list (make distdir).  The student's
# needs firstfit compiled in (configure --with-policy=all, the default) and
# no sanitizer, since it ships that object.  tests/book/book_editions.sh builds
# the student's, searches it for every answer, and builds its labs.
HL_EDITION_STUDENT = $(PACKAGE_TARNAME)-student-$(VERSION)
HL_EDITION_INSTRUCTOR = $(PACKAGE_TARNAME)-instructor-$(VERSION)
HL_FIRSTFIT_SRCS = firstfit firstfit_blocks firstfit_list firstfit_check firstfit_dot firstfit_stats
EXTRA_DIST += book/make-edition.sh book/editions.mk

# firstfit as one relocatable, position-independent object without debug
# information whose only global symbol is its table: built from the
# sources with the project's flags (no sanitizer, whatever this build has).
# (libhlcore.la: remade whenever a core header firstfit includes changes,
# which may change the layout the handout's core expects)
book/firstfit-prebuilt.o: $(HL_FIRSTFIT_SRCS:%=$(top_srcdir)/policies/firstfit/%.c) $(top_srcdir)/policies/firstfit/firstfit.h config.h libhlcore.la
	@case " $(HL_POLICIES) " in *" firstfit "*) ;; *) echo "make dist-student: firstfit is not compiled in (configure --with-policy=all)" >&2; exit 1 ;; esac
	@test -z "$(HL_SANITIZERS)$(HL_FUZZ_LDFLAGS)" || { echo "make dist-student: this build has sanitizers; the handout's firstfit must not (configure without --enable-sanitizers)" >&2; exit 1; }
	$(AM_V_GEN)rm -rf book/firstfit.tmp && $(MKDIR_P) book/firstfit.tmp && \
	for s in $(HL_FIRSTFIT_SRCS); do \
	  $(CC) $(HL_CFLAGS) -O2 -g0 -fPIC -DPIC -include config.h -I$(top_srcdir)/core -I$(top_builddir) \
	    -c $(top_srcdir)/policies/firstfit/$$s.c -o book/firstfit.tmp/$$s.o || exit 1; \
	done && \
	$(LD) -r book/firstfit.tmp/*.o -o book/firstfit.tmp/all.o && \
	$(HL_OBJCOPY) --keep-global-symbol=hl_policy_firstfit --strip-debug --strip-unneeded book/firstfit.tmp/all.o $@ && \
	rm -rf book/firstfit.tmp
CLEANFILES += book/firstfit-prebuilt.o
HL_OBJCOPY = objcopy

dist-student: book/firstfit-prebuilt.o
	rm -rf $(HL_EDITION_STUDENT) $(HL_EDITION_STUDENT).tar.gz
	$(MAKE) $(AM_MAKEFLAGS) distdir distdir=$(HL_EDITION_STUDENT)
	$(SHELL) $(srcdir)/book/make-edition.sh student $(HL_EDITION_STUDENT) $(HL_EDITION_STUDENT).tar.gz book/firstfit-prebuilt.o
	rm -rf $(HL_EDITION_STUDENT)
	@echo "make dist-student: $(HL_EDITION_STUDENT).tar.gz"

dist-instructor:
	rm -rf $(HL_EDITION_INSTRUCTOR) $(HL_EDITION_INSTRUCTOR).tar.gz
	$(MAKE) $(AM_MAKEFLAGS) distdir distdir=$(HL_EDITION_INSTRUCTOR)
	$(SHELL) $(srcdir)/book/make-edition.sh instructor $(HL_EDITION_INSTRUCTOR) $(HL_EDITION_INSTRUCTOR).tar.gz
	rm -rf $(HL_EDITION_INSTRUCTOR)
	@echo "make dist-instructor: $(HL_EDITION_INSTRUCTOR).tar.gz"
PHONY_TARGETS += dist-student dist-instructor
CLEANFILES += $(HL_EDITION_STUDENT).tar.gz $(HL_EDITION_INSTRUCTOR).tar.gz

# The student's handout is checked by tests/book/book_editions.sh.
