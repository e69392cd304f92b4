#!/usr/bin/env bash
# heaplab diagnose: the causes of a hand-built recording, worked
# out from glibc's rules below, not from the output; bad input; old traces;
# and (without sanitizers) a real C program recorded with its sites.
set -u
. "$(dirname "$0")/../lib.sh"
glibc=$(hl_model_of glibc)   # the policy that models glibc (bins here)
jemalloc=$(hl_model_of jemalloc)   # the policy that models jemalloc (slab here)
src=${abs_top_srcdir:-..}
hand="$src/tests/diagnose/hand.rep"
hl_tmpdir
failed=0 passed=0
pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }
finish() { echo "diagnose: $passed passed, $failed failed"; [ $failed -eq 0 ]; exit; }

# expect NAME WANT GOT: GOT has the line WANT
expect() {
	if grep -qxF -- "$2" <<<"$3"; then pass; else fail "$1: no line '$2' in:"; echo "$3" | sed 's/^/    /'; fi
}

# The byte count of one cause in the summary ("  hole   2016 B ...").
cause() { awk -v k="$1" '$1 == k && $3 == "B" { print $2; exit }' <<<"$2"; }

# --- bad input: one line, exit 2, with or without a model of glibc ----------
bad() {  # NAME EXPECTED-LINE ARGS...
	local name=$1 want=$2 out rc
	shift 2
	out=$("$heaplab" diagnose "$@" 2>&1 >/dev/null)
	rc=$?
	[ $rc -eq 2 ] && pass || fail "$name: exit $rc, expected 2"
	[ "$out" = "$want" ] && pass || fail "$name: said '$out', expected '$want'"
}
bad "no command" "heaplab: diagnose: no command to run (give one after --, or --trace=FILE.rep; try --help)"
bad "missing program" "heaplab: diagnose: cannot run no-such-program-xyz: no such program" -- no-such-program-xyz
compiled=$(hl_policies | awk '{ printf "%s%s", sep, $1; sep = ", " }')
bad "unknown policy" "heaplab: unknown policy 'nosuch'; compiled in: $compiled" --policies=nosuch --trace="$hand"
printf 'a 0 10 @1\n' > "$tmp/undeclared.rep"
bad "verify a trace" "heaplab: diagnose: --verify runs the program again: give the command, not --trace" --verify --trace="$hand"
bad "no draws" "heaplab: diagnose: bad --draws '0' (1..15)" --draws=0 -- true
bad "too many draws" "heaplab: diagnose: bad --draws '16' (1..15)" --draws=16 -- true
bad "draws of a trace" "heaplab: diagnose: --draws records the program again: give the command, not --trace" --draws=5 --trace="$hand"
bad "undeclared site" "$tmp/undeclared.rep:1: site 1 is not declared by a '#@site' line before it" --trace="$tmp/undeclared.rep"
printf '#@site 2 0x10\n' > "$tmp/order.rep"
bad "sites out of order" "$tmp/order.rep:1: site 2 declared out of order (expected 1)" --trace="$tmp/order.rep"
printf '#@rss 10 100\n#@rss 5 100\n' > "$tmp/time.rep"
bad "time going back" "$tmp/time.rep:2: sample time 5 goes back in time" --trace="$tmp/time.rep"
"$heaplab" help diagnose | grep -q '^usage: heaplab diagnose' && pass || fail "help diagnose"
if [ -z "$glibc" ]; then
	echo "SKIP (part): no compiled-in policy models glibc, the C library a recording runs on: every diagnosis below needs one"
	finish
fi

