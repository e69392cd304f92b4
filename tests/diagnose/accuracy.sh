#!/usr/bin/env bash
# bench/accuracy/run.py, the script behind bench/ACCURACY.md: its
# arguments (each mistake one line and exit 2), its corpus (at least eight
# programs, CPython both ways among them), and one program end to end:
# sqlite3 recorded by heaplab diagnose, predicted and run under the
# four allocators.  Checked: the cells name the setting of the allocator
# they stand for, the runs were measured, the verdict of each cell is the
# target's rule applied to its own figures (worked out here again), and
# the text around the tables of the output file is kept.
set -u
. "$(dirname "$0")/../lib.sh"
src=${abs_top_srcdir:-..}
run=$src/bench/accuracy/run.py
hl_tmpdir
failed=0 passed=0
pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }
finish() { echo "accuracy: $passed passed, $failed failed"; [ $failed -eq 0 ]; exit; }

# bad_args WHAT ARGS...: exit 2, one line on the standard error
bad_args() {
	local what=$1 err rc
	shift
	err=$(python3 "$run" "$@" 2>&1 >/dev/null)
	rc=$?
	[ $rc -eq 2 ] && [ "$(wc -l <<<"$err")" -eq 1 ] && [[ $err == accuracy:* ]] && pass ||
		fail "$what: exit $rc, stderr '$err' (expected exit 2 and one 'accuracy:' line)"
}
bad_args "unknown option" --bogus "$build"
bad_args "no build" --only=sort
bad_args "no heaplab in the build" "$tmp"
bad_args "unknown program" --only=sort,nosuch "$build"
bad_args "bad --repeat" --repeat=0 "$build"
bad_args "two builds" "$build" "$build"

list=$(python3 "$run" --list)
n=$(awk '{print $1}' <<<"$list" | sort -u | wc -l)
[ "$n" -ge 8 ] && pass || fail "--list names $n programs, not at least 8"
for want in python3 python3-malloc; do
	awk -v w="$want" '$1 == w { found = 1 } END { exit !found }' <<<"$list" && pass || fail "--list has no $want"
done

missing=$(hl_unmodelled glibc jemalloc mimalloc tcmalloc)
if [ -n "$missing" ]; then
	echo "SKIP (part): the end-to-end run predicts each program under the models of the four allocators; no compiled-in policy models $missing"
	finish
fi
hl_skip_sanitized "the corpus is recorded by heaplab diagnose, which a -fsanitize=$hl_sanitizer build cannot preload"
command -v sqlite3 >/dev/null || hl_skip "no sqlite3 (quickstart installs it)"
printf 'before the tables\n<!-- accuracy.py: tables begin -->\nold table\n<!-- accuracy.py: tables end -->\nafter the tables\n' \
	>"$tmp/A.md"
python3 "$run" --only=sqlite3 --work="$tmp/work" --out="$tmp/A.md" --json="$tmp/a.json" "$build" 2>"$tmp/err" && pass ||
	{ fail "sqlite3 end to end: exit $?"; cat "$tmp/err"; }
grep -qx 'before the tables' "$tmp/A.md" && grep -qx 'after the tables' "$tmp/A.md" && ! grep -q 'old table' "$tmp/A.md" &&
	pass || fail "the text around the tables is not kept, or the old table is: $(cat "$tmp/A.md")"
grep -q '^accuracy: \[1/1\] sqlite3: running under tcmalloc (4/4) \.\.\.$' "$tmp/err" && pass ||
	fail "no progress line for the last run in: $(cat "$tmp/err")"
# every cell from the JSON: its setting, its figures, its verdict in the table
python3 - "$tmp/a.json" "$tmp/A.md" <<'PY' && pass || fail "the cells of sqlite3 (above)"
import json, sys
cells = json.load(open(sys.argv[1]))[0]['cells']
table = open(sys.argv[2]).read().splitlines()
lib = {'glibc': None, 'jemalloc': 'libjemalloc.so.2', 'mimalloc': 'libmimalloc.so.2', 'tcmalloc': 'libtcmalloc_minimal.so.4'}
bad = []
if [c['allocator'] for c in cells] != list(lib):
    bad.append(f'allocators {[c["allocator"] for c in cells]}')
for c in cells:
    a = c['allocator']
    if 'measured_peak' not in c:
        if 'not installed' not in c.get('why', ''):
            bad.append(f'{a}: no figures: {c.get("why")}')
        continue
    setting = c['setting']
    if (lib[a] is None) != setting.startswith('the default') or (lib[a] and not setting.endswith('/' + lib[a])):
        bad.append(f'{a}: setting {setting!r}')
    if not 0 < c['measured_final'] <= c['measured_peak']:
        bad.append(f'{a}: measured {c["measured_peak"]} / {c["measured_final"]}')
    mp, mf, pp, pf = c['measured_peak'], c['measured_final'], c['predicted_peak'], c['predicted_final']
    lo_p, hi_p, lo_f, hi_f = c['spread']   # the real runs' least and largest: the median between them
    if not (lo_p <= mp <= hi_p and lo_f <= mf <= hi_f):
        bad.append(f'{a}: median {mp} / {mf} outside the runs\' spread {c["spread"]}')
    ok = abs(pp - mp) <= 0.10 * mp and abs(pf - mf) <= max(0.15 * mf, 2 << 20)
    row = [l for l in table if l.startswith(f"| sqlite3 | {a} |")]
    if len(row) != 1 or (row[0].split(' | ')[7].strip() == 'yes') != ok:
        bad.append(f'{a}: row {row} for peak {mp} / {pp}, final {mf} / {pf}: within is {ok}')
for b in bad:
    print('   ', b)
sys.exit(1 if bad else 0)
PY

finish
