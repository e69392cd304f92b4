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
#   bench/instructions.sh BUILD_DIR [SIZE [RING]]
# HEAPLAB_INSTR_KEEP=DIR keeps the callgrind files (callgrind_annotate them).
set -uo pipefail
build=$(cd "${1:-.}" && pwd)
size=${2:-32}
ring=${3:-1000}
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

# Total instructions of one run of the ring with PAIRS pairs under TARGET.
count() {
	local target=$1 pairs=$2 out="$work/$1.$2.out"
	local cmd=(valgrind --tool=callgrind --callgrind-out-file="$out" "$build/bench/ring" 1 "$pairs" "$ring" "$size" fixed)
	case "$target" in
	glibc) "${cmd[@]}" ;;
	heaplab-firstfit) # valgrind cannot reserve firstfit's default 64 GiB break
		HEAPLAB_POLICY=firstfit HEAPLAB_CONF=brk_max:1G LD_PRELOAD="$preload" "${cmd[@]}" ;;
	heaplab-*) HEAPLAB_POLICY=${target#heaplab-} LD_PRELOAD="$preload" "${cmd[@]}" ;;
	*) LD_PRELOAD="${lib[$target]}" "${cmd[@]}" ;;
	esac >/dev/null 2>&1 || { echo "bench-instructions: $target failed on $pairs pairs" >&2; return 1; }
	[ -n "$keep" ] && mkdir -p "$keep" && cp "$out" "$keep/"
	awk '/^(summary|totals):/ { print $2; exit }' "$out"
}

printf '| target | instructions per free+malloc pair (ring of %d x %d B) |\n|---|---|\n' "$ring" "$size"
status=0
for t in "${targets[@]}"; do
	small=$(count "$t" 100000) && large=$(count "$t" 200000) || { status=1; printf '| %s | failed |\n' "$t"; continue; }
	awk -v t="$t" -v a="$small" -v b="$large" 'BEGIN { printf "| %s | %.1f |\n", t, (b - a) / 100000 }'
done
exit $status
