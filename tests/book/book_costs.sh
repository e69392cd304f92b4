#!/bin/sh
# The counted facts of the book's cost model (chapter 17), from
# bench/costs run on this machine: orders and ratios of instruction counts
# (callgrind, user space: the count of 2N operations less the count of N,
# over N) and minor-fault counts (getrusage).  Nothing here is timed.
#   - a first write to a fresh anonymous page makes one minor fault, and so
#     does a write after madvise(MADV_DONTNEED); a tcache hit, a system
#     call and an untouched mmap make none;
#   - glibc's pair costs more instructions with its tcache off
#     (GLIBC_TUNABLES=glibc.malloc.tcache_count=0), by a ratio between 1.2
#     and 3;
#   - a tcache hit takes no lock: the pair costs the same (within two
#     instructions) once another thread has run, while with the tcache off
#     it then costs ten or more instructions more (glibc skips the arena's
#     lock only while the process has one thread);
#   - every real allocator installed makes its pair in fewer instructions
#     than glibc without its tcache;
#   - heaplab's bins (through the preload library) costs more without its
#     tcache, as glibc 2.36 and as glibc 2.43, and more as 2.43 (no
#     fastbins: each free merges) than as 2.36, by a ratio to its own
#     tcache hit between 2 and 10 as 2.43.
# The ratios are computed here from the counts; the chapter's figures are
# not read.  bench/costs.sh prints the same counts, with the times.
. "${srcdir:-.}/tests/book/book_lib.sh"
costs=$build/bench/costs
[ -x "$costs" ] || { echo "FAIL: no $costs (make bench/costs)"; exit 1; }
hl_skip_sanitized "the real allocators are preloaded into bench/costs, which a -fsanitize=$hl_sanitizer build's malloc rules out"
hl_tmpdir book-costs
libdir=/usr/lib/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
off=glibc.malloc.tcache_count=0
N=20000

# bad input: one clear line, exit 2
for args in "count nosuch 10" "count pair 0" "time x" "count bounce 10" ""; do
	# shellcheck disable=SC2086
	err=$("$costs" $args 2>&1 >/dev/null); rc=$?
	[ "$rc" -eq 2 ] && [ "$(echo "$err" | grep -c .)" -eq 1 ] ||
		fail "costs $args: exit $rc, not 2 with one line: $err"
done

# minor faults of N operations of case $1
faults() { "$costs" count "$1" "$N" | awk '{ print $(NF - 2) }'; }
for c in fault dontneed; do
	f=$(faults $c)
	[ "$f" -ge "$N" ] && [ "$f" -le $((N + 64)) ] || fail "$c: $f minor faults for $N pages, not one a page"
done
for c in pair syscall mmap; do
	f=$(faults $c)
	[ "$f" -le 64 ] || fail "$c: $f minor faults in $N operations, not none"
done

command -v valgrind >/dev/null 2>&1 || hl_skip "valgrind is not installed: the faults checked, the instructions not"

# instructions of `costs count CASE n` with the environment in "$@"
count() {
	c=$1 n=$2
	shift 2
	env "$@" valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "$costs" count "$c" "$n" >/dev/null 2>&1 ||
		{ echo "FAIL: costs count $c $n failed under valgrind ($*)" >&2; echo 0; return; }
	awk '/^(summary|totals):/ { print $2; exit }' "$tmp/cg.out"
}
# instructions an operation of case $1, environment in "$@"
per_op() {
	c=$1
	shift
	a=$(count "$c" "$N" "$@") b=$(count "$c" $((N * 2)) "$@")
	awk -v a="$a" -v b="$b" -v n="$N" 'BEGIN { printf "%.1f\n", (b - a) / n }'
}
# "$1 > $2" as numbers, and $1/$2 within [$3, $4]
more() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a > b) }'; }
within() { awk -v a="$1" -v b="$2" -v lo="$3" -v hi="$4" 'BEGIN { r = a / b; exit !(b > 0 && r >= lo && r <= hi) }'; }

on=$(per_op pair)
none=$(per_op pair GLIBC_TUNABLES=$off)
echo "glibc: a tcache hit $on instructions a pair, the tcache off $none"
more "$none" "$on" || fail "glibc's pair with the tcache off ($none) is not dearer than a tcache hit ($on)"
within "$none" "$on" 1.2 3 || fail "glibc's tcache off against on: $none / $on, outside 1.2 to 3"

on_mt=$(per_op pair-mt)
none_mt=$(per_op pair-mt GLIBC_TUNABLES=$off)
echo "glibc once a thread has run: a tcache hit $on_mt, the tcache off $none_mt"
# (a lock and its release are tens of instructions; the loop's counts
# differ by a fraction of one)
awk -v a="$on_mt" -v b="$on" 'BEGIN { d = a - b; exit !(d < 2 && d > -2) }' ||
	fail "a tcache hit costs $on_mt instructions once a thread has run, $on before: it should take no lock"
more "$none_mt" "$(awk -v b="$none" 'BEGIN { print b + 10 }')" || fail "the tcache off costs $none_mt once a thread has run, not 10 more than $none (the arena's lock)"

for a in jemalloc:libjemalloc.so.2 mimalloc:libmimalloc.so.2 tcmalloc:libtcmalloc_minimal.so.4; do
	so=$libdir/${a#*:}
	[ -r "$so" ] || { echo "${a%%:*} not installed, left out"; continue; }
	v=$(per_op pair LD_PRELOAD="$so")
	echo "${a%%:*}: $v instructions a pair"
	more "$none" "$v" || fail "${a%%:*}'s pair ($v) is not cheaper than glibc's without its tcache ($none)"
done

if [ -r "$preload" ] && hl_compiled bins; then
	for v in 2.36 2.43; do
		b_on=$(per_op pair LD_PRELOAD="$preload" HEAPLAB_POLICY=bins HEAPLAB_CONF=version:$v)
		b_off=$(per_op pair LD_PRELOAD="$preload" HEAPLAB_POLICY=bins HEAPLAB_CONF=version:$v,tcache_count:0)
		echo "heaplab bins as glibc $v: $b_on instructions a pair, $b_off with tcache_count:0"
		more "$b_off" "$b_on" || fail "bins as glibc $v: tcache_count:0 ($b_off) is not dearer than its tcache ($b_on)"
		eval "off_$(echo $v | tr . _)=$b_off on_$(echo $v | tr . _)=$b_on"
	done
	more "$off_2_43" "$off_2_36" || fail "bins without its tcache: as 2.43 ($off_2_43) not dearer than as 2.36 ($off_2_36), though 2.43 merges every free"
	within "$off_2_43" "$on_2_43" 2 10 || fail "bins as 2.43, tcache off against on: $off_2_43 / $on_2_43, outside 2 to 10"
else
	echo "heaplab's preload library or bins is not built: the model left out"
fi
[ $bad -eq 0 ] && echo "costs: the faults one a page, the tcache's orders and ratios as counted"
exit $bad
