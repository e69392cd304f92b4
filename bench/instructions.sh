#!/usr/bin/env bash
# make bench-instructions: instructions per free+malloc pair on the fixed-size
# ring (bench/ring 1 OPS 1000 32 fixed: a ring of 1,000 blocks of 32 bytes,
# each step frees the oldest and mallocs a new one), counted by callgrind as
# the difference between 200,000 and 100,000 pairs divided by 100,000, so
# start-up and exit cancel out and the loop is included.  Every heaplab
# policy runs through LD_PRELOAD of the preload library (as bench/run.sh
# does), every real allocator installed too.  Counted, not timed: the
# figures are the same on every run of the same build, so they can be
# compared between commits.
#   bench/instructions.sh BUILD_DIR [SIZE [RING]] [--targets=T[,T...]] [--random]
# --targets: only these (glibc, jemalloc, mimalloc, tcmalloc, or
# heaplab-POLICY[/CONF], as bench/rounds.sh takes them); --random: sizes
# 1..SIZE drawn by the ring (its default) instead of every block SIZE bytes.
# HEAPLAB_INSTR_KEEP=DIR keeps the callgrind files (callgrind_annotate them).
set -uo pipefail
pos=() only="" kind=fixed
for a in "$@"; do
	case "$a" in
	--targets=*) only=${a#--targets=} ;;
	--random) kind="" ;;
	-*) echo "bench-instructions: unknown option '$a'" >&2; exit 2 ;;
	*) pos+=("$a") ;;
	esac
done
build=$(cd "${pos[0]:-.}" && pwd)
size=${pos[1]:-32}
ring=${pos[2]:-1000}
heaplab="$build/heaplab"
preload="$build/.libs/libheaplab-preload.so"
command -v valgrind >/dev/null || { echo "bench-instructions: valgrind is not installed" >&2; exit 2; }
[ -r "$preload" ] || { echo "bench-instructions: no $preload (make libheaplab-preload.la)" >&2; exit 2; }
keep=${HEAPLAB_INSTR_KEEP:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

source "$(dirname "$0")/allocators.sh" bench-instructions
for p in $("$heaplab" policies | awk '{print $1}'); do
	[ "$p" = student ] || targets+=("heaplab-$p")
done
if [ -n "$only" ]; then
	IFS=, read -r -a names <<<"$only"
	check_targets bench-instructions
	targets=("${names[@]}")
fi

# Total instructions of one run of the ring with PAIRS pairs under TARGET.
count() {
	local target=$1 pairs=$2 out="$work/${1//\//_}.$2.out"
	local cmd=(valgrind --tool=callgrind --callgrind-out-file="$out" "$build/bench/ring" 1 "$pairs" "$ring" "$size" $kind)
	case "$target" in
	heaplab-firstfit) # valgrind cannot reserve firstfit's default 64 GiB break
		run_under heaplab-firstfit/brk_max:1G "${cmd[@]}" ;;
	*) run_under "$target" "${cmd[@]}" ;;
	esac >/dev/null 2>&1 || { echo "bench-instructions: $target failed on $pairs pairs" >&2; return 1; }
	[ -n "$keep" ] && mkdir -p "$keep" && cp "$out" "$keep/"
	awk '/^(summary|totals):/ { print $2; exit }' "$out"
}

sizes=$size; [ -n "$kind" ] || sizes=1..$size
printf '| target | instructions per free+malloc pair (ring of %d x %s B) |\n|---|---|\n' "$ring" "$sizes"
status=0
for t in "${targets[@]}"; do
	small=$(count "$t" 100000) && large=$(count "$t" 200000) || { status=1; printf '| %s | failed |\n' "$t"; continue; }
	awk -v t="$t" -v a="$small" -v b="$large" 'BEGIN { printf "| %s | %.1f |\n", t, (b - a) / 100000 }'
done
exit $status
