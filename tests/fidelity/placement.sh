#!/usr/bin/env bash
# Where every block goes: `heaplab fidelity --placement` runs each shipped
# trace through the placement driver on the real allocator and on its model
# (glibc/bins, jemalloc/slab, mimalloc/sharded, tcmalloc/percpu
# front:thread) and compares every address as (region, offset); see
# fidelity/README.md, "Placement".  Per family:
#   - at least FLOOR traces are equal (the count reached when the table
#     below was written; raise it when a fix makes more equal);
#   - every trace that is not equal is named in the table below with where
#     and why the two part, at the same op the tool reports; a trace in the
#     table that has become equal, or parts elsewhere, fails the test, so
#     the table stays true;
#   - every row of the table is also in bench/FIDELITY.md.
# The glibc rows are for glibc 2.36 (Debian 12); elsewhere that family is
# skipped.  A family whose real library is not installed is skipped.
set -u
. "$(dirname "$0")/../lib.sh"
hl_skip_sanitized "the driver preloads heaplab or a real allocator; a -fsanitize=$hl_sanitizer build owns malloc"
src=${srcdir:-.}
hl_tmpdir placement
[ -x "$build/fidelity/probes/placement" ] || { echo "no $build/fidelity/probes/placement"; exit 99; }

# family and the fewest equal traces of the 61
floors="glibc 61
jemalloc 61
mimalloc 61
tcmalloc 61"

# family trace | where the two part and why ("*" for every trace).  A row
# that names no cause says what each allocator did at the first op where
# they part: a departure not yet traced to a rule of the real allocator.
departures() {
	cat <<'TABLE'
TABLE
}

failed=0
fail() { echo "FAIL: $*"; failed=1; }
departures | sed 's/ |.*//' >"$tmp/listed"
ran=0
for fam in glibc jemalloc mimalloc tcmalloc; do
	if [ "$fam" = glibc ] && [ "$(getconf GNU_LIBC_VERSION | awk '{print $2}')" != 2.36 ]; then
		echo "SKIP $fam: the table is for glibc 2.36"
		continue
	fi
	"$heaplab" fidelity --placement --family "$fam" "$src"/traces/*.rep >"$tmp/$fam.out" 2>"$tmp/$fam.err"
	if grep -q "^$fam [^ ]*: SKIP: " "$tmp/$fam.out"; then
		echo "SKIP $fam: $(grep -m1 "^$fam [^ ]*: SKIP: " "$tmp/$fam.out" | sed 's/.*SKIP: //')"
		continue
	fi
	ran=$((ran + 1))
	policy=$(sed -n "s/^placement $fam (\(.*\)):.*/\1/p" "$tmp/$fam.out")
	equal=$(grep -c "^$fam [^ ]*: equal" "$tmp/$fam.out")
	total=$(grep -c "^$fam [^ ]*\.rep: " "$tmp/$fam.out")
	floor=$(echo "$floors" | awk -v f="$fam" '$1 == f { print $2 }')
	echo "$fam ($policy): $equal of $total traces equal (at least $floor)"
	[ "$total" -ge 61 ] || fail "$fam: only $total traces compared"
	[ "$equal" -ge "$floor" ] || fail "$fam: $equal traces equal, fewer than the $floor reached before"
	grep -v "^$fam [^ ]*: equal" "$tmp/$fam.out" | grep "^$fam [^ ]*\.rep: " | while read -r _ name rest; do
		name=${name%:}
		op=$(echo "$rest" | sed -n 's/^part at op \([0-9]*\) .*/\1/p')
		[ -n "$op" ] || { echo "FAIL: $fam $name: $rest"; continue; }
		row=$(departures | grep -m1 -F -e "$fam $name |" -e "$fam * |")
		if [ -z "$row" ]; then
			echo "FAIL: $fam $name is not equal and not in the table: $rest"
		elif ! echo "$row" | grep -q "| op $op[ :]"; then
			echo "FAIL: $fam $name now parts at op $op, the table says: ${row#*| }"
		fi
	done >"$tmp/$fam.bad"
	[ -s "$tmp/$fam.bad" ] && { cat "$tmp/$fam.bad"; failed=1; }
	grep "^$fam " "$tmp/listed" | while read -r _ name; do
		[ "$name" = "*" ] && { grep -q "^$fam [^ ]*: equal" "$tmp/$fam.out" && echo "FAIL: $fam: some traces are equal now; name the others one by one"; continue; }
		grep -q "^$fam $name: equal" "$tmp/$fam.out" &&
			echo "FAIL: $fam $name is equal now: take it out of this table and bench/FIDELITY.md, raise the floor"
	done >"$tmp/$fam.stale"
	[ -s "$tmp/$fam.stale" ] && { cat "$tmp/$fam.stale"; failed=1; }
done
[ "$ran" -gt 0 ] || hl_skip "no family's real allocator can be run here"
# the table in bench/FIDELITY.md is this one
while read -r fam name; do
	grep -qF "| $fam | $name |" "$src/bench/FIDELITY.md" || fail "bench/FIDELITY.md does not name $fam $name"
done <"$tmp/listed"
exit $failed
