#!/bin/sh
# Every chapter of the book shows at least one figure, links to the code that
# implements it and to its lab (folders that exist); every figure a chapter shows is one that
# book/gen_figures really draws from a heap (so no picture can be hand-made
# or go stale), and each drawing is valid DOT when Graphviz is installed.
# Each teaching chapter (1-14, 16 and 17) ends with exercises in three levels,
# and the instructor's edition answers every one: the test prints, per
# chapter and in all, "N of M exercises answered", and fails below M.
# A chapter names fidelity rows only in its "Where the figures come from".
set -u
. "$(dirname "$0")/../lib.sh"
book="${srcdir:-.}/book"
hl_tmpdir book-chapters
./book/gen_figures "$tmp" || { echo "FAIL: gen_figures failed"; exit 1; }
bad=0
n=0
for f in "$book"/[0-9][0-9]-*.md; do
	case "$f" in */00-index.md) continue ;; esac
	n=$((n + 1))
	name=${f##*/}
	figs=$(sed -n 's/.*!\[[^]]*\](\([^)]*\.svg\)).*/\1/p' "$f")
	[ -n "$figs" ] || { echo "FAIL: $name shows no figure"; bad=1; }
	for s in $figs; do
		[ -s "$tmp/${s%.svg}.dot" ] || { echo "FAIL: $name shows $s, which gen_figures does not draw"; bad=1; }
	done
	grep -q '](\.\./policies/' "$f" || { echo "FAIL: $name does not link to its code"; bad=1; }
	for dir in $(grep -o '](\.\./\(policies\|exercises\)/[^)]*)' "$f" | sed 's/^](\.\.\///; s/)$//'); do
		[ -d "${srcdir:-.}/$dir" ] || { echo "FAIL: $name links to $dir, which does not exist"; bad=1; }
	done
	grep -q '](\.\./exercises/\|heaplab grade' "$f" || { echo "FAIL: $name names no lab"; bad=1; }
done
[ "$n" -ge 14 ] || { echo "FAIL: only $n chapters"; bad=1; }
# The teaching chapters (all but the index and the instructor's guide):
# each embeds its own stepper, which a generator's table names (the pages
# themselves are checked by book_examples.sh, book_worked.sh and the
# browser test), and together they make a course text of 35,000 words.
words=0 items=0 answered=0
# the exercises of chapter $1: FAIL lines, then "COUNT items answered"
exercises() {
	awk -v name="${1##*/}" '
	function close_item() {
		if (item != "" && answers > 1) printf "FAIL: %s, exercise %s: %d answers\n", name, item, answers
		if (item != "" && answers == 1) answered++
		item = ""; answers = 0
	}
	/^## / { close_item(); on = ($0 == "## Exercises"); if (on) seen = 1; next }
	!on { next }
	/^\*\*(Warm-up|Core|Challenge)\.\*\*$/ {
		close_item(); lv = substr($0, 3, length($0) - 5)
		if (lv != want[nlv + 1]) printf "FAIL: %s: the level %s comes where %s should\n", name, lv, want[nlv + 1]
		if (nlv && !nin) printf "FAIL: %s: the level %s has no exercise\n", name, want[nlv]
		nlv++; nin = 0; next
	}
	/^[0-9]+\. / {
		close_item(); item = $1 + 0; n++; nin++
		if (item != n) printf "FAIL: %s: exercise %s is numbered %s\n", name, n, item
		if (!nlv) printf "FAIL: %s: exercise %s comes before the first level\n", name, item
		next
	}
	/^[ \t]*\\if instructor[ \t]*$/ {
		if (open) printf "FAIL: %s: nested \\if instructor in exercise %s\n", name, item
		if (item == "" || $0 !~ /^[ \t]/) printf "FAIL: %s: an answer outside an exercise, after exercise %s\n", name, n
		open = 1; body = 0; next
	}
	/^[ \t]*\\endif[ \t]*$/ {
		if (!open || !body) printf "FAIL: %s, exercise %s: an empty or unopened answer\n", name, item
		else if (item != "") answers++
		open = 0; next
	}
	open && /\*\*Answer\.\*\*/ { body = 1 }
	END {
		close_item()
		if (open) printf "FAIL: %s: an \\if instructor is never closed\n", name
		if (!seen) printf "FAIL: %s: no \"## Exercises\" section\n", name
		else if (nlv != 3) printf "FAIL: %s: exercises in %d of the 3 levels (Warm-up, Core, Challenge)\n", name, nlv
		else if (!nin) printf "FAIL: %s: the level Challenge has no exercise\n", name
		printf "COUNT %d %d\n", n, answered
	}
	BEGIN { want[1] = "Warm-up"; want[2] = "Core"; want[3] = "Challenge" }' "$1"
}
for f in "$book"/[0-9][0-9]-*.md; do
	case "$f" in */00-index.md|*/15-instructor-guide.md) continue ;; esac
	name=${f##*/} ch=${name%%-*}
	words=$((words + $(wc -w < "$f")))
	sed -n '/^\\htmlonly$/,/^\\endhtmlonly$/p' "$f" | grep -q "<iframe class=\"hl-stepper\" src=\"ch$ch-stepper.html\"" ||
		{ echo "FAIL: $name embeds no ch$ch-stepper.html"; bad=1; }
	cat "$book/gen_steppers.sh" "$book/gen_worked.sh" | grep -q "^$ch " ||
		{ echo "FAIL: no generator's table has a line for chapter $ch"; bad=1; }
	# its exercises: "## Exercises", graded in the three levels
	# "**Warm-up.**", "**Core.**" and "**Challenge.**" (in that order, each
	# with an item), items numbered 1, 2, ... at the start of a line
	# through the three levels; an item is answered when, before the next
	# item, level or section, it holds one indented `\if instructor` ...
	# `\endif` section with a "**Answer.**" paragraph
	ex=$(exercises "$f")
	echo "$ex" | grep '^FAIL' && bad=1
	set -- $(echo "$ex" | sed -n 's/^COUNT //p')
	items=$((items + $1)) answered=$((answered + $2))
	echo "$name: $2 of $1 exercises answered"
	[ "$1" -gt 0 ] || { echo "FAIL: $name has no exercises"; bad=1; }
	# every "Predict, then run" section, and every section that says
	# "Predict first", holds a model answer for the instructor's edition
	# (the student's, made by make dist-student, has none)
	[ "$(cat "${srcdir:-.}/EDITION" 2> /dev/null)" = student ] && continue
	[ "$2" -eq "$1" ] || { echo "FAIL: $name: $(($1 - $2)) of $1 exercises without a model answer"; bad=1; }
	unanswered=$(awk '/^## / { if (p && !a) print s; s = $0; p = ($0 == "## Predict, then run"); a = 0; next }
		/Predict first/ { p = 1 } /\\if instructor/ { a = 1 } END { if (p && !a) print s }' "$f")
	[ -z "$unanswered" ] || { echo "FAIL: $name asks for a prediction with no model answer in: $unanswered"; bad=1; }
done
[ "$words" -ge 35000 ] || { echo "FAIL: the teaching chapters have $words words, fewer than 35,000"; bad=1; }
# The names of fidelity rows (glibc.late-block-pins, jemalloc.decay-...:
# every row of policies/*/*.rows, and any FAMILY.word-word a chapter
# spells, so a renamed or dropped row counts too) are bookkeeping, not
# course text: a chapter names them only in its closing "Where the figures
# come from" (or, in chapters 9 and 10 and the preface, "Where the facts
# come from"), beside the claim each row measures.  glibc's tunables
# (glibc.malloc.*, glibc.pthread.*) are settings, not rows.
rows=$(awk '$1 == "row" { print $2 }' "${srcdir:-.}"/policies/*/*.rows)
[ -n "$rows" ] || { echo "FAIL: no fidelity rows found in policies/*/*.rows"; bad=1; }
for f in "$book"/[0-9][0-9]-*.md; do
	stray=$(echo "$rows" | awk -v name="${f##*/}" '
	FNR == NR { if ($1 != "") row[$1] = 1; next }
	/^## / { notes = ($0 ~ /^## Where the (figures|facts) come from( \{#[A-Za-z0-9_-]+\})?$/); next }
	notes { next }
	{
		line = $0
		while (match(line, /(glibc|jemalloc|mimalloc|tcmalloc|pymalloc)\.[A-Za-z0-9_*.-]+/)) {
			w = substr(line, RSTART, RLENGTH); line = substr(line, RSTART + RLENGTH)
			sub(/[.-]+$/, "", w)
			if (w ~ /^glibc\.(malloc|pthread|rtld|mem|cpu|elision)\./) continue
			if ((w in row) || w ~ /^[a-z]+\.[a-z0-9*]+(-[a-z0-9*]+)+$/)
				printf "FAIL: %s:%d names the fidelity row %s outside \"Where the figures come from\"\n", name, FNR, w
		}
	}' - "$f")
	[ -z "$stray" ] || { echo "$stray"; bad=1; }
done
if command -v dot > /dev/null 2>&1; then
	for d in "$tmp"/*.dot; do
		dot -Tsvg "$d" -o /dev/null 2> "$tmp/err" || { echo "FAIL: ${d##*/} does not render"; cat "$tmp/err"; bad=1; }
	done
fi
echo "exercises of chapters 1-14, 16 and 17: $answered of $items exercises answered"
[ "$items" -ge 90 ] || { echo "FAIL: only $items exercises found in chapters 1-14, 16 and 17"; bad=1; }
[ $bad -eq 0 ] && echo "book: $n chapters, each with figures drawn by gen_figures, code and lab links; $words words of teaching chapters, each with its stepper"
exit $bad
