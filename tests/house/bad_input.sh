#!/usr/bin/env bash
# Bad input gets one clear line and a non-zero exit, never a crash.
set -u
. "$(dirname "$0")/../lib.sh"
src="${srcdir:-.}"
passed=0 failed=0
expect() { # description, wanted exit status, wanted text in stderr, command...
	local what=$1 want_rc=$2 want_text=$3; shift 3
	local err rc
	err=$("$@" 2>&1 >/dev/null); rc=$?
	if [ "$rc" -eq "$want_rc" ] && [[ "$err" == *"$want_text"* ]] && [ "$(echo "$err" | wc -l)" -le 3 ]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1)); echo "FAIL: $what: exit $rc (want $want_rc), stderr: $err"
	fi
}
hl_tmpdir
printf 'a 0 10\nq 1 2\n' > "$tmp/unknown.rep"
printf 'a 0 10\nf 3\n' > "$tmp/notlive.rep"
expect "damaged trace" 2 "damaged/alaska.rep:7: missing size" "$heaplab" replay "$src/traces/damaged/alaska.rep"
expect "unknown op" 2 "unknown.rep:2: unknown op 'q'" "$heaplab" replay "$tmp/unknown.rep"
expect "free of a dead id" 2 "notlive.rep:2: free of block 3, which is not live" "$heaplab" replay "$tmp/notlive.rep"
expect "missing file" 2 "no-such.rep: No such file" "$heaplab" replay "$tmp/no-such.rep"
expect "unknown policy" 2 "unknown policy 'nope'" "$heaplab" replay --policy=nope "$src/traces/short1.rep"
p=$(hl_policies | sed -n 1p)
expect "unknown option" 2 "unknown option 'colour'" "$heaplab" replay --policy="$p" --conf=colour:red "$src/traces/short1.rep"
expect "bad value" 2 "bad value 'maybe'" "$heaplab" replay --policy="$p" --conf=debug:maybe "$src/traces/short1.rep"
expect "bad --explain" 2 "bad --explain 'xml' (text or json)" "$heaplab" replay --explain=xml "$src/traces/short1.rep"
# a trace cut short is an error naming the cut, unless --lenient; replay
# prints no table header above the error
head -c 40003 "$src/traces/amptjp.rep" > "$tmp/cut-mid.rep"   # ends "a 234": an id cut in two
head -c 40007 "$src/traces/amptjp.rep" > "$tmp/cut-size.rep"  # ends "a 2340 40": a size cut, still a number
head -n 2467 "$src/traces/amptjp.rep" > "$tmp/first-half.rep"
printf 'a 0 10\na 1 1\0\nf 0\n' > "$tmp/nul.rep"
cut_line=$(($(wc -l < "$tmp/cut-mid.rep") + 1))  # the last line, which has no newline
expect "trace cut mid-number" 2 "cut-mid.rep:$cut_line: the file ends in the middle of a line" "$heaplab" replay "$tmp/cut-mid.rep"
expect "trace cut mid-size" 2 "cut-size.rep:$cut_line: the file ends after" "$heaplab" replay "$tmp/cut-size.rep"
expect "trace cut at a line end" 2 "first-half.rep:2467: the file ends after 2463 of the 4805 ops its header announces" \
	"$heaplab" replay "$tmp/first-half.rep"
expect "NUL byte" 2 "nul.rep:2: NUL byte at column 6" "$heaplab" replay "$tmp/nul.rep"
# a recording's "#@touched ID PAGES" names a live block
printf 'a 0 100000\n#@touched 5 3\nf 0\n' > "$tmp/touched-dead.rep"
printf 'a 0 100000\n#@touched 0 -3\nf 0\n' > "$tmp/touched-negative.rep"
expect "touched of a block not live" 2 "touched-dead.rep:2: pages of block 5, which is not live" \
	"$heaplab" replay "$tmp/touched-dead.rep"
expect "touched, negative" 2 "touched-negative.rep:2: negative page count" "$heaplab" replay "$tmp/touched-negative.rep"
# one mistake, one line
err=$("$heaplab" quiz --path-of x "$src/traces/short1.rep" 2>&1 >/dev/null)
[ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] && [[ $err == *"--path-of needs a non-negative number, not 'x'"* ]] &&
	passed=$((passed + 1)) || { failed=$((failed + 1)); echo "FAIL: quiz --path-of x: not one line: $err"; }
expect "a directory" 2 "$tmp: is a directory, not a trace" "$heaplab" replay "$tmp"
expect "compare: trace cut short" 2 "the file ends after 2463 of the 4805 ops" "$heaplab" compare --policy="$p" "$tmp/first-half.rep"
out=$("$heaplab" replay "$tmp/first-half.rep" 2>/dev/null)
if [ -z "$out" ]; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL: replay printed '$out' before a bad trace's error"; fi
if out=$("$heaplab" replay --policy="$p" --lenient "$tmp/first-half.rep" 2>&1) && [[ "$out" == *"warning: the file ends after 2463 of the 4805 ops"* ]] &&
	[[ "$out" == *"first-half.rep"*" 2463 "*ok* ]]; then
	passed=$((passed + 1))
