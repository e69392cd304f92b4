#!/usr/bin/env bash
# Thread exit in recordings, side by side with the real glibc:
# tests/diagnose/waves.c runs waves of 8 threads on glibc under
# libheaplab-record.so and prints how many arenas glibc made; the recording
# replayed under bins (glibc's model) must end with as many.  glibc's rule
# (arena_thread_freeres, get_free_list): an exiting thread's arena goes on
# the free list and the next new thread takes it, so every wave after the
# first uses the first wave's arenas: 1 + 8 = 9, however many waves.
set -u
. "$(dirname "$0")/../lib.sh"
glibc=$(hl_model_of glibc)   # the policy that models glibc (bins here)
hl_skip_sanitized "recording a program preloads heaplab; a -fsanitize=$hl_sanitizer build owns malloc"
program="$build/tests/diagnose/diagnose_waves"
[ -n "$glibc" ] || hl_skip "no model of glibc is compiled in"
hl_tmpdir
failed=0 passed=0
pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }

for waves in 2 3; do
	rec="$tmp/w$waves.rep"
	out=$("$heaplab" diagnose --policies=${glibc} --model=tcache_count:7,fastbins:on --keep="$rec" \
		-- "$program" "$waves" 2>"$tmp/err")
	real=$(sed -n 's/^arenas \([0-9]*\)$/\1/p' <<<"$out")
	[ "$real" = 9 ] && pass || { fail "$waves waves: glibc made '$real' arenas, its rule gives 9"; cat "$tmp/err"; }
	# one exit per thread; each wave's threads get the numbers 1..8 the
	# last wave's exits gave back (calls after a thread's exit line, like
	# glibc's freeing of its key blocks, get exit lines of their own)
	"$heaplab" diagnose --text --trace="$rec" >"$rec.txt" || fail "$waves waves: --text failed"
	exits=$(grep -c '^#@exit ' "$rec.txt")
	[ "$exits" -ge $((8 * waves)) ] && pass || fail "$waves waves: $exits exit lines, expected at least $((8 * waves))"
	top=$(awk '$1 == "t" && $2 > m { m = $2 } END { print m + 0 }' "$rec.txt")
	[ "$top" = 8 ] && pass || fail "$waves waves: thread numbers up to $top, expected 1..8 used again"
	# the recorder's layers: the threads' arenas are glibc's mappings
	# (mapped), not stacks, though each sits right above the unused,
	# inaccessible tail of the arena below it as a stack sits above its
	# guard: 8 threads x 500 blocks of 64..848 bytes, about 1.8 MiB, at the peak
	layer() { sed -n "s/^#@layers peak .* $1=\([0-9]*\).*/\1/p" "$rec.txt"; }
	mapped=$(layer mapped) stack=$(layer stack)
	[ "${mapped:-0}" -ge $((1536 * 1024)) ] && [ "${stack:-0}" -lt $((1024 * 1024)) ] && pass ||
		fail "$waves waves: layers at the peak: mapped '$mapped', stack '$stack' (the arenas counted as stacks?)"
	model=$("$heaplab" replay --policy=${glibc} --conf=tcache_count:7,fastbins:on --repeat 0 --check-every 0 --stats "$rec" 2>&1 |
		awk '$1 == "arenas:" { print $2 }')
	[ "$model" = "$real" ] && pass || fail "$waves waves: the replay under ${glibc} ends with '$model' arenas, glibc with '$real'"
done

echo "thread exit: $passed passed, $failed failed"
[ $failed -eq 0 ]
