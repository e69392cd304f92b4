#!/usr/bin/env bash
# The main demo: every policy on "500,000 x 1 KiB, free 90%, free the rest".
# Prints an RSS table (MiB above the program's own start) and writes one heap
# picture per policy, taken at exit, into BUILD/demo/.  The last column runs
# the same program with one 16-byte block allocated after the half gigabyte
# and kept live (bench/halfgig's "pin"): the lesson of a late allocation.
set -uo pipefail
build=$(cd "${1:-.}" && pwd)
cd "$build"
make -s bench/halfgig >/dev/null
out="$build/demo"
mkdir -p "$out"
printf '%-10s %12s %14s %14s %12s %14s\n' allocator "after alloc" "after free 90%" "after free all" "after 1.5 s" "pinned: all"
value() { echo "$1" | awk -v k="$2" '$1 == k {print $2}'; }
row() {
	local name=$1 run=$2 pinned=$3 r p
	r=$(eval "$run ./bench/halfgig 1500" 2>/dev/null)
	p=$(eval "$pinned ./bench/halfgig 0 pin" 2>/dev/null)
	printf '%-10s %12s %14s %14s %12s %14s\n' "$name" "$(value "$r" rss_after_alloc_mb)" \
		"$(value "$r" rss_after_free90_mb)" "$(value "$r" rss_after_free_all_mb)" \
		"$(value "$r" rss_after_wait_mb)" "$(value "$p" rss_after_free_all_mb)"
}
row glibc "" ""
for p in $(./heaplab policies | awk '{print $1}'); do
	[ "$p" = student ] && continue
	# ledger:off: the request ledger's own table would add to the RSS measured
	run="./heaplab run --policy=$p --conf=ledger:off"
	row "$p" "$run --snapshot=$out/$p.dot --" "$run --"
	if command -v dot >/dev/null; then
		dot -Tpng "$out/$p.dot" -o "$out/$p.png" 2>/dev/null || echo "demo: could not render $out/$p.dot" >&2
	fi
done
echo
echo "pinned: all = after free all, with one 16-byte block allocated after the half gigabyte still live."
echo "glibc and bins give memory back only from the top of the heap, and that block sits above all the"
echo "others, so it keeps the whole half gigabyte resident where they would otherwise drop to a few MiB;"
echo "pools and sharded free whole pools and pages wherever they are empty, so to them it costs next to nothing."
echo "(slab keeps freed pages until they decay, 10 s by default, pinned or not; bump and firstfit keep"
echo "everything here either way.)"
echo
echo "Heap pictures at exit: $out/<policy>.png (DOT sources beside them)."
echo "Why they differ: book/11-giving-back.md and exercises/01-half-a-gigabyte/."
