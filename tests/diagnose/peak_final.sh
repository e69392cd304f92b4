#!/usr/bin/env bash
# bench/diagnose/peak_final.py, the meter behind bench/ACCURACY.md: its
# final is the resident set as the program exits, after every free it made,
# however late.  A Python program maps 64 MiB, writes all of it, lets it
# go and exits at once (os._exit: no teardown), so no 10 ms reading falls
# between the free and the exit: the final must be at least 48 MiB below
# the peak, and the exit status must come through.
set -u
. "$(dirname "$0")/../lib.sh"
command -v python3 >/dev/null || hl_skip "no python3"
meter="$srcdir/bench/diagnose/peak_final.py"
prog='import mmap, os
m = mmap.mmap(-1, 64 << 20)
m.write(b"x" * (64 << 20))
m.close()
os._exit(3)'
out=$(python3 "$meter" -- python3 -c "$prog")
status=$?
[ "$status" -eq 3 ] || { echo "FAIL: exit status $status, not the program's 3"; exit 1; }
read -r peak final <<<"$out"
echo "peak $peak MiB, final $final MiB"
awk -v p="$peak" -v f="$final" 'BEGIN { exit !(p >= 64 && p - f >= 48) }' ||
	{ echo "FAIL: the final was read before the memory was let go (peak $peak, final $final MiB)"; exit 1; }
echo "PASS: the final is read at the exit"
