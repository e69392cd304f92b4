#!/bin/sh
# The course path (book/course-path.md) covers the whole book: each of its
# three tables (the fourteen-week semester, the ten-week unit and the
# three-week version) names every
# chapter (but 15) and every lab; every link on the page points to a file
# that exists; each chapter's header states the week the ten-week table
# first gives it and links to its lab; each lab README states the week the
# table first gives it, links to a chapter that exists and that chapter's
# header links back to the lab; each chapter's header states its
# prerequisites, chapters the ten-week unit gives no later than it.
. "${srcdir:-.}/tests/book/book_lib.sh"
book="$top/book"
path="$book/course-path.md"
need_page "$path"

# the rows of the table under heading $1 (lines starting with "| N |")
rows() {
	awk -v h="$1" '/^## / { on = ($0 == "## " h) } on && /^\| *[0-9]+ *\|/' "$path"
}
for table in "The fourteen-week semester" "The ten-week unit" "The three-week version"; do
	r=$(rows "$table")
	[ -n "$r" ] || { fail "no table under '## $table'"; continue; }
	for f in "$book"/[0-9][0-9]-*.md; do
		n=${f##*/}; n=${n%%-*}
		case $n in 00|15) continue ;; esac
		echo "$r" | grep -q "](${f##*/})" || fail "$table: chapter $n (${f##*/}) is not on the path"
	done
	for d in "$top"/exercises/[0-9][0-9]-*/; do
		d=${d%/}; d=${d##*/}
		echo "$r" | grep -q "](\.\./exercises/$d/README\.md)" || fail "$table: lab $d is not on the path"
	done
done

# the fourteen-week table's word counts: wc -w of each page it links (the
# chapters, then the labs' READMEs) once its \if instructor sections are
# cut, as make dist-student cuts them: within a tenth of the table's figure
student_words() {
	awk '/^[ \t]*\\if instructor([ \t]|$)/ { d++; next } d && /^[ \t]*\\if[ \t]/ { d++; next }
		d && /^[ \t]*\\endif([ \t]|$)/ { d--; next } !d' "$@" | wc -w
}
words_wrong=$(rows "The fourteen-week semester" | while IFS='|' read -r _ week reading words lab lwords _; do
	pages=$(echo "$reading" | grep -o '](\([0-9][0-9]-[^)]*\.md\))' | sed 's/^](//; s/)$//; s|^|'"$book"'/|')
	labs=$(echo "$lab" | grep -o '](\.\./exercises/[^)]*)' | sed 's/^](\.\.\///; s/)$//; s|^|'"$top"'/|')
	want=$(echo "$words" | tr -d ' ,') lwant=$(echo "$lwords" | tr -d ' ,')
	got=$(student_words $pages) lgot=$(student_words $labs)
	# within a tenth: a workload, not a figure to keep to the word
	awk -v g="$got" -v w="$want" 'BEGIN { exit !(w > 0 && g >= 0.9 * w && g <= 1.1 * w) }' ||
		echo "week$week: the reading has $got words, the table says $want"
	awk -v g="$lgot" -v w="$lwant" 'BEGIN { exit !(w > 0 && g >= 0.9 * w && g <= 1.1 * w) }' ||
		echo "week$week: the lab has $lgot words, the table says $lwant"
done)
[ -z "$words_wrong" ] || fail "the fourteen-week table's words are wrong:
$words_wrong"

# every link of the page resolves
for l in $(grep -o '](\([^)#]*\))' "$path" | sed 's/^](//; s/)$//'); do
	case $l in http*) continue ;; esac
	[ -e "$book/$l" ] || fail "course-path.md links to $l, which does not exist"
done

# first week of the ten-week table that names $1 (a link target)
first_week() {
	rows "The ten-week unit" | grep -F "]($1)" | head -1 | sed 's/^| *\([0-9]*\) *|.*/\1/'
}
nch=0
for f in "$book"/[0-9][0-9]-*.md; do
	name=${f##*/}; n=${name%%-*}
	case $n in 00|15) continue ;; esac
	nch=$((nch + 1))
	want=$(first_week "$name")
	got=$(sed -n 's/^- \*\*Week\*\*: \([0-9]*\) of the ten-week \[course path\](course-path\.md).*/\1/p' "$f" | head -1)
	[ -n "$got" ] || { fail "$name: its header names no week of the course path"; continue; }
	[ "$got" = "$want" ] || fail "$name: its header says week $got, the course path week $want"
	for lab in $(sed -n '/^- \*\*Lab\*\*/p' "$f" | grep -o '](\.\./exercises/[^)]*)' | sed 's/^](\.\.\///; s/)$//'); do
		[ -d "$top/$lab" ] || fail "$name: its lab link $lab does not exist"
	done
done
[ "$nch" -ge 14 ] || fail "only $nch chapters"

