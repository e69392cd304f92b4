# Shared by every lab's Makefile: where the build is, how to run and draw.
#
# Builds are out of tree, so a lab folder exists twice:
#   the source folder  exercises/NN-name/   README.md, Makefile, scripts, traces
#   the build folder   $BUILD/exercises/NN-name/   the compiled program, pictures
# Either works:
#   make -C $BUILD/exercises/NN-name run     (the build folder has a generated
#                                             GNUmakefile that includes ours)
#   make -C exercises/NN-name run BUILD=/path/to/build   (from the sources;
#                                             BUILD defaults to ../.., which is
#                                             right for an in-tree build)
EXERCISES := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
BUILD ?= ../..
TOP := $(abspath $(BUILD))
HEAPLAB := $(TOP)/heaplab
LAB_PROG := $(TOP)/exercises/$(LAB)/lab
HERE := $(EXERCISES)/$(LAB)
TRACES := $(EXERCISES)/../traces
OUT ?= $(TOP)/exercises/$(LAB)
PICTURES := $(OUT)/pictures
# What `build` makes and what `check` runs (a lab with a script overrides them).
LAB_TARGETS ?= exercises/$(LAB)/lab
LAB_CHECK ?= $(LAB_PROG)
# The environment a lab program needs (it finds traces/ through srcdir).
LAB_ENV = srcdir=$(EXERCISES)/..
# The lab program's full run, and the rendering of what it wrote.
LAB_RUN = $(LAB_ENV) $(LAB_PROG) --full --pictures $(PICTURES)
DRAW = @$(MAKE) --no-print-directory -f $(HERE)/Makefile BUILD=$(TOP) pictures

.DEFAULT_GOAL := run
.PHONY: run check build pictures clean

# Makes sure the lab's program and the heaplab command are up to date.
build:
	@test -f $(TOP)/Makefile || { echo "no build in $(TOP): set BUILD=/path/to/build (see exercises/README.md)"; exit 2; }
	@$(MAKE) --no-print-directory -C $(TOP) heaplab $(LAB_TARGETS)

# The same check `make check` runs.
check: build
	@cd $(TOP) && $(LAB_ENV) $(LAB_CHECK)

# Renders every snapshot the run wrote (Graphviz needed).
pictures:
	@if ! command -v dot >/dev/null; then echo "(Graphviz is not installed: the pictures stay .dot files in $(PICTURES))"; exit 0; fi; \
	for f in $(PICTURES)/*.dot; do test -e "$$f" || continue; $(HEAPLAB) render "$$f" || exit 1; echo "drawn: $${f%.dot}.svg"; done

clean:
	rm -rf $(PICTURES)
