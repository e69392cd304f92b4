#!/bin/sh
# The report of heaplab diagnose in a real browser: headless
# Chromium (visualize/diagnose-browser-test.mjs) finds the stacked causes
# and one line per candidate, and the figures they carry equal those
# worked out here without the page: the committed bytes of tests/diagnose/
# hand.rep (33 pages: see tests/diagnose/diagnose.sh), the hole and the live bytes
# from glibc's rules, and each candidate's peak and final resident bytes
# from `heaplab replay` of the same trace (the replay fills every block,
# so it writes the pages the recorded program wrote, as diagnose's replay
# does).  diagnose counts the heap's pages and the metadata's, as an RSS
# does: the final is resident_bytes + os.metadata_resident_bytes of
# --stats; the peak is the largest heap figure --explain=json gives after
# an op, plus the metadata at the end (hand.rep's policies make all their
# metadata in the first call and never give it back).
# Skipped (exit 77) only when Chromium, node or playwright-core is missing,
# or no compiled-in policy models glibc or jemalloc.
set -u
src=${srcdir:-.}
hand="$src/tests/diagnose/hand.rep"
model=tcache_count:7,fastbins:on
. "$src/tests/visualize/browser_lib.sh"
glibc=$(hl_model_of glibc)   # the policy that models glibc (bins here)
jemalloc=$(hl_model_of jemalloc)   # the policy that models jemalloc (slab here)
hl_need_models glibc jemalloc
hl_tmpdir heaplab-diagnose-browser
# peak and final resident bytes of one candidate
figures() {
	local heap_peak meta heap
	heap_peak=$(./heaplab replay --policy="$1" --conf="$2" --explain=json "$hand" |
		grep -o '"after":{[^}]*}' | sed 's/.*"resident":\([0-9]*\).*/\1/' | sort -n | tail -1)
	set -- $(./heaplab replay --policy="$1" --conf="$2" --repeat 0 --stats "$hand" |
		awk '$1 == "resident_bytes:" { h = $2 } $1 == "metadata_resident_bytes:" { m = $2 } END { print h, m }')
	echo $((heap_peak + $2)) $(($1 + $2))
}
runs=""
for cand in "${glibc}|$model" "${glibc}|$model,arena_max:2" "${jemalloc}|" "${jemalloc}|narenas:2,background_thread:on"; do
	policy=${cand%%|*} conf=${cand#*|}
	set -- $(figures "$policy" "$conf")
	[ -n "$runs" ] && runs="$runs,"
	runs="$runs{\"what\": \"$policy ${conf:-(defaults)}\", \"peak\": \"$1\", \"final\": \"$2\"}"
done
./heaplab diagnose --policies=${glibc},${jemalloc} --model="$model" --trace="$hand" \
	-o "$tmp/report.html" >"$tmp/summary.txt" || exit 1
cat >"$tmp/expect.json" <<JSON
{ "final": $((33 * 4096)), "peak": $((33 * 4096)),
  "causes": { "live": 148, "hole": 2016 },
  "runs": [ $runs ] }
JSON
cat "$tmp/expect.json"
node "$src/visualize/diagnose-browser-test.mjs" "$tmp/report.html" "$tmp/expect.json"