# --- causes of tests/diagnose/hand.rep, by glibc's rules ---------------------
# Ops: a0 100, a1 100, a2 2000, a3 24, a10..a17 40 (eight), a18 24; then
# free 1, free 2, free 10..17.  Chunk sizes (request + 8, rounded up to 16,
# at least 32): 100 -> 112, 2000 -> 2016, 24 -> 32, 40 -> 48.
# The first malloc of a thread makes its tcache record first, the running
# glibc's struct (bins' default version): up to 2.41, 64 bins x (2-byte
# count + 8-byte pointer) = 640 bytes -> a 656-byte chunk; from 2.42, 76
# bins: 760 bytes -> a 768-byte chunk.  The first sbrk asks for the record
# + top_pad (128 KiB) + MINSIZE (32) bytes, rounded up to pages: 33 pages.
minor=$(getconf GNU_LIBC_VERSION 2>/dev/null | sed -n 's/^glibc 2\.\([0-9]*\).*/\1/p')
record=656
[ "${minor:-0}" -ge 42 ] && record=768
committed=$((33 * 4096))
chunks=$((record + 112 + 112 + 2016 + 32 + 8 * 48 + 32))
live=$((100 + 24 + 24))                   # blocks 0, 3 and 18
rounding=$(((112 - 8 - 100) + 2 * (32 - 8 - 24)))  # usable is chunk - 8
overhead=$((record + 3 * 8))                 # the record and three live headers
hole=2016                                 # block 2 in the unsorted bin:
					  # chunk 1 below it is in the tcache (in use
					  # for its neighbours), block 3 above is live
top=$((committed - chunks))
check_causes() {  # NAME MODEL CACHED FASTBIN
	local out
	out=$("$heaplab" diagnose --policies=${glibc} --model="$2" --trace="$hand" 2>/dev/null)
	for k in live rounding overhead hole top; do
		local want=${!k} got
		got=$(cause "$k" "$out")
		[ "$got" = "$want" ] && pass || fail "$1: $k is '${got}', expected $want"
	done
	[ "$(cause cached "$out")" = "$3" ] && pass || fail "$1: cached is '$(cause cached "$out")', expected $3"
	[ "$(cause fastbin "$out")" = "$4" ] && pass || fail "$1: fastbin is '$(cause fastbin "$out")', expected '$4'"
	[ "$(cause total "$out")" = "$committed" ] && pass || fail "$1: total is '$(cause total "$out")', expected $committed"
	# the causes add up to the total
	local sum
	sum=$(awk '$3 == "B" && $1 != "total" { s += $2 } END { print s }' <<<"$out")
	[ "$sum" = "$committed" ] && pass || fail "$1: the causes sum to $sum, not $committed"
	# free bytes between live blocks go to the live block right above:
	# chunks 1 and 2 (112 + 2016) below block 3 (site 1), the eight
	# 48-byte chunks below block 18 (site 2)
	expect "$1 holds" "  2.08 KiB of free memory held below 1 live blocks (24 B) allocated at 0x1000" "$out"
	expect "$1 holds" "  384 B of free memory held below 1 live blocks (24 B) allocated at 0x2000" "$out"
}
# glibc 2.43: 16 chunks per tcache bin, no fastbins: chunk 1 and all eight
# 48-byte chunks are cached
check_causes "glibc 2.43 rules" "tcache_count:16,fastbins:off" $((112 + 8 * 48)) ""
# before 2.43: 7 per bin, then the fastbin takes the eighth
check_causes "glibc 2.36 rules" "tcache_count:7,fastbins:on" $((112 + 7 * 48)) 48

# --- an old trace (no sites, no samples) still loads --------------------------
out=$("$heaplab" diagnose --policies=${glibc} --trace="$src/traces/short1-bal.rep" 2>&1) && pass || fail "old trace: exit $?"
expect "old trace" "measured RSS: none recorded (the trace has no #@rss lines)" "$out"

# --- the model's resident bytes count the pages the program wrote -----------
# A 1 MiB block is above bins' 128 KiB mmap threshold: a mapping of its own,
# of which the chunk header alone touches one page.  The program wrote its
# block (256 pages resident); the replay writes every page of each block as
# the program did, so the model holds at least 1 MiB resident at the end.
printf '#@rss 0 2000000\na 0 1048576\n#@rss 10 3000000\n' > "$tmp/big.rep"
out=$("$heaplab" diagnose --policies=${glibc} --trace="$tmp/big.rep" 2>&1)
res=$(sed -n "s/^model ($glibc) at the last sample: .* committed, \\([0-9.]*\\) MiB resident;.*/\\1/p" <<<"$out")
awk -v r="${res:-0}" 'BEGIN { exit !(r >= 1.00) }' && pass ||
	fail "written pages: the model's resident is '${res}' MiB, not at least 1 MiB, in: $out"

