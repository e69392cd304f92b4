#!/usr/bin/env bash
# heaplab replay --explain and --explain=json, under every
# compiled-in policy: the JSON is one valid object per operation with the
# documented fields, the operations are all there (their number is what the
# ordinary replay reports), every malloc and free names at least one step,
# the deltas add up to the figures, and the text has one block per operation
# ending in its "net:" line.  (free(NULL), "f -1", is no step: nothing to
# report.)
set -u
. "$(dirname "$0")/../lib.sh"
src="${srcdir:-.}"
command -v python3 >/dev/null || hl_skip "no python3 to read the JSON"
hl_tmpdir
passed=0 failed=0
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }
for trace in short2.rep corners.rep hostname.rep; do
	for p in $(hl_policies); do
		ops=$("$heaplab" replay --policy="$p" --repeat 0 --json "$src/traces/$trace" 2>/dev/null |
		      python3 -c 'import json,sys; print(json.load(sys.stdin)["ops"])')
		if ! "$heaplab" replay --policy="$p" --explain=json "$src/traces/$trace" > "$tmp/x.json" 2>"$tmp/err"; then
			fail "$p $trace: --explain=json exited non-zero: $(cat "$tmp/err")"; continue
		fi
		if ! head -1 "$tmp/x.json" | python3 -m json.tool > /dev/null; then
			fail "$p $trace: json.tool refuses the first object"; continue
		fi
		if msg=$(python3 - "$tmp/x.json" "$ops" "$p" <<'PY'
import json, sys
path, ops, policy = sys.argv[1], int(sys.argv[2]), sys.argv[3]
kinds = {"cache_hit", "cache_miss", "cache_put", "cache_fill", "cache_flush", "list_pop", "list_push",
         "exact_fit", "best_fit", "first_fit", "look", "reject", "scan", "sort", "split", "merge", "new",
         "retire", "move", "bump", "grow", "shrink", "map", "unmap", "purge", "decay", "remote_free",
         "collect", "handoff", "fail", "os"}
objs = [json.loads(line) for line in open(path)]
assert len(objs) == ops, f"{len(objs)} objects for {ops} operations"
total = 0.0
for n, o in enumerate(objs, 1):
    for key in ("policy", "op", "line", "text", "kind", "id", "size", "addr", "events", "lost_events", "delta", "after"):
        assert key in o, f"op {n}: no {key}"
    assert o["op"] == n and o["policy"] == policy, f"op {n}: numbered {o['op']}, policy {o['policy']}"
    if o["kind"] == "a" or (o["kind"] == "f" and o["id"] >= 0):
        assert o["events"], f"op {n} ({o['text']}): no step reported"
    for e in o["events"]:
        assert e["kind"] in kinds, f"op {n}: unknown event kind {e['kind']}"
        assert e["text"] and set(e) >= {"what", "index", "size", "size2", "before", "after", "addr"}, f"op {n}: {e}"
    total += o["delta"]["os_calls"]
    assert o["after"]["os_calls"] - o["delta"]["os_calls"] == (objs[n - 2]["after"]["os_calls"] if n > 1 else o["after"]["os_calls"] - o["delta"]["os_calls"]), f"op {n}: delta and after disagree"
PY
		2>&1); then
			passed=$((passed + 1))
		else
			fail "$p $trace: $msg"
		fi
		"$heaplab" replay --policy="$p" --explain "$src/traces/$trace" > "$tmp/x.txt" 2>&1
		blocks=$(grep -c '^op [0-9]* (line [0-9]*): ' "$tmp/x.txt")
		nets=$(grep -c '^    net: live ' "$tmp/x.txt")
		if [ "$blocks" -eq "$ops" ] && [ "$nets" -eq "$ops" ]; then
			passed=$((passed + 1))
		else
			fail "$p $trace: text has $blocks op blocks and $nets net lines for $ops operations"
		fi
	done
done
echo "explain: $passed passed, $failed failed"
[ $failed -eq 0 ] && [ $passed -gt 0 ]
