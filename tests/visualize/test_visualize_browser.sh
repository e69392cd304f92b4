#!/bin/sh
# The stepper page in a real browser: headless Chromium driven by
# playwright-core (visualize/browser-test.mjs) presses "next" three times
# and checks the op and statistics shown, steps with the keyboard, and
# jumps to a label.  The expected values are worked out here without the
# page: the op and the live/peak requested bytes from the trace's text,
# committed/resident bytes and OS calls from `heaplab replay --stats` of
# the trace cut after the same op.  Then the heap diff: at two steps the
# page's list of changes and the blocks it outlines in the picture must be
# those `heaplab diff --json` finds for the same steps, stepping forward,
# back (time travel) and comparing two steps chosen in the page.  The
# steps the page shows for op 'r 4 500' are those `heaplab replay
# --explain` prints for it.
# Skipped (exit 77) only when Chromium, node or playwright-core is not
# installed: visualize/ci-deps.sh installs them.
set -u
src=${srcdir:-.}
trace="$src/visualize/traces/teach.rep"
. "$src/tests/visualize/browser_lib.sh"
policy=$(hl_role reference)
hl_compiled "$policy" || policy=$(hl_policies | sed -n 1p)
hl_tmpdir heaplab-browser-test

# The trace's ops, without comments or header lines.
grep '^[arfcmts] ' "$trace" >"$tmp/ops"
ops=$(wc -l <"$tmp/ops")
# live and peak requested bytes after the first N ops, from the text
live_after() {
	head -n "$1" "$tmp/ops" | awk '
		$1 == "a" || $1 == "r" { live += $3 - size[$2]; size[$2] = $3 }
		$1 == "c" { live += $3 * $4 - size[$2]; size[$2] = $3 * $4 }
		$1 == "m" { live += $4 - size[$2]; size[$2] = $4 }
		$1 == "f" { live -= size[$2]; size[$2] = 0 }
		live > peak { peak = live }
		END { print live + 0, peak + 0 }'
}
# committed, resident and OS calls after the first N ops, from replay --stats
heap_after() {
	head -n "$1" "$tmp/ops" >"$tmp/cut.rep"
	./heaplab replay --policy="$policy" --repeat 0 --stats "$tmp/cut.rep" | awk '
		$1 == "committed_bytes:" { c = $2 }
		$1 == "resident_bytes:" { r = $2 }
		$1 ~ /^(mmap|munmap|madvise_dontneed|madvise_free|mprotect|brk)_calls:$/ { calls += $2 }
		END { print c, r, calls }'
}
set -- $(live_after 3) $(heap_after 3)
op3=$(sed -n 3p "$tmp/ops")
label=holes
frame=$(grep -n "^s $label\$" "$tmp/ops" | cut -d: -f1)
label_live=$(live_after "$frame" | cut -d' ' -f1)
# the heap diff: what op 'f 1' changed, and 'allocated' against 'coalesced'
free_op=$(grep -n '^f 1$' "$tmp/ops" | cut -d: -f1)
from=$(grep -n '^s allocated$' "$tmp/ops" | cut -d: -f1)
to=$(grep -n '^s coalesced$' "$tmp/ops" | cut -d: -f1)
./heaplab diff --policy="$policy" --json "$trace" $((free_op - 1)) "$free_op" >"$tmp/diff-step.json" || exit 1
./heaplab diff --policy="$policy" --json "$trace" "$from" "$to" >"$tmp/diff-compare.json" || exit 1
# the diff itself, from the trace: freeing block 1 turns one live block free
grep -q '"kind":"changed","before":\[{[^]]*"state":"live"' "$tmp/diff-step.json" ||
	grep -q '"kind":"merged"' "$tmp/diff-step.json" ||
	{ echo "FAIL: heaplab diff does not show 'f 1' freeing a live block"; cat "$tmp/diff-step.json"; exit 1; }
# the explanation of the realloc, as replay --explain gives it
realloc_op=$(grep -n '^r 4 500$' "$tmp/ops" | cut -d: -f1)
./heaplab replay --policy="$policy" --repeat 0 --explain "$trace" >"$tmp/explain.txt" || exit 1
awk -v n="$realloc_op" '/^op [0-9]+ / { on = ($2 == n) ; next } on { sub(/^ +/, ""); print }' \
	"$tmp/explain.txt" >"$tmp/realloc-steps.txt"
[ -s "$tmp/realloc-steps.txt" ] || { echo "FAIL: replay --explain says nothing of op $realloc_op"; exit 1; }
steps=$(node -e 'process.stdout.write(JSON.stringify(require("fs").readFileSync(process.argv[1], "utf8").trim()))' \
	"$tmp/realloc-steps.txt")
cat >"$tmp/expect.json" <<JSON
{ "ops": $ops,
  "after3": { "op": "$op3", "live": "$1", "peak": "$2", "committed": "$3", "resident": "$4", "oscalls": "$5" },
  "label": { "name": "$label", "frame": $frame, "live": "$label_live" },
  "diff": { "step": $free_op, "from": $from, "to": $to },
  "explain": { "op": $realloc_op, "steps": $steps } }
JSON
cat "$tmp/expect.json"
./heaplab step --policy="$policy" -o "$tmp/stepper.html" "$trace" || exit 1
node "$src/visualize/browser-test.mjs" "$tmp/stepper.html" "$tmp/expect.json" "$tmp/diff-step.json" \
	"$tmp/diff-compare.json"
