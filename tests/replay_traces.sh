#!/usr/bin/env bash
# Every shipped trace replays clean (payloads, overlap, alignment, the heap
# checker) under every compiled-in policy.
set -u
. "$(dirname "$0")/lib.sh"
# (debug:off: in an --enable-debug build the replay's own checker passes
# stand in for the checker after every call, which would be quadratic here)
out=$("$heaplab" replay --policy=all --conf=debug:off --repeat 0 --json "${srcdir:-.}"/traces/*.rep 2>&1)
status=$?
total=$(echo "$out" | grep -c '"ok":')
bad=$(echo "$out" | grep -c '"ok":false')
echo "$out" | grep -v '"ok":true' | grep -v 'warning:' | head -20
echo "trace replays: $((total - bad)) passed, $bad failed"
[ $status -eq 0 ] && [ "$total" -gt 0 ]
