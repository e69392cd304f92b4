#!/bin/sh
# Pictures that stay readable at any heap size: the heaps the demo draws
# (bench/demo.sh's workload, 500,000 x 1 KiB, free 90%, free the rest,
# replayed as a trace on every allocator model, a picture after each step;
# a policy's own pictures, such as bump's of many regions, are its
# folder's: policies/bump/bump_readable.sh)
# and every lab's pictures (each lab program with --pictures, its quick
# run) must each be at most 1,600 pixels wide at their natural size, and
# no edge may cross the box of a text (a cell's, a node's, a cluster's
# title, an edge's label), and a head's letter must mark some cell
# (--marks: a cell an edge ends in is never left out of a strip, and a
# policy gives ports only to such cells).  Graphviz's own layout says where everything
# is (dot -Tjson); visualize/picture_geometry.py judges it, and is first
# shown to catch both faults on pictures made here to have them.
set -u
. "$(dirname "$0")/../lib.sh"
src=${srcdir:-.}
check="$src/visualize/picture_geometry.py"
command -v python3 >/dev/null || hl_skip "python3 is needed"
command -v dot >/dev/null || hl_skip "Graphviz dot is needed"
hl_tmpdir heaplab-readable
fail=0

# Lays out DOT file $1 and judges it (with option $2, if given); prints the faults.
judge() {
	if ! dot -Tjson "$1" >"${1%.dot}.json" 2>"$tmp/dot.err"; then
		echo "FAIL: dot could not lay out $1: $(head -1 "$tmp/dot.err")"
		return 1
	fi
	python3 "$check" ${2:+"$2"} "${1%.dot}.json"
}

# 1. The checker sees both faults, and passes a clean picture.
mkdir -p "$tmp/self"
cat >"$tmp/self/wide.dot" <<'DOT'
digraph { node [shape=box]; a [label="a label as wide as a picture may not be: one thousand two hundred points and a little more than that, so about one thousand six hundred and fifty pixels at ninety-six pixels per inch ...................."]; }
DOT
cat >"$tmp/self/through.dot" <<'DOT'
digraph { rankdir=LR; node [shape=plaintext];
  t [label=<<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="0"><TR><TD PORT="a">first</TD><TD>middle label</TD><TD PORT="c">last</TD></TR></TABLE>>];
  t:a -> t:c; }
DOT
cat >"$tmp/self/clean.dot" <<'DOT'
digraph { rankdir=LR; head [shape=box, label="free list"]; cells [shape=plaintext, label=<<TABLE><TR><TD>x</TD><TD>y</TD></TR></TABLE>>]; head -> cells [label="fd"]; }
DOT
judge "$tmp/self/wide.dot" | grep -q "px wide" || { echo "FAIL: the checker passed a picture too wide"; fail=1; }
judge "$tmp/self/through.dot" | grep -q 'crosses the text "middle label"' ||
	{ echo "FAIL: the checker missed an edge through a label"; fail=1; }
cat >"$tmp/self/lost.dot" <<'DOT'
digraph { rankdir=LR; node [shape=plaintext]; head [shape=box, label=<cursor <B>&#8594; A</B>>];
  cells [label=<<TABLE><TR><TD>48</TD><TD>unused</TD></TR></TABLE>>]; }
DOT
judge "$tmp/self/lost.dot" --marks | grep -q 'head → A of head marks no cell' ||
	{ echo "FAIL: the checker missed a head whose marks were left out"; fail=1; }
out=$(judge "$tmp/self/clean.dot") || { echo "FAIL: the checker failed a clean picture: $out"; fail=1; }

# 2. The demo's heaps, after each of its steps, on every model.
hl_demo_trace >"$tmp/demo.rep"
policies=$(hl_models)
for p in $policies; do
	mkdir -p "$tmp/demo/$p"
	if ! ./heaplab replay --policy="$p" --repeat 0 --check-every 250000 --snapshot-dir "$tmp/demo/$p" "$tmp/demo.rep" >/dev/null; then
		echo "FAIL: $p could not replay the demo's workload"
		fail=1
	fi
done

# 3. Every lab's pictures (quick runs).
mkdir -p "$tmp/labs"
for lab in exercises/*/lab; do
	[ -x "$lab" ] || continue
	name=$(basename "$(dirname "$lab")")
	"$lab" --pictures "$tmp/labs/$name" >"$tmp/lab.out" 2>&1
	rc=$?
	if [ "$rc" != 0 ] && [ "$rc" != 77 ]; then
		echo "FAIL: lab $name exited $rc:"
		tail -3 "$tmp/lab.out"
		fail=1
	fi
done

pictures=0
for f in "$tmp"/demo/*/*.dot "$tmp"/labs/*/*.dot; do
	[ -f "$f" ] || continue
	pictures=$((pictures + 1))
	out=$(judge "$f" --marks) && continue
	echo "FAIL: ${f#"$tmp"/} is not readable:"
	echo "$out" | sed "s|$tmp/||" | head -5
	[ "$(echo "$out" | wc -l)" -gt 5 ] && echo "  ... $(echo "$out" | wc -l) faults in all"
	fail=1
done
[ "$pictures" -gt 0 ] || { echo "FAIL: no picture was drawn"; fail=1; }
[ "$fail" = 0 ] && echo "PASS: $pictures pictures (the demo's and the labs'), each at most 1,600 px wide, no edge across a text, every head's letter on a cell"
exit "$fail"
