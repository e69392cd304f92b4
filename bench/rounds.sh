#!/usr/bin/env bash
# Interleaved timing rounds: runs one command under several allocators, one
# after another in each round (the order turned by one place every round,
# so no target always runs first or last), and prints per target the median
# wall time, the median CPU time (user + sys) and the median of the
# per-round ratios of its CPU time to the first target's.  Times on a
# shared machine move; the ratio within a round moves less, and the median
# of several rounds less again (bench/HISTORY.md says how loaded the
# machine was).  Instruction counts (bench/instructions.sh) are the steady
# figure; this is for the times that follow them.
#   bench/rounds.sh BUILD_DIR ROUNDS TARGET[,TARGET...] -- COMMAND [ARG...]
# TARGET: glibc, jemalloc, mimalloc, tcmalloc, or heaplab-POLICY[/CONF]
# (through the preload library of BUILD_DIR).  The first is the reference.
# A progress line per round goes to stderr; the table to stdout.
set -uo pipefail
usage() { echo "usage: bench/rounds.sh BUILD_DIR ROUNDS TARGET[,TARGET...] -- COMMAND [ARG...]" >&2; exit 2; }
[ $# -ge 5 ] && [ "$4" = "--" ] || usage
build=$(cd "$1" 2>/dev/null && pwd) || { echo "rounds: no build directory $1" >&2; exit 2; }
rounds=$2
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { echo "rounds: ROUNDS must be a positive number, not '$rounds'" >&2; exit 2; }
IFS=, read -r -a names <<<"$3"
shift 4
preload="$build/.libs/libheaplab-preload.so"
source "$(dirname "$0")/allocators.sh" rounds >/dev/null 2>&1
check_targets rounds
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One run of the command under target $1; appends "wall cpu" to $work/$1.
run_one() {
	local t=$1 out="$work/${1//\//_}"
	run_under "$t" /usr/bin/time -f '%e %U %S' -o "$work/last" "${cmd[@]}" >/dev/null 2>&1 ||
		{ echo "rounds: '${cmd[*]}' failed under $t" >&2; return 1; }
	awk '{ printf "%s %.3f\n", $1, $2 + $3 }' "$work/last" >>"$out"
}

cmd=("$@")
[ -x /usr/bin/time ] || { echo "rounds: /usr/bin/time is not installed (apt-get install time)" >&2; exit 2; }
n=${#names[@]}
for ((r = 0; r < rounds; r++)); do
	printf 'rounds: round %d of %d\r' $((r + 1)) "$rounds" >&2
	for ((k = 0; k < n; k++)); do
		run_one "${names[$(((k + r) % n))]}" || exit 1
	done
done
printf '\n' >&2

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ref="$work/${names[0]//\//_}"
printf '| target | wall s (median of %d) | CPU s (median) | CPU ratio to %s (median of rounds) |\n|---|---|---|---|\n' \
	"$rounds" "${names[0]}"
for t in "${names[@]}"; do
	f="$work/${t//\//_}"
	wall=$(cut -d' ' -f1 "$f" | median)
	cpu=$(cut -d' ' -f2 "$f" | median)
	ratio=$(paste -d' ' "$f" "$ref" | awk '{ print ($4 > 0) ? $2 / $4 : 0 }' | median)
	printf '| %s | %.2f | %.2f | %.2f |\n' "$t" "$wall" "$cpu" "$ratio"
done
