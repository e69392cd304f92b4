#!/usr/bin/env bash
# The main demo: every policy on "500,000 x 1 KiB, free 90%, free the rest".
# Prints an RSS table (MiB above the program's own start) and writes one heap
# picture per policy, taken at exit, into BUILD/demo/.  The last column runs
# the same program with one 16-byte block allocated after the half gigabyte
# and kept live (bench/halfgig's "pin"): the lesson of a late allocation.
#
# Under the table, one line per allocator says what it kept and why: the
# figures come from this run (the table, and each policy's statistics at
# exit, `heaplab run --stats`, saved as BUILD/demo/POLICY.stats and, for
# the run with the late block, POLICY.pinned.stats); the rule
# named is the one the policy models, and each line is printed only when
# the statistics show that rule at work (otherwise it says what it measured).
# A progress line on stderr precedes every step that takes more than a second.
set -uo pipefail
build=$(cd "${1:-.}" && pwd)
cd "$build"
say() { echo "demo: $*" >&2; }
say "building bench/halfgig"
make -s bench/halfgig >/dev/null
out="$build/demo"
mkdir -p "$out"
value() { echo "$1" | awk -v k="$2" '$1 == k {print $2}'; }
# statval FILE KEY: the first "KEY: value" of a --stats file (0 when absent)
statval() { awk -v k="$2:" '$1 == k { print $2; found = 1; exit } END { if (!found) print 0 }' "$1" 2>/dev/null || echo 0; }
mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
# more A B: A > B + 10 (MiB), i.e. clearly more
more() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a > b + 10) }'; }

names=(glibc)
for p in $(./heaplab policies | awk '{print $1}'); do
	[ "$p" = student ] || names+=("$p")
done
declare -A alloc free90 freeall wait pinned
k=0
for name in "${names[@]}"; do
	k=$((k + 1))
	say "[$k/${#names[@]}] $name: the workload, then again with a late block kept live"
	if [ "$name" = glibc ]; then
		r=$(./bench/halfgig 1500 2>/dev/null)
		p=$(./bench/halfgig 0 pin 2>/dev/null)
	else
		# ledger:off: the request ledger's own table would add to the RSS measured
		run="./heaplab run --policy=$name --conf=ledger:off"
		r=$($run --stats --snapshot="$out/$name.dot" -- ./bench/halfgig 1500 2>"$out/$name.stats")
		p=$($run --stats -- ./bench/halfgig 0 pin 2>"$out/$name.pinned.stats")
		if command -v dot >/dev/null; then
			say "[$k/${#names[@]}] $name: drawing $out/$name.png"
			dot -Tpng "$out/$name.dot" -o "$out/$name.png" 2>/dev/null || echo "demo: could not render $out/$name.dot" >&2
		fi
	fi
	alloc[$name]=$(value "$r" rss_after_alloc_mb)
	free90[$name]=$(value "$r" rss_after_free90_mb)
	freeall[$name]=$(value "$r" rss_after_free_all_mb)
	wait[$name]=$(value "$r" rss_after_wait_mb)
	pinned[$name]=$(value "$p" rss_after_free_all_mb)
done

echo
echo "Resident memory (RSS) in MiB above the program's start, 500,000 blocks of 1 KiB:"
printf '%-10s %12s %15s %15s %13s %13s\n' allocator "after alloc" "after free 90%" "after free all" "1.5 s later" "pinned: all"
printf '%-10s %12s %15s %15s %13s %13s\n' "" MiB MiB MiB MiB MiB
for name in "${names[@]}"; do
	printf '%-10s %12s %15s %15s %13s %13s\n' "$name" "${alloc[$name]}" "${free90[$name]}" "${freeall[$name]}" \
		"${wait[$name]}" "${pinned[$name]}"
done
echo
echo "pinned: all = after free all, with one 16-byte block allocated after the half gigabyte still live."
echo

