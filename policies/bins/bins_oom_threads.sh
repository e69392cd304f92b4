#!/usr/bin/env bash
# bins running out of memory with threads (tests/programs/oom/threads_to_limit.c):
# nine threads allocate until malloc fails, with aligned_alloc(512) or by
# growing blocks to 4 KiB with realloc, under an address-space limit, with
# the main arena's break capped (brk_max:64M), so that the arenas cannot
# grow and glibc's sysmalloc falls back to mappings: then even a thread's
# tcache record, its first chunk, may be a mapped chunk, which its exit
# must unmap, not free into an arena.  The real glibc runs the same
# program under the same limit first (it must pass: the program works);
# then bins, RUNS times per mode, must end every run with exit 0: never a
# crash, an abort or a hang.  (Not under debug:on: the guard's own maps
# run out of memory first and end the run by design.)
set -u
. "$(dirname "$0")/../../tests/lib.sh"
hl_skip_sanitized "bins runs preloaded; a -fsanitize=$hl_sanitizer build owns malloc"
program="$build/tests/programs/oom_threads_to_limit"
limit=$((200 << 20))
runs=${HL_OOM_RUNS:-4}
hl_compiled bins || hl_skip "bins is not compiled in"
command -v prlimit >/dev/null || hl_skip "no prlimit (util-linux)"
hl_tmpdir
n=0

# run LABEL CONF MODE: one run, its verdict in a file of its own (runs go
# two at a time); CONF empty for the real glibc
run() {
	local label=$1 conf=$2 mode=$3 out rc
	n=$((n + 1))
	local verdict="$tmp/$n"
	if [ -z "$conf" ]; then
		out=$(timeout -k 5 300 prlimit --as=$limit "$program" "$mode" 2>&1)
	else
		out=$(timeout -k 5 300 prlimit --as=$limit env HEAPLAB_POLICY=bins HEAPLAB_CONF="$conf" \
			LD_PRELOAD="$preload" "$program" "$mode" 2>&1)
	fi
	rc=$?
	if [ $rc -eq 0 ]; then
		echo pass >"$verdict"
	else
		echo "FAIL: $label $mode: exit $rc: $(tail -n 2 <<<"$out" | tr '\n' ' ')" >"$verdict"
	fi
}

for mode in aligned realloc; do
	run glibc "" $mode
	for i in $(seq "$runs"); do
		run bins brk_max:64M $mode &
		n=$((n + 1))
		[ $((i % 2)) -eq 0 ] && wait
	done
	wait
done
passed=$(cat "$tmp"/* | grep -cx pass)
failed=$(cat "$tmp"/* | grep -vcx pass)
grep -hv '^pass$' "$tmp"/*
echo "bins out of memory with threads: $passed passed, $failed failed"
[ $failed -eq 0 ]