# every chapter's header (before its first section) has one line
# "- **Prerequisites**: ...": "none" for the first, else links to the
# chapters to read first ("[A](..) to [B](..)" is a range).  Each one
# exists, is not the chapter itself and comes no later in the ten-week
# unit than the chapter (than its last week for the malloc lab, chapter
# 15, whose steps run from week 2 to week 10); and the line says what the
# instructor's guide's table of prerequisites (chapter 15) says.
# numbers, one a line, sorted: "A to B" ranges and "A, B" lists on stdin
expand() {
	awk '{ gsub(/,| and /, " "); n = split($0, w, " ")
		for (i = 1; i <= n; i++) if (w[i] ~ /^[0-9]+$/) {
			if (w[i + 1] == "to" && w[i + 2] ~ /^[0-9]+$/) { for (k = w[i]; k <= w[i + 2]; k++) print k; i += 2 }
			else print w[i] } }' | sort -n | tr '\n' ' '
}
# the guide's table: "N: prerequisites" a line
guide=$(awk '/^## / { on = ($0 ~ /\{#ch15-prerequisites\}/) } on && /^\| [0-9]/ {
	n = split($0, c, "|"); for (i = 2; i + 1 < n; i += 2) { k = c[i]; v = c[i + 1]; sub(/^ */, "", k); sub(/ .*/, "", k)
		gsub(/^ +| +$/, "", v); if (v == "(none)") v = ""; print k ":" v } }' "$book/15-instructor-guide.md")
[ "$(echo "$guide" | grep -c .)" -ge 17 ] || fail "the instructor's guide's table of prerequisites has $(echo "$guide" | grep -c .) chapters, fewer than 17"
# last week of the ten-week table that names $1
last_week() {
	rows "The ten-week unit" | grep -F "]($1)" | tail -1 | sed 's/^| *\([0-9]*\) *|.*/\1/'
}
npre=0
for f in "$book"/[0-9][0-9]-*.md; do
	name=${f##*/}; n=${name%%-*}
	[ "$n" = 00 ] && continue
	head=$(sed '/^## /q' "$f")
	lines=$(echo "$head" | grep -c '^- \*\*Prerequisites\*\*: ')
	[ "$lines" -eq 1 ] || { fail "$name: $lines prerequisite lines in its header, not 1"; continue; }
	line=$(echo "$head" | grep '^- \*\*Prerequisites\*\*: ')
	pre=$(echo "$line" | grep -o '](\([0-9][0-9]-[^)]*\.md\))' | sed 's/^](//; s/)$//')
	if [ -z "$pre" ]; then
		case $line in *": none"*) ;; *) fail "$name: its prerequisites name no chapter and do not say none" ;; esac
	fi
	# the chapters the line names, ranges expanded, against the guide's
	got=$(echo "$line" | sed 's/^[^:]*: //; s/\[\([0-9]*\)\]([^)]*)/ \1 /g; s/[:;].*//' | expand)
	want=$(echo "$guide" | sed -n "s/^$((1$n - 100)):\(.*\)/\1/p" | expand)
	[ "$got" = "$want" ] || fail "$name: its header's prerequisites are '$got', the instructor's guide's table '$want'"
	if [ "$n" = 15 ]; then mine=$(last_week "$name"); else mine=$(first_week "$name"); fi
	for p in $(echo "$got"); do
		pf=$(ls "$book"/"$(printf %02d "$p")"-*.md 2> /dev/null | head -1)
		[ -n "$pf" ] || { fail "$name: prerequisite chapter $p does not exist"; continue; }
		[ "$p" -ne "$((1$n - 100))" ] || fail "$name: lists itself as a prerequisite"
		theirs=$(first_week "${pf##*/}")
		[ -n "$mine" ] && [ -n "$theirs" ] && [ "$theirs" -le "$mine" ] ||
			fail "$name (week ${mine:-?}) needs chapter $p, which the ten-week unit gives in week ${theirs:-?}"
	done
	for p in $pre; do
		[ -f "$book/$p" ] || fail "$name: its prerequisites link to $p, which does not exist"
	done
	npre=$((npre + 1))
done

nlab=0
for readme in "$top"/exercises/[0-9][0-9]-*/README.md; do
	d=${readme%/README.md}; d=${d##*/}
	nlab=$((nlab + 1))
	want=$(first_week "../exercises/$d/README.md")
	got=$(sed -n 's/^Course path: week \([0-9]*\) of the ten-week unit.*/\1/p' "$readme" | head -1)
	[ -n "$got" ] || { fail "lab $d: its README names no week of the course path"; continue; }
	[ "$got" = "$want" ] || fail "lab $d: its README says week $got, the course path week $want"
	grep -q '](\.\./\.\./book/course-path\.md)' "$readme" || fail "lab $d: its README does not link to the course path"
	chapters=$(grep -o '](\.\./\.\./book/[0-9][0-9]-[^)]*\.md)' "$readme" | sed 's/^](\.\.\/\.\.\/book\///; s/)$//')
	[ -n "$chapters" ] || { fail "lab $d: its README names no chapter"; continue; }
	for c in $chapters; do
		[ -f "$book/$c" ] || fail "lab $d links to chapter $c, which does not exist"
	done
	primary=$(echo "$chapters" | head -1)
	[ -f "$book/$primary" ] && { sed -n '/^- \*\*Lab\*\*/p' "$book/$primary" | grep -q "](\.\./exercises/$d/)" ||
		fail "lab $d names $primary first, but that chapter's header does not link to the lab"; }
done
[ "$nlab" -ge 12 ] || fail "only $nlab labs"
[ $bad -eq 0 ] && echo "course path: $nch chapters and $nlab labs on the three tables, weeks and links agree both ways, the fourteen-week words counted; $npre chapters state their prerequisites, each taught no later"
exit $bad