else
	failed=$((failed + 1)); echo "FAIL: replay --lenient of a cut trace: $out"
fi
# --snapshot-dir makes its folder; a snapshot it cannot write is an error
if "$heaplab" replay --policy="$p" --snapshot-dir "$tmp/snaps/deep" "$src/visualize/traces/teach.rep" >/dev/null 2>&1 &&
	ls "$tmp/snaps/deep/$p-"*.dot >/dev/null 2>&1; then
	passed=$((passed + 1))
else
	failed=$((failed + 1)); echo "FAIL: replay --snapshot-dir did not create its folder and files"
fi
: > "$tmp/afile"
expect "snapshot-dir is a file" 2 "cannot create $tmp/afile" "$heaplab" replay --policy="$p" --snapshot-dir "$tmp/afile" "$src/visualize/traces/teach.rep"
expect "snapshot file cannot be written" 2 "cannot write $tmp/no-dir/x.dot" "$heaplab" replay --policy="$p" --snapshot "$tmp/no-dir/x.dot" "$src/traces/short1.rep"
expect "unknown command" 2 "unknown command 'frobnicate'" "$heaplab" frobnicate
expect "diff: unknown label" 2 "no label 'nowhere' in the trace" "$heaplab" diff "$src/visualize/traces/teach.rep" start nowhere
expect "diff: op past the end" 2 "op 999 is past the trace's last op" "$heaplab" diff "$src/visualize/traces/teach.rep" 1 999
expect "diff: one moment too many" 2 "'7' is one too many" "$heaplab" diff "$src/visualize/traces/teach.rep" 1 2 7
expect "diff: damaged trace" 2 "damaged/alaska.rep:7: missing size" "$heaplab" diff "$src/traces/damaged/alaska.rep" 1 2
expect "sizes without policy" 2 "--policy=NAME is required" "$heaplab" sizes
expect "fidelity: unknown family" 2 "unknown family 'ptmalloc'" "$heaplab" fidelity --family ptmalloc
expect "fidelity: no row matches" 2 "no row matches 'glibc.nope*'" "$heaplab" fidelity --row 'glibc.nope*'
expect "fidelity: unknown argument" 2 "unknown argument '--fast'" "$heaplab" fidelity --fast
expect "run: bad conf reaches the user" 2 "unknown option 'colour'" "$heaplab" run --policy="$p" --conf=colour:red -- true
if ! hl_sanitized; then
	# the shim itself refuses a bad HEAPLAB_CONF with one line and exit 2
	expect "shim: bad HEAPLAB_CONF" 2 "heaplab: cannot start the default heap" \
		env HEAPLAB_CONF=colour:red LD_PRELOAD="${abs_top_builddir:-.}/.libs/libheaplab-preload.so" ls /
else
	# a sanitizer's runtime owns malloc: the shim cannot be preloaded, and
	# heaplab run says so instead of letting the program crash
	expect "run: a sanitizer build does not preload" 2 "built with -fsanitize=$hl_sanitizer" \
		"$heaplab" run --policy="$p" -- true
fi
# a binary trace (trace/trace_binary.h) damaged: cut inside a record, cut
# before its end record, a wrong magic, bytes after the end, an unknown
# kind of record; replay, diagnose --trace and --text each say it in a line
"$heaplab" diagnose --binary --trace="$src/traces/amptjp.rep" >"$tmp/bin.rep"
head -c 27 "$tmp/bin.rep" >"$tmp/bin-cut.rep"         # inside the fourth record (a header line)
head -c -1 "$tmp/bin.rep" >"$tmp/bin-noend.rep"       # every record, not the end
{ printf '\211HLTRC9\n'; tail -c +9 "$tmp/bin.rep"; } >"$tmp/bin-magic.rep"
{ cat "$tmp/bin.rep"; printf '\005'; } >"$tmp/bin-after.rep"
printf '\211HLTRC1\n\017' >"$tmp/bin-kind.rep"
for cmd in "replay" "diagnose --trace" "diagnose --text --trace"; do
	run() { local f=$1; if [ "$cmd" = replay ]; then "$heaplab" replay "$f"; else "$heaplab" ${cmd% --trace} --trace="$f"; fi; }
	expect "$cmd: binary cut in a record" 2 "bin-cut.rep: record 4: the file ends in the middle of a record" run "$tmp/bin-cut.rep"
	expect "$cmd: binary without its end" 2 "the file ends without its end record" run "$tmp/bin-noend.rep"
	expect "$cmd: binary, bad magic" 2 "bin-magic.rep: its first bytes are not those of a heaplab trace" run "$tmp/bin-magic.rep"
	expect "$cmd: a record after the end" 2 "a record after the end record" run "$tmp/bin-after.rep"
	expect "$cmd: unknown record" 2 "bin-kind.rep: record 1: an unknown kind of record" run "$tmp/bin-kind.rep"
done
expect "replay --lenient: a binary cut short is read as far as it goes" 0 "warning: the file ends without its end record" \
	"$heaplab" replay --lenient "$tmp/bin-noend.rep"
echo "bad input: $passed passed, $failed failed"
[ $failed -eq 0 ]
