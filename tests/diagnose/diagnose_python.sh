#!/usr/bin/env bash
# heaplab diagnose on a default CPython program: its small objects live in
# pymalloc's arenas, which CPython maps itself.  Checked against the real
# process, measured here (its own VmHWM, the kernel's high-water mark):
#  - recorded as it runs (PYTHONMALLOC=pymalloc set, so diagnose leaves it
#    alone), the malloc model sees a small part of the peak: the summary's
#    first line says so, and the layers name the rest (the arenas, in the
#    anonymous mappings made outside malloc);
#  - recorded as diagnose records CPython (PYTHONMALLOC=malloc, replayed
#    behind pools, the model of pymalloc), the model's peak resident bytes
#    cover at least 90 % of the measured peak, and no more than it;
#  - the candidates name CPython on each allocator with its real setting;
#  - the recording kept (--keep) says it went past pymalloc ("#@front
#    pymalloc"), and diagnosed from its file it is replayed behind pools as
#    the live run was: the same model heap for CPython as it is;
#  - the peak predicted for CPython as it is lies within 10 % of the one
#    the program measures of itself;
#  - a program whose threads take turns by the clock is recorded with its
#    timed waits counted in its own time (the allocator's calls left out),
#    --draws times, the recording of median live peak diagnosed.
set -u
. "$(dirname "$0")/../lib.sh"
glibc=$(hl_model_of glibc)   # the policy that models glibc (bins here)
jemalloc=$(hl_model_of jemalloc)   # the policy that models jemalloc (slab here)
pymalloc=$(hl_model_of pymalloc)   # the policy that models pymalloc (pools here)
hl_need_models glibc
hl_skip_sanitized "recording preloads heaplab's recorder; a -fsanitize=$hl_sanitizer build owns malloc"
py=/usr/bin/python3
[ -x "$py" ] || hl_skip "no $py"
hl_tmpdir
failed=0 passed=0
pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }

# 150,000 objects of 503 bytes (bytes(470): pymalloc's 512-byte class, 31
# to a 16 KiB pool), one in 200 kept: about 80 MiB at the peak, most of it
# in pymalloc's arenas
# each program ends by writing its own peak (VmHWM) to the file $1 names
cat > "$tmp/own_peak.py" <<'PY'
import sys
for line in open('/proc/self/status'):
    if line.startswith('VmHWM:'):
        open(sys.argv[1], 'w').write(str(int(line.split()[1]) * 1024))
PY
cat - "$tmp/own_peak.py" > "$tmp/objects.py" <<'PY'
t = [bytes(470) for i in range(150000)]
kept = t[::200]
del t
PY
"$py" "$tmp/objects.py" "$tmp/peak"
measured=$(cat "$tmp/peak")
[ "${measured:-0}" -gt $((64 << 20)) ] || { fail "the program's own peak is '${measured}' B, not above 64 MiB"; }

# "coverage: ... (A of B; M of P B) ..." -> M (the model's peak resident bytes)
model_peak() { sed -n '1s/^.*coverage: .*; \([0-9]*\) of \([0-9]*\) B).*/\1/p' <<<"$1"; }

# --- as it runs, through malloc's eyes only --------------------------------------
out=$(PYTHONMALLOC=pymalloc "$heaplab" diagnose --policies=${glibc} -- "$py" "$tmp/objects.py" "$tmp/scratch" 2>"$tmp/err")
rc=$?
[ $rc -eq 0 ] && pass || { fail "pymalloc recorded: exit $rc"; cat "$tmp/err"; }
first=$(head -1 <<<"$out")
[[ $first == "WARNING: coverage: the model (${glibc}"*"under 90 %"* ]] && pass ||
	fail "pymalloc recorded: the first line does not warn of the coverage: '$first'"
# the arenas: anonymous mappings made outside malloc, most of the peak
mmap_peak=$(awk '/^layers of the recorded process/ { on = 1; next } on && $1 == "mmap" { print $2, $3; exit }' <<<"$out")
awk -v v="${mmap_peak:-0 B}" -v m="$measured" 'BEGIN { split(v, a, " ");
	f = a[2] == "GiB" ? 2^30 : a[2] == "MiB" ? 2^20 : a[2] == "KiB" ? 2^10 : 1;
	exit !(a[1] * f > 0.6 * m) }' && pass ||
	fail "pymalloc recorded: the mmap layer at the peak is '$mmap_peak', not above 60 % of $measured B"
