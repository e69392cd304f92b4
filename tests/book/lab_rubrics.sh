#!/bin/sh
# Every lab says what the student hands in and how it is marked, in the
# student's text:
#   1. the total a lab is worth is read from chapter 15's "Grading the
#      labs" ("worth N points"), and the guide's own table adds up to it;
#   2. every lab README has a "Hand-in and marking" section with a
#      "Deliverables" list that names the lab's run command, and a
#      "Rubric" that states the same total and whose table (part | points |
#      what earns them) adds up to it, with only the guide's parts, and
#      ties the run record to the lab's `check:` lines;
#   3. the student's edition of each README, cut by book/make-edition.sh
#      itself (on a small tree made here), still has all of that and no
#      instructor text: no `\if instructor`, no answer, no line of the
#      source's instructor sections (a marking key after the rubric is one).
# The check is first shown to catch a README made here to break each rule.
. "${srcdir:-.}/tests/book/book_lib.sh"
guide="$top/book/15-instructor-guide.md"
need_page "$guide"
need_page "$top/book/make-edition.sh"
hl_tmpdir lab_rubrics
edition=$(cat "$top/EDITION" 2> /dev/null || :)

# the guide's grading section, up to the next heading of its level
sed -n '/^## Grading the labs/,/^## /p' "$guide" | sed '1!{/^## /d;}' > "$tmp/grading"
[ -s "$tmp/grading" ] || { echo "FAIL: $guide has no section '## Grading the labs'"; exit 1; }
total=$(tr '\n' ' ' < "$tmp/grading" | grep -o 'worth [0-9][0-9]* points' | head -n 1 | tr -cd '0-9')
[ -n "$total" ] || { echo "FAIL: the guide's grading section states no 'worth N points'"; exit 1; }

# rows PART|POINTS of the first table headed "| part | points | what earns them |" in $1
rubric_rows() {
	awk -F'|' '/^\| *part *\| *points *\| *what earns them *\|/ { on = 1; next }
		on && /^\| *-/ { next }
		on && /^\|/ { p = $2; n = $3; gsub(/^ +| +$/, "", p); gsub(/^ +| +$/, "", n); print p "|" n; next }
		on { exit }' "$1"
}
# sum of the points of rows on stdin; "bad" when one is not a number
points_sum() {
	awk -F'|' '$2 !~ /^[0-9]+(\.[0-9]+)?$/ { bad = 1 } { s += $2 } END { if (bad) print "bad"; else print s + 0 }'
}
rubric_rows "$guide" > "$tmp/guide.rows"
guide_parts=$(cut -d'|' -f1 "$tmp/guide.rows")
[ -n "$guide_parts" ] || fail "the guide's grading section has no rubric table"
[ "$(points_sum < "$tmp/guide.rows")" = "$total" ] ||
	fail "the guide's rubric adds up to $(points_sum < "$tmp/guide.rows"), its text says $total"

# problems README LAB: one line per rule the README breaks (nothing when it
# keeps them all); LAB is the lab's folder name
problems() {
	# the hand-in section, and its two parts
	awk '/^## / { on = ($0 == "## Hand-in and marking") } on' "$1" > "$tmp/handin"
	[ -s "$tmp/handin" ] || { echo "no '## Hand-in and marking' section"; return; }
	awk '/^###? / { on = ($0 == "### Deliverables") } on' "$tmp/handin" > "$tmp/deliv"
	awk '/^###? / { on = ($0 == "### Rubric") } on' "$tmp/handin" > "$tmp/rubric"
	if [ ! -s "$tmp/deliv" ]; then
		echo "no '### Deliverables' part"
	else
		grep -q '^- ' "$tmp/deliv" || echo "the Deliverables part lists nothing"
		tr '\n' ' ' < "$tmp/deliv" | grep -q "make -C \$BUILD/exercises/$2 run" ||
			echo "the Deliverables part does not name the command 'make -C \$BUILD/exercises/$2 run'"
	fi
	[ -s "$tmp/rubric" ] || { echo "no '### Rubric' part"; return; }
	grep -q "^$total points" "$tmp/rubric" || echo "the Rubric does not state the total, $total points"
	rubric_rows "$tmp/rubric" > "$tmp/rows"
	[ -s "$tmp/rows" ] || { echo "the Rubric has no table | part | points | what earns them |"; return; }
	sum=$(points_sum < "$tmp/rows")
	[ "$sum" = "$total" ] || echo "the Rubric's points add up to $sum, not $total"
	cut -d'|' -f1 "$tmp/rows" | while read -r part; do
		echo "$guide_parts" | grep -qxF "$part" || echo "the Rubric's part '$part' is not one of the guide's"
	done
	grep '^| *Run record *|' "$tmp/rubric" | grep -q 'check:' ||
		echo "the Rubric's run record does not name the lab's check: lines"
}

# student_part README PART: the list items of Deliverables, or the table
# rows of Rubric, in the hand-in section of README
student_part() {
	awk -v part="$2" '/^## / { h = ($0 == "## Hand-in and marking") } /^### / { on = h && ($0 == "### " part) }
		on && (part == "Rubric" ? /^\|/ : /^(- |  )/)' "$1"
}