# --- outside the heap: the median of the samples, not the last one -----------
# The same 1 MiB block (257 pages with its header), then the measured RSS
# stays 9 MiB for three samples and falls to 0.5 MiB at the last, as a
# real allocator can give back at a teardown what the model keeps.  The
# differences are three of 9 MiB minus the model's resident (the block and
# a few pages of the main arena: 1.0-1.1 MiB) and one of about -0.5 MiB;
# their median is one of the three.
printf 'a 0 1048576\n#@rss 10 9437184\na 1 16\n#@rss 20 9437184\na 2 16\n#@rss 30 9437184\nf 2\n#@rss 40 524288\n' \
	> "$tmp/teardown.rep"
out=$("$heaplab" diagnose --policies=${glibc} --trace="$tmp/teardown.rep" 2>&1)
outside=$(sed -n 's/^outside the heap (.*): \([0-9.]*\) MiB$/\1/p' <<<"$out")
awk -v o="${outside:-0}" 'BEGIN { exit !(o >= 7.9 && o <= 8.0) }' && pass ||
	fail "outside the heap: '${outside}' MiB, not 7.9-8.0 MiB, in: $out"

# --- the what-if ranking goes by resident bytes, not committed ones ----------
# 1,000 blocks of 1 KiB, then every one freed.  jemalloc with
# dirty_decay_ms:0 purges each slab that empties at once: the pages stay
# mapped (committed) but leave the resident set, where the default decay
# keeps them.  Both commit the same peak, so only the resident figures
# can put dirty_decay_ms:0 first; ranked by committed bytes it would come
# last of the three slab candidates (ties go to fewer kernel calls).
{ for i in $(seq 0 999); do echo "a $i 1024"; done; for i in $(seq 0 999); do echo "f $i"; done; } > "$tmp/churn.rep"
if [ -z "$jemalloc" ]; then
	echo "SKIP (part): the ranking is checked on the model of jemalloc; no compiled-in policy models it"
else
	out=$("$heaplab" diagnose --policies=${jemalloc} --trace="$tmp/churn.rep" 2>&1)
	first=$(awk '/^what if/ { getline; getline; print $2, $3; exit }' <<<"$out")
	[ "$first" = "${jemalloc} dirty_decay_ms:0" ] && pass || fail "ranking: first is '$first', not ${jemalloc} dirty_decay_ms:0, in: $out"
fi

