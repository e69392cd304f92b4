#!/bin/sh
# heaplab plot: a trace replay and a sampled run as SVG.
#  - teach.rep (21 ops) gives 22 points (before the first op and after
#    each), drawn as steps: 2 * 22 - 1 vertices per series; all three
#    series are there; live requested ends at 0 (the trace frees all), so
#    its last vertex lies on the x axis (y = 370 in the 420-high plot with
#    a 50-pixel bottom margin).
#  - `heaplab run --sample-ms 5` of a shell that sleeps writes
#    "pid ms live committed resident" lines under the file's header, the
#    times of one pid never go back, and plot --samples draws the
#    process with the most samples (sh or its sleep: a tie is either).
set -u
. "$(dirname "$0")/../lib.sh"
src=${srcdir:-.}
hl_tmpdir heaplab-plot
fail=0
policy=$(hl_policies | sed -n 1p)

./heaplab plot --policy="$policy" -o "$tmp/trace.svg" "$src/visualize/traces/teach.rep" || exit 1
n=$(grep -c '<polyline class="series"' "$tmp/trace.svg")
[ "$n" = 3 ] || { echo "FAIL: $n series, expected 3"; fail=1; }
live=$(grep 'data-series="live requested"' "$tmp/trace.svg" | sed 's/.*points="//; s/".*//')
vertices=$(echo "$live" | wc -w)
[ "$vertices" = 43 ] || { echo "FAIL: live has $vertices vertices, expected 43"; fail=1; }
last_y=$(echo "$live" | awk '{ split($NF, xy, ","); print xy[2] }')
[ "$last_y" = 370.0 ] || { echo "FAIL: live ends at y=$last_y, not on the axis (370.0)"; fail=1; }

if hl_sanitized; then
	# heaplab run preloads the library, which a sanitizer build cannot
	[ "$fail" = 0 ] && echo "PASS: plot of a trace (the sampled run is not run: built with -fsanitize=$hl_sanitizer)"
	exit "$fail"
fi
./heaplab run --policy="$policy" --sample-ms 5 --sample-file "$tmp/run.samples" -- sh -c 'sleep 0.3' || fail=1
head -1 "$tmp/run.samples" | grep -q "^# heaplab samples: policy=$policy interval_ms=5" ||
	{ echo "FAIL: no header in the sample file"; fail=1; }
pid=$(grep -v '^#' "$tmp/run.samples" | awk '{print $1}' | sort | uniq -c | sort -rn | awk 'NR == 1 {print $2}')
lines=$(grep -c "^$pid " "$tmp/run.samples")
[ "$lines" -ge 10 ] || { echo "FAIL: only $lines samples in 0.3 s at 5 ms"; fail=1; }
grep "^$pid " "$tmp/run.samples" | awk '$2 < last { bad = 1 } { last = $2 } NF != 5 { bad = 1 } END { exit bad }' ||
	{ echo "FAIL: malformed lines or time going back"; fail=1; }
./heaplab plot --samples "$tmp/run.samples" -o "$tmp/run.svg" || fail=1
chosen=$(grep -o 'pid [0-9]*' "$tmp/run.svg" | head -1 | cut -d' ' -f2)
[ -n "$chosen" ] && [ "$(grep -c "^$chosen " "$tmp/run.samples")" = "$lines" ] ||
	{ echo "FAIL: the plot shows pid '$chosen', not one with the most samples ($lines)"; fail=1; }
[ "$fail" = 0 ] && echo "PASS: plots of a trace and of a sampled run"
exit "$fail"
