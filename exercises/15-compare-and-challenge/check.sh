#!/bin/sh
# Lab 15: compare, bound, challenge.  On the trace heaplab adversary found
# against slab (traces/adversarial/slab.rep: seven threads in turn, each
# keeping one block of the 65 it allocates), checks what the lab's README
# answers, each figure computed here from heaplab's own output:
#   1. compare: of bins, slab and sharded, sharded holds the most committed
#      bytes for the bound, and slab more than bins;
#   2. lockstep: the columns first differ by the committed rule at the
#      malloc that fills sharded's first page; at the first malloc of every later thread
#      every column commits more; no column ever reuses a freed block;
#   3. challenge: one knob lowers the ratio to the bound (heaplab bound
#      --json) by the factor the README states: slab narenas:1 on slab.rep
#      (committed 2x, resident 2x), bins arena_max:1 on bins.rep (4x),
#      pools pool_size:4K on pools.rep (2x); and no option of sharded
#      (purge_delay:0, segment_cache:off) moves its own trace by a tenth;
#   4. the real allocators agree: MALLOC_ARENA_MAX=1 divides glibc's peak
#      RSS on bins.rep by 4, jemalloc's narenas:1 its RSS on slab.rep by 2
#      (bench/sysreplay --rss; skipped in a sanitizer build, and jemalloc's
#      part where libjemalloc.so.2 is not installed).
#
#   check.sh        (run from the top of a build tree, as make check does)
#
# Exit 0 when every check that could run passed, 1 when one failed, 77
# (automake SKIP) when none could run.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../tests/lib.sh"
traces=$here/../../traces/adversarial
sysreplay=$build/bench/sysreplay
hl_tmpdir lab15
failed=0 checked=0
ok() { checked=$((checked + 1)); echo "check: $*: ok"; }
bad() { checked=$((checked + 1)); failed=1; echo "FAIL: $*"; }
have() { for p in "$@"; do hl_compiled "$p" || { echo "skipped: policy $p is not compiled in (configure --with-policy=all)"; return 1; }; done; }

# ratio JSON POLICY KEY: KEY (committed_x_bound, resident_x_bound) of
# POLICY in the object heaplab bound --json printed
ratio() {
	tr '{' '\n' < "$1" | sed -n "s/^\"policy\":\"$2\".*\"$3\":\([0-9.]*\).*/\1/p"
}
# at_least A B F: A >= F * B
at_least() { awk -v a="$1" -v b="$2" -v f="$3" 'BEGIN { exit !(b > 0 && a >= f * b) }'; }

# 1. compare
if have bins slab sharded; then
	"$heaplab" bound --policy=bins,slab,sharded --json "$traces/slab.rep" > "$tmp/cmp.json" || bad "heaplab bound failed on slab.rep"
	b=$(ratio "$tmp/cmp.json" bins committed_x_bound) s=$(ratio "$tmp/cmp.json" slab committed_x_bound)
	h=$(ratio "$tmp/cmp.json" sharded committed_x_bound)
	echo "slab.rep, committed x bound: bins $b, slab $s, sharded $h"
	if [ -n "$b" ] && at_least "$h" "$s" 1.0001 && at_least "$s" "$b" 1.0001; then
		ok "sharded loses on slab's own trace, then slab, then bins"
	else bad "the order on slab.rep is not sharded > slab > bins ($h, $s, $b)"; fi

# 2. lockstep
	"$heaplab" step --tty --policy=bins,slab,sharded "$traces/slab.rep" < /dev/null > "$tmp/all.txt" || bad "heaplab step --tty failed"
	"$heaplab" step --tty --policy=bins,slab,sharded --diverge=committed "$traces/slab.rep" < /dev/null > "$tmp/com.txt"
	"$heaplab" step --tty --policy=bins,slab,sharded --diverge=reuse "$traces/slab.rep" < /dev/null > "$tmp/reuse.txt"
	# the three first units are within 10 % of each other (132, 128 and
	# 128 KiB), so the first committed divergence is the malloc that fills
	# sharded's first 64 KiB page: the 17th block of 4,000 bytes, as an op
	# number (op N = the N-th line that is not a comment)
	first=$(grep -v '^#' "$traces/slab.rep" | awk '$1 == "a" && ++n == int(65536 / 4000) + 1 { print NR; exit }')
	got=$(awk '$1 ~ /^[0-9]+$/ && $1 > 0 { print $1; exit }' "$tmp/com.txt")
	if [ -n "$first" ] && [ "$got" = "$first" ]; then ok "the first committed divergence is op $got, the 17th malloc (sharded's second page)"
	else bad "the first committed divergence is op '$got', the 17th malloc op $first"; fi
	# each thread after the first: its first malloc (the row after 't N')
	# changes every column's committed bytes (fields 2, 6 and 10 after the
	# row is cut at '|': committed value and unit)
	grown=$(awk -F'|' '
		{ split($1, f, " ") }
		f[1] ~ /^[0-9]+$/ && prev_t && f[3] == "a" {
			n++
			for (c = 2; c <= 4; c++) { split($c, now, " "); split(before[c], was, " ")
				if (now[1] now[2] == was[1] was[2]) { print "op " f[1] " column " c - 1 " commits nothing"; bad++ } }
		}
		f[1] ~ /^[0-9]+$/ { prev_t = (f[3] == "t" && f[4] > 0); for (c = 2; c <= 4; c++) before[c] = $c }
		END { print n " threads, " bad + 0 " without growth" }' "$tmp/all.txt")
	case $grown in
	"6 threads, 0 without growth") ok "every later thread's first malloc commits new memory in all three columns" ;;
	*) bad "the strand: $grown" ;;
	esac
	if grep -q '^0 of [0-9]* ops differ by rule .reuse.' "$tmp/reuse.txt"; then ok "no column reuses a freed block"
	else bad "the reuse rule found rows: $(tail -n 1 "$tmp/reuse.txt")"; fi
