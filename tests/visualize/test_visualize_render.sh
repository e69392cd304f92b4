#!/bin/sh
# heaplab render: SVG and PNG from a snapshot, --strict fails
# on a Graphviz warning, and a clear error when dot is missing.  (That
# every picture of every policy renders without a warning is checked per
# policy by visualize/check-pictures.sh, policies/POLICY/golden.test.)
set -u
. "$(dirname "$0")/../lib.sh"
src=${srcdir:-.}
if ! ./heaplab render --help >/dev/null; then
	echo "FAIL: no render command"
	exit 1
fi
hl_tmpdir heaplab-render
fail=0

# render: a snapshot to SVG and PNG, warnings are errors with --strict
p=$(hl_policies | sed -n 1p)
./heaplab replay --policy="$p" --repeat 0 --snapshot "$tmp/end.dot" "$src/visualize/traces/teach.rep" >/dev/null || fail=1
./heaplab render --strict "$tmp/end.dot" || { echo "FAIL: render to the default name"; fail=1; }
[ -s "$tmp/end.svg" ] && grep -q '<svg' "$tmp/end.svg" || { echo "FAIL: no $tmp/end.svg"; fail=1; }
./heaplab render --strict "$tmp/end.dot" -o "$tmp/end.png" || fail=1
head -c 8 "$tmp/end.png" | od -c | grep -q 'P   N   G' || { echo "FAIL: end.png is not a PNG"; fail=1; }
printf 'digraph { a -> b:nope; b [label=<<TABLE><TR><TD PORT="p">x</TD></TR></TABLE>>]; }\n' >"$tmp/warn.dot"
if ./heaplab render --strict "$tmp/warn.dot" -o "$tmp/warn.svg" 2>/dev/null; then
	echo "FAIL: render --strict accepted a picture Graphviz warned about"
	fail=1
fi
if HEAPLAB_DOT=/nonexistent/dot ./heaplab render "$tmp/end.dot" 2>"$tmp/err"; then
	echo "FAIL: render without dot succeeded"
	fail=1
fi
grep -q "Graphviz 'dot' was not found" "$tmp/err" || { echo "FAIL: no clear message without dot:"; cat "$tmp/err"; fail=1; }
[ "$fail" = 0 ] && echo "PASS: every picture renders without a warning"
exit "$fail"
