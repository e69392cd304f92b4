#!/usr/bin/env bash
# make costs: the cost model of the book's chapter 17, measured on this
# machine with bench/costs (bench/workloads/costs.c), as ratios to one
# reference, glibc's tcache hit (a malloc(32)/free pair).
#   bench/costs.sh BUILD_DIR [ROUNDS]        (ROUNDS: 7 unless given)
# Prints five tables:
#  1. instructions a pair (callgrind: the count of 2N pairs less the count
#     of N, over N, so start-up and exit cancel) under glibc, glibc with
#     its tcache off (GLIBC_TUNABLES=glibc.malloc.tcache_count=0), every
#     real allocator installed and heaplab's bins as glibc 2.36 and 2.43,
#     with and without its tcache, through the preload library; the pair
#     alone and once another thread has run (no single-thread shortcut);
#  2. the user-space instructions of the kernel cases (callgrind cannot see
#     the kernel, and this virtual machine has no counter that can: perf
#     reports instructions:k as not supported);
#  3. minor faults an operation (getrusage, no valgrind);
#  4. times under glibc: every case of `bench/costs time ROUNDS`, medians
#     of the rounds and of the rounds' ratios to the tcache hit;
#  5. times of the pair under each allocator and of two threads' pairs
#     under glibc's four settings of tcache and arenas: one process a
#     target in each round, the order turned each round, the median of the
#     per-round ratios to the first target.
# Counted figures are the same on every run; times move on this shared
# machine (say how loaded it was when you quote one).
set -uo pipefail
build=$(cd "${1:-.}" 2>/dev/null && pwd) || { echo "costs: no build directory ${1:-}" >&2; exit 2; }
rounds=${2:-7}
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { echo "costs: ROUNDS must be a positive number, not '$rounds'" >&2; exit 2; }
costs="$build/bench/costs"
preload="$build/.libs/libheaplab-preload.so"
[ -x "$costs" ] || { echo "costs: no $costs (make bench/costs)" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "costs: valgrind is not installed" >&2; exit 2; }
source "$(dirname "$0")/allocators.sh" costs
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
off=glibc.malloc.tcache_count=0

# Runs COMMAND... under target $1: the targets of allocators.sh, and
# glibc-off (glibc with its tcache off).
under() {
	local t=$1
	shift
	case "$t" in
	glibc-off) GLIBC_TUNABLES=$off "$@" ;;
	*) run_under "$t" "$@" ;;
	esac
}

# Instructions of `costs count CASE N` under target $1.
count() {
	local out="$work/cg.out"
	under "$1" valgrind --tool=callgrind --callgrind-out-file="$out" "$costs" count "$2" "$3" >/dev/null 2>&1 ||
		{ echo "costs: $2 failed under $1" >&2; return 1; }
	awk '/^(summary|totals):/ { print $2; exit }' "$out"
}

# Instructions an operation of CASE $2 under target $1 (N = $3).
per_op() {
	local a b
	a=$(count "$1" "$2" "$3") && b=$(count "$1" "$2" $(($3 * 2))) || return 1
	awk -v a="$a" -v b="$b" -v n="$3" 'BEGIN { printf "%.1f", (b - a) / n }'
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0) ? a / b : 0 }'; }

echo "Machine: $(nproc) CPUs ($(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)), Linux $(uname -r), glibc $(ldd --version | awk 'NR == 1 { print $NF }'); $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
pair_targets=(glibc glibc-off "${targets[@]:1}")
if [ -r "$preload" ]; then
	pair_targets+=(heaplab-bins/version:2.36 heaplab-bins/version:2.36,tcache_count:0
		heaplab-bins/version:2.43 heaplab-bins/version:2.43,tcache_count:0)
fi
echo "## 1. Instructions a malloc(32)/free pair (callgrind)"
echo
echo "| target | pair | ratio to glibc's tcache hit | pair once a thread has run | ratio |"
echo "|---|---|---|---|---|"
ref=$(per_op glibc pair 100000) || exit 1
for t in "${pair_targets[@]}"; do
	p=$(per_op "$t" pair 100000) && m=$(per_op "$t" pair-mt 100000) || { echo "| $t | failed | | | |"; continue; }
	echo "| $t | $p | $(ratio "$p" "$ref") | $m | $(ratio "$m" "$ref") |"
done
echo
echo "## 2. User-space instructions of the kernel cases (callgrind; the kernel's share is not counted)"
echo
echo "| case | instructions an operation, user space | ratio to glibc's tcache hit |"
echo "|---|---|---|"
for c in syscall mmap fault dontneed; do
	n=100000
	[ "$c" = syscall ] || n=20000
	v=$(per_op glibc "$c" "$n") || { echo "| $c | failed | |"; continue; }
	echo "| $c | $v | $(ratio "$v" "$ref") |"
done
echo
echo "## 3. Minor faults an operation (getrusage)"
echo
echo "| case | operations | minor faults |"
echo "|---|---|---|"
for c in pair syscall mmap fault dontneed; do
	"$costs" count "$c" 20000 | awk '{ printf "| %s | %s | %s |\n", $1, $2, $4 }'
done
echo
echo "## 4. Times under glibc, ratios to the tcache hit (median of $rounds rounds)"
echo
"$costs" time "$rounds" 2>/dev/null || echo "(costs time failed)"
echo

# Interleaved processes: `costs time 3 CASE` under each target of the
# array named $2 (a target: NAME or NAME=GLIBC_TUNABLES value), $rounds
# rounds, the order turned each round; prints one row a target with the
# median ns and the median of the per-round ratios to the first.
interleave() {
	local c=$1 ts i k r n v
	local -n list=$2
	n=${#list[@]}
	rm -f "$work"/t.*
	for ((r = 0; r < rounds; r++)); do
		for ((k = 0; k < n; k++)); do
			i=$(((k + r) % n))
			t=${list[$i]}
			case "$t" in
			*=*) v=$(GLIBC_TUNABLES=${t#*=} "$costs" time 3 "$c" 2>/dev/null) ;;
			*) v=$(under "$t" "$costs" time 3 "$c" 2>/dev/null) ;;
			esac
			echo "$v" | awk -F'|' -v c="$c" '$2 == " " c " " { print $4 + 0 }' >>"$work/t.$i"
		done
	done
	echo "| target | ns a pair (median of $rounds) | ratio to ${list[0]%%=*} (median of the rounds' ratios) |"
	echo "|---|---|---|"
	for ((i = 0; i < n; i++)); do
		paste -d' ' "$work/t.$i" "$work/t.0" |
			awk -v t="${list[$i]%%=*}" '{ a[NR] = $1; q[NR] = ($2 > 0) ? $1 / $2 : 0 }
			function med(v, m,   i, j, x) {
				for (i = 2; i <= m; i++) { x = v[i]; for (j = i - 1; j > 0 && v[j] > x; j--) v[j + 1] = v[j]; v[j + 1] = x }
				return (m % 2) ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
			}
			END { printf "| %s | %.1f | %.2f |\n", t, med(a, NR), med(q, NR) }'
	done
}

echo "## 5. Times of the pair: one process a target, interleaved ($rounds rounds)"
echo
one=(glibc glibc-off "${targets[@]:1}")
interleave pair one
echo
if [ "$(nproc)" -ge 2 ]; then
	echo "Two threads on two CPUs, each making pairs (per pair of one thread), under glibc's settings:"
	echo
	two=("default=" "tcache-off=$off" "one-arena=glibc.malloc.arena_max=1"
		"tcache-off,one-arena=$off:glibc.malloc.arena_max=1")
	interleave pairs2 two
fi