fi

# 3. challenge: the knob lowers the ratio by at least the factor given
# knob POLICY TRACE CONF KEY FACTOR
knob() {
	"$heaplab" bound --policy="$1" --json "$traces/$2" > "$tmp/before.json" &&
		"$heaplab" bound --policy="$1" --conf="$3" --json "$traces/$2" > "$tmp/after.json" ||
		{ bad "heaplab bound failed on $2"; return; }
	was=$(ratio "$tmp/before.json" "$1" "$4") now=$(ratio "$tmp/after.json" "$1" "$4")
	echo "$1 on $2, $4: $was, with $3: $now"
	if [ -n "$was" ] && at_least "$was" "$now" "$5"; then ok "$3 divides $1's $4 by $5 or more"
	else bad "$3 does not divide $1's $4 by $5 ($was -> $now)"; fi
}
if have slab; then
	knob slab slab.rep narenas:1 committed_x_bound 2
	knob slab slab.rep narenas:1 resident_x_bound 2
fi
have bins && knob bins bins.rep arena_max:1 committed_x_bound 4
have pools bins && knob pools pools.rep pool_size:4K committed_x_bound 2
if have sharded; then
	"$heaplab" bound --policy=sharded --json "$traces/sharded.rep" > "$tmp/before.json"
	was=$(ratio "$tmp/before.json" sharded committed_x_bound)
	for c in purge_delay:0 segment_cache:off; do
		"$heaplab" bound --policy=sharded --conf=$c --json "$traces/sharded.rep" > "$tmp/after.json"
		now=$(ratio "$tmp/after.json" sharded committed_x_bound)
		if [ -n "$was" ] && at_least "$now" "$was" 0.9; then ok "sharded's $c leaves its trace's ratio within a tenth ($was -> $now)"
		else bad "sharded's $c moved its trace's ratio $was -> $now"; fi
	done
fi

# 4. the real allocators, the same knobs
# rss [ENV...]: peak rss of bench/sysreplay --rss on the trace last given
rss() { env "$@" "$sysreplay" --rss "$trace" | awk 'NR == 2 { print $5 }'; }
if hl_sanitized; then
	echo "skipped: the real allocators (a -fsanitize=$hl_sanitizer build owns malloc)"
elif [ ! -x "$sysreplay" ]; then
	echo "skipped: the real allocators (no $sysreplay: make bench/sysreplay)"
else
	trace=$traces/bins.rep
	was=$(rss) now=$(rss MALLOC_ARENA_MAX=1)
	echo "glibc on bins.rep, peak rss: $was, with MALLOC_ARENA_MAX=1: $now"
	if [ -n "$was" ] && at_least "$was" "$now" 4; then ok "MALLOC_ARENA_MAX=1 divides glibc's peak rss by 4 or more"
	else bad "MALLOC_ARENA_MAX=1 does not divide glibc's peak rss by 4 ($was -> $now)"; fi
	je=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
	if [ -f "$je" ]; then
		trace=$traces/slab.rep
		was=$(rss LD_PRELOAD=$je) now=$(rss LD_PRELOAD=$je MALLOC_CONF=narenas:1)
		echo "jemalloc on slab.rep, peak rss: $was, with MALLOC_CONF=narenas:1: $now"
		if [ -n "$was" ] && at_least "$was" "$now" 2; then ok "narenas:1 divides jemalloc's peak rss by 2 or more"
		else bad "narenas:1 does not divide jemalloc's peak rss by 2 ($was -> $now)"; fi
	else
		echo "skipped: jemalloc (no $je; Debian: apt-get install libjemalloc2)"
	fi
fi

[ $checked -gt 0 ] || hl_skip "nothing could be checked here (configure --with-policy=all)"
[ $failed -eq 0 ] && echo "lab 15: $checked checks passed"
exit $failed
