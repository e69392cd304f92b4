#!/bin/sh
# Lab 14: who sees a heap bug inside your allocator.  Each planted bug of
# bugs.c (overflow, use-after-free, overrun, and a clean control) runs on
# the C library's malloc and on a heaplab heap (the student policy by
# default; LAB_POLICY=NAME for another), under AddressSanitizer (the
# program built with -fsanitize=address: bugs-asan), under valgrind's
# memcheck (the plain program, and heaplab preloaded into it) and under
# heaplab's own debug mode; the table says who reported what.
#
#   check.sh        (run from the top of a build tree, as make check does)
#
# Every cell is compared with what it must be, and the script exits 0
# when all are, 1 when one is not, 77 (automake SKIP) when nothing could
# be checked.  A column whose tool is missing (valgrind not installed, a
# compiler without AddressSanitizer) is skipped with a note; the other
# columns are still checked.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../tests/lib.sh"
hl_skip_sanitized "the lab builds its own AddressSanitizer program and preloads heaplab under valgrind; a -fsanitize=$hl_sanitizer build owns malloc in every program"
bugs=$build/exercises/14-sanitizers/bugs
asan=$build/exercises/14-sanitizers/bugs-asan
[ -x "$bugs" ] || hl_skip "no $bugs (run from the top of the build tree, after make)"
policy=${LAB_POLICY:-student}
hl_compiled "$policy" || hl_skip "policy $policy is not compiled in (configure --with-policy=all,student)"
hl_tmpdir lab14
set -f   # the patterns below are case patterns, not file names
export ASAN_OPTIONS=detect_leaks=0
failed=0 checked=0

# What a run's output says: the first report of a tool, or "silent" when
# the program printed "survived" and nobody complained.
outcome() {
	if grep -q 'ERROR: AddressSanitizer: ' "$1"; then
		echo "asan:$(sed -n 's/.*ERROR: AddressSanitizer: \([A-Za-z-]*\).*/\1/p' "$1" | head -1)"
	elif grep -q '^==[0-9]*== Invalid \(write\|read\) of size' "$1"; then
		echo "memcheck:invalid-$(sed -n 's/^==[0-9]*== Invalid \(write\|read\) of size.*/\1/p' "$1" | head -1)"
	elif grep -q '^heaplab: ' "$1"; then
		echo "heaplab:$(sed -n 's/^heaplab: [^:]*: \(.*\) (0x[0-9a-f]*).*/\1/p' "$1" | head -1 | tr ' ' '-')"
	elif grep -q '^survived ' "$1"; then
		echo silent
	else
		echo "died:$2"
	fi
}

vg() { valgrind -q "$@"; }
has_valgrind=no has_annotations=no has_asan=no
command -v valgrind >/dev/null 2>&1 && has_valgrind=yes
"$bugs" --tools | grep -qx 'valgrind-annotations yes' && has_annotations=yes
[ -x "$asan" ] && "$asan" --tools | grep -qx 'asan yes' && has_asan=yes

# run COLUMN CASE: the command of one cell, its output in $tmp/COLUMN.CASE
run() {
	col=$1 what=$2 out=$tmp/$1.$2
	case $col in
	plain) "$bugs" --policy="$policy" "$what" ;;
	debug) "$bugs" --policy="$policy" --conf=debug:on "$what" ;;
	asan-libc) "$asan" --libc "$what" ;;
	asan) "$asan" --policy="$policy" "$what" ;;
	asan-annotated) "$asan" --policy="$policy" --annotate "$what" ;;
	memcheck-libc) vg "$bugs" --libc "$what" ;;
	memcheck) vg "$bugs" --policy="$policy" "$what" ;;
	memcheck-annotated) vg "$bugs" --policy="$policy" --annotate "$what" ;;
	preload) HEAPLAB_POLICY=$policy HEAPLAB_STATS=1 LD_PRELOAD=$preload vg "$bugs" --libc "$what" ;;
	preload-own) HEAPLAB_POLICY=$policy HEAPLAB_STATS=1 LD_PRELOAD=$preload \
		vg --soname-synonyms=somalloc=nouserintercepts "$bugs" --libc "$what" ;;
	esac >"$out" 2>&1
	outcome "$out" $?
}

