#!/bin/sh
# gen_explain.sh HEAPLAB OUTDIR: for each policy chapter, the steps its
# policy takes on book/traces/explain.rep, as `heaplab replay --explain`
# prints them, into OUTDIR/chNN-explain.txt.  make doc runs it before
# Doxygen, and each chapter includes its file (\verbinclude), so the text
# shows what this build's code does; tests/book/book_explain.sh checks the
# chapters and the files.  A policy that is not compiled in leaves its
# file saying so (as book/gen_examples.sh does), so every chapter's include
# is there in any build.
# One line per chapter: chapter, policy, configuration ("-": defaults).
# bins is pinned to version:2.43 where the chapter describes glibc 2.43 (16
# chunks a tcache bin, no fastbins); unpinned it follows the running glibc.
set -eu
heaplab=$1
out=$2
src=$(cd "$(dirname "$0")" && pwd)
trace="$src/traces/explain.rep"
while read -r chapter policy conf; do
	case "$chapter" in '#'*|'') continue ;; esac
	set -- --policy="$policy"
	[ "$conf" = - ] || set -- "$@" --conf="$conf"
	{
		echo "\$ heaplab replay $* --repeat 0 --explain book/traces/explain.rep"
		if "$heaplab" policies | awk '{print $1}' | grep -qx "$policy"; then
			"$heaplab" replay "$@" --repeat 0 --explain "$trace" | sed "s|$trace|book/traces/explain.rep|"
		else
			echo "($policy is not compiled into this build)"
		fi
	} >"$out/ch$chapter-explain.txt"
done <<'TABLE'
03 bump -
04 firstfit -
06 bins version:2.43,tcache_count:0
07 bins version:2.43
08 slab -
09 sharded -
10 pools -
16 percpu -
TABLE
