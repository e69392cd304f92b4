#!/usr/bin/env bash
# Every shipped trace replays clean (payloads, overlap, alignment, the heap
# checker) under every compiled-in policy.
set -u
. "$(dirname "$0")/../lib.sh"
# (debug:off: in an --enable-debug build the replay's own checker passes
# stand in for the checker after every call, which would be quadratic here)
out=$("$heaplab" replay --policy=all --conf=debug:off --repeat 0 --json "${srcdir:-.}"/traces/*.rep 2>&1)
status=$?
total=$(echo "$out" | grep -c '"ok":')
bad=$(echo "$out" | grep -c '"ok":false')
echo "$out" | grep -v '"ok":true' | grep -v 'warning:' | head -20
echo "trace replays: $((total - bad)) passed, $bad failed"

# A long trace is read through a window on a temporary file of its ops
# (trace.h): with a window of 64 ops, each of these traces reloads it
# hundreds of times, across the threads of the adversarial ones, and each
# replay must give what the trace held in memory gave (kops, a time, left
# out).  Both replays run on one CPU: a policy with per-CPU caches (percpu)
# finds its blocks where the CPUs its replay's threads happened to run on
# left them, so on several CPUs two replays of a multi-threaded trace
# differ under it whatever the window (4 of 6 alike, measured); on one,
# 6 of 6.
fixed() { sed 's/"kops":[0-9.e+-]*,//'; }
one_cpu=$(hl_one_cpu)
some=("${srcdir:-.}"/traces/adversarial/*.rep "${srcdir:-.}"/traces/realloc-bal.rep)
raw=$($one_cpu "$heaplab" replay --policy=all --conf=debug:off --repeat 0 --json "${some[@]}" 2>/dev/null)
whole=$(fixed <<<"$raw")
windowed=$(HEAPLAB_TRACE_WINDOW=64 $one_cpu "$heaplab" replay --policy=all --conf=debug:off --repeat 0 --json "${some[@]}" \
	2>/dev/null | fixed)
same=0
# (every trace replayed clean under every compiled-in policy, however many)
if [ "$(grep -c '"ok":true' <<<"$raw")" -eq $((${#some[@]} * $(hl_policies | wc -l))) ] && [ "$whole" = "$windowed" ]; then
	same=1
else
	diff <(echo "$whole") <(echo "$windowed") | head -5
fi
echo "windowed replays: $([ $same = 1 ] && echo "the same as in memory" || echo "DIFFER")"
[ $status -eq 0 ] && [ "$total" -gt 0 ] && [ $same = 1 ]
