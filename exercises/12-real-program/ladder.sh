#!/bin/sh
# Lab 12: a real program (workload.py under python3) on every policy, and
# the first rungs of the diagnosis ladder applied to it.
#
#   ladder.sh [--check] [--full]     (run from the top of a build tree, or
#                                     set HEAPLAB=/path/to/heaplab)
# Rung 1: the bloat factor, resident bytes / live bytes, on each policy.
# Rung 2: the free knobs on bins (glibc): arena_max:1, malloc_trim(0).
# Rung 3: another allocator with its decay tuned: slab with dirty_decay_ms:0.
# With --check it exits 0 when the phenomena hold, 1 when one does not,
# 77 when python3 or the policies it needs are missing (automake SKIP).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../tests/lib.sh"
check=no waves="--waves 2 --per-wave 15000"
for a in "$@"; do
	case $a in
	--check) check=yes ;;
	--full) waves="--waves 10 --per-wave 30000" ;;
	*) echo "usage: $0 [--check] [--full]" >&2; exit 2 ;;
	esac
done
[ -x "$heaplab" ] || hl_skip "no heaplab command at $heaplab (run from the build tree)"
hl_skip_sanitized "heaplab run preloads the library into python3, which a -fsanitize=$hl_sanitizer build cannot"
command -v python3 >/dev/null 2>&1 || hl_skip "python3 is not installed"
# The interpreter itself, not a wrapper script (pyenv's shims run many
# programs of their own, each of which would print its statistics).
python=$(python3 -c 'import sys; print(sys.executable)') || hl_skip "python3 does not run"
hl_compiled bins || hl_skip "policy bins is not compiled in"
hl_tmpdir
failed=0

# run NAME POLICY CONF [workload options]: the program with samples of its
# heap every 20 ms; the statistics at exit go to NAME.err.
# debug:off always: an --enable-debug build would otherwise run the whole
# heap checker on every call of the interpreter, and junk-fill what it frees
# (the measured resident bytes would be the checker's, not the policy's).
run() {
	name=$1 policy=$2 conf=${3:+$3,}debug:off
	shift 3
	if ! PYTHONMALLOC=malloc "$heaplab" run --policy="$policy" ${conf:+--conf="$conf"} --stats \
		--sample-ms 20 --sample-file "$tmp/$name.samples" -- \
		"$python" "$here/workload.py" $waves "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"; then
		echo "$name: the program failed under $policy:"; tail -5 "$tmp/$name.err"; failed=1; return
	fi
	grep -q 'held by the program' "$tmp/$name.out" || { echo "$name: no output"; failed=1; }
}
# stat NAME KEY: a statistic printed at the program's exit
stat() { grep "^ *$2: " "$tmp/$1.err" | tail -1 | awk '{print $2}'; }
# steady NAME COLUMN: the mean of a sample column (3 live, 5 resident) over
# the program's quiet spell (the last sample before it when none fell in it)
steady() {
	awk -v col="$2" -v q="$(grep '^quiet ' "$tmp/$1.out")" '
		BEGIN { split(q, w, " ") }
		/^#/ || $1 != w[2] { next }
		$2 <= w[4] { last = $col }
		$2 >= w[3] && $2 <= w[4] { sum += $col; n++ }
		END { print (n ? sum / n : last + 0) }' "$tmp/$1.samples"
}
bloat() { awk -v r="$(steady "$1" 5)" -v l="$(steady "$1" 3)" 'BEGIN { printf "%.1f", (l > 0 ? r / l : 0) }'; }
mib() { awk -v b="$(steady "$1" "$2")" 'BEGIN { printf "%.1f", b / 1048576 }'; }
expect() { # expect "what" condition...
	what=$1; shift
	if "$@"; then echo "check: $what: ok"; else echo "check: $what: FAILED"; failed=1; fi
}
gt() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a > b) }'; }

echo "== Lab 12: a real program on every policy =="
echo "rung 1: resident / live bytes while the program holds its anchors (the bloat factor)"
printf '%-22s %12s %10s %8s\n' run "resident MiB" "live MiB" bloat
for p in bins slab sharded pools firstfit; do
	hl_compiled "$p" || { echo "(policy $p is not compiled in)"; continue; }
	run "$p" "$p" ""
	printf '%-22s %12s %10s %8s\n' "$p" "$(mib "$p" 5)" "$(mib "$p" 3)" "$(bloat "$p")"
done
echo "rung 2: the free knobs, on bins"
run arena1 bins arena_max:1
run trim bins "" --trim
printf '%-22s %12s %10s %8s   arenas %s\n' "bins arena_max:1" "$(mib arena1 5)" "$(mib arena1 3)" "$(bloat arena1)" "$(stat arena1 arenas)"
printf '%-22s %12s %10s %8s\n' "bins + malloc_trim(0)" "$(mib trim 5)" "$(mib trim 3)" "$(bloat trim)"
if hl_compiled slab; then
	echo "rung 3: another allocator, decay tuned"
	run decay0 slab dirty_decay_ms:0
	printf '%-22s %12s %10s %8s\n' "slab dirty_decay_ms:0" "$(mib decay0 5)" "$(mib decay0 3)" "$(bloat decay0)"
fi
if [ $check = yes ]; then
	expect "the program holds less than the heap keeps (bins bloat factor > 1)" gt "$(bloat bins)" 1
	expect "four threads make more than one arena in bins" gt "$(stat bins arenas)" 1
	expect "arena_max:1 keeps one arena" [ "$(stat arena1 arenas)" = 1 ]
	expect "malloc_trim(0) gives back what free kept (retention, not a leak)" \
		gt "$(steady bins 5)" "$(awk -v t="$(steady trim 5)" 'BEGIN { print 1.5 * t }')"
	if hl_compiled slab; then
		# the workers' arenas are purged at each worker's end whatever
		# the decay time (jemalloc 5.3's tcache_destroy): on jemalloc
		# itself the quiet spell is 16.3-16.4 MiB with decay 0 against
		# 16.4-16.9 by default, so no more, and not much less.  Two runs
		# of slab differ by their threads' turns: 8.0 to 8.3 MiB with
		# either setting (four runs each, 2026-12-05), so one run against
		# another is allowed that much (5 %); CI saw 8.2 against 8.0
		expect "slab with dirty_decay_ms:0 keeps no more than slab's default (5 % allowed, two runs' spread)" \
			gt "$(awk -v s="$(steady slab 5)" 'BEGIN { print 1.05 * s }')" "$(steady decay0 5)"
	fi
fi
exit $failed
