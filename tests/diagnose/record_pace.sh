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
#
# Under HEAPLAB_RECORD_PACE=allocator the wait counts the program's own
# time, the allocator's calls left out: while another thread calls malloc
# and free for 400 ms, a 50 ms wait lasts until that thread has had 50 ms
# outside the calls, about a tenth of its time: 423 ms here when quiet,
# 229 ms in CI under the load of the other tests; under =recorder only the
# recorder's work in those calls is left out, most of their time (420 ms
# quiet).  Both must last at least 125 ms, two and a half times the 50 ms
# a wait at the clock's time takes.  A wait woken by a signal still ends
# woken.  And a wait in the program's time ends, at most 100 times as
# long as it asked: while two threads allocate at once the program's time
# goes back (their calls' time added up is more than the clock's), and a
# 5 ms wait beside two threads that allocate for 20 s ends while they
# still do (without the bound it lasts past them: 5.7 s beside 3 s).
#
# MODE:NS counts each call as NS ns of the program's time (pymalloc's call,
# diagnose: allocator:14).  At 1000 ns a call, more than a call takes,
# the program's time runs ahead of the clock's, so a 50 ms wait beside a
# thread that allocates for 300 ms ends while that thread still does
# (counted as 0, it lasts past it: 423 ms); a count that is not a number
# is refused with a line and counted as 0.
set -u
. "$(dirname "$0")/../lib.sh"
hl_skip_sanitized "preloads the recorder into tests/diagnose/record_pace_probe; a -fsanitize=$hl_sanitizer build owns malloc"
probe="$build/tests/diagnose/record_pace_probe"
recorder="$build/.libs/libheaplab-record.so"
tmp=$(hl_tmpdir)
failed=0 passed=0
check() {   # what, the probe's line, the least milliseconds it must wait[, how it must end[, busy then]]
	local what=$1 line=$2 least=$3 end=${4:-timedout} busy=${5:-} ms state then
	read -r _ ms state then <<<"$line"
	if [ "$state" = "$end" ] && [ "$ms" -ge "$least" ] && { [ -z "$busy" ] || [ "$then" = "$busy" ]; }; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1)); echo "FAIL: $what: '$line' (at least $least ms, $end${busy:+ $busy})"
	fi
}
for how in timed realtime clock; do
	got=$(HEAPLAB_RECORD="$tmp/r" HEAPLAB_RECORD_PACE=50 LD_PRELOAD="$recorder" "$probe" $how 20)
	check "$how, pace 50" "$got" 950
	got=$(HEAPLAB_RECORD="$tmp/r" LD_PRELOAD="$recorder" "$probe" $how 20)
	check "$how, no pace" "$got" 20
	got=$(HEAPLAB_RECORD="$tmp/r" HEAPLAB_RECORD_PACE=junk LD_PRELOAD="$recorder" "$probe" $how 20)
	check "$how, a pace that is not a number" "$got" 20
	got=$(HEAPLAB_RECORD="$tmp/r" HEAPLAB_RECORD_PACE=allocator LD_PRELOAD="$recorder" "$probe" $how 50 400)
	check "$how, the allocator's calls not counted" "$got" 125
	got=$(HEAPLAB_RECORD="$tmp/r" HEAPLAB_RECORD_PACE=recorder LD_PRELOAD="$recorder" "$probe" $how 50 400)
	check "$how, the recorder's work not counted" "$got" 125
done
got=$(HEAPLAB_RECORD="$tmp/r" HEAPLAB_RECORD_PACE=allocator LD_PRELOAD="$recorder" "$probe" woken 5000)
check "a wait signalled, the allocator's calls not counted" "$got" 0 woken
got=$(HEAPLAB_RECORD="$tmp/r" HEAPLAB_RECORD_PACE=allocator LD_PRELOAD="$recorder" "$probe" timed 5 20000 2)
check "a wait beside two threads that allocate at once" "$got" 5 timedout while-busy
got=$(HEAPLAB_RECORD="$tmp/r" HEAPLAB_RECORD_PACE=allocator:1000 LD_PRELOAD="$recorder" "$probe" timed 50 300)
check "each call counted as 1000 ns" "$got" 50 timedout while-busy
got=$(HEAPLAB_RECORD="$tmp/r" HEAPLAB_RECORD_PACE=allocator:many LD_PRELOAD="$recorder" "$probe" timed 50 400 2>"$tmp/err")
check "a count of ns that is not a number" "$got" 125
if grep -q "HEAPLAB_RECORD_PACE's :NS is a number" "$tmp/err"; then
	passed=$((passed + 1))
else
	failed=$((failed + 1)); echo "FAIL: no line for a count of ns that is not a number: $(cat "$tmp/err")"
fi
echo "record pace: $passed passed, $failed failed"
[ $failed -eq 0 ]
