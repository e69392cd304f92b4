#!/bin/sh
# Each policy chapter walks book/traces/explain.rep with `replay --explain`
# output made at build time: book/gen_explain.sh writes one file
# per chapter, and the chapter includes it.  Checked here: every chapter
# of gen_explain.sh's table includes its file; the script writes, for each
# compiled-in policy of the table, a file with the command and one entry
# per op of the trace (for another, one saying it is not compiled in); and a path the trace is built to show appears where
# glibc takes it: with tcache_count:0 a freed 40-byte chunk goes to the
# unsorted bin and the next request of that size takes it from there.
set -u
. "$(dirname "$0")/../lib.sh"
src=${srcdir:-.}
hl_tmpdir book-explain
fail() { echo "FAIL: $*"; exit 1; }

table=$(sed -n '/^TABLE$/q; /<<.TABLE.$/,$p' "$src/book/gen_explain.sh" | sed 1d)
[ -n "$table" ] || fail "no table in book/gen_explain.sh"
ops=$(grep -c '^[arfcmts] ' "$src/book/traces/explain.rep")
sh "$src/book/gen_explain.sh" ./heaplab "$tmp" || fail "gen_explain.sh failed"
made=0
echo "$table" | while read -r chapter policy conf; do
	md=$(ls "$src"/book/"$chapter"-*.md) || fail "no chapter $chapter"
	grep -q "^\\\\verbinclude ch$chapter-explain.txt\$" "$md" || fail "$md does not include ch$chapter-explain.txt"
	f="$tmp/ch$chapter-explain.txt"
	if ! hl_compiled "$policy"; then
		grep -qx "($policy is not compiled into this build)" "$f" || fail "$f does not say $policy is not compiled in"
		echo "chapter $chapter: $policy is not compiled in"
		continue
	fi
	[ -s "$f" ] || fail "$f was not written"
	head -1 "$f" | grep -q "^\$ heaplab replay --policy=$policy" || fail "$f does not start with its command"
	n=$(grep -c '^op [0-9]* (line' "$f")
	[ "$n" -eq "$ops" ] || fail "$f explains $n ops of $ops"
	echo "chapter $chapter: $policy, $n ops explained"
done || exit 1
if hl_compiled bins; then
	f="$tmp/ch06-explain.txt"
	sed -n '/^op 4 /,/^op 5 /p' "$f" | grep -q 'unsorted bin' || fail "ch06: the freed chunk is not put in the unsorted bin"
	sed -n '/^op 5 /,/^op 6 /p' "$f" | grep -q 'exact fit: unsorted bin' ||
		fail "ch06: the next 40-byte request does not take it from the unsorted bin"
fi
echo "PASS"
