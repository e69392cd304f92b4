#!/usr/bin/env bash
# The recorder's pace (shim/record_pace.c): under HEAPLAB_RECORD_PACE=K a
# timed wait on a condition variable lasts K times as long, on either
# clock and through either call; without it (or with one that is not a
# number) the wait still times out.  A wait cannot end before its
# deadline, so the test reads only lower bounds, never a time limit.  The
# interposer stretches what is left of the wait when it is called, a
# moment after the probe read the clock for its deadline (CI saw 995 ms
# for a 20 ms wait at a pace of 50, the stretch of 19.9 ms): so a wait of
# 20 ms at a pace of 50 takes at least 950 ms (1 ms left between the two
# reads), which an interposer that did nothing would end after 20 ms.
set -u
. "$(dirname "$0")/../lib.sh"
hl_skip_sanitized "preloads the recorder into tests/diagnose/record_pace_probe; a -fsanitize=$hl_sanitizer build owns malloc"
probe="$build/tests/diagnose/record_pace_probe"
recorder="$build/.libs/libheaplab-record.so"
tmp=$(hl_tmpdir)
failed=0 passed=0
check() {   # what, the probe's line, the least milliseconds it must wait
	local what=$1 line=$2 least=$3 ms state
	read -r _ ms state <<<"$line"
	if [ "$state" = timedout ] && [ "$ms" -ge "$least" ]; then passed=$((passed + 1)); else
		failed=$((failed + 1)); echo "FAIL: $what: '$line' (at least $least ms, timed out)"
	fi
}
for how in timed realtime clock; do
	got=$(HEAPLAB_RECORD="$tmp/r" HEAPLAB_RECORD_PACE=50 LD_PRELOAD="$recorder" "$probe" $how 20)
	check "$how, pace 50" "$got" 950
	got=$(HEAPLAB_RECORD="$tmp/r" LD_PRELOAD="$recorder" "$probe" $how 20)
	check "$how, no pace" "$got" 20
	got=$(HEAPLAB_RECORD="$tmp/r" HEAPLAB_RECORD_PACE=junk LD_PRELOAD="$recorder" "$probe" $how 20)
	check "$how, a pace that is not a number" "$got" 20
done
echo "record pace: $passed passed, $failed failed"
[ $failed -eq 0 ]