grep -q '^recommendation: (on a model that accounts for only [0-9]* % of the measured peak RSS) ' <<<"$out" && pass ||
	fail "pymalloc recorded: the recommendation does not say on what share it stands"

# --- as diagnose records CPython ---------------------------------------------------
missing=$(hl_unmodelled jemalloc pymalloc)
if [ -n "$missing" ]; then
	echo "SKIP (part): CPython recorded as diagnose records it is replayed behind the model of pymalloc, beside jemalloc's; no compiled-in policy models $missing"
else
	out=$("$heaplab" diagnose --policies=${glibc},${jemalloc} --knobs= --keep="$tmp/cpython.rep" --json="$tmp/live.json" \
		-- "$py" "$tmp/objects.py" "$tmp/scratch" 2>"$tmp/err")
	rc=$?
	[ $rc -eq 0 ] && pass || { fail "CPython: exit $rc"; cat "$tmp/err"; }
	first=$(head -1 <<<"$out")
	[[ $first == "coverage: the model (${pymalloc} fallback:${glibc}"* ]] && pass || fail "CPython: first line '$first'"
	m=$(model_peak "$out")
	awk -v m="${m:-0}" -v r="$measured" 'BEGIN { exit !(m >= 0.90 * r) }' && pass ||
		fail "CPython: the model's peak '${m}' B covers less than 90 % of the measured $measured B"
	awk -v m="${m:-0}" -v r="$measured" 'BEGIN { exit !(m <= r) }' && pass ||
		fail "CPython: the model's peak heap '${m}' B is more than the whole process's $measured B"
	grep -q '^recorded with PYTHONMALLOC=malloc ' <<<"$out" && pass || fail "CPython: no line on how it was recorded"
	for want in "$pymalloc .*fallback:$jemalloc .*LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2\$" \
		"$glibc .*PYTHONMALLOC=malloc\$" "$jemalloc .*PYTHONMALLOC=malloc LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2\$" \
		"$pymalloc .*the default (CPython as it is: pymalloc on glibc malloc)\$"; do
		grep -q "^  [0-9][0-9]* *$want" <<<"$out" && pass || fail "CPython: no candidate row matching '$want'"
	done
	# the kept recording, diagnosed from its file
	"$heaplab" diagnose --text --trace="$tmp/cpython.rep" | grep -qx '#@front pymalloc' && pass ||
		fail "CPython: the kept recording has no '#@front pymalloc' line"
	"$heaplab" diagnose --policies=${glibc},${jemalloc} --knobs= --json="$tmp/file.json" --trace="$tmp/cpython.rep" \
		>/dev/null 2>"$tmp/err" || { fail "CPython: diagnose --trace failed"; cat "$tmp/err"; }
	live=$(hl_candidate "$tmp/live.json" real_setting 'the default*' policy peak_resident)
	file=$(hl_candidate "$tmp/file.json" real_setting 'the default*' policy peak_resident)
	# the same policy, and the same heap to a page or so (two replays of
	# one recording may touch a page more or less; without pymalloc in
	# front the heap is 3 % off, and the policy another)
	awk -v l="$live" -v f="$file" 'BEGIN { split(l, a, " "); split(f, b, " ");
		exit !(a[1] != "" && a[1] == b[1] && b[2] - a[2] <= a[2] / 200 && a[2] - b[2] <= a[2] / 200) }' && pass ||
		fail "CPython: diagnosed from its file, CPython as it is is '$file' (policy, peak heap), live '$live'"
fi

# --- the peak predicted for CPython as it is, against its own ----------------------
# 600,000 one-tuples of an int, one in 200 kept: 80 bytes a pair in
# pymalloc's pools, 112 in glibc's chunks (a 16-byte header, 16-byte steps),
# so the recorded run (PYTHONMALLOC=malloc) held about 19 MiB more heap at
# its peak than the program does as it is; what lay outside the heap is the
# recorded RSS less the model of glibc's heap, not of pymalloc's, or the
# prediction carries those 19 MiB
cat - "$tmp/own_peak.py" > "$tmp/tuples.py" <<'PY'
t = [(i,) for i in range(1000000, 1600000)]
kept = t[::200]
del t
PY
"$py" "$tmp/tuples.py" "$tmp/peak"
measured=$(cat "$tmp/peak")
if [ -n "$(hl_unmodelled pymalloc)" ]; then
	echo "SKIP (part): CPython as it is runs on pymalloc; no compiled-in policy models it"
