#!/usr/bin/env bash
# The binary form of a trace (trace/trace_binary.h), what the recorder
# writes by default: a text trace converted to binary and back is the same
# file byte for byte, the binary one is smaller when its lines are the
# recorder's, and a replay of either gives the same figures under every
# policy (through the reader's window too).  Damaged binary files are
# tests/house/bad_input.sh's.
set -u
. "$(dirname "$0")/../lib.sh"
src="${srcdir:-.}"
hl_tmpdir
passed=0 failed=0
pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }
# the replay's figures, the trace's name and the time (kops) left out;
# on one CPU (a policy's per-CPU caches follow the CPUs the replay's
# threads run on: see tests/programs/replay_traces.sh)
one_cpu=$(hl_one_cpu)
replays() { $one_cpu "$heaplab" replay --policy=all --conf=debug:off --repeat 0 --json "$1" 2>/dev/null; }
figures() { replays "$1" | sed 's/"kops":[0-9.e+-]*,//; s/"trace":"[^"]*",//'; }
round_trip() { # a text trace: to binary and back
	local f=$1 name
	name=$(basename "$f" .rep)
	"$heaplab" diagnose --binary --trace="$f" >"$tmp/$name.bin" || { fail "$name: --binary failed"; return; }
	"$heaplab" diagnose --text --trace="$tmp/$name.bin" >"$tmp/$name.txt" || { fail "$name: --text failed"; return; }
	cmp -s "$f" "$tmp/$name.txt" && pass || fail "$name: text -> binary -> text differs from the text"
	local a b
	a=$(figures "$f") b=$(figures "$tmp/$name.bin")
	# (clean under every compiled-in policy, however many)
	[ -n "$a" ] && [ "$(replays "$f" | grep -c '"ok":true')" -eq "$(hl_policies | wc -l)" ] && [ "$a" = "$b" ] && pass ||
		fail "$name: the replays of the text and of the binary differ"
	b=$(HEAPLAB_TRACE_WINDOW=64 figures "$tmp/$name.bin")
	[ "$a" = "$b" ] && pass || fail "$name: the binary trace read through a window of 64 ops replays otherwise"
}

# shipped traces: their lines are written by hand (CRLF ends), so they
# travel as text records, but come back as they were
round_trip "$src/traces/amptjp.rep"
round_trip "$src/traces/adversarial/bins.rep"

# a recording, made as text by the recorder: threads, sites, times,
# samples, exits, layers; in binary it is a third of the size or less
if hl_sanitized; then
	echo "SKIP (part): recording a program preloads heaplab; a -fsanitize=$hl_sanitizer build owns malloc"
else
	HEAPLAB_RECORD_FORMAT=text HEAPLAB_RECORD="$tmp/mt" HEAPLAB_RECORD_MS=1 \
		LD_PRELOAD="$build/.libs/libheaplab-record.so" "$build/tests/diagnose/diagnose_waves" 2 >/dev/null 2>&1
	rec=$(ls "$tmp"/mt.*.rep 2>/dev/null | head -1)
	if [ -z "$rec" ]; then
		fail "the text recording of tests/diagnose/diagnose_waves was not written"
	else
		grep -q '^t [1-9]' "$rec" && grep -q '^#@t ' "$rec" && grep -q '^#@site ' "$rec" && pass ||
			fail "the recording lacks threads, times or sites"
		round_trip "$rec"
		bin=$tmp/$(basename "$rec" .rep).bin
		[ "$(stat -c %s "$bin")" -le $(($(stat -c %s "$rec") / 3)) ] && pass ||
			fail "the binary form is $(stat -c %s "$bin") B, the text $(stat -c %s "$rec") B: not a third or less"
	fi
	# the recorder's own binary form (the default) reads back as a whole
	# recording: its end record is there, and its text form has every kind
	HEAPLAB_RECORD="$tmp/mtb" HEAPLAB_RECORD_MS=1 LD_PRELOAD="$build/.libs/libheaplab-record.so" \
		"$build/tests/diagnose/diagnose_waves" 2 >/dev/null 2>&1
	bin=$(ls "$tmp"/mtb.*.rep 2>/dev/null | head -1)
	if [ -n "$bin" ] && [ "$(head -c 8 "$bin" | od -An -c | tr -d ' ')" = '211HLTRC1\n' ] &&
		"$heaplab" diagnose --text --trace="$bin" >"$tmp/mtb.txt" &&
		grep -q '^t [1-9]' "$tmp/mtb.txt" && grep -q '^#@rss ' "$tmp/mtb.txt" && grep -q '^a [0-9]* [0-9]* @' "$tmp/mtb.txt" &&
		"$heaplab" replay --policy="$(hl_policies | sed -n 1p)" --repeat 0 "$bin" >/dev/null 2>"$tmp/err" && ! [ -s "$tmp/err" ]; then
		pass
	else
		fail "the recorder's binary recording does not read back whole: $(cat "$tmp/err" 2>/dev/null)"
	fi
fi
echo "trace_binary: $passed passed, $failed failed"
[ $failed -eq 0 ]
