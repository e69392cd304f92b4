#!/bin/sh
# heaplab grade scores each part of the malloc lab's sheet in the right
# direction: firstfit (a complete solution of the lab) against the student
# skeleton as shipped, on two public traces and the hidden set.
#   correctness   both are correct on every trace (the skeleton is slow and
#                 wasteful, never wrong): full points for both
#   performance   the skeleton's utilization is lower and it executes more
#                 instructions per operation (counted by callgrind): fewer
#                 points; firstfit against itself scores a ratio of exactly
#                 1, since two counts of the same replay are equal
#   heap checker  firstfit's checker passes the sound heap and reports all
#                 three damages: full points; the skeleton's checker is a
#                 hook that does nothing: it passes the sound heap and
#                 reports no damage, and gets no checker points
#   write-up      left blank for the grader, 10 points, on both sheets
. "${srcdir:-.}/tests/lib.sh"
hl_skip_sanitized "valgrind (which counts the instructions) cannot run a sanitized heaplab"
command -v valgrind > /dev/null || hl_skip "valgrind is not installed (Debian: apt-get install valgrind)"
reference=$(hl_role reference) skeleton=$(hl_role skeleton)   # the lab's (policies.list)
hl_compiled "$reference" || hl_skip "the lab's reference, $reference, is not compiled in"
hl_compiled "$skeleton" || hl_skip "the lab's skeleton, $skeleton, is not compiled in (configure --with-policy=every)"
hl_tmpdir grade_components

set -- random-bal amptjp-bal
hidden=${srcdir:-.}/traces/hidden
if [ -d "$hidden" ]; then
	set -- "$@" --hidden="$hidden"
	n_hidden=$(ls "$hidden"/*.rep | wc -l)
else
	echo "note: no traces/hidden in this tree (the student's handout): public traces only"
	n_hidden=0
fi
"$heaplab" grade --policy="$reference" --json "$@" > "$tmp/ff.json" 2> "$tmp/ff.err" ||
	{ cat "$tmp/ff.err"; echo "FAIL: grading the reference failed"; exit 1; }
"$heaplab" grade --policy="$skeleton" --json "$@" > "$tmp/st.json" 2> "$tmp/st.err" ||
	{ cat "$tmp/st.err"; echo "FAIL: grading the skeleton failed"; exit 1; }

python3 - "$tmp/ff.json" "$tmp/st.json" "$n_hidden" << 'PY'
import json, sys
ff, st = (json.load(open(p)) for p in sys.argv[1:3])
n_hidden = int(sys.argv[3])
bad = 0
def expect(what, ok):
    global bad
    print(("ok:   " if ok else "FAIL: ") + what)
    bad |= not ok
P, F, S = "points", ff["points"], st["points"]
for name, d in (("reference", ff), ("skeleton", st)):
    expect(f"{name}: {d['correct']} of {d['total']} traces correct, {d['hidden_total']} hidden (want {n_hidden})",
           d["correct"] == d["total"] == 2 + n_hidden and d["hidden_total"] == n_hidden
           and sum(t["hidden"] for t in d["traces"]) == n_hidden)
    expect(f"{name}: every trace counted ({[t['instr_per_op'] for t in d['traces']]} instructions per op)",
           all(t["instructions"] > 0 and t["ref_instructions"] > 0 for t in d["traces"]))
expect(f"correctness: full points for both ({F['correctness']}, {S['correctness']})",
       F["correctness"] == S["correctness"] == 30)
expect(f"utilization: skeleton {st['utilization']} at least 0.05 below the reference's {ff['utilization']}",
       st["utilization"] < ff["utilization"] - 0.05)
expect(f"instructions per op: skeleton {st['instr_per_op']} above the reference's {ff['instr_per_op']}",
       st["instr_per_op"] > ff["instr_per_op"])
expect(f"the reference against itself: throughput ratio {ff['throughput_ratio']} is exactly 1 (counted, not timed)",
       ff["throughput_ratio"] == 1 and all(t["instructions"] == t["ref_instructions"] for t in ff["traces"]))
expect(f"throughput term: skeleton {st['score_throughput']} below the reference's {ff['score_throughput']}",
       st["score_throughput"] < ff["score_throughput"])
expect(f"performance points: skeleton {S['performance']} below the reference's {F['performance']}",
       S["performance"] < F["performance"])
fc, sc = ff["checker"], st["checker"]
expect(f"the reference's checker: sound heap passed, {fc['caught']} of {fc['injected']} damages reported, "
       f"{F['checker']} points", fc["sound"] and fc["injected"] == 3 and fc["caught"] == 3 and F["checker"] == 20)
expect(f"the skeleton's checker (does nothing): sound heap passed, {sc['caught']} of {sc['injected']} damages "
       f"reported, {S['checker']} points", sc["sound"] and sc["injected"] == 3 and sc["caught"] == 0
       and S["checker"] == 0)
expect("each damage the reference reported is named in its note",
       all(c["note"] for c in fc["cases"] if c["damaged"]))
for name, p in (("reference", F), ("skeleton", S)):
    expect(f"{name}: write-up left blank, out of {p['writeup_max']}", p["writeup"] is None and p["writeup_max"] == 10)
    expect(f"{name}: total {p['total']} is the sum of the three graded parts",
           abs(p["total"] - p["correctness"] - p["performance"] - p["checker"]) < 0.01)
expect(f"total: skeleton {S['total']} below the reference's {F['total']}", S["total"] < F["total"])
sys.exit(bad)
PY
rc=$?
# The table shows the same sheet, the write-up's line included.
"$heaplab" grade --policy="$skeleton" --no-throughput short1-bal > "$tmp/sheet.txt" 2>&1
grep -q '^  write-up .*____ / 10$' "$tmp/sheet.txt" && grep -q '^  heap checker .*0 of 3 damages caught .* 0.0 / 20$' "$tmp/sheet.txt" ||
	{ cat "$tmp/sheet.txt"; echo "FAIL: the table has no write-up line or no checker line"; rc=1; }
exit $rc
