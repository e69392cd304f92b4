#!/bin/sh
# gen_examples.sh HEAPLAB OUTDIR: the worked examples of chapters 1-8,
# written by heaplab itself while make doc runs, into OUTDIR/NAME.txt.
# Each chapter includes its files with \verbinclude, so every address,
# size, list and count the text walks through is what this build's code
# does; tests/book/book_examples.sh checks the hand calculations of chapters
# 3, 4, 6, 7 and 8 against the same output.  Each file starts with the
# command that made it.
# A policy that is not compiled in leaves its file saying so.
# bins is pinned to version:2.43 where the chapter describes glibc 2.43 (16
# chunks a tcache bin, no fastbins); unpinned it follows the running glibc.
set -eu
heaplab=$1
out=$2
src=$(cd "$(dirname "$0")" && pwd)
has() { "$heaplab" policies | awk '{print $1}' | grep -qx "$1"; }

# explain NAME POLICY CONF TRACE [FIRST [LAST]]: replay --explain of a
# trace of book/traces, keeping ops FIRST..LAST (default: all)
explain() {
	name=$1 policy=$2 conf=$3 trace=$4 first=${5:-1} last=${6:-${5:-999999}}
	set -- --policy="$policy"
	[ "$conf" = - ] || set -- "$@" --conf="$conf"
	{
		echo "\$ heaplab replay $* --repeat 0 --explain book/traces/$trace"
		if [ "$first" = "$last" ]; then echo "  (op $first of the output)"
		elif [ "$first" != 1 ] || [ "$last" != 999999 ]; then echo "  (ops $first to $last of the output)"; fi
		if has "$policy"; then
			"$heaplab" replay "$@" --repeat 0 --explain "$src/traces/$trace" |
				awk -v a="$first" -v b="$last" '
					/^op [0-9]+ / { on = ($2 + 0 >= a && $2 + 0 <= b) }
					/^[^ ]/ && !/^op / { on = 0 }
					on'
		else
			echo "($policy is not compiled into this build)"
		fi
	} >>"$out/$name.txt"
}
# sizes NAME POLICY MAX: the policy's ladder up to MAX bytes
sizes() {
	{
		echo "\$ heaplab sizes --policy=$2 --max $3"
		if has "$2"; then "$heaplab" sizes --policy="$2" --max "$3"; else echo "($2 is not compiled into this build)"; fi
	} >>"$out/$1.txt"
}
# stats NAME POLICY CONF TRACE KEY...: the named statistics after the trace
stats() {
	name=$1 policy=$2 conf=$3 trace=$4
	shift 4
	keys=$(echo "$*" | tr ' ' '|')
	set -- --policy="$policy"
	[ "$conf" = - ] || set -- "$@" --conf="$conf"
	{
		echo "\$ heaplab replay $* --repeat 0 --stats book/traces/$trace   (first $(echo "$keys" | sed 's/|/, /g'))"
		if has "$policy"; then
			"$heaplab" replay "$@" --repeat 0 --stats "$src/traces/$trace" |
				awk -v k="^ *($keys):" '$0 ~ k && !seen[$1]++ { sub(/^ +/, ""); print }'
		else
			echo "($policy is not compiled into this build)"
		fi
	} >>"$out/$name.txt"
}

rm -f "$out"/ch0[1-8]-ex-*.txt
# chapter 1: one call through the layers; the three numbers of one heap
# under four policies
explain ch01-ex-first-call firstfit fit:first explain.rep 1 1
for p in bump firstfit bins slab; do
	c=-; [ "$p" = bins ] && c=version:2.43
	stats ch01-ex-numbers "$p" "$c" layers.rep peak_requested_bytes live_requested_bytes committed_bytes resident_bytes
done
# chapter 2: the top chunk trimmed or kept; the threshold that moves
explain ch02-ex-top-trimmed bins version:2.43 top-200k.rep 20 21
explain ch02-ex-top-kept bins version:2.43,trim_threshold:64M top-200k.rep 20 21
explain ch02-ex-big-twice bins version:2.43 big-twice.rep
# chapter 3: bump pointer arithmetic
explain ch03-ex-bump bump - bump-arith.rep
explain ch03-ex-align bump - bump-align.rep 2 3
# chapter 4: the holes, then one request under each fit
explain ch04-ex-holes firstfit fit:first,order:address fits.rep 1 9
for fit in first next best worst; do
	explain ch04-ex-fits firstfit fit:$fit,order:address fits.rep 10
done
explain ch04-ex-fifo firstfit fit:first,order:fifo fits.rep 10
# chapter 5: two ladders, and the same requests on each
sizes ch05-ex-ladder-bins bins 200
sizes ch05-ex-ladder-slab slab 1100
sizes ch05-ex-ladder-pools pools 128
explain ch05-ex-classes-bins bins version:2.43 classes.rep 2 7
explain ch05-ex-classes-slab slab tcache:off classes.rep 2 7
# chapter 5: the power-of-two ladder, split and merged by the buddy system
sizes ch05-ex-ladder-buddy buddy 1100
explain ch05-ex-buddy buddy max_order:12 buddy.rep
# chapter 6: the four cases of coalescing
explain ch06-ex-coalesce bins version:2.43,tcache_count:0 coalesce.rep 7 12
# chapter 7: the order in which freed chunks come back
explain ch07-ex-order bins version:2.43,tcache_count:2 tcache-order.rep 9 16
# chapter 8: emptied slabs and a freed large extent, kept dirty or purged
explain ch08-ex-decay slab tcache:off decay.rep 10 18
explain ch08-ex-purge slab tcache:off,dirty_decay_ms:0 decay.rep 14 14
stats ch08-ex-decay-stats slab tcache:off decay.rep dirty_bytes muzzy_bytes resident_bytes purged_bytes
stats ch08-ex-decay-stats slab tcache:off,dirty_decay_ms:0 decay.rep dirty_bytes muzzy_bytes resident_bytes purged_bytes