# --- bad input that names the model of glibc: one line, exit 2 ---------------
out=$("$heaplab" diagnose --knobs="$glibc/no_such_knob:1" --trace="$hand" 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && [ "$(wc -l <<<"$out")" -eq 1 ] && grep -q no_such_knob <<<"$out" && pass || fail "unknown knob: exit $rc, '$out'"
out=$("$heaplab" diagnose --model=tcache_count:x --trace="$hand" 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && [ "$(wc -l <<<"$out")" -eq 1 ] && pass || fail "bad --model: exit $rc, '$out'"

# --- a real program, recorded with its sites ------------------------------------
if hl_sanitized; then
	echo "SKIP (part): recording a program preloads heaplab; a -fsanitize=$hl_sanitizer build owns malloc"
elif ! command -v addr2line >/dev/null; then
	echo "SKIP (part): no addr2line"
else
	program="$build/tests/diagnose/diagnose_anchors"
	line=$(grep -n 'void \*p = malloc(n);' "$src/tests/diagnose/anchors.c" | head -1 | cut -d: -f1)
	out=$("$heaplab" diagnose --policies=${glibc} --model=tcache_count:7,fastbins:on --keep="$tmp/a.rep" \
		-o "$tmp/report.html" -- "$program" 2>"$tmp/err")
	rc=$?
	[ $rc -eq 0 ] && pass || { fail "anchors: exit $rc"; cat "$tmp/err"; }
	# 200 x 100 freed 1,000-byte buffers (1,008-byte chunks, 19.2 MiB) sit
	# below the 100 kept 64-byte blocks (6.25 KiB); stdout's buffer and the
	# tcache take a few KiB of it at most
	expect "anchors" "  19.2 MiB of free memory held below 100 live blocks (6.25 KiB) allocated at cache_put (anchors.c:$line)" "$out"
	# the recording is binary; its text form has the lines
	"$heaplab" diagnose --text --trace="$tmp/a.rep" >"$tmp/a.txt" && pass || fail "anchors: --text failed"
	grep -q '^#@rss ' "$tmp/a.txt" && pass || fail "anchors: no RSS samples in the recording"
	[ "$(grep -c '^a .* @' "$tmp/a.txt")" -ge 20100 ] && pass || fail "anchors: fewer than 20,100 allocations with a site"
	grep -q '<svg id="causes"' "$tmp/report.html" && grep -q '<svg id="whatif"' "$tmp/report.html" && pass ||
		fail "anchors: the report lacks its plots"

	# --verify runs the program again and reads its RSS from outside.
	# breathe.c reads its own RSS (statm) at its peak and after freeing
	# everything, and holds each state 300 ms: what --verify measured must
	# be what the program saw itself (within 10 %: a read can fall a page
	# or two apart), and glibc must have given the freed top back (known
	# in advance: nothing lies above the buffers, so free trims the top).
	out=$("$heaplab" diagnose --verify --sample-ms 5 --policies=${glibc} -o "$tmp/verify.html" \
		-- "$build/tests/diagnose/diagnose_breathe" 2>"$tmp/err")
	rc=$?
	[ $rc -eq 0 ] && pass || { fail "verify: exit $rc"; cat "$tmp/err"; }
	own=$(grep '^breathe: peak' <<<"$out" | tail -1)      # the verify run's, the last one
	own_peak=$(awk '{ print $3 }' <<<"$own") own_end=$(awk '{ print $5 }' <<<"$own")
	attr() { grep -o "<table id=\"verify\"[^>]*>" "$tmp/verify.html" | grep -o " $1=\"[0-9]*\"" | grep -o '[0-9]*'; }
	peak=$(attr data-peak) final=$(attr data-final) pfinal=$(attr data-predicted-final)
	near() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a > 0 && b > 0 && (a - b) / b < 0.1 && (b - a) / b < 0.1) }'; }
	near "${peak:-0}" "${own_peak:-0}" && pass || fail "verify: measured peak '$peak', the program saw '$own_peak'"
	near "${final:-0}" "${own_end:-0}" && pass || fail "verify: measured final '$final', the program saw '$own_end'"
	[ "${final:-0}" -gt 0 ] && [ $((final * 2)) -lt "${peak:-0}" ] && pass ||
		fail "verify: the final RSS '$final' is not below half the peak '$peak' (glibc trims its top)"
	[ "${pfinal:-0}" -gt 0 ] && pass || fail "verify: no predicted final RSS in the report"
	grep -q '^  measured RSS:  peak ' <<<"$out" && grep -q '^  predicted RSS: peak ' <<<"$out" && pass ||
		fail "verify: the summary lacks the measured and predicted lines"
	# the same program exiting the moment it has freed: a reading every
	# 5 ms sees only the peak, the final is the one read at the exit
	out=$("$heaplab" diagnose --verify --sample-ms 5 --policies=${glibc} -o "$tmp/quick.html" \
		-- "$build/tests/diagnose/diagnose_breathe" quick 2>"$tmp/err")
	own=$(grep '^breathe: peak' <<<"$out" | tail -1)
	own_end=$(awk '{ print $5 }' <<<"$own")
	peak=$(grep -o '<table id="verify"[^>]*>' "$tmp/quick.html" | grep -o ' data-peak="[0-9]*"' | grep -o '[0-9]*')
	final=$(grep -o '<table id="verify"[^>]*>' "$tmp/quick.html" | grep -o ' data-final="[0-9]*"' | grep -o '[0-9]*')
	near "${final:-0}" "${own_end:-0}" && [ $((final * 2)) -lt "${peak:-0}" ] && pass ||
		fail "verify at the exit: measured final '$final' (peak '$peak'), the program saw '$own_end' as it ended"
