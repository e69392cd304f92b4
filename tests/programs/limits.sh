#!/usr/bin/env bash
# Out of memory as a program meets it, under every compiled-in policy
# through the preload library and under the real glibc beside it (the
# reference: glibc returns NULL with ENOMEM and does not crash).  The
# program is tests/programs/limits_program.c; each of its runs ends with the model's
# checker (hl_check, "checker clean").
#
#  first       RLIMIT_DATA at 1 byte (set by the program: 0 is "no limit"
#              below a larger hard limit, and under prlimit --data=0 this
#              kernel starts no program at all) before the first malloc,
#              which builds the heap: NULL with ENOMEM, not an exit (glibc:
#              NULL); with the limit lifted, the next malloc works
#  again       the same after one malloc: each later malloc NULL with
#              ENOMEM or a usable block, no crash
#  free-errno  free keeps errno, also when its munmap fails at the mapping
#              limit (glibc's tst-free-errno's way); the region of a failed
#              munmap keeps its record
#  fill        4 threads allocate under RLIMIT_AS 256 MiB until NULL
#              (ENOMEM), holding at least 64 MiB by then (a quarter of the
#              limit), free everything and allocate again: LIMITS_RUNS runs
#              per policy (default 6), each under `timeout`; "null seen"
#              required, no crash, no hang, the checker clean
#  cgroup      the same fill under `systemd-run --scope -p MemoryMax=`,
#              where systemd runs; otherwise a SKIP line (never a pass)
set -u
. "$(dirname "$0")/../lib.sh"
hl_skip_sanitized "every run preloads heaplab into tests/programs/limits_program; a -fsanitize=$hl_sanitizer build owns malloc"
program="$build/tests/programs/limits_program"
runs="${LIMITS_RUNS:-6}"   # a longer run: LIMITS_RUNS=20 (a few minutes on a busy machine)
as_limit=$((256 << 20))
# what the threads must have held when NULL came: a quarter of the limit
# (glibc held about 150 MiB here)
min_held=64

policies=$(hl_policies)
if [ ! -x "$program" ] || [ ! -f "$preload" ] || [ -z "$policies" ]; then
	echo "limits: the program, the preload library or the policy list is missing"
	exit 1
fi
command -v prlimit >/dev/null || hl_skip "prlimit (util-linux) is not installed"

failures=0
hl_tmpdir

# run NAME POLICY LIMITS... -- ARGS: one run; POLICY "glibc" is the real one.
# Passes when the program exits 0 (its own checks and the checker), and,
# for fill, said "null seen".
run() {
	local name=$1 policy=$2
	shift 2
	local limits=()
	while [ "$1" != -- ]; do limits+=("$1"); shift; done
	shift
	local env=(env)
	[ "$policy" = glibc ] || env+=(HEAPLAB_POLICY="$policy" LD_PRELOAD="$preload")
	"${env[@]}" timeout -s KILL 30 prlimit "${limits[@]}" "$program" "$@" >"$tmp/out" 2>&1
	local rc=$?
	local why=
	if [ $rc -eq 137 ]; then
		why="hung (killed after 30 s)"
	elif [ $rc -gt 128 ]; then
		why="died of signal $((rc - 128))"
	elif [ $rc -ne 0 ]; then
		why="exit $rc"
	elif [ "$1" = fill ] && ! grep -q "null seen" "$tmp/out"; then
		why="never saw NULL"
	elif [ "$1" = fill ] && [ "$(sed -n 's/^held \([0-9]*\) MiB.*/\1/p' "$tmp/out")" -lt "$min_held" ]; then
		why="NULL came early: $(grep '^held' "$tmp/out") (at least $min_held MiB expected)"
	elif [ "$policy" != glibc ] && ! grep -q "checker clean" "$tmp/out"; then
		why="no checker verdict"
	fi
	if [ -n "$why" ]; then
		echo "FAIL: $name under $policy: $why"
		sed 's/^/    /' "$tmp/out" | head -5
		failures=$((failures + 1))
		return 1
	fi
	return 0
}

for p in glibc $policies; do
	run "first malloc under RLIMIT_DATA" "$p" -- first &&
		echo "ok: first malloc under RLIMIT_DATA under $p: $(grep -c 'null seen' "$tmp/out") NULL"
	run "mallocs under RLIMIT_DATA" "$p" -- again &&
		echo "ok: mallocs under RLIMIT_DATA under $p"
	run "free keeps errno" "$p" -- free-errno &&
		echo "ok: free keeps errno under $p ($(grep 'mapping limit' "$tmp/out" | head -1))"
done

# Policies that run one thread here, each with its reason: none today
# (bins' arenas under threads at the limit, the last, are fixed).
not_yet=" "
for p in glibc $policies; do
	threads=4
	case $not_yet in *" $p "*)
		threads=1
		echo "NOT RUN: 4 threads to RLIMIT_AS 256 MiB under $p (one thread instead: see not_yet)" ;;
	esac
	good=0
	for ((i = 0; i < runs; i++)); do
		run "$threads threads to RLIMIT_AS 256 MiB (run $((i + 1)))" "$p" --as=$as_limit -- fill $threads || break
		good=$((good + 1))
	done
	[ $good -eq "$runs" ] && echo "ok: $threads threads to RLIMIT_AS 256 MiB under $p, $runs runs ($(grep '^held' "$tmp/out"))"
done

# A cgroup memory limit needs a running systemd (not in a container).
if ! command -v systemd-run >/dev/null; then
	echo "SKIP: cgroup limit: systemd-run is not installed"
elif ! systemd-run --scope --quiet -p MemoryMax=64M true >/dev/null 2>&1; then
	echo "SKIP: cgroup limit: systemd-run --scope does not work here (no systemd running)"
else
	for p in glibc $policies; do
		env=()
		[ "$p" = glibc ] || env=(HEAPLAB_POLICY="$p" LD_PRELOAD="$preload")
		timeout -s KILL 60 systemd-run --scope --quiet -p MemoryMax=256M -p MemorySwapMax=0 \
			env "${env[@]}" prlimit --as=$((1 << 30)) "$program" fill 4 >"$tmp/out" 2>&1
		rc=$?
		if [ $rc -ne 0 ]; then
			echo "FAIL: 4 threads under MemoryMax=256M under $p: exit $rc"
			failures=$((failures + 1))
		else
			echo "ok: 4 threads under MemoryMax=256M under $p"
		fi
	done
fi

[ $failures -eq 0 ] || { echo "limits: $failures failures"; exit 1; }
echo "limits: all passed"
