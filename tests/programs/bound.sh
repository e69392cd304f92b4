#!/usr/bin/env bash
# heaplab bound: the bound is never above the optimum, and equals it where
# the trace is built so that it must; every layout it reports is real; no
# policy beats the bound.  The optimum of the small traces is found here by
# an exhaustive search (tests/programs/bound_optimum.py), not by heaplab.
set -u
. "$(dirname "$0")/../lib.sh"
src="${srcdir:-.}"
passed=0 failed=0
pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }
hl_tmpdir

# field FILE KEY: a number of the --json object
# the bound and the layouts found do not depend on the policy: any will do
any=$(hl_policies | sed -n 1p)
field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }

# 1. Traces of equal blocks: blocks alive at once form an interval graph,
#    which is perfect, so the optimum is exactly the peak of live bytes;
#    first fit in start order reaches it.  Random lifetimes, 32-byte blocks.
python3 "$src/tests/programs/bound_optimum.py" equal "$tmp/equal" 12
for t in "$tmp"/equal-*.rep; do
	want=$(sed -n 's/^# optimum //p' "$t")
	"$heaplab" bound --policy="$any" --verify --json "$t" > "$tmp/out.json" 2> "$tmp/err" || { fail "$t: exit $? $(cat "$tmp/err")"; continue; }
	b=$(field "$tmp/out.json" bound_bytes) f=$(field "$tmp/out.json" found_bytes)
	if [ "$b" = "$want" ] && [ "$f" = "$want" ]; then pass; else fail "$t: bound $b, found $f, optimum $want"; fi
done

# 2. Small traces of mixed sizes whose optimum the search finds: the bound
#    is never above it and the best layout found never below it.
python3 "$src/tests/programs/bound_optimum.py" mixed "$tmp/mixed" 12
# and one whose optimum is above the peak of live bytes by construction
# (blocks aligned to 64: the bound knows sizes, not alignments)
python3 "$src/tests/programs/bound_optimum.py" aligned "$tmp/mixed-aligned"
for t in "$tmp"/mixed-*.rep; do
	want=$(sed -n 's/^# optimum //p' "$t")
	"$heaplab" bound --policy="$any" --verify --json "$t" > "$tmp/out.json" 2> "$tmp/err" || { fail "$t: exit $? $(cat "$tmp/err")"; continue; }
	b=$(field "$tmp/out.json" bound_bytes) f=$(field "$tmp/out.json" found_bytes)
	if [ "$b" -le "$want" ] && [ "$f" -ge "$want" ]; then pass; else fail "$t: bound $b, found $f, optimum $want"; fi
done
b=$(sed -n 's/.*"bound_bytes":\([0-9]*\).*/\1/p' "$tmp/out.json")
if [ "$b" = 48 ]; then pass; else fail "aligned trace: bound $b, want the 48 live bytes"; fi

# 3. Shipped traces: every layout checked block by block, and no policy's
#    peak committed (or resident) below the bound.
for name in amptjp realloc-bal short2; do
	t="$src/traces/$name.rep"
	"$heaplab" bound --verify --json "$t" > "$tmp/out.json" 2> "$tmp/err" || { fail "$name: exit $? $(cat "$tmp/err")"; continue; }
	if python3 - "$tmp/out.json" <<'EOF'
import json, sys
o = json.load(open(sys.argv[1]))
bad = [p["policy"] for p in o["policies"] if p["peak_committed"] < o["bound_bytes"] or p["peak_resident"] < o["bound_bytes"]]
assert o["policies"], "no policy measured"
assert all(v >= o["bound_bytes"] for v in o["layouts"].values()), o["layouts"]
assert o["found_bytes"] == min(o["layouts"].values())
sys.exit(1 if bad else 0)
EOF
	then pass; else fail "$name: a policy or layout below the bound: $(cat "$tmp/out.json")"; fi
done

# 4. Bad input: one line, exit 2.
"$heaplab" bound --offline-max=lots "$src/traces/short1.rep" > /dev/null 2> "$tmp/err"
if [ $? -eq 2 ] && grep -q "bad --offline-max 'lots'" "$tmp/err"; then pass; else fail "bad --offline-max: $(cat "$tmp/err")"; fi
"$heaplab" bound "$tmp/no-such.rep" > /dev/null 2> "$tmp/err"
if [ $? -eq 2 ] && grep -q "no-such.rep" "$tmp/err"; then pass; else fail "missing trace: $(cat "$tmp/err")"; fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