fi

# --- --jobs: candidates replayed side by side give the figures of one by one -----
# (the side-by-side run reads the trace through a window of 100 ops on its
# file, as a long recording is read: the workers share the file, not the window)
# (the figures a replay fixes: what each candidate commits and its kernel
# calls, and the attribution; not the allocators' own memory, measured
# afresh by each run, nor the resident pages, which mincore counts).
# Both with the address space laid out the same (setarch -R: no
# randomization) and on one CPU: a segment aligned to 32 MiB costs one
# mmap, or a larger one and the trims around it, as the kernel's random
# address falls (sharded's kernel calls moved by one in 2 of 12 runs of
# the same trace, measured), and the per-CPU caches of a percpu candidate
# follow the CPU its replay runs on; both are the machine's doing, not the
# side-by-side run's.
one_cpu=$(hl_one_cpu)
command -v setarch >/dev/null && setarch -R true 2>/dev/null && one_cpu="setarch -R $one_cpu"
$one_cpu "$heaplab" diagnose --jobs=1 --json="$tmp/one.json" --trace="$tmp/churn.rep" >/dev/null 2>&1
HEAPLAB_TRACE_WINDOW=100 $one_cpu "$heaplab" diagnose --jobs=3 --json="$tmp/three.json" --trace="$tmp/churn.rep" >/dev/null 2>&1
out=$(python3 - "$tmp/one.json" "$tmp/three.json" <<'PY'
import json, sys
def fixed(path):
    d = json.load(open(path))
    c = sorted((x["policy"], x["conf"], x["ok"], x["peak_committed"], x["final_committed"], x["os_calls"])
               for x in d["candidates"])
    return c, d["causes"]
one, three = fixed(sys.argv[1]), fixed(sys.argv[2])
print("ok" if one == three and len(one[0]) >= 6 else "differ: %d and %d candidates" % (len(one[0]), len(three[0])))
PY
)
[ "$out" = ok ] && pass || fail "--jobs=3 gave other figures than --jobs=1: $out"

# --- a recorder that follows the program -----------------------------------------
if hl_sanitized; then
	echo "SKIP (part): following a program preloads the recorder; a -fsanitize=$hl_sanitizer build owns malloc"
