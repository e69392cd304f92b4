#!/bin/sh
# The student's handout (make dist-student) holds no answer and no solution,
# and its labs build and pass:
#   1. it has no `\if instructor` section, no line of any model answer of the
#      source tree's pages, no `a:` or `why:` line of the question bank and
#      no explanation of it;
#   2. it has no source of firstfit (no line found only in firstfit's
#      sources), only its compiled object, whose one global symbol is the
#      policy's table;
#   3. it has none of the hidden traces of the malloc lab (traces/hidden,
#      by name or by content), which the instructor's kit has;
#   4. unpacked, it configures with the student skeleton, builds, and its
#      checks pass: the skeleton's, the shipped firstfit's, the labs that
#      use firstfit and heaplab grade (whose reference is firstfit).
. "${srcdir:-.}/tests/book/book_lib.sh"
src=${abs_top_srcdir:?run me from make check}
build=${abs_top_builddir:?run me from make check}
hl_skip_sanitized "a sanitizer build cannot make the handout (its firstfit object must not be instrumented)"
grep -q '^#define HL_HAVE_POLICY_FIRSTFIT 1' "$build/config.h" || { echo "SKIP: firstfit is not compiled in (configure --with-policy=all)"; exit 77; }
command -v autoreconf > /dev/null || { echo "SKIP: autoreconf is missing (Debian: apt-get install autoconf automake libtool)"; exit 77; }
hl_tmpdir book_editions

# make from inside make check: as a person would type it (no jobserver)
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$build" dist-student > "$tmp/dist.log" 2>&1 ||
	{ cat "$tmp/dist.log"; echo "FAIL: make dist-student failed"; exit 1; }
tarball=$(ls "$build"/heaplab-student-*.tar.gz 2> /dev/null | head -n 1)
[ -s "$tarball" ] || { echo "FAIL: make dist-student wrote no heaplab-student-*.tar.gz"; exit 1; }
mkdir "$tmp/u" && tar -C "$tmp/u" -xzf "$tarball" && mv "$tarball" "$tmp/" || exit 1
hand=$(echo "$tmp"/u/heaplab-student-*)
[ -f "$hand/configure" ] || { echo "FAIL: the handout has no configure"; exit 1; }
[ "$(cat "$hand/EDITION")" = student ] || fail "the handout's EDITION is not 'student'"

# The source tree's own files (not a build inside it), by name pattern:
# in a git checkout the files git tracks or does not ignore (a tree built
# in place, where $build is $src, keeps its generated pages and sources
# beside them); else the tree without the build's folder.
src_files() {
	if [ "$(git -C "$src" rev-parse --show-toplevel 2> /dev/null)" = "$src" ]; then
		git -C "$src" ls-files --cached --others --exclude-standard |
			grep -E '\.(md|c|h|sh|txt|mk)$' | sed "s|^|$src/|"
	else
		find "$src" \( -path "$src/.git" -o -path "$src/_*" -o \( -path "$build" ! -path "$src" \) \) -prune -o \
			-type f \( -name '*.md' -o -name '*.c' -o -name '*.h' -o -name '*.sh' -o -name '*.txt' -o -name '*.mk' \) -print
	fi
}
# Prints the handout's lines that are, trimmed, one of the lines of file $1
# (the first five, with where they are).
grep -rIl '' "$hand" > "$tmp/texts"
found_in_handout() {
	[ -s "$1" ] || return 0
	xargs awk -v list="$1" 'BEGIN { while ((getline l < list) > 0) want[l] = 1 }
		{ t = $0; sub(/^[ \t]+/, "", t); sub(/[ \t]+$/, "", t) }
		t in want { print FILENAME ":" FNR ": " t; if (++n == 5) exit }' < "$tmp/texts"
}

# 1. answers: every line (trimmed, 30 characters or more) of an
# `\if instructor` section of the sources that appears nowhere else.
src_files | grep '\.md$' | xargs awk '
	/^[ \t]*\\if instructor([ \t]|$)/ { d++; next }
	d && /^[ \t]*\\endif([ \t]|$)/ { d--; next }
	{ t = $0; sub(/^[ \t]+/, "", t); sub(/[ \t]+$/, "", t); if (length(t) < 30) next
	  if (d) ans[t] = 1; else out[t] = 1 }
	END { for (t in ans) if (!(t in out)) print t }' > "$tmp/answers"
n_ans=$(wc -l < "$tmp/answers")
[ "$n_ans" -ge 500 ] || fail "only $n_ans answer lines found in the sources (is the search broken?)"
hits=$(found_in_handout "$tmp/answers")
[ -z "$hits" ] || fail "the handout holds model answers:
$hits"
grep -rln '^[[:space:]]*\\if instructor' "$hand" > "$tmp/sections" && fail "the handout has instructor sections: $(head -n 3 "$tmp/sections")"
grep -rlE '^[[:space:]]*\*\*Answer\.\*\*' "$hand" > "$tmp/answered" && fail "the handout has answers: $(head -n 3 "$tmp/answered")"
# the question bank: no a: or why: line, none of the explanations' text
grep -nE '^(a|why):' "$hand/book/questions.txt" | head -n 3 > "$tmp/qa"
[ -s "$tmp/qa" ] && fail "the handout's question bank has answers: $(cat "$tmp/qa")"
sed -n 's/^why:[ \t]*//p' "$src/book/questions.txt" | awk 'length($0) >= 30' > "$tmp/whys"
n_why=$(wc -l < "$tmp/whys")
[ "$n_why" -ge 100 ] || fail "only $n_why explanations found in the source bank"
hits=$(found_in_handout "$tmp/whys")
[ -z "$hits" ] || fail "the handout holds the bank's explanations:
$hits"
n_q=$(grep -c '^id:' "$hand/book/questions.txt")
[ "$n_q" = "$(grep -c '^id:' "$src/book/questions.txt")" ] || fail "the handout's bank has $n_q questions, the source's $(grep -c '^id:' "$src/book/questions.txt")"

