#!/bin/sh
# bump's pictures stay readable however much it holds (its part of
# tests/visualize/test_visualize_readable.sh, judged by the same checker,
# visualize/picture_geometry.py, on Graphviz's own layout):
#  - on the demo's heap (500,000 x 1 KiB, free 90 %, free the rest) bump
#    fills eight regions of 64 MiB, the first seven full and alike (blocks
#    of 1 KiB, as many in each): a teacher draws them once with a count,
#    so each of its three pictures has two region boxes, the folded seven
#    and the current one;
#  - on a heap of 100,000 small blocks of mixed sizes (16, 32, 48 B in
#    turn, so no run of one size) the region folds what it cannot draw
#    into cells that say what they hold, and keeps the cursor's cell: the
#    picture is at most 1,600 pixels wide, no edge crosses a text, and the
#    cursor's head "→ A" marks a cell (the checker's --marks).
set -u
. "$(dirname "$0")/../../tests/lib.sh"
src=${srcdir:-.}
hl_compiled bump || hl_skip "bump is not compiled in"
command -v python3 >/dev/null || hl_skip "python3 is needed"
command -v dot >/dev/null || hl_skip "Graphviz dot is needed"
hl_tmpdir heaplab-bump-readable
fail=0

hl_demo_trace >"$tmp/demo.rep"
mkdir -p "$tmp/demo"
if ! "$heaplab" replay --policy=bump --repeat 0 --check-every 250000 --snapshot-dir "$tmp/demo" "$tmp/demo.rep" >/dev/null; then
	echo "FAIL: bump could not replay the demo's workload"
	fail=1
fi
pictures=0
for f in "$tmp"/demo/*.dot; do
	[ -f "$f" ] || continue
	pictures=$((pictures + 1))
	boxes=$(grep -c 'subgraph cluster_[0-9]' "$f")
	if [ "$boxes" != 2 ] || ! grep -q 'label=<× 7 alike regions' "$f"; then
		echo "FAIL: ${f#"$tmp"/} draws $boxes region boxes (want the seven alike regions folded into one, and the current)"
		fail=1
	fi
done
[ "$pictures" = 3 ] || { echo "FAIL: $pictures pictures of the demo's heap, not 3 (one a step)"; fail=1; }

awk 'BEGIN { for (i = 0; i < 100000; i++) print "a " i " " 16 * (1 + i % 3); print "s small-mixed" }' >"$tmp/small.rep"
small="$tmp/bump-small-mixed.dot"
if ! "$heaplab" replay --policy=bump --repeat 0 --snapshot-dir "$tmp" "$tmp/small.rep" >/dev/null; then
	echo "FAIL: bump could not replay 100,000 small mallocs"
	fail=1
elif grep -q "cells not drawn" "$small"; then
	echo "FAIL: bump's picture of 100,000 small blocks leaves cells out without saying of what"
	fail=1
elif ! dot -Tjson "$small" >"$tmp/small.json" 2>"$tmp/dot.err"; then
	echo "FAIL: dot could not lay out bump's picture of small blocks: $(head -1 "$tmp/dot.err")"
	fail=1
elif ! out=$(python3 "$src/visualize/picture_geometry.py" --marks "$tmp/small.json"); then
	echo "FAIL: bump's picture of 100,000 small blocks is not readable:"
	echo "$out" | head -5
	fail=1
fi
[ "$fail" = 0 ] && echo "PASS: bump's $pictures pictures of the demo's heap fold its seven alike regions; its picture of 100,000 small blocks is readable"
exit "$fail"
