#!/bin/sh
# Every chapter of the book shows at least one figure, links to the code that
# implements it and to its lab (folders that exist); every figure a chapter shows is one that
# book/gen_figures really draws from a heap (so no picture can be hand-made
# or go stale), and each drawing is valid DOT when Graphviz is installed.
set -u
. "$(dirname "$0")/lib.sh"
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
words=0
for f in "$book"/[0-9][0-9]-*.md; do
	case "$f" in */00-index.md|*/15-instructor-guide.md) continue ;; esac
	name=${f##*/} ch=${name%%-*}
	words=$((words + $(wc -w < "$f")))
	sed -n '/^\\htmlonly$/,/^\\endhtmlonly$/p' "$f" | grep -q "<iframe class=\"hl-stepper\" src=\"ch$ch-stepper.html\"" ||
		{ echo "FAIL: $name embeds no ch$ch-stepper.html"; bad=1; }
	cat "$book/gen_steppers.sh" "$book/gen_worked.sh" | grep -q "^$ch " ||
		{ echo "FAIL: no generator's table has a line for chapter $ch"; bad=1; }
	# every "Predict, then run" section, and every section that says
	# "Predict first", holds a model answer for the instructor's edition
	# (the student's, made by make dist-student, has none)
	[ "$(cat "${srcdir:-.}/EDITION" 2> /dev/null)" = student ] && continue
	unanswered=$(awk '/^## / { if (p && !a) print s; s = $0; p = ($0 == "## Predict, then run"); a = 0; next }
		/Predict first/ { p = 1 } /\\if instructor/ { a = 1 } END { if (p && !a) print s }' "$f")
	[ -z "$unanswered" ] || { echo "FAIL: $name asks for a prediction with no model answer in: $unanswered"; bad=1; }
done
[ "$words" -ge 35000 ] || { echo "FAIL: the teaching chapters have $words words, fewer than 35,000"; bad=1; }
if command -v dot > /dev/null 2>&1; then
	for d in "$tmp"/*.dot; do
		dot -Tsvg "$d" -o /dev/null 2> "$tmp/err" || { echo "FAIL: ${d##*/} does not render"; cat "$tmp/err"; bad=1; }
	done
fi
[ $bad -eq 0 ] && echo "book: $n chapters, each with figures drawn by gen_figures, code and lab links; $words words of teaching chapters, each with its stepper"
exit $bad
