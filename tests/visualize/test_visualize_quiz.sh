#!/bin/sh
# The terminal stepper's quiz, driven by answers on stdin.
#
# firstfit (default: first fit over an address-ordered list, 16-byte
# headers, sizes rounded up to 16 with the header) on teach.rep asks
# before each of its 7 allocations.  What the model says, worked by hand:
#   a 0 32   the heap is empty: nothing on the map, so 'new'; payload at
#            region#1+0x10 (after a 16-byte header)
#   a 1 100  the only choice is the rest of the grown heap: [0];
#            block 0 spans 0x0..0x30, so the payload is at 0x40
#   a 2 48   [0] again; block 1 spans 0x30..0xb0, payload region#1+0xc0
#   a 3 200  [0];  a 4 64  [0]
#   a 5 90   holes at 1's and 3's places, then the rest: first fit takes
#            the first hole that fits, [0]
#   a 6 16   hole 1 was used whole (what is left is below the minimum
#            block), so the first choice is now 3's hole: [0]
# The script answers 5 of them right (one of those by address) and 2
# wrong, and expects "score: 5 of 7".  Then: only 3 answers (stdin ends)
# scores 3 of 3 and says the quiz stopped; no ANSI escape reaches a pipe.
set -u
. "$(dirname "$0")/../lib.sh"
src=${srcdir:-.}
trace="$src/visualize/traces/teach.rep"
policy=$(hl_role reference)   # the textbook free list the expected answers are of
hl_compiled "$policy" || hl_skip "the quiz test needs the lab's reference policy, $policy"
fail=0
out=$(printf 'new\n0\nregion#1+0xc0\n5\n0\n0\n1\n' | ./heaplab step --tty --quiz --policy="$policy" "$trace") || fail=1
echo "$out" | grep -q '^score: 5 of 7 right$' || { echo "FAIL: expected 5 of 7:"; echo "$out" | grep quiz; fail=1; }
echo "$out" | grep -q "wrong: it took block \[0\] and returned region#1+0x100 (you said '5'" ||
	{ echo "FAIL: op 4's reveal is not block [0] at region#1+0x100"; fail=1; }
echo "$out" | grep -q "right: no block on the map could serve it: new memory, region#1+0x10 " ||
	{ echo "FAIL: op 1's reveal is not new memory at region#1+0x10"; fail=1; }
if printf '%s' "$out" | grep -q "$(printf '\033')"; then
	echo "FAIL: colour escapes in output that is not a terminal"
	fail=1
fi
out=$(printf 'new\n0\n0\n' | ./heaplab step --tty --quiz --policy="$policy" "$trace") || fail=1
echo "$out" | grep -q '^score: 3 of 3 right$' || { echo "FAIL: expected 3 of 3 when the answers end"; fail=1; }
echo "$out" | grep -q 'no more answers' || { echo "FAIL: the end of the answers was not said"; fail=1; }
# 'q' quits the quiz after two answers: no third op is judged, nothing scored wrong
out=$(printf 'new\n0\nq\n0\n' | ./heaplab step --tty --quiz --policy="$policy" "$trace") || fail=1
echo "$out" | grep -q '^score: 2 of 2 right$' || { echo "FAIL: 'q' did not quit with 2 of 2:"; echo "$out" | grep -E 'quiz|score'; fail=1; }
echo "$out" | grep -q "you said 'q'" && { echo "FAIL: 'q' was scored as an answer"; fail=1; }
# the walk without the quiz: a map after each of the 21 ops
n=$(./heaplab step --tty --policy="$policy" "$trace" </dev/null | grep -c '^op [0-9]* (line')
[ "$n" = 21 ] || { echo "FAIL: $n ops walked, expected 21"; fail=1; }
# ... each with its steps explained: one "net:" line per op
n=$(./heaplab step --tty --policy="$policy" "$trace" </dev/null | grep -c '^    net: live ')
[ "$n" = 21 ] || { echo "FAIL: $n ops explained, expected 21"; fail=1; }
[ "$fail" = 0 ] && echo "PASS: quiz scored 5 of 7 and 3 of 3"
exit "$fail"
