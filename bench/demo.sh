#!/usr/bin/env bash
# The main demo: every policy on "500,000 x 1 KiB, free 90%, free the rest".
# Prints an RSS table (MiB above the program's own start) and writes one heap
# picture per policy, taken at exit, into BUILD/demo/.
set -uo pipefail
build=$(cd "${1:-.}" && pwd)
cd "$build"
make -s bench/halfgig >/dev/null
out="$build/demo"
mkdir -p "$out"
printf '%-10s %12s %14s %14s %14s\n' allocator "after alloc" "after free 90%" "after free all" "after 1.5 s"
row() {
	local name=$1; shift
	local r
	r=$("$@" 2>/dev/null)
	printf '%-10s %12s %14s %14s %14s\n' "$name" \
		"$(echo "$r" | awk '/rss_after_alloc_mb/{print $2}')" "$(echo "$r" | awk '/rss_after_free90_mb/{print $2}')" \
		"$(echo "$r" | awk '/rss_after_free_all_mb/{print $2}')" "$(echo "$r" | awk '/rss_after_wait_mb/{print $2}')"
}
row glibc ./bench/halfgig 1500
for p in $(./heaplab policies | awk '{print $1}'); do
	[ "$p" = student ] && continue
	# ledger:off: the request ledger's own table would add to the RSS measured
	row "$p" ./heaplab run --policy="$p" --conf=ledger:off --snapshot="$out/$p.dot" -- ./bench/halfgig 1500
	if command -v dot >/dev/null; then
		dot -Tpng "$out/$p.dot" -o "$out/$p.png" 2>/dev/null || echo "demo: could not render $out/$p.dot" >&2
	fi
done
echo
echo "Heap pictures at exit: $out/<policy>.png (DOT sources beside them)."
echo "Why they differ: book/11-giving-back.md and exercises/01-half-a-gigabyte/."
