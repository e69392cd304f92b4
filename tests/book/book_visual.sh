#!/bin/sh
# book/visual-language.md explains every element the pictures use, read from
# the code that draws them, so it cannot drift: each block state's legend
# word and fill colour (core/dot.c's palette) and its terminal mark
# (visualize/tty.c), each arrow style's legend word and colour (core/dot.c),
# and each line of `heaplab plot` with its colour (visualize/plot.c).
. "${srcdir:-.}/tests/book/book_lib.sh"
page="$top/book/visual-language.md"
need_page "$page"
# the row of the page's tables that starts with | `NAME` |
row() { grep -F "| \`$1\` |" "$page" | head -1; }

# check_row ID WORD COLOUR: the page's row for ID (left in $r for more
# checks) gives WORD and COLOUR
check_row() {
	r=$(row "$1")
	[ -n "$r" ] || { fail "$1 is not explained"; return 1; }
	echo "$r" | grep -qF "| $2 |" || fail "$1: the page does not give its legend word '$2'"
	echo "$r" | grep -qF "\`$3\`" || fail "$1: the page does not give its colour $3"
}
# split ID|WORD|COLOUR (spaces in WORD travel as _)
split3() { id=${1%%|*}; rest=${1#*|}; word=$(echo "${rest%%|*}" | tr '_' ' '); col=${rest#*|}; }

states=$(sed -n 's/^[[:space:]]*\[\(HL_BLOCK_[A-Z]*\)\] = { "\([^"]*\)", "\(#[0-9a-f]*\)" },.*/\1|\2|\3/p' "$top/core/dot.c")
ns=$(echo "$states" | grep -c .)
# the states of the enum in the public header, HL_BLOCK_NSTATES aside
nenum=$(sed -n '/^typedef enum hl_block_state/,/} hl_block_state_t;/p' "$top/core/heaplab.h" |
	grep '^[[:space:]]*HL_BLOCK_[A-Z]*' | grep -vc NSTATES)
[ "$ns" -ge 1 ] && [ "$ns" -eq "$nenum" ] || fail "read $ns colours from core/dot.c for $nenum block states"
for s in $(echo "$states" | tr ' ' '_'); do
	split3 "$s"
	check_row "$id" "$word" "$col" || continue
	mark=$(sed -n "s/.*\[$id\] = { '\(.\)'.*/\1/p" "$top/visualize/tty.c")
	[ -n "$mark" ] || fail "$id: no terminal mark found in visualize/tty.c"
	echo "$r" | grep -qF "| \`$mark\` |" || fail "$id: the page does not give its terminal mark '$mark'"
done

edges=$(sed -n 's/^[[:space:]]*\[\(HL_EDGE_[A-Z]*\)\] = { "\([^"]*\)", "color=\\"\(#[0-9a-f]*\)\\".*/\1|\2|\3/p' "$top/core/dot.c")
ne=$(echo "$edges" | grep -c .)
[ "$ne" -ge 1 ] || fail "read no arrow styles from core/dot.c"
for e in $(echo "$edges" | tr ' ' '_'); do
	split3 "$e"
	check_row "$id" "$word" "$col"
done

lines=$(sed -n 's/^[[:space:]]*{ "\([^"]*\)", "\(#[0-9a-f]*\)", "[^"]*" },.*/\1|\2/p' "$top/visualize/plot.c")
nl=$(echo "$lines" | grep -c .)
[ "$nl" -ge 1 ] || fail "read no plot lines from visualize/plot.c"
for l in $(echo "$lines" | tr ' ' '_'); do
	word=$(echo "${l%%|*}" | tr '_' ' '); col=${l#*|}
	grep -F "| $word | \`$col\`" "$page" > /dev/null || fail "plot line '$word' ($col) is not explained"
done
[ $bad -eq 0 ] && echo "visual language: $ns block states, $ne arrows, $nl plot lines, as the code draws them"
exit $bad
