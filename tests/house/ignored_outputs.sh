#!/usr/bin/env bash
# A tree built in place (./configure && make && make check in the git
# checkout, as a newcomer does) leaves `git status` clean: every file the
# Makefile builds (programs, libraries, generated sources and pages, the
# files configure writes, the tests' logs) is ignored by .gitignore, and
# none of them is a file git tracks.  The Makefile of this build is asked
# for the lists (its *_PROGRAMS, *_LTLIBRARIES, nodist_*, BUILT_SOURCES,
# CLEANFILES, DISTCLEANFILES, CONFIG_CLEAN_FILES, noinst_DATA, TEST_LOGS)
# and git judges each name against the checkout's .gitignore.  The check is
# first shown to catch a program and a cleaned file planted in the lists,
# then the real lists must be clean.  Skips outside a git checkout (a
# release tarball has no .gitignore).  A few seconds.
set -u
. "$(dirname "$0")/../lib.sh"
srcdir=${srcdir:-.}
top=$(cd "$srcdir" && pwd)
command -v git >/dev/null || hl_skip "git is needed"
[ "$(git -C "$top" rev-parse --show-toplevel 2>/dev/null)" = "$top" ] ||
	hl_skip "$top is not a git checkout"
[ -f "$build/Makefile" ] || hl_skip "no Makefile in $build"
hl_tmpdir
fail=0

cat > "$tmp/outputs.mk" <<'MK'
hl-outputs:
	@for f in $(foreach v,$(filter %_PROGRAMS %_LTLIBRARIES %_LIBRARIES nodist_%,$(filter-out am__%,$(.VARIABLES))),$($(v))) \
		$(BUILT_SOURCES) $(CLEANFILES) $(DISTCLEANFILES) $(MOSTLYCLEANFILES) $(CONFIG_CLEAN_FILES) \
		$(noinst_DATA) $(TEST_LOGS) $(TEST_LOGS:.log=.trs) $(TEST_SUITE_LOG); do echo "$$f"; done
MK
printf 'check_PROGRAMS += tests/planted_probe\nCLEANFILES += book/planted.html\n' > "$tmp/planted.mk"

# not_ignored [MAKEFILE...]: the names the build's Makefile (with the extra
# makefiles given) builds that git would show as untracked or changed
not_ignored() {
	local extra=() f
	for f in "$@"; do extra+=(-f "$f"); done
	(cd "$build" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -f Makefile "${extra[@]}" -f "$tmp/outputs.mk" hl-outputs) >"$tmp/outputs" 2>"$tmp/make.err" ||
		{ echo "FAIL: the Makefile could not list its outputs:"; cat "$tmp/make.err"; exit 1; }
	grep -qx heaplab "$tmp/outputs" ||
		{ echo "FAIL: the Makefile's outputs do not include heaplab: $(head -5 "$tmp/outputs" | tr '\n' ' ')"; exit 1; }
	sort -u "$tmp/outputs" | git -c core.excludesFile=/dev/null -C "$top" check-ignore --stdin -n -v |
		awk -F '\t' '{ split($1, m, ":") } m[3] == "" || m[3] ~ /^!/ { print $2 }'
}

out=$(not_ignored "$tmp/planted.mk")
want=$'book/planted.html\ntests/planted_probe'
if [ "$out" = "$want" ]; then
	echo "PASS: a program and a cleaned file planted in the Makefile's lists are found unignored"
else
	echo "FAIL: the planted names are not found (or more are): $(echo "$out" | tr '\n' ' ')"; fail=1
fi

out=$(not_ignored)
n=$(sort -u "$tmp/outputs" | wc -l)
if [ -z "$out" ]; then
	echo "PASS: all $n files this build makes are ignored by .gitignore and untracked"
else
	echo "FAIL: files this build makes that git status would show (add them to .gitignore, anchored):"
	echo "$out" | sed 's/^/    /'
	fail=1
fi
exit $fail
