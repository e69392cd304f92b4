#!/bin/sh
# golden-check.sh tests/golden/POLICY.test
#
# Checks the snapshots of one policy against golden files.  The manifest
# has one line per trace: its path in the source tree, then optionally the
# configuration string to use and the other policies that configuration
# needs ('#' starts a comment).  For each trace,
# `heaplab replay --snapshot-dir` writes one DOT file per `s label` op,
# which must equal tests/golden/POLICY/TRACE-LABEL.dot byte for byte; a
# second run must give the same bytes again; every golden file must have
# been produced; and each must render with Graphviz without a warning.
# A policy that is not compiled in is a SKIP (exit 77), not a pass.
# HEAPLAB_UPDATE_GOLDEN=1 writes the produced files as the new goldens
# (then read them: a golden is a claim about the model, not a recording).
set -u
manifest=$1
policy=$(basename "$manifest" .test)
src=${srcdir:-.}
heaplab=./heaplab
golden=$(dirname "$manifest")/$policy

compiled_in() {
	$heaplab policies | awk '{print $1}' | grep -qx "$1"
}
for needed in "$policy" $(sed 's/#.*//' "$manifest" | awk '{ for (i = 3; i <= NF; i++) print $i }'); do
	if ! compiled_in "$needed"; then
		echo "SKIP: the goldens of '$policy' need policy '$needed', which is not compiled in" \
			"(configure --with-policy=...,$needed)"
		exit 77
	fi
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/heaplab-golden.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0
sed 's/#.*//' "$manifest" | awk 'NF { print $1, (NF > 1 ? $2 : "-") }' >"$tmp/lines"
while read -r trace conf; do
	name=$(basename "$trace" .rep)
	[ "$conf" = - ] && conf=""
	for run in 1 2; do
		mkdir -p "$tmp/$run"
		if ! $heaplab replay --policy="$policy" --conf="$conf" --repeat 0 --snapshot-dir "$tmp/$run" \
			"$src/$trace" >/dev/null; then
			echo "FAIL: $policy could not replay $trace"
			exit 1
		fi
	done
	labels=$(grep -c '^s ' "$src/$trace")
	made=$(ls "$tmp/1" | wc -l)
	if [ "$made" -ne "$labels" ]; then
		echo "FAIL: $trace has $labels labels but $made snapshots were written"
		fail=1
	fi
	for f in "$tmp/1"/*.dot; do
		label=$(basename "$f" .dot)
		label=${label#"$policy"-}
		want="$golden/$name-$label.dot"
		if ! cmp -s "$f" "$tmp/2/$(basename "$f")"; then
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
		if [ ! -f "$tmp/1/$policy-$label.dot" ]; then
			echo "FAIL: golden $want was not produced (label '$label' gone from $trace?)"
			fail=1
		fi
		if ! $heaplab render --strict "$want" -o "$tmp/picture.svg"; then
			echo "FAIL: Graphviz warned about $want"
			fail=1
		fi
	done
done <"$tmp/lines"
[ "$fail" = 0 ] && echo "PASS: $policy snapshots match their goldens"
exit "$fail"
