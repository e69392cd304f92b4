#!/usr/bin/env bash
# 2-thread scaling on the ring, read per CPU: for each target, one thread
# alone pinned to CPU A, one alone on CPU B, then two threads pinned one
# to each (bench/ring with RING_PIN=1 prints each thread's own ns per
# pair).  The ratio for a CPU is its thread's time beside the other over
# its time alone, so CPUs that run at different speeds (this machine's
# two vCPUs do) do not enter it.  Targets are interleaved in every round;
# the table gives medians over the rounds.  1.00 is perfect scaling.
#   bench/scaling.sh BUILD_DIR ROUNDS TARGET[,TARGET...] [SIZE [PAIRS]]
# TARGET: glibc, jemalloc, mimalloc, tcmalloc or heaplab-POLICY[/CONF].
# SIZE is the ring's fixed block size (32), PAIRS each thread's pairs
# (30000000).  Uses the first two CPUs the shell may run on.
set -uo pipefail
usage() { echo "usage: bench/scaling.sh BUILD_DIR ROUNDS TARGET[,TARGET...] [SIZE [PAIRS]]" >&2; exit 2; }
[ $# -ge 3 ] || usage
build=$(cd "$1" 2>/dev/null && pwd) || { echo "scaling: no build directory $1" >&2; exit 2; }
rounds=$2
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { echo "scaling: ROUNDS must be a positive number, not '$rounds'" >&2; exit 2; }
IFS=, read -r -a names <<<"$3"
size=${4:-32}
pairs=${5:-30000000}
ring="$build/bench/ring"
preload="$build/.libs/libheaplab-preload.so"
[ -x "$ring" ] || { echo "scaling: no $ring (make bench/ring)" >&2; exit 2; }
source "$(dirname "$0")/allocators.sh" scaling >/dev/null 2>&1
check_targets scaling
read -r cpu_a cpu_b < <(python3 -c 'import os; c = sorted(os.sched_getaffinity(0)); print(*c[:2]) if len(c) > 1 else None')
[ -n "${cpu_b:-}" ] || { echo "scaling: needs two CPUs to run on" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Runs the ring with $2 threads under target $1, pinned, on CPUs $3;
# prints its "thread I cpu C ns_per_op X" lines.
ring_under() {
	run_under "$1" taskset -c "$3" env RING_PIN=1 "$ring" "$2" "$pairs" 1000 "$size" fixed 2>/dev/null |
		grep '^thread' || { echo "scaling: the ring failed under $1" >&2; return 1; }
}

n=${#names[@]}
for ((r = 0; r < rounds; r++)); do
	printf 'scaling: round %d of %d\r' $((r + 1)) "$rounds" >&2
	for ((k = 0; k < n; k++)); do
		t=${names[$(((k + r) % n))]}
		f="$work/${t//\//_}"
		ring_under "$t" 1 "$cpu_a" | awk -v f="$f" '{ print $6 > f ".alone." $4 }' || exit 1
		ring_under "$t" 1 "$cpu_b" | awk -v f="$f" '{ print $6 >> f ".alone." $4 }' || exit 1
		ring_under "$t" 2 "$cpu_a,$cpu_b" | awk -v f="$f" '{ print $6 >> f ".beside." $4 }' || exit 1
	done
done
printf '\n' >&2

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
printf '| target | CPU %s alone → beside (ns/pair) | ratio | CPU %s alone → beside | ratio |\n|---|---|---|---|---|\n' "$cpu_a" "$cpu_b"
for t in "${names[@]}"; do
	f="$work/${t//\//_}"
	row="| $t"
	for c in "$cpu_a" "$cpu_b"; do
		a=$(cat "$f.alone.$c" 2>/dev/null | median)
		b=$(cat "$f.beside.$c" 2>/dev/null | median)
		row+=$(awk -v a="$a" -v b="$b" 'BEGIN { if (a > 0 && b > 0) printf " | %.2f → %.2f | %.2f", a, b, b / a; else printf " | - | -" }')
	done
	echo "$row |"
done