# 0. the check on READMEs made to break the rules
mkdir "$tmp/demo"
cat > "$tmp/demo/bad.md" << EOF
# Lab 99

## Hand-in and marking

### Rubric

$total points, as every lab:

| part | points | what earns them |
| --- | --- | --- |
| Predictions | 4 | reasons |
| Run record | 4 | every check: line |
| Questions | 9 | answers |
| Guesswork | 2 | luck |
EOF
got=$(problems "$tmp/demo/bad.md" 99-demo)
want="no '### Deliverables' part
the Rubric's points add up to $((total - 1)), not $total
the Rubric's part 'Guesswork' is not one of the guide's"
[ "$got" = "$want" ] || fail "the check on a README made to break the rules found:
$got
wanted:
$want"
printf '# Lab 98\n\nNo hand-in.\n' > "$tmp/demo/none.md"
[ "$(problems "$tmp/demo/none.md" 98-demo)" = "no '## Hand-in and marking' section" ] ||
	fail "the check misses a README with no hand-in section"

# 2. the sources
nlab=0
for readme in "$top"/exercises/[0-9][0-9]-*/README.md; do
	d=${readme%/README.md}; d=${d##*/}
	nlab=$((nlab + 1))
	p=$(problems "$readme" "$d")
	[ -z "$p" ] || fail "lab $d: $(echo "$p" | paste -sd';' -)"
done
[ "$nlab" -ge 15 ] || fail "only $nlab labs"

# 3. the student's edition, cut by the edition script on a tree that has
# only what the script reads (the labs, the question bank, firstfit's
# fragment and object; a bootstrap that does nothing)
t="$tmp/tree"
mkdir -p "$t/book" "$t/policies/firstfit"
: > "$t/configure.ac"
cp "$top/book/questions.txt" "$t/book/"
printf 'libhlcore_la_SOURCES += policies/firstfit/firstfit.c\n' > "$t/policies/firstfit/local.mk"
printf 'not an object\n' > "$tmp/firstfit.o"
printf '#!/bin/sh\nexit 0\n' > "$t/bootstrap" && chmod +x "$t/bootstrap"
for readme in "$top"/exercises/[0-9][0-9]-*/README.md; do
	d=${readme%/README.md}; d=${d##*/}
	mkdir -p "$t/exercises/$d" && cp "$readme" "$t/exercises/$d/"
done
sh "$top/book/make-edition.sh" student "$t" "$tmp/student.tar.gz" "$tmp/firstfit.o" > "$tmp/edition.log" 2>&1 ||
	{ cat "$tmp/edition.log"; echo "FAIL: book/make-edition.sh student failed on the labs"; exit 1; }
[ "$(cat "$t/EDITION")" = student ] || fail "the edition script did not make a student's edition"
for readme in "$top"/exercises/[0-9][0-9]-*/README.md; do
	d=${readme%/README.md}; d=${d##*/}
	s="$t/exercises/$d/README.md"
	p=$(problems "$s" "$d")
	[ -z "$p" ] || fail "lab $d, student's edition: $(echo "$p" | paste -sd';' -)"
	grep -q '^[[:space:]]*\\if instructor' "$s" && fail "lab $d, student's edition: an \\if instructor section is left"
	grep -qE '^[[:space:]]*\*\*Answer\.\*\*' "$s" && fail "lab $d, student's edition: an answer is left"
	# the source's instructor lines (trimmed, 30 characters or more) that
	# appear nowhere else in it: none may be in the student's copy
	awk '/^[ \t]*\\if instructor([ \t]|$)/ { d++; next } d && /^[ \t]*\\endif([ \t]|$)/ { d--; next }
		{ t = $0; sub(/^[ \t]+/, "", t); sub(/[ \t]+$/, "", t); if (length(t) < 30) next
		  if (d) ans[t] = 1; else out[t] = 1 }
		END { for (t in ans) if (!(t in out)) print t }' "$readme" > "$tmp/answers"
	# (the student's edition has none to find: make dist-student cut it)
	[ -s "$tmp/answers" ] || [ "$edition" = student ] ||
		fail "lab $d: no instructor text found in its README (is the search broken?)"
	left=$(awk -v list="$tmp/answers" 'BEGIN { while ((getline l < list) > 0) want[l] = 1 }
		{ t = $0; sub(/^[ \t]+/, "", t); sub(/[ \t]+$/, "", t) } t in want { print; exit }' "$s")
	[ -z "$left" ] || fail "lab $d, student's edition: instructor text is left: $left"
	# the deliverables and the rubric's table are the student's: the edition
	# must not cut a line of them (an instructor's marking key may follow)
	for part in Deliverables Rubric; do
		[ "$(student_part "$s" "$part")" = "$(student_part "$readme" "$part")" ] ||
			fail "lab $d: the student's edition cuts part of its $part (is some of it inside \\if instructor?)"
	done
done
[ $bad -eq 0 ] && echo "lab rubrics: $nlab labs state their deliverables and a rubric of $total points (the guide's total), in both editions"
exit $bad