else
	anchors="$build/tests/diagnose/diagnose_anchors"
	# RSS by the clock: sleep allocates at its start and then sleeps 1 s;
	# sampled every 5 ms, the recording has a sample for many of those 200
	# intervals (on the allocation path alone it had two; the bound is low
	# because a loaded machine wakes the sampling thread late)
	"$heaplab" diagnose --policies=${glibc} --sample-ms 5 --keep="$tmp/sleep.rep" -- sleep 1 >/dev/null 2>&1
	n=$("$heaplab" diagnose --text --trace="$tmp/sleep.rep" | grep -c '^#@rss ')
	[ "$n" -ge 20 ] && pass || fail "clock: $n RSS samples over 1 s at 5 ms, expected at least 20"
	# a wrapper script that execs the program: the program's recording
	printf '#!/bin/sh\nexec "%s" "$@"\n' "$anchors" > "$tmp/wrapper"
	chmod +x "$tmp/wrapper"
	out=$("$heaplab" diagnose --policies=${glibc} -- "$tmp/wrapper" 2>&1)
	# (the program makes 20,100 allocations and frees: the shell far fewer)
	ops=$(sed -n 's/^recording: \([0-9]*\) ops.*/\1/p' <<<"$out")
	[ "${ops:-0}" -ge 40000 ] && grep -q 'cache_put' <<<"$out" && pass ||
		fail "wrapper: not the program's recording (no site cache_put, or under 40,000 ops): $(grep '^recording' <<<"$out")"
	# a child that runs a program: diagnosed (the larger), the shell named
	out=$("$heaplab" diagnose --policies=${glibc} -- bash -c "$anchors; true" 2>&1)
	grep -q 'cache_put' <<<"$out" && grep -q '^also recorded, not diagnosed (the largest recording is): process [0-9]* (' <<<"$out" &&
		pass || fail "child: the program's recording with the shell named: $out"
	# ended by a signal, or by an error status: diagnosed, saying so
	out=$("$heaplab" diagnose --policies=${glibc} -- bash -c 'for i in $(seq 3000); do a[$i]=$i$i; done; kill -KILL $$' 2>/dev/null)
	rc=$?
	[ $rc -eq 0 ] && pass || fail "killed: exit $rc"
	expect "killed" "the recorded run was ended by signal 9: what follows is what it recorded until then" "$out"
	grep -q '^what holds the heap at the end' <<<"$out" && pass || fail "killed: no diagnosis"
	out=$("$heaplab" diagnose --policies=${glibc} -- bash -c 'exit 3' 2>/dev/null)
	expect "exit 3" "the recorded run exited with status 3: what follows is what it recorded until then" "$out"
	# a statically linked program cannot be preloaded (ldconfig is, on Debian)
	static=""
	for f in /sbin/ldconfig /usr/sbin/ldconfig; do
		[ -x "$f" ] && ! LD_TRACE_LOADED_OBJECTS=1 "$f" 2>/dev/null | grep -q '=>' && file -L "$f" 2>/dev/null | grep -q 'static' && static=$f && break
	done
	if [ -n "$static" ]; then
		bad "static" "heaplab: diagnose: $static is statically linked: the recorder (an LD_PRELOAD library) cannot go into it" -- "$static" -p
	else
		echo "SKIP (part): no statically linked program found here"
	fi
fi

# --- --json: every field there, and the same figures as the summary -------------
if hl_sanitized; then
	echo "SKIP (part): --json is checked on a recorded program; a -fsanitize=$hl_sanitizer build cannot record"
