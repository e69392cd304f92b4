#!/usr/bin/env bash
# The stable facts of the book's chapter 18 (containers, the allocators'
# own reports, transparent huge pages), measured here with bench/reports,
# never timed.  Three parts; a part the machine cannot run prints a SKIP
# line, and the test is skipped (77) only when no part ran.
#
#  cgroup    in a fresh cgroup v1 memory group limited to 100 MiB,
#            `reports hold 64` (64 MiB freed into glibc's heap, then 64 MiB
#            more mapped) dies of SIGKILL, and the group's failcnt and its
#            oom_kill counter grow; with malloc_trim(0) between the two it
#            exits 0 and oom_kill stays 0; a 40 MiB file written from the
#            group is charged to it as cache (memory.stat)
#  reports   each real allocator's report holds the fields the chapter
#            explains: glibc's malloc_stats, mallinfo2 and malloc_info;
#            jemalloc's stats_print; mimalloc's MIMALLOC_SHOW_STATS;
#            gperftools' MALLOCSTATS; CPython's sys._debugmallocstats();
#            smaps_rollup; heaplab run --stats for each family's model
#  thp       under [madvise], a written 64 MiB block has AnonHugePages only
#            when it was advised MADV_HUGEPAGE (or glibc's hugetlb tunable
#            asked for it)
# Every cgroup it makes is removed when it exits, also on failure.
set -u
. "$(dirname "$0")/../lib.sh"
hl_skip_sanitized "bench/reports runs under preloaded allocators; a -fsanitize=$hl_sanitizer build owns malloc"
program="$build/bench/reports"
[ -x "$program" ] || { echo "FAIL: $program is not built"; exit 1; }
hl_tmpdir book-reports
groups=()
cleanup() {
	local g
	for g in "${groups[@]}"; do rmdir "$g" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap "exit 130" INT
trap "exit 143" TERM
bad=0 ran=0
fail() { echo "FAIL: $*"; bad=1; }
lib=/usr/lib/x86_64-linux-gnu

# ---- cgroup ----
# a new group under this process's own memory group, so a limit above it
# still holds
memroot=/sys/fs/cgroup/memory
parent=$memroot$(sed -n 's/^[0-9]*:memory://p' /proc/self/cgroup 2>/dev/null)
# newgroup NAME: a new group limited to 100 MiB in $g, listed for cleanup
# (not in a $(...) subshell: the list must outlive the call)
newgroup() {
	g="$parent/heaplab-book-$$-$1"
	mkdir "$g" 2>/dev/null || return 1
	groups+=("$g")
	echo $((100 << 20)) > "$g/memory.limit_in_bytes"
}
# in_group GROUP CMD...: CMD in GROUP, its exit status (128 + signal when killed)
in_group() {
	local g=$1
	shift
	bash -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$g" "$@"
}
oom_kills() { sed -n 's/^oom_kill //p' "$1/memory.oom_control"; }
if [ ! -w "$parent/memory.limit_in_bytes" ] || ! newgroup hold; then
	echo "SKIP: cgroup: no writable cgroup v1 memory controller at $parent"
else
	ran=1
	in_group "$g" "$program" hold 64 > "$tmp/hold" 2>&1
	rc=$?
	[ $rc -eq 137 ] || fail "reports hold 64 under a 100 MiB limit: exit $rc, not killed by SIGKILL (137)"
	[ "$(cat "$g/memory.failcnt")" -gt 0 ] || fail "the group's failcnt stayed 0"
	[ "$(oom_kills "$g")" -ge 1 ] || fail "the group's oom_kill counter stayed 0"
	[ $bad -eq 0 ] && echo "ok: held freed memory, 64 + 64 MiB under a 100 MiB limit: SIGKILL, failcnt $(cat "$g/memory.failcnt"), oom_kill $(oom_kills "$g")"
	if newgroup trim; then
		in_group "$g" "$program" hold 64 trim > "$tmp/trim" 2>&1
		rc=$?
		if [ $rc -ne 0 ] || ! grep -q '^done' "$tmp/trim"; then
			fail "reports hold 64 trim under a 100 MiB limit: exit $rc"
		elif [ "$(oom_kills "$g")" -ne 0 ]; then
			fail "malloc_trim, yet oom_kill $(oom_kills "$g")"
		else
			echo "ok: with malloc_trim(0) between, the same program lives: oom_kill 0"
		fi
	else
		fail "could not make a second group"
	fi
	if newgroup cache; then
		in_group "$g" "$program" cache 40 "$tmp/file" > "$tmp/cache" 2>&1 || fail "reports cache 40: exit $?"
		cache=$(sed -n 's/^cache //p' "$g/memory.stat")
		[ "${cache:-0}" -ge $((40 << 20)) ] && [ "$(cat "$g/memory.usage_in_bytes")" -ge $((40 << 20)) ] ||
			fail "40 MiB written from the group, yet cache ${cache:-?} and usage $(cat "$g/memory.usage_in_bytes")"
		[ $bad -eq 0 ] && echo "ok: a 40 MiB file written from the group: cache $cache bytes, charged to it"
		rm -f "$tmp/file"
	else
		fail "could not make a third group"
	fi
fi

# ---- reports ----
# has FILE NAME PATTERN...: every PATTERN (an extended regular expression) in FILE
has() {
	local f=$1 name=$2 p
	shift 2
	for p in "$@"; do
		grep -Eq "$p" "$f" || fail "$name's report has no line matching '$p'"
	done
}
ran=1
"$program" stats libc > "$tmp/glibc" 2>&1 || fail "reports stats libc: exit $?"
has "$tmp/glibc" glibc '^Rss: +[0-9]+ kB' '^AnonHugePages: ' '^mallinfo2: arena [1-9]' \
	'^system bytes += +[1-9]' '^in use bytes += +[1-9]' '^max mmap regions = +2$' '^<malloc version="1">' '<system type="current" size="[1-9]'
if [ -f "$lib/libjemalloc.so.2" ]; then
	LD_PRELOAD=$lib/libjemalloc.so.2 MALLOC_CONF=stats_print:true "$program" stats > "$tmp/je" 2>&1 || fail "jemalloc: exit $?"
	has "$tmp/je" jemalloc '^Allocated: [0-9]+, active: [0-9]+, metadata: [0-9]+ \(n_thp [0-9]+\), resident: [0-9]+, mapped: [0-9]+, retained: [0-9]+' \
		'opt.dirty_decay_ms: ' 'opt.thp: ' 'opt.metadata_thp: ' '^ +dirty: '
else
	echo "SKIP: jemalloc's report: $lib/libjemalloc.so.2 is not installed"
fi
if [ -f "$lib/libmimalloc.so.2" ]; then
	LD_PRELOAD=$lib/libmimalloc.so.2 MIMALLOC_SHOW_STATS=1 "$program" stats > "$tmp/mi" 2>&1 || fail "mimalloc: exit $?"
	has "$tmp/mi" mimalloc '^ *reserved: ' '^ *committed: ' '^ *touched: ' '^ *segments: ' 'process: .*rss: .*commit: '
else
	echo "SKIP: mimalloc's report: $lib/libmimalloc.so.2 is not installed"
fi
if [ -f "$lib/libtcmalloc_minimal.so.4" ]; then
	LD_PRELOAD=$lib/libtcmalloc_minimal.so.4 MALLOCSTATS=1 "$program" stats > "$tmp/tc" 2>&1 || fail "gperftools: exit $?"
	has "$tmp/tc" gperftools 'Bytes in use by application' 'Bytes in page heap freelist' 'Bytes in thread cache freelists' \
		'Bytes released to OS' 'Actual memory used'
	# its malloc_stats is the same report; mallinfo2 is glibc's, which
	# knows nothing of tcmalloc's heap (gperftools 2.10 has no mallinfo2)
	LD_PRELOAD=$lib/libtcmalloc_minimal.so.4 "$program" stats libc > "$tmp/tc2" 2>&1 || fail "gperftools, libc: exit $?"
	has "$tmp/tc2" "gperftools' malloc_stats" 'Bytes in use by application' '^mallinfo2: arena 0 uordblks 0 '
else
	echo "SKIP: gperftools' report: $lib/libtcmalloc_minimal.so.4 is not installed"
fi
if command -v python3 > /dev/null; then
	python3 -c 'import sys; a = [bytes(60) for _ in range(10000)]; del a[::2]; sys._debugmallocstats()' > "$tmp/py" 2>&1 ||
		fail "CPython: exit $?"
	has "$tmp/py" CPython '^# arenas allocated current += +[1-9]' '^# bytes in allocated blocks += ' \
		'^# bytes in available blocks += ' 'unused pool[s] \* [0-9]+ bytes'
else
	echo "SKIP: CPython's report: python3 is not installed"
fi
# heaplab's own, for the model of each family (heaplab policies --families:
# "POLICY FAMILY [OPTIONS]"), with the family's options
[ -n "$(hl_families)" ] || echo "SKIP: heaplab run --stats: no model of a real allocator is compiled in"
while read -r p family opts; do
	[ -n "$p" ] || continue   # (none: the here-document's one empty line)
	conf=()
	[ -z "$opts" ] || conf=(--conf="$opts")
	"$heaplab" run --policy="$p" "${conf[@]}" --stats -- "$program" stats > "$tmp/hl-$p" 2>&1 ||
		fail "heaplab run --policy=$p (the $family model): exit $?"
	has "$tmp/hl-$p" "heaplab's $p" '^live_requested_bytes: 9[0-9]{5}$' '^committed_bytes: [1-9]' '^resident_bytes: [1-9]' '^reserved_bytes: [1-9]'
done <<EOF
$(hl_families)
EOF
[ $bad -eq 0 ] && echo "ok: every report holds the lines the chapter explains"

# ---- thp ----
thp=$(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)
case "$thp" in
*'[madvise]'*)
	ran=1
	huge() { sed -n 's/^AnonHugePages: *\([0-9]*\) kB/\1/p' "$1"; }
	"$program" thp 64 none > "$tmp/none" && "$program" thp 64 advise > "$tmp/advise" &&
		GLIBC_TUNABLES=glibc.malloc.hugetlb=1 "$program" thp 64 malloc > "$tmp/tunable" || fail "reports thp: exit $?"
	[ "$(huge "$tmp/none")" = 0 ] || fail "under [madvise], an unadvised block has AnonHugePages $(huge "$tmp/none") kB"
	[ "$(huge "$tmp/advise")" -gt 0 ] 2>/dev/null || fail "a block advised MADV_HUGEPAGE has no AnonHugePages"
	[ "$(huge "$tmp/tunable")" -gt 0 ] 2>/dev/null || fail "glibc.malloc.hugetlb=1: the 64 MiB block has no AnonHugePages"
	[ $bad -eq 0 ] && echo "ok: [madvise]: AnonHugePages 0 kB unadvised, $(huge "$tmp/advise") kB advised, $(huge "$tmp/tunable") kB with glibc.malloc.hugetlb=1"
	;;
*) echo "SKIP: thp: transparent_hugepage/enabled is '${thp:-absent}', not [madvise]" ;;
esac

[ $ran -eq 1 ] || hl_skip "no part could run here"
exit $bad
