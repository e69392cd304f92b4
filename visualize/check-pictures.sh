#!/bin/sh
# check-pictures.sh policies/POLICY/golden.test: the pictures of one policy.
#
# 1. Every picture renders cleanly: on every short shipped trace (under
#    2 KiB in traces/) and the teaching traces, `heaplab step --every 1
#    --strict` draws the heap after every op with Graphviz and fails on
#    any warning; the page must hold ops + 1 pictures.
# 2. Goldens: the snapshots of the traces the manifest lists equal the
#    files under policies/POLICY/golden/.  The manifest
# has one line per trace: its path in the source tree, then optionally the
# configuration string to use and the other policies that configuration
# needs ('#' starts a comment).  For each trace,
# `heaplab replay --snapshot-dir` writes one DOT file per `s label` op,
# which must equal policies/POLICY/golden/TRACE-LABEL.dot byte for byte; a
# second run must give the same bytes again; every golden file must have
# been produced; and each must render with Graphviz without a warning.
# A policy that is not compiled in is a SKIP (exit 77), not a pass.
# HEAPLAB_UPDATE_GOLDEN=1 writes the produced files as the new goldens
# (then read them: a golden is a claim about the model, not a recording).
set -u
manifest=$1
policy=$(basename "$(dirname "$manifest")")
src=${srcdir:-.}
heaplab=./heaplab
golden=$(dirname "$manifest")/golden

compiled_in() {
	$heaplab policies | awk '{print $1}' | grep -qx "$1"
}
if ! compiled_in "$policy"; then
	echo "SKIP: policy '$policy' is not compiled in (configure --with-policy=...,$policy)"
	exit 77
fi
goldens_need=""
for needed in $(sed 's/#.*//' "$manifest" | awk '{ for (i = 3; i <= NF; i++) print $i }'); do
	compiled_in "$needed" || goldens_need="$goldens_need $needed"
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/heaplab-golden.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0
sed 's/#.*//' "$manifest" | awk 'NF { print $1, (NF > 1 ? $2 : "-") }' >"$tmp/lines"
[ -n "$goldens_need" ] && : >"$tmp/lines"
while read -r trace conf; do
	name=$(basename "$trace" .rep)
	[ "$conf" = - ] && conf=""
	for run in 1 2; do
		mkdir -p "$tmp/g/$name/$run"
		if ! $heaplab replay --policy="$policy" --conf="$conf" --repeat 0 --snapshot-dir "$tmp/g/$name/$run" \
			"$src/$trace" >/dev/null; then
			echo "FAIL: $policy could not replay $trace"
			exit 1
		fi
	done
	labels=$(grep -c '^s ' "$src/$trace")
	made=$(ls "$tmp/g/$name/1" | wc -l)
	if [ "$made" -ne "$labels" ]; then
		echo "FAIL: $trace has $labels labels but $made snapshots were written"
		fail=1
	fi
	for f in "$tmp/g/$name/1"/*.dot; do
		label=$(basename "$f" .dot)
		label=${label#"$policy"-}
		want="$golden/$name-$label.dot"
		if ! cmp -s "$f" "$tmp/g/$name/2/$(basename "$f")"; then
			echo "FAIL: $trace at '$label': two runs drew different pictures"
			fail=1
		fi
		if [ "${HEAPLAB_UPDATE_GOLDEN:-0}" = 1 ]; then
			mkdir -p "$golden" && cp "$f" "$want" && echo "wrote $want"
		elif [ ! -f "$want" ]; then
			echo "FAIL: no golden file $want"
			fail=1
		elif ! diff -u "$want" "$f"; then
			echo "FAIL: $trace at '$label' differs from $want"
			fail=1
		fi
	done
	for want in "$golden/$name"-*.dot; do
		[ -f "$want" ] || continue
		label=$(basename "$want" .dot)
		label=${label#"$name"-}
		if [ ! -f "$tmp/g/$name/1/$policy-$label.dot" ]; then
			echo "FAIL: golden $want was not produced (label '$label' gone from $trace?)"
			fail=1
		fi
		if ! $heaplab render --strict "$want" -o "$tmp/picture.svg"; then
			echo "FAIL: Graphviz warned about $want"
			fail=1
		fi
	done
done <"$tmp/lines"

# A policy that loops on a trace is a failure, not a hung `make check`.
limit=""
command -v timeout >/dev/null 2>&1 && limit="timeout 300"
traces=$(find "$src/traces" "$src/visualize/traces" -name '*.rep' -size -2048c | sort)
for t in $traces; do
	if ! $limit $heaplab step --strict --every 1 --policy="$policy" -o "$tmp/page.html" "$t" 2>"$tmp/err"; then
		echo "FAIL: $policy on $t (exit $?; 124 is a timeout):"
		cat "$tmp/err"
		fail=1
		continue
	fi
	ops=$(grep -c '^[arfcmts] ' "$t")
	pictures=$(grep -o '<svg ' "$tmp/page.html" | wc -l)
	if [ "$pictures" -ne $((ops + 1)) ]; then
		echo "FAIL: $policy on $t: $pictures pictures for $ops ops"
		fail=1
	fi
done
echo "pictures after every op of $(echo "$traces" | wc -l) traces: checked"
[ "$fail" = 0 ] || exit 1
if [ -n "$goldens_need" ]; then
	echo "SKIP: every picture of $policy renders, but its goldens need policies not compiled in:$goldens_need"
	exit 77
fi
echo "PASS: $policy: goldens match, every picture renders without a warning"