# The expected table: column, then the outcome of each case in the order
# of $cases, as shell patterns ("a|b": either).  "died:*" is a death with
# no report (the kernel's SIGSEGV when the memset reaches a page the
# allocator never mapped).  Where an allocator could notice the bug itself
# (its own "heaplab: POLICY: ..." line, as firstfit does for a write into
# a freed block), that is allowed: what is checked is the tool's report,
# or its absence.  Under memcheck with annotations made outside the
# allocator, an allocator that reads or writes its freed blocks (an
# explicit free list) gets reports of its own accesses, even on the clean
# run: allowed there, and shown on firstfit below.
cases="clean overflow use-after-free overrun"
own='silent|heaplab:*'
expected="plain silent $own $own died:*
debug silent heaplab:* heaplab:* died:*
asan-libc silent asan:heap-buffer-overflow asan:heap-use-after-free asan:heap-buffer-overflow
asan silent $own $own asan:SEGV
asan-annotated silent asan:use-after-poison asan:use-after-poison asan:SEGV
memcheck-libc silent memcheck:invalid-write memcheck:invalid-write memcheck:invalid-write
memcheck silent $own $own memcheck:invalid-write
memcheck-annotated silent|memcheck:invalid-* memcheck:invalid-* memcheck:invalid-* memcheck:invalid-*
preload silent memcheck:invalid-write memcheck:invalid-write memcheck:invalid-write
preload-own silent $own $own memcheck:invalid-write"
# matches OUTCOME PATTERNS
matches() {
	for alt in $(echo "$2" | tr '|' ' '); do
		case $1 in $alt) return 0 ;; esac
	done
	return 1
}

printf '%-20s' "$policy"; for c in $cases; do printf ' %-26s' "$c"; done; echo
echo "$expected" | while read -r col want; do
	case $col in
	asan*) [ $has_asan = yes ] || { echo "$col: not run (no AddressSanitizer build of bugs: the compiler has no -fsanitize=address)"; continue; } ;;
	memcheck-annotated) [ $has_valgrind = yes ] && [ $has_annotations = yes ] ||
		{ echo "$col: not run (valgrind is not installed, or <valgrind/memcheck.h> was not when bugs was built)"; continue; } ;;
	memcheck* | preload*) [ $has_valgrind = yes ] || { echo "$col: not run (valgrind is not installed)"; continue; } ;;
	esac
	line=$(printf '%-20s' "$col") wrong=""
	set -- $want
	for c in $cases; do
		got=$(run "$col" "$c")
		if matches "$got" "$1"; then
			line="$line$(printf ' %-26s' "$got")"
		else
			line="$line$(printf ' %-26s' "$got!")"; wrong="$wrong $c (got $got, want $1)"
		fi
		shift
	done
	echo "$line"
	[ -z "$wrong" ] && echo "ok $col" >> "$tmp/verdicts" || echo "FAILED $col:$wrong" >> "$tmp/verdicts"
done

# Under memcheck, a preloaded allocator runs only with nouserintercepts:
# otherwise memcheck replaces its malloc too (HEAPLAB_STATS prints the
# policy's statistics at exit only when heaplab served the program).
if [ $has_valgrind = yes ]; then
	if grep -q "^policy: $policy" "$tmp/preload.clean"; then
		echo "FAILED preload: heaplab served the program under memcheck without nouserintercepts" >> "$tmp/verdicts"
	else echo "ok preload: memcheck replaced heaplab's malloc" >> "$tmp/verdicts"; fi
	if grep -q "^policy: $policy" "$tmp/preload-own.clean"; then
		echo "ok preload-own: heaplab served the program" >> "$tmp/verdicts"
	else echo "FAILED preload-own: heaplab's statistics are missing: it did not serve the program" >> "$tmp/verdicts"; fi
fi
# Annotations made outside the allocator hold only while the allocator
# never touches a block's bytes between a free and the next malloc:
# firstfit keeps its free list's links in freed blocks, and memcheck
# reports its own reads of them on the clean run.
if [ $has_valgrind = yes ] && [ $has_annotations = yes ] && hl_compiled firstfit; then
	vg "$bugs" --policy=firstfit --annotate clean >"$tmp/firstfit.clean" 2>&1
	if grep -q '^==[0-9]*== Invalid read of size' "$tmp/firstfit.clean" &&
		grep -A2 '^==[0-9]*== Invalid read of size' "$tmp/firstfit.clean" | grep -q ' (firstfit_[a-z]*\.c:[0-9]*)'; then
		echo "ok firstfit annotated: memcheck reports firstfit's own reads of its free list ($(grep -c '^==[0-9]*== Invalid read' "$tmp/firstfit.clean") invalid reads on the clean run)" >> "$tmp/verdicts"
	else
		echo "FAILED firstfit annotated: no invalid read inside firstfit's code on the clean run" >> "$tmp/verdicts"
	fi
fi

[ -s "$tmp/verdicts" ] || hl_skip "neither AddressSanitizer nor valgrind could run"
sed 's/^/check: /' "$tmp/verdicts"
grep -q '^FAILED' "$tmp/verdicts" && exit 1
exit 0