# 2. the solution: lines (trimmed, 25 characters or more) of firstfit's
# sources found in no other source file (its Check suite, test_firstfit.c,
# tests behaviour and ships).
src_files | awk '!/\/policies\/firstfit\// || /\/policies\/firstfit\/test_[^\/]*$/' | xargs cat | sed 's/^[ \t]*//; s/[ \t]*$//' > "$tmp/others"
ls "$src"/policies/firstfit/*.c | grep -v '/test_[^/]*$' | xargs cat - "$src"/policies/firstfit/firstfit.h < /dev/null | sed 's/^[ \t]*//; s/[ \t]*$//' |
	awk 'length($0) >= 25' | sort -u > "$tmp/ff"
awk 'NR == FNR { seen[$0] = 1; next } !($0 in seen)' "$tmp/others" "$tmp/ff" > "$tmp/solution"
n_sol=$(wc -l < "$tmp/solution")
[ "$n_sol" -ge 200 ] || fail "only $n_sol lines unique to firstfit's sources (is the search broken?)"
hits=$(found_in_handout "$tmp/solution")
[ -z "$hits" ] || fail "the handout holds firstfit's sources:
$hits"
solution_c=$(ls "$hand"/policies/firstfit/*.c 2> /dev/null | grep -v '/test_[^/]*$')
[ -z "$solution_c" ] || fail "the handout has C files of firstfit: $solution_c"
globals=$(nm -g --defined-only "$hand/policies/firstfit/firstfit-prebuilt.o" 2> /dev/null | awk '{ print $3 }' | tr '\n' ' ')
[ "$globals" = "hl_policy_firstfit " ] || fail "the shipped firstfit object defines '$globals', not only hl_policy_firstfit"

# 3. the hidden traces: in the instructor's kit, nowhere in the handout
# (neither the folder nor any file with one's content, under any name)
n_hidden=0
for f in "$src"/traces/hidden/*.rep; do
	[ -f "$f" ] || continue
	n_hidden=$((n_hidden + 1))
	sum=$(cksum < "$f")
	find "$hand" -type f -size "$(wc -c < "$f")c" | while read -r g; do
		[ "$(cksum < "$g")" = "$sum" ] && echo "$g"
	done > "$tmp/copies"
	[ -s "$tmp/copies" ] && fail "the handout holds the hidden trace $(basename "$f"): $(head -n 1 "$tmp/copies")"
done
[ "$n_hidden" -ge 4 ] || fail "only $n_hidden hidden traces in $src/traces/hidden (is the set missing?)"
[ -e "$hand/traces/hidden" ] && fail "the handout has traces/hidden"
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$build" dist-instructor > "$tmp/dist-i.log" 2>&1 ||
	{ cat "$tmp/dist-i.log"; fail "make dist-instructor failed"; }
kit=$(ls "$build"/heaplab-instructor-*.tar.gz 2> /dev/null | head -n 1)
n_kit=$(tar -tzf "$kit" 2> /dev/null | grep -c '/traces/hidden/hidden-.*\.rep$')
[ "$n_kit" = "$n_hidden" ] || fail "the instructor's kit has $n_kit of the $n_hidden hidden traces"
rm -f "$kit"

# 4. it builds and its labs pass (the policies those labs use, and the
# targets they need: a full build is the lead's `make distcheck`-like job)
mkdir "$tmp/b"
(cd "$tmp/b" && "$hand/configure" -q --with-policy=bins,firstfit,student > "$tmp/configure.log" 2>&1) ||
	{ tail -n 20 "$tmp/configure.log"; echo "FAIL: the handout does not configure"; exit 1; }
checks="policies/student/test_student policies/firstfit/test_firstfit exercises/03-free-lists/lab exercises/06-heap-wont-shrink/lab"
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL nice make -s -C "$tmp/b" -j2 heaplab $checks > "$tmp/make.log" 2>&1 ||
	{ tail -n 20 "$tmp/make.log"; echo "FAIL: the handout does not build"; exit 1; }
for t in $checks; do
	(cd "$tmp/b" && srcdir="$hand" CK_TIMEOUT_MULTIPLIER=${CK_TIMEOUT_MULTIPLIER:-1} "./$t") > "$tmp/run.log" 2>&1 ||
		{ tail -n 10 "$tmp/run.log"; fail "the handout's $t does not pass"; }
done
# heaplab grade scores the skeleton against the shipped firstfit
"$tmp/b/heaplab" grade --no-throughput --json short1-bal > "$tmp/grade.json" 2> "$tmp/grade.err" ||
	fail "heaplab grade fails in the handout: $(cat "$tmp/grade.err")"
grep -q '"policy":"student","reference":"firstfit"' "$tmp/grade.json" && grep -q '"ref_valid":true' "$tmp/grade.json" &&
	grep -q '"correct":1,"total":1' "$tmp/grade.json" || fail "heaplab grade did not score student against firstfit: $(cat "$tmp/grade.json")"
[ $bad -eq 0 ] && echo "student handout: none of $n_ans answer lines, $n_why explanations or $n_sol lines of firstfit's sources in it, none of the $n_hidden hidden traces (all in the instructor's kit); configured, built, and $checks passed, and heaplab grade scored the skeleton against firstfit"
exit $bad