# why NAME: one line on what NAME kept after freeing everything, and the rule
why() {
	local n=$1 s="$out/$1.stats" a=${alloc[$1]} f=${freeall[$1]} w=${wait[$1]} pin=${pinned[$1]}
	local kept="kept $f of $a MiB after freeing all, $w 1.5 s later, $pin with the late block"
	case "$n" in
	glibc | bins)
		local who="glibc 2.36" t=""
		[ "$n" = bins ] && who="bins (its model)" && t=" (brk calls: $(statval "$s" brk_calls))"
		if ! more "$f" 20 && more "$pin" "$f"; then
			echo "$n: $kept."; echo "    $who gives memory back only from the top of the heap$t: once all is free the heap is one"
			echo "    free top chunk and is trimmed; the late block sits above the others, so the top ends below it and"
			echo "    the whole half gigabyte stays."
			return
		fi
		;;
	pools)
		local fb thr arenas
		fb=$(statval "$s" fallback_mallocs) thr=$(statval "$s" small_block_threshold)
		arenas=$(statval "$out/pools.pinned.stats" arenas_allocated_total)
		if [ "$fb" -ge 500000 ] 2>/dev/null; then
			echo "$n: $kept."; echo "    1 KiB is above pymalloc's $thr-byte threshold, so all $fb mallocs went to its fallback,"
			echo "    bins, which trims its top as bins does (see bins)."
			if ! more "$pin" 20 && [ "$arenas" -ge 1 ] 2>/dev/null; then
				echo "    The late 16-byte block is small: pools serves it from a pool in its own arena ($arenas arena made),"
				echo "    outside bins' heap, so it pins nothing there, unlike under bins."
			fi
			return
		fi
		;;
	slab)
		local dirty decay
		dirty=$(statval "$s" dirty_bytes) decay=$(./heaplab options slab | awk '$1 == "dirty_decay_ms" { print $3 }')
		if more "$f" 20; then
			echo "$n: $kept."; echo "    jemalloc's freed slabs become dirty pages ($(mib "$dirty") MiB dirty at exit), returned only as"
			echo "    dirty_decay_ms ($decay ms by default) passes: 1.5 s is too soon, pinned or not."
			return
		fi
		;;
	sharded)
		local freed cached purges
		freed=$(statval "$s" freed) cached=$(statval "$s" cached) purges=$(statval "$s" cache_purges)
		if more "$f" 20 && [ "$purges" = 0 ] && [ "$cached" -gt 0 ] 2>/dev/null; then
			echo "$n: $kept."; echo "    Every page was freed ($freed pages), and each empty 32 MiB segment was parked in"
			echo "    mimalloc 2.0.9's segment cache ($cached parked), still committed: a parked segment is purged only when"
			echo "    another one is parked after its delay, and none was ($purges purges), so freeing whole pages does not"
			echo "    shrink the RSS here, late block or not."
			return
		fi
		;;
	percpu)
		local phfree rel rate
		phfree=$(statval "$s" pageheap_free_bytes) rel=$(statval "$s" released_bytes) rate=$(statval "$s" release_rate)
		if more "$f" 20 && [ "$rate" = 0 ]; then
			echo "$n: $kept."; echo "    Freed objects go back through the caches to spans, and empty spans to the page heap"
			echo "    ($(mib "$phfree") MiB free in it at exit), still committed: with release_rate 0 (the model's default) the"
			echo "    page heap returns pages only when asked (TCMalloc: ReleaseMemoryToSystem, or its background"
			echo "    thread), and this program does not ask ($(mib "$rel") MiB released)."
			return
		fi
		;;
	firstfit)
		if more "$f" 20; then
			echo "$n: $kept."; echo "    Freed blocks go on its free list and are coalesced, but the textbook allocator never gives"
			echo "    memory back to the kernel ($(statval "$s" munmap_calls) munmap calls)."
			return
		fi
		;;
	bump)
		if more "$f" 20; then
			echo "$n: $kept."; echo "    free does nothing in a region allocator: only a reset would give the memory back."
			return
		fi
		;;
	esac
	echo "$n: $kept."
}
echo "Why (from this run's figures and each policy's statistics at exit, in $out/<policy>[.pinned].stats):"
for name in "${names[@]}"; do
	why "$name"
done
echo
echo "Heap pictures at exit: $out/<policy>.png (DOT sources beside them)."
echo "More: book/11-giving-back.md and exercises/01-half-a-gigabyte/."
