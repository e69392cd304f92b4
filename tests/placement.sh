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
. "$(dirname "$0")/lib.sh"
hl_skip_sanitized "the driver preloads heaplab or a real allocator; a -fsanitize=$hl_sanitizer build owns malloc"
src=${srcdir:-.}
hl_tmpdir placement
[ -x "$build/fidelity/probes/placement" ] || { echo "no $build/fidelity/probes/placement"; exit 99; }

# family and the fewest equal traces of the 61
floors="glibc 61
jemalloc 61
mimalloc 41
tcmalloc 44"

# family trace | where the two part and why ("*" for every trace).  A row
# that names no cause says what each allocator did at the first op where
# they part: a departure not yet traced to a rule of the real allocator.
departures() {
	cat <<'TABLE'
mimalloc amptjp-bal.rep | op 1071 (a 774 4072): mimalloc reused the place of block 670 (freed at op 873), sharded reused the place of block 608 (freed at op 917)
mimalloc amptjp.rep | op 1071 (a 774 4072): mimalloc reused the place of block 670 (freed at op 873), sharded reused the place of block 608 (freed at op 917)
mimalloc boat.rep | op 51511 (a 35026 20): mimalloc reused the place of block 20362 (freed at op 43151), sharded reused the place of block 0 (freed at op 32971)
mimalloc cccp-bal.rep | op 1373 (a 938 4072): mimalloc reused the place of block 623 (freed at op 1066), sharded reused the place of block 500 (freed at op 1150)
mimalloc cccp.rep | op 1373 (a 938 4072): mimalloc reused the place of block 623 (freed at op 1066), sharded reused the place of block 500 (freed at op 1150)
mimalloc coalesce-big.rep | op 4285 (a 2184 704): mimalloc reused the place of block 600 (freed at op 1301), sharded reused the place of block 2000 (freed at op 4101)
mimalloc expr-bal.rep | op 3789 (a 2332 4072): mimalloc reused the place of block 1961 (freed at op 3247), sharded reused the place of block 1573 (freed at op 3447)
mimalloc expr.rep | op 3789 (a 2332 4072): mimalloc reused the place of block 1961 (freed at op 3247), sharded reused the place of block 1573 (freed at op 3447)
mimalloc freeciv.rep | op 9930 (a 8927 12): mimalloc a fresh place in region 26, sharded reused the place of block 2365 (freed at op 2663)
mimalloc hostname.rep | op 94 (a 81 472): mimalloc reused the place of block 3 (freed at op 5), sharded reused the place of block 1 (freed at op 6) - a new page on freed slices: mimalloc 2.0.9 takes them from its span queues, sharded takes the lowest free slices of the segment (a named deviation, sharded.c)
mimalloc ls.1.rep | op 94 (a 81 472): mimalloc reused the place of block 3 (freed at op 5), sharded reused the place of block 1 (freed at op 6) - a new page on freed slices: mimalloc 2.0.9 takes them from its span queues, sharded takes the lowest free slices of the segment (a named deviation, sharded.c)
mimalloc ls.rep | op 94 (a 81 472): mimalloc reused the place of block 3 (freed at op 5), sharded reused the place of block 1 (freed at op 6) - a new page on freed slices: mimalloc 2.0.9 takes them from its span queues, sharded takes the lowest free slices of the segment (a named deviation, sharded.c)
mimalloc needle.rep | op 30133 (a 15132 2593): mimalloc reused the place of block 5260 (freed at op 22533), sharded reused the place of block 10168 (freed at op 25169)
mimalloc pulseaudio.rep | op 32 (a 22 80): mimalloc reused the place of block 4 (freed at op 9), sharded opened region 12
mimalloc random2-bal.rep | op 3936 (a 2204 117): mimalloc a fresh place in region 34, sharded a fresh place in region 4
mimalloc random2.rep | op 3936 (a 2204 117): mimalloc a fresh place in region 34, sharded a fresh place in region 4
mimalloc rm.1.rep | op 94 (a 81 472): mimalloc reused the place of block 3 (freed at op 5), sharded reused the place of block 1 (freed at op 6) - a new page on freed slices: mimalloc 2.0.9 takes them from its span queues, sharded takes the lowest free slices of the segment (a named deviation, sharded.c)
mimalloc rm.rep | op 94 (a 81 472): mimalloc reused the place of block 3 (freed at op 5), sharded reused the place of block 1 (freed at op 6) - a new page on freed slices: mimalloc 2.0.9 takes them from its span queues, sharded takes the lowest free slices of the segment (a named deviation, sharded.c)
mimalloc stty.rep | op 94 (a 81 472): mimalloc reused the place of block 3 (freed at op 5), sharded reused the place of block 1 (freed at op 6) - a new page on freed slices: mimalloc 2.0.9 takes them from its span queues, sharded takes the lowest free slices of the segment (a named deviation, sharded.c)
mimalloc tty.rep | op 94 (a 81 472): mimalloc reused the place of block 3 (freed at op 5), sharded reused the place of block 1 (freed at op 6) - a new page on freed slices: mimalloc 2.0.9 takes them from its span queues, sharded takes the lowest free slices of the segment (a named deviation, sharded.c)
tcmalloc amptjp-bal.rep | op 1332 (a 918 4072): gperftools reused the place of block 623 (freed at op 908), percpu reused the place of block 631 (freed at op 904)
tcmalloc amptjp.rep | op 1332 (a 918 4072): gperftools reused the place of block 623 (freed at op 908), percpu reused the place of block 631 (freed at op 904)
tcmalloc boat.rep | op 49462 (a 32977 1024): gperftools reused the place of block 11264 (freed at op 38603), percpu reused the place of block 13312 (freed at op 39627)
tcmalloc cccp-bal.rep | op 4083 (a 2421 4072): gperftools reused the place of block 748 (freed at op 988), percpu reused the place of block 650 (freed at op 1046)
tcmalloc cccp.rep | op 4083 (a 2421 4072): gperftools reused the place of block 748 (freed at op 988), percpu reused the place of block 650 (freed at op 1046)
tcmalloc coalesce-big.rep | op 6882 (a 3481 1120): gperftools reused the place of block 3302 (freed at op 6703), percpu reused the place of block 3283 (freed at op 6584)
tcmalloc cp-decl-bal.rep | op 732 (a 625 4072): gperftools reused the place of block 534 (freed at op 640), percpu reused the place of block 538 (freed at op 637)
tcmalloc cp-decl.rep | op 732 (a 625 4072): gperftools reused the place of block 534 (freed at op 640), percpu reused the place of block 538 (freed at op 637)
tcmalloc expr-bal.rep | op 1187 (a 892 4072): gperftools reused the place of block 650 (freed at op 811), percpu reused the place of block 593 (freed at op 845)
tcmalloc expr.rep | op 1187 (a 892 4072): gperftools reused the place of block 650 (freed at op 811), percpu reused the place of block 593 (freed at op 845)
tcmalloc freeciv.rep | op 22234 (a 15320 33128): gperftools reused the place of block 2008 (freed at op 21407), percpu reused the place of block 4829 (freed at op 16330)
tcmalloc needle.rep | op 30427 (a 15426 530): gperftools reused the place of block 14531 (freed at op 29532), percpu reused the place of block 14580 (freed at op 29581)
tcmalloc pulseaudio.rep | op 6194 (a 3377 32): gperftools reused the place of block 2826 (freed at op 5392), percpu reused the place of block 1769 (freed at op 6192)
tcmalloc random-bal.rep | op 2176 (a 1518 4962): gperftools reused the place of block 842 (freed at op 1345), percpu reused the place of block 639 (freed at op 2031)
tcmalloc random.rep | op 2120 (a 1482 6378): gperftools reused the place of block 455 (freed at op 1766), percpu opened region 841
tcmalloc random2-bal.rep | op 2870 (a 1832 4632): gperftools reused the place of block 1581 (freed at op 2506), percpu reused the place of block 1733 (freed at op 2718)
tcmalloc random2.rep | op 2870 (a 1832 4632): gperftools reused the place of block 1581 (freed at op 2506), percpu reused the place of block 1733 (freed at op 2718)
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