else
	"$heaplab" diagnose --policies=${glibc},${jemalloc} --json="$tmp/d.json" -- "$build/tests/diagnose/diagnose_anchors" >"$tmp/d.txt" 2>/dev/null
	"$heaplab" diagnose --policies=${glibc} --json=- -- "$build/tests/diagnose/diagnose_anchors" >"$tmp/stdout.json" 2>/dev/null
	out=$(python3 - "$tmp/d.json" "$tmp/d.txt" "$tmp/stdout.json" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read().splitlines()
# the summary starts after the program's own output, with the coverage line
text = text[next((i for i, l in enumerate(text) if re.match(r"^(WARNING: )?coverage: ", l)), 0):]
json.load(open(sys.argv[3]))       # --json=-: stdout is the JSON alone
bad = []
def need(obj, keys, where):
    for k in keys:
        if k not in obj:
            bad.append(f"{where}: no field {k}")
need(d, ["command", "recording", "measured", "coverage", "layers", "outside_heap", "causes", "sites",
         "candidates", "recommendation"], "top")
need(d["recording"], ["ops", "block_ids", "sites", "rss_samples", "recorded_with", "pace", "pace_call_ns", "draw_live_peaks",
                      "draw_picked", "ended", "others"], "recording")
if d["recording"].get("draw_live_peaks") != []:   # a C program is recorded once
    bad.append("recording.draw_live_peaks: %r, not []" % d["recording"].get("draw_live_peaks"))
if d["recording"].get("pace", "") is not None:   # a C program's waits keep the clock's time
    bad.append("recording.pace: %r, not null" % d["recording"].get("pace"))
if d["recording"].get("pace_call_ns", "") is not None:
    bad.append("recording.pace_call_ns: %r, not null" % d["recording"].get("pace_call_ns"))
need(d["measured"], ["peak_rss", "final_rss", "from"], "measured")
need(d["coverage"], ["model", "conf", "model_peak_resident", "model_final_resident", "peak_percent",
                     "final_percent", "below_90"], "coverage")
layer_keys = ["heap", "mapped", "mmap", "stack", "exe", "alloc", "libs", "files", "recorder", "other"]
for when in ("peak", "final"):
    need(d["layers"][when], ["ms", "rss"] + layer_keys, "layers." + when)
cause_keys = ["live", "rounding", "overhead", "cached", "fastbin", "hole", "top", "arena", "dirty", "muzzy", "returned"]
for c in d["causes"]:
    need(c, ["op", "ms", "measured_rss", "committed", "resident"] + cause_keys, "causes[]")
    if sum(c[k] for k in cause_keys) != c["committed"]:
        bad.append(f"causes at op {c['op']}: the causes do not add up to committed")
for c in d["candidates"]:
    need(c, ["rank", "policy", "conf", "real_setting", "ok", "peak_resident", "final_resident", "peak_committed",
             "final_committed", "os_calls", "predicted_peak_rss", "predicted_final_rss", "allocator_own_bytes"],
         "candidates[]")
    # the peak adds what lay outside the heap sample by sample, never less
    # than nothing; the final adds what lay outside it at the last sample
    # (taken at the exit) or the median over the samples, the larger, no
    # larger than what smaps put outside the C allocator (outside_cap, the
    # sum of those layers at the peak or at the end); both add the
    # allocator's own memory at start, which only a candidate that
    # preloads one has
    own = c.get("allocator_own_bytes", 0)
    end = d["causes"][-1] if d["causes"] else None
    cap = max(sum(d["layers"][w][k] for k in ("mmap", "stack", "exe", "alloc", "libs", "files", "other"))
              for w in ("peak", "final"))
    if d["outside_cap"] != cap:
        bad.append(f"outside_cap {d['outside_cap']} is not the layers outside the C allocator, {cap}")
    outside_end = d["outside_heap"]
    if end and end["measured_rss"]:
        outside_end = max(outside_end, min(end["measured_rss"] - end["resident"], cap))
    if c["ok"] and c["predicted_peak_rss"] < c["peak_resident"] + own:
        bad.append(f"candidate {c['rank']}: predicted peak is below its resident peak")
    if c["ok"] and c["predicted_final_rss"] != c["final_resident"] + max(outside_end, 0) + own:
        bad.append(f"candidate {c['rank']}: predicted final is not resident plus outside the heap")
    if c["ok"] and own and "LD_PRELOAD=" not in (c["real_setting"] or ""):
        bad.append(f"candidate {c['rank']}: own memory at start without a preloaded allocator")
for s in d["sites"]:
    need(s, ["site", "where", "held", "blocks", "block_bytes"], "sites[]")
# the same figures as the summary
m = re.search(r"accounts for ([0-9.]+) % of the measured peak RSS \(.*; ([0-9]+) of ([0-9]+) B\) and ([0-9.]+) % of the final", text[0])
cov = d["coverage"]
if not m:
    bad.append("text: no coverage on the first line")
elif (m.group(1) != f"{cov['peak_percent']:.1f}" or int(m.group(2)) != cov["model_peak_resident"] or
      int(m.group(3)) != d["measured"]["peak_rss"] or m.group(4) != f"{cov['final_percent']:.1f}"):
    bad.append(f"coverage differs: text '{text[0]}', json {cov} {d['measured']}")
rec = d["recording"]
if f"recording: {rec['ops']} ops, {rec['block_ids']} block ids, {rec['sites']} sites" not in text:
    bad.append("recording line differs")
end = text.index(next(l for l in text if l.startswith("what holds the heap at the end")))
last = d["causes"][-1]
for l in text[end + 1:]:
    w = l.split()
    if not w or len(w) < 3 or w[2] != "B":
        break
    k = w[0] if w[0] != "total" else "committed"
    if last[k] != int(w[1]):
        bad.append(f"cause {k}: text {w[1]}, json {last[k]}")
rows = []
on = False
for l in text:
    if l.startswith("what if"):
        on = True
        continue
    if on and re.match(r"^  [0-9]+ ", l):
        rows.append(l.split()[1])
    elif on and not l.strip():
        break
if rows != [c["policy"] for c in d["candidates"]]:
    bad.append(f"candidates' order differs: text {rows}, json {[c['policy'] for c in d['candidates']]}")
shown = set(l.split()[0] for l in text[text.index(next(l for l in text if l.startswith("layers of"))) + 2:]
            if l.startswith("  ") and l.split()[0] in layer_keys)
nonzero = set(k for k in layer_keys if d["layers"]["peak"][k] or d["layers"]["final"][k])
if shown != nonzero:
    bad.append(f"layers differ: text {sorted(shown)}, json {sorted(nonzero)}")
print("\n".join(bad) if bad else "ok")
PY
)
	[ "$out" = ok ] && pass || fail "--json: $out"
