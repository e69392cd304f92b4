#!/bin/sh
# The lockstep in the terminal: `heaplab step --tty --policy=A,B,...` prints
# a table, a row per op and a column per policy.  For every compiled-in
# policy, on the teaching trace, a recorded program's trace, a trace with
# times (so that decay and purge delays act on the replay's clock) and one
# that frees bytes inside freed bytes,
# each cell's OS calls (so far and by this op), its committed bytes and its
# reuse mark must be what `heaplab replay --explain=json` of that policy
# alone says for the op (tests/visualize/lockstep_lib.sh works them out), and the
# rules named at the end of each row exactly those the same figures give;
# --diverge=RULE keeps exactly those rows.  Two runs print the same table
# (each run steady: tests/visualize/lockstep_lib.sh says why).
# Bad --diverge values and --quiz with several policies are refused with
# one line and exit 2.
set -u
src=${srcdir:-.}
. "$src/tests/lib.sh"
. "$src/tests/visualize/lockstep_lib.sh"
hl_tmpdir heaplab-lockstep
fail() { echo "FAIL: $*"; exit 1; }

# A trace with times: blocks freed, then ops 30 and 60 seconds later.
{
	echo "#@t 0"
	i=0
	while [ $i -lt 40 ]; do echo "a $i 4000"; i=$((i + 1)); done
	i=0
	while [ $i -lt 40 ]; do echo "f $i"; i=$((i + 1)); done
	echo "#@t 30000000"
	echo "a 40 100"
	echo "#@t 60000000"
	echo "a 41 5000"
} >"$tmp/timed.rep"
# Freed bytes inside freed bytes: a big block freed, a small one placed in
# its bytes and freed in turn, then blocks across both.
printf 'a 0 4000\na 1 16\nf 0\na 2 100\na 3 200\nf 2\na 4 64\na 5 3000\nf 3\nf 5\nr 4 2000\na 6 48\n' \
	>"$tmp/nested.rep"

checked=0
for trace in "$src/visualize/traces/teach.rep" "$src/traces/hostname.rep" "$tmp/timed.rep" "$tmp/nested.rep"; do
	name=$(basename "$trace")
	steady ./heaplab step --tty --policy="$list" "$trace" >"$tmp/table" || fail "$name: heaplab step --tty failed"
	steady ./heaplab step --tty --policy="$list" "$trace" >"$tmp/again" || fail "$name: the second run failed"
	cmp -s "$tmp/table" "$tmp/again" || fail "$name: two runs printed different tables"
	lockstep_facts "$trace" $policies >"$tmp/facts" || fail "$name: replay --explain failed"
	lockstep_cells "$tmp/table" | sort >"$tmp/cells"
	awk "$lockstep_human"'{ print $1, $2, $3, $4, human($5), $7 }' "$tmp/facts" | sort >"$tmp/want"
	[ -s "$tmp/want" ] || fail "$name: no figures from replay --explain"
	if ! cmp -s "$tmp/cells" "$tmp/want"; then
		diff "$tmp/want" "$tmp/cells" | head -20
		fail "$name: the table's cells differ from replay --explain's figures (< explain, > table)"
	fi
	# the rules at the end of each row
	awk -F'|' '/^ *[0-9]+ / { split($1, head, " "); print head[1], $NF }' "$tmp/table" |
		awk '{ for (i = 2; i <= NF; i++) print $i, $1 }' | sort >"$tmp/rules-shown"
	for r in os reuse committed; do
		lockstep_diverging "$tmp/facts" $r 10 | sed "s/^/$r /"
	done | sort >"$tmp/rules-want"
	if ! cmp -s "$tmp/rules-shown" "$tmp/rules-want"; then
		diff "$tmp/rules-want" "$tmp/rules-shown" | head -20
		fail "$name: the rules the table names differ from those the figures give (< figures, > table)"
	fi
	for r in os reuse committed:25; do
		steady ./heaplab step --tty --policy="$list" --diverge=$r "$trace" >"$tmp/only" ||
			fail "$name: --diverge=$r failed"
		awk -F'|' 'NF > 2 && /^ *[0-9]+ / { split($1, head, " "); if (head[1] > 0) print head[1] }' "$tmp/only" >"$tmp/rows"
		lockstep_diverging "$tmp/facts" "${r%%:*}" 25 >"$tmp/want-rows"
		cmp -s "$tmp/rows" "$tmp/want-rows" ||
			fail "$name: --diverge=$r shows ops $(echo $(cat "$tmp/rows")), the figures give $(echo $(cat "$tmp/want-rows"))"
		grep -q "^$(wc -l <"$tmp/want-rows") of [0-9]* ops differ by rule '${r%%:*}'\$" "$tmp/only" ||
			fail "$name: --diverge=$r does not count $(wc -l <"$tmp/want-rows") ops"
	done
	rows=$(grep -c '^ *[0-9][0-9]* .*|' "$tmp/table")
	ops=$(grep -c '^[arfcmts] ' "$trace")
	[ "$rows" -eq $((ops + 1)) ] || fail "$name: $rows rows for $ops ops (one per op and the start)"
	echo "ok: $name: $rows rows x $(echo $policies | wc -w) policies agree with replay --explain;" \
		"os at $(lockstep_diverging "$tmp/facts" os 10 | wc -l) ops, reuse at $(lockstep_diverging "$tmp/facts" reuse 10 | wc -l)"
	checked=$((checked + 1))
done
# the figures must be able to disagree: the traces make OS calls differ somewhere
lockstep_diverging "$tmp/facts" os 10 | grep -q . || fail "the timed trace has no op where OS calls differ"

teach="$src/visualize/traces/teach.rep"
refused() {
	./heaplab step "$@" "$teach" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ $rc -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] || { cat "$tmp/err"; fail "step $* exited $rc, not 2 with one line"; }
}
first_two=$(echo $policies | awk '{ print $1 "," $2 }')
refused --tty --policy="$first_two" --diverge=bogus
refused --tty --policy="$first_two" --diverge=committed:x
refused --tty --policy="$first_two" --diverge=os:5
refused --tty --policy="$(echo $policies | awk '{ print $1 }')" --diverge=os
refused --tty --quiz --policy="$first_two"
echo "PASS: $checked traces in lockstep"
