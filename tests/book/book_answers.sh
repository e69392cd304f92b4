#!/bin/sh
# Every lab question and prediction has a model answer for the instructor's
# edition: in each exercises/NN-*/README.md, under "## Predict before
# running" and "## Questions", every numbered item is followed (before the
# next item or heading) by one `\if instructor` section holding a paragraph
# that starts "**Answer.**" and closes with `\endif`; a part written as
# prose instead of a list holds at least one such section.  Doxygen leaves
# these sections out of the student's edition (see book/local.mk).
. "${srcdir:-.}/tests/book/book_lib.sh"
answers_needed "model answers"
items=0
for readme in "$top"/exercises/[0-9][0-9]-*/README.md; do
	lab=${readme%/README.md}; lab=${lab##*/}
	out=$(awk -v lab="$lab" '
	function close_item() {
		if (item != "" && answers != 1)
			printf "FAIL: lab %s, %s, item %s: %d answers\n", lab, part, item, answers
		item = ""; answers = 0
	}
	function close_part() {
		close_item()
		if (part != "" && nitems == 0 && partanswers == 0)
			printf "FAIL: lab %s, %s: no answer\n", lab, part
		if (part != "") total += nitems
		part = ""; nitems = 0; partanswers = 0
	}
	/^## / { close_part(); if ($0 == "## Predict before running" || $0 == "## Questions") part = substr($0, 4); next }
	part == "" { next }
	/^[0-9]+\. / { close_item(); item = $1; nitems++; next }
	/^ *\\if instructor *$/ { if (open) printf "FAIL: lab %s, %s: nested \\if\n", lab, part; open = 1; body = 0; next }
	/^ *\\endif *$/ {
		if (!open || !body) printf "FAIL: lab %s, %s, item %s: empty or unopened answer\n", lab, part, item
		open = 0; answers++; partanswers++; next
	}
	open && /\*\*Answer\.\*\*/ { body = 1 }
	END { close_part(); if (open) printf "FAIL: lab %s: an \\if instructor is never closed\n", lab; printf "ITEMS %d\n", total }
	' "$readme")
	echo "$out" | grep '^FAIL' && bad=1
	items=$((items + $(echo "$out" | sed -n 's/^ITEMS //p')))
done
[ "$items" -ge 60 ] || fail "only $items numbered predictions and questions found"
[ $bad -eq 0 ] && echo "answers: every one of $items numbered predictions and questions (and every prose prediction) has a model answer"
exit $bad