fi

# --- every real setting the what-if table names takes effect ----------------------
# Each setting is applied to the real allocator installed here, and the
# allocator's own report says whether it took: jemalloc's stats_print
# ("opt.narenas: 2"), mimalloc's MIMALLOC_VERBOSE ("option 'x': 0"), the
# dynamic loader's --list-tunables for glibc.  (A name the allocator does
# not know is ignored in silence: mimalloc 2.0.9 ignores MIMALLOC_PURGE_DELAY.)
setting_takes() {  # SETTING...: one check per variable
	local lib="" conf="" kv k v
	for kv in "$@"; do
		case $kv in
		LD_PRELOAD=*) lib=${kv#LD_PRELOAD=} ;;
		MALLOC_CONF=*) conf=${kv#MALLOC_CONF=} ;;
		esac
	done
	if [ -n "$lib" ] && [ ! -r "$lib" ]; then echo "SKIP (part): $lib is not installed"; return; fi
	for kv in "$@"; do
		k=${kv%%=*} v=${kv#*=}
		case $k in
		LD_PRELOAD) ;;
		MALLOC_CONF)
			local opts pair
			opts=$(env LD_PRELOAD="$lib" MALLOC_CONF="$conf,stats_print:true" true 2>&1)
			for pair in ${conf//,/ }; do
				grep -q "^  opt\.${pair%%:*}: ${pair#*:}\b" <<<"$opts" && pass ||
					fail "real setting $kv: jemalloc does not report opt.${pair%%:*}: ${pair#*:}"
			done ;;
		MIMALLOC_*)
			local name
			name=$(tr 'A-Z' 'a-z' <<<"${k#MIMALLOC_}")
			env LD_PRELOAD="$lib" "$kv" MIMALLOC_VERBOSE=1 true 2>&1 | grep -qx "mimalloc: option '$name': $v" && pass ||
				fail "real setting $kv: mimalloc does not report option '$name': $v" ;;
		MALLOC_ARENA_MAX|GLIBC_TUNABLES)
			local tunable want
			if [ "$k" = MALLOC_ARENA_MAX ]; then tunable=glibc.malloc.arena_max want=$v
			else tunable=${v%%=*} want=${v#*=}; fi
			env "$kv" "$loader" --list-tunables 2>/dev/null |
				grep -q "^$tunable: $(printf '0x%x' "$want") " && pass ||
				fail "real setting $kv: the loader does not list $tunable as $want" ;;
		*) fail "real setting $kv: the test does not know how to check $k" ;;
		esac
	done
}
loader=$(ls /lib64/ld-linux-x86-64.so.2 /lib/ld-linux-*.so.* 2>/dev/null | head -1)
if hl_sanitized; then
	echo "SKIP (part): real settings are checked by preloading the real allocators, beside a -fsanitize=$hl_sanitizer runtime"
else
	settings=$("$heaplab" diagnose --trace="$hand" 2>/dev/null |
		awk '/^what if/ { on = 1; next } on && $1 ~ /^[0-9]+$/ && NF >= 9 {
			s = $9; for (i = 10; i <= NF; i++) s = s " " $i; print s }')
	[ "$(grep -c . <<<"$settings")" -ge 8 ] && pass || fail "what-if table: fewer than 8 real settings in '$settings'"
	# rows without a setting say so in words, "(model only)"
	while read -r -a words; do
		[[ ${words[0]:-} =~ ^[A-Z_]+= ]] && setting_takes "${words[@]}"
	done <<<"$settings"
fi

finish
