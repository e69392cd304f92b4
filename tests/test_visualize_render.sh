#!/bin/sh
# Every picture of every compiled-in policy on every short shipped trace
# (under 2 KB in traces/, and the teaching traces) renders with Graphviz
# without a warning (issue 7).  `heaplab step --every 1 --strict` keeps a
# picture after every op and fails on any Graphviz warning; its page must
# hold exactly ops + 1 pictures.  Then `heaplab render` itself: SVG and
# PNG from a snapshot, and a clear error when dot is missing.
set -u
src=${srcdir:-.}
if ! ./heaplab render --help >/dev/null; then
	echo "FAIL: no render command"
	exit 1
fi
# A policy that loops on a trace is a failure, not a hung `make check`.
limit=""
command -v timeout >/dev/null 2>&1 && limit="timeout 120"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/heaplab-render.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0
traces=$(find "$src/traces" "$src/visualize/traces" -name '*.rep' -size -2k | sort)
for p in $(./heaplab policies | awk '{print $1}'); do
	for t in $traces; do
		if ! $limit ./heaplab step --strict --every 1 --policy="$p" -o "$tmp/page.html" "$t" 2>"$tmp/err"; then
			echo "FAIL: $p on $t (exit $?; 124 is a timeout after 120 s):"
			cat "$tmp/err"
			fail=1
			continue
		fi
		ops=$(grep -c '^[arfcmts] ' "$t")
		pictures=$(grep -o '<svg ' "$tmp/page.html" | wc -l)
		if [ "$pictures" -ne $((ops + 1)) ]; then
			echo "FAIL: $p on $t: $pictures pictures for $ops ops"
			fail=1
		fi
	done
	echo "ok: $p on $(echo "$traces" | wc -l) traces"
done

# render: a snapshot to SVG and PNG, warnings are errors with --strict
p=$(./heaplab policies | awk 'NR == 1 {print $1}')
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