else
	"$heaplab" diagnose --policies=${glibc} --knobs= --json="$tmp/tuples.json" -- "$py" "$tmp/tuples.py" "$tmp/scratch" \
		>/dev/null 2>"$tmp/err" || { fail "tuples: diagnose failed"; cat "$tmp/err"; }
	predicted=$(hl_candidate "$tmp/tuples.json" real_setting 'the default*' predicted_peak_rss)
	awk -v p="${predicted:-0}" -v m="$measured" 'BEGIN { d = (p - m) / m; exit !(d < 0.10 && d > -0.10) }' && pass ||
		fail "tuples: the peak predicted for CPython as it is, '${predicted}' B, is not within 10 % of its measured $measured B"
fi

# --- threads that take turns by the clock -----------------------------------------
# four threads build tuples at once; recorded, each runs several times
# slower, so diagnose counts their timed waits in the program's own time,
# records them three times (the order of the threads' turns is one draw of
# the clock's each run), and diagnoses the recording of median live peak
cat > "$tmp/threads.py" <<'PY'
import threading
def work(n):
    t = [(i, n) for i in range(150000)]
    del t[::2]
ts = [threading.Thread(target=work, args=(n,)) for n in range(4)]
for t in ts: t.start()
for t in ts: t.join()
PY
if [ -n "$(hl_unmodelled pymalloc)" ]; then
	echo "SKIP (part): the threads' program is replayed behind the model of pymalloc; no compiled-in policy models it"
else
	out=$("$heaplab" diagnose --policies=${glibc} --knobs= --draws=4 --keep="$tmp/threads.rep" --json="$tmp/threads.json" \
		-- "$py" "$tmp/threads.py" 2>"$tmp/err")
	rc=$?
	[ $rc -eq 0 ] && pass || { fail "threads: exit $rc"; cat "$tmp/err"; }
	# CPython recorded past pymalloc: the C allocator's calls are not counted
	# in its timed waits either; four draws (--draws), the median one kept
	# (of an even number, the upper), and its most bytes live at once are
	# the kept recording's, counted here from its text
	"$heaplab" diagnose --text --trace="$tmp/threads.rep" >"$tmp/threads.txt" 2>/dev/null
	python3 - "$tmp/threads.json" "$tmp/threads.txt" <<'PY' && pass || fail "threads: the paced recordings are not four with the median kept"
import json, sys
r = json.load(open(sys.argv[1]))['recording']
peaks, pick = r['draw_live_peaks'], r['draw_picked']
assert r['pace'] == 'allocator', f"pace {r['pace']}"
# recorded past pymalloc, each call counted as pymalloc's: some ns
assert isinstance(r['pace_call_ns'], int) and r['pace_call_ns'] > 0, f"pace_call_ns {r['pace_call_ns']}"
assert len(peaks) == 4 and all(p > 0 for p in peaks), peaks
assert sorted(peaks)[2] == peaks[pick], (peaks, pick)
held, live, most = {}, 0, 0
for line in open(sys.argv[2]):
    w = line.split()
    if not w or w[0] not in ('a', 'c', 'm', 'r', 'f'):
        continue
    n = {'a': lambda: int(w[2]), 'r': lambda: int(w[2]), 'c': lambda: int(w[2]) * int(w[3]),
         'm': lambda: int(w[3]), 'f': lambda: 0}[w[0]]()
    live += n - held.get(w[1], 0)
    held[w[1]] = n
    most = max(most, live)
assert most == peaks[pick], (most, peaks[pick])
PY
	grep -q '^recorded 4 times, .* most bytes live at once .*; the median one, the \(first\|second\|third\|fourth\), is diagnosed$' <<<"$out" && pass ||
		fail "threads: the summary does not list the four recordings"
	[ "$(grep -c 'heaplab diagnose: recording .* again (. of 4' "$tmp/err")" -eq 3 ] && pass ||
		fail "threads: no progress line for the second to fourth recordings"
fi
echo "diagnose_python: $passed passed, $failed failed"
[ $failed -eq 0 ]
