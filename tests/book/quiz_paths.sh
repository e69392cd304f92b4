#!/bin/sh
# "Which path will the next call take?": heaplab quiz --paths
# drills a trace's calls, the right answer taken from the policy's own
# decision events.  Here the answers fed in are worked out without the
# drill: for each call, `heaplab quiz --path-of N` names its path, and the
# letter is the one the drill shows next to that text.  All right gives a
# full score; one wrong letter loses exactly one point; the bank holds at
# least 20 such questions, all verified by `heaplab quiz --verify`
# (tests/book/book_questions.sh runs them).
. "$(dirname "$0")/book_lib.sh"
answers_needed "answers in its question bank"
src=${srcdir:-.}
trace="$src/book/traces/paths.rep"
bank="$src/book/questions.txt"
hl_tmpdir quiz-paths
fail() { echo "FAIL: $*"; exit 1; }

n=$(grep -c '^id: path-' "$bank")
v=$(awk '/^id: path-/ { p = 1 } /^run: heaplab quiz --path-of/ && p { n++; p = 0 } END { print n + 0 }' "$bank")
echo "bank: $n which-path questions, $v verified by --path-of"
[ "$n" -ge 20 ] && [ "$v" -ge 20 ] || fail "fewer than 20 verified which-path questions"

policy=$(hl_model_of jemalloc)   # a model with many paths to ask about
[ -n "$policy" ] || policy=$(hl_policies | sed -n 1p)
count=6
# the drill's questions, answered 'x' (wrong, unknown letter) to see the choices
yes x | head -n "$count" | ./heaplab quiz --paths "$trace" --policy="$policy" --count "$count" >"$tmp/seen" ||
	fail "the drill failed"
# for each asked op: the letter of the choice that --path-of names
awk '/^op [0-9]+:/ { sub(/:$/, "", $2); print $2 }' "$tmp/seen" >"$tmp/ops"
[ "$(wc -l <"$tmp/ops")" -eq "$count" ] || fail "the drill asked $(wc -l <"$tmp/ops") questions, not $count"
: >"$tmp/answers"
while read -r op; do
	path=$(./heaplab quiz --path-of "$op" --policy="$policy" "$trace") || fail "--path-of $op"
	letter=$(awk -v op="$op" -v path="$path" '
		$1 == "op" && $2 == op ":" { on = 1; next }
		on && /^  [a-d]\) / { if (substr($0, 6) == path) { print substr($0, 3, 1); exit } }
		on && /^>/ { exit }' "$tmp/seen")
	[ -n "$letter" ] || fail "op $op: the path '$path' is not among the drill's choices"
	echo "$letter" >>"$tmp/answers"
done <"$tmp/ops"
./heaplab quiz --paths "$trace" --policy="$policy" --count "$count" <"$tmp/answers" >"$tmp/right" || fail "drill"
grep -q "^score: $count of $count\$" "$tmp/right" || { cat "$tmp/right"; fail "right answers did not score $count of $count"; }
# one wrong letter (the first answer moved on by one) costs one point
awk 'NR == 1 { $0 = ($0 == "a") ? "b" : "a" } { print }' "$tmp/answers" >"$tmp/one-wrong"
./heaplab quiz --paths "$trace" --policy="$policy" --count "$count" <"$tmp/one-wrong" >"$tmp/wrong" || fail "drill"
grep -q "^score: $((count - 1)) of $count\$" "$tmp/wrong" || { cat "$tmp/wrong"; fail "one wrong answer did not cost one point"; }
# the reveal shows the policy's steps, as replay --explain names them
./heaplab replay --policy="$policy" --repeat 0 --explain "$trace" | sed -n '/^op 2 /,/^op 3 /p' | sed -n 2p |
	sed 's/^ *//' >"$tmp/step"
grep -qF "$(cat "$tmp/step")" "$tmp/right" || fail "the reveal of op 2 lacks '$(cat "$tmp/step")'"
# bad input: one line, exit 2
./heaplab quiz --path-of 999 --policy="$policy" "$trace" 2>"$tmp/err" && fail "--path-of 999 succeeded"
grep -q "op 999 is not in the trace" "$tmp/err" || fail "--path-of 999: $(cat "$tmp/err")"
echo "PASS: $count questions drilled on $policy: all right $count/$count, one wrong $((count - 1))/$count"
