#!/bin/sh
# `heaplab grade` scores a finished policy sensibly and the student skeleton
# low without crashing; it reads both malloc-lab header styles.
# Run from the top of the build tree (make check does).
set -u
. "$(dirname "$0")/../tests/lib.sh"
traces=${srcdir:-.}/traces
[ -x "$heaplab" ] || hl_skip "no $heaplab"
hl_compiled firstfit || hl_skip "the reference policy firstfit is not compiled in"
hl_tmpdir
failed=0
expect() { # expect "what" command...
	what=$1; shift
	if "$@"; then echo "check: $what: ok"; else echo "check: $what: FAILED"; failed=1; fi
}
# field FILE KEY: a top-level number of the grader's JSON (the last one of that name)
field() { tr ',{}' '\n\n\n' <"$1" | grep "^\"$2\":" | tail -1 | cut -d: -f2; }
between() { awk -v x="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(x >= lo && x <= hi) }'; }
less() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }

# 1. firstfit on the default set (the classic one, and the hidden one when
#    the tree has it), against itself, without counting instructions (that
#    is tests/book/grade_components.sh's): every trace correct, a utilization in
#    the range a good free list reaches.
n_hidden=$(ls "$traces"/hidden/*.rep 2>/dev/null | wc -l)
"$heaplab" grade --policy=firstfit --reference=firstfit --no-throughput --json >"$tmp/ff.json"
rc=$?
cat "$tmp/ff.json"
expect "firstfit: exit 0, every trace correct" [ $rc = 0 ]
expect "firstfit: $(field "$tmp/ff.json" correct) of 13 classic and $n_hidden hidden traces correct" \
	[ "$(field "$tmp/ff.json" correct)" = $((13 + n_hidden)) ]
expect "firstfit: $(field "$tmp/ff.json" hidden_total) hidden traces in the default set" \
	[ "$(field "$tmp/ff.json" hidden_total)" = "$n_hidden" ]
expect "firstfit: mean utilization between 70% and 100%" between "$(field "$tmp/ff.json" utilization)" 0.7 1
expect "firstfit: index between 40 and 60 (utilization alone, throughput not counted)" \
	between "$(field "$tmp/ff.json" index)" 40 60

expect "every trace's best layout found (heaplab bound) has a utilization in (0, 1]" python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))["traces"]
sys.exit(not t or not all(0 < r["best_layout_utilization"] <= 1 for r in t))' "$tmp/ff.json"

# 2. The table form names the index.
"$heaplab" grade --policy=firstfit --no-throughput short1-bal >"$tmp/table.txt"
expect "the table ends with the performance index" grep -q '^Perf index = .*/100$' "$tmp/table.txt"

# 3. Both header styles: the classic one (heap size first) counts in both
#    measures; the 64-bit lab's (weight code first: 2 = utilization only)
#    in utilization only.
printf '20000\n2\n4\n1\na 0 100\na 1 200\nf 0\nf 1\n' >"$tmp/classic.rep"
printf '2\n2\n4\n300\na 0 100\na 1 200\nf 0\nf 1\n' >"$tmp/later.rep"
"$heaplab" grade --policy=firstfit --no-throughput --json "$tmp/classic.rep" "$tmp/later.rep" >"$tmp/styles.json"
expect "classic header: scored in throughput" grep -q '"trace":"classic.rep"[^}]*"scored_throughput":true' "$tmp/styles.json"
expect "64-bit lab header, weight 2: utilization only" \
	grep -q '"trace":"later.rep"[^}]*"scored_util":true,"scored_throughput":false' "$tmp/styles.json"

# 4. A damaged trace is bad input (exit 2), not a score.
printf 'a 0 100\nx 1\n' >"$tmp/bad.rep"
"$heaplab" grade --policy=firstfit "$tmp/bad.rep" >/dev/null 2>&1
expect "a damaged trace is rejected with exit 2" [ $? = 2 ]

# 5. The skeleton: correct on every trace (no crash), scored low.  The
#    realloc traces are left out (the skeleton is quadratic on them), and so
#    is coalescing-bal (where doing no coalescing is fast).  Throughput is
#    not counted here (tests/book/grade_components.sh counts it).
if hl_compiled student; then
	set -- short1-bal amptjp-bal cccp-bal random-bal random2-bal binary-bal
	"$heaplab" grade --policy=student --no-throughput --json "$@" >"$tmp/st.json"
	rc=$?
	"$heaplab" grade --policy=firstfit --no-throughput --json "$@" >"$tmp/ff6.json"
	cat "$tmp/st.json"
	expect "student: no crash, every trace correct" [ $rc = 0 ]
	expect "student: utilization $(field "$tmp/st.json" utilization) at least 0.1 below firstfit's" \
		less "$(field "$tmp/st.json" utilization)" "$(awk -v u="$(field "$tmp/ff6.json" utilization)" 'BEGIN { print u - 0.1 }')"
	expect "student scores below firstfit on the same traces" \
		less "$(field "$tmp/st.json" index)" "$(field "$tmp/ff6.json" index)"
	# A replay that runs past --timeout loses its trace, not the run.
	"$heaplab" grade --policy=student --no-throughput --timeout 1 --repeat 20 --json realloc-bal short1-bal >"$tmp/slow.json"
	rc=$?
	expect "a graded replay past --timeout scores zero there, the other trace still counts" \
		grep -q '"trace":"realloc-bal.rep","valid":false.*"error":"timed out after 1 s".*"trace":"short1-bal.rep","valid":true' \
		"$tmp/slow.json"
	expect "... and the exit status says a trace failed" [ $rc = 1 ]
else
	echo "check: the student skeleton: skipped (configure --with-policy=...,student)"
fi
exit $failed
