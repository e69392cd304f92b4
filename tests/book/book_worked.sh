#!/bin/sh
# Chapters 9 to 14 are built around worked examples made at build time
# (book/gen_worked.sh) and embed the stepper of their trace.  Checked here:
# every line of the script's table is used by its chapter (a text file
# included with \verbinclude, a stepper page in an iframe); the script
# writes every file of the table for the compiled-in policies, each with
# the command that made it; and what the chapters teach from those files
# is what the policies do: a remote free is collected by the owner's slow
# path (9), a pool leaves usedpools when full and comes back at its first
# free (10), the last free lets the break come down (11), the diagnosis
# charges most of the heap to holes (12), the double free is named by every
# policy's debug mode and in glibc's words by bins (13), the comparison of
# chapter 11 has a row per compiled-in allocator model (policies.list's
# `all`, so a policy added has one), chapter 14's one per policy of its
# worked example.  Each of those chapters also has 2,500 words or
# more, common mistakes, a prediction to run, and exercises graded
# Warm-up, Core, Challenge with the warm-ups answered (instructor only).
set -u
. "$(dirname "$0")/../lib.sh"
src=${srcdir:-.}
hl_tmpdir book-worked
bad=0
fail() { echo "FAIL: $*"; bad=1; }

table=$(sed -n '/^TABLE$/q; /<<.TABLE.$/,$p' "$src/book/gen_worked.sh" | sed 1d)
[ -n "$table" ] || { echo "FAIL: no table in book/gen_worked.sh"; exit 1; }
sh "$src/book/gen_worked.sh" ./heaplab "$tmp" || { echo "FAIL: gen_worked.sh failed"; exit 1; }

# file a table line makes, and how its chapter must use it
made() {
	case $2 in
	explain) echo "ch$1-worked.txt" ;;
	step) echo "ch$1-stepper.html" ;;
	*) echo "ch$1-$2.txt" ;;
	esac
}
n=0
while read -r chapter kind trace policy conf ranges; do
	md=$(ls "$src"/book/"$chapter"-*.md 2>/dev/null) || { fail "no chapter $chapter"; continue; }
	f=$(made "$chapter" "$kind")
	[ -f "$src/book/traces/$trace" ] || fail "$trace (chapter $chapter) is not in book/traces"
	grep -q "$trace" "$src/book/local.mk" || fail "$trace is not distributed (book/local.mk)"
	case $kind in
	step) grep -q "<iframe class=\"hl-stepper\" src=\"$f\"" "$md" || fail "${md##*/} does not embed $f" ;;
	*) grep -q "^\\\\verbinclude $f\$" "$md" || fail "${md##*/} does not include $f" ;;
	esac
	case $kind in explain | step | stats)
		hl_compiled "$policy" || { echo "chapter $chapter: $policy is not compiled in"; continue; } ;;
	esac
	[ -s "$tmp/$f" ] || { fail "$f was not written"; continue; }
	case $kind in
	step) grep -qi '<html' "$tmp/$f" || fail "$f is not a page" ;;
	misuse) head -1 "$tmp/$f" | grep -q '^\$ heaplab replay ' || fail "$f does not start with its command" ;;
	*) head -1 "$tmp/$f" | grep -q '^\$ heaplab ' || fail "$f does not start with its command" ;;
	esac
	n=$((n + 1))
done <<EOF
$table
EOF

# each chapter is a chapter: its words, and the sections every teaching
# chapter ends with (the mistakes, a prediction to run, graded exercises
# with their warm-ups answered in the instructor's edition)
for md in "$src"/book/09-*.md "$src"/book/1[0-4]-*.md; do
	name=${md##*/}
	words=$(wc -w <"$md")
	[ "$words" -ge 2500 ] || fail "$name: $words words, below 2,500"
	heads=$(grep '^## ' "$md")
	for h in 'Common mistakes' 'Predict, then run' 'Exercises'; do
		echo "$heads" | grep -qx "## $h" || fail "$name: no '## $h'"
	done
	levels=$(sed -n '/^## Exercises$/,/^## /p' "$md" | grep -c '^\*\*\(Warm-up\|Core\|Challenge\)\.\*\*$')
	[ "$levels" -eq 3 ] || fail "$name: exercises graded in $levels of 3 levels"
	sed -n '/^\*\*Warm-up\.\*\*$/,/^\*\*Core\.\*\*$/p' "$md" | grep -q '^ *\*\*Answer\.\*\*' ||
		fail "$name: no warm-up answered for the instructor"
done

# op N's lines of a --explain file
op() { sed -n "/^op $2 /,/^op $(($2 + 1)) /p" "$1"; }

if hl_compiled sharded; then
	f=$tmp/ch09-worked.txt
	[ "$(grep -c 'remote free: ' "$f")" -eq 2 ] || fail "ch09: thread 1's two frees are not remote frees"
	op "$f" 11 | grep -q 'collected: thread_free' || fail "ch09: op 11 does not collect thread_free"
	op "$f" 11 | grep -q 'collected: free list empty: local_free' || fail "ch09: op 11 does not swap in local_free"
	op "$f" 12 | grep -q 'direct table' || fail "ch09: op 12 is not a fast-path pop"
fi
if hl_compiled pools; then
	f=$tmp/ch10-worked.txt
	op "$f" 31 | grep -q 'pool full: leaves usedpools' || fail "ch10: the 31st block does not fill the pool"
	op "$f" 33 | grep -q 'pool was full: first on usedpools' || fail "ch10: the free does not put the pool back"
	op "$f" 35 | grep -q 'pool empty' || fail "ch10: the second pool does not empty"
	op "$f" 36 | grep -q 'fallback allocator (above 512 bytes)' || fail "ch10: 513 bytes does not go to the fallback"
	grep -q '^\.\.\. (ops 3 to 29 left out)$' "$f" || fail "ch10: ops 3 to 29 are not left out in one line"
fi
if hl_compiled bins; then
	f=$tmp/ch11-worked.txt
	op "$f" 17 | grep -q 'unsorted bin' || fail "ch11: the freed chunks are not kept below the last block"
	op "$f" 18 | grep -q 'shrink: systrim' || fail "ch11: the last free does not trim"
	grep -q '^bloat_factor: ' "$tmp/ch12-stats.txt" || fail "ch12: no bloat factor"
	grep -q '^  hole ' "$tmp/ch12-diagnose.txt" || fail "ch12: the diagnosis names no holes"
	grep -q '^bins     debug:off aborted: heaplab: bins: free(): double free detected in tcache 2 ' "$tmp/ch13-misuse.txt" ||
		fail "ch13: bins does not abort in glibc's words"
fi
for p in bins slab sharded pools percpu; do
	hl_compiled "$p" || continue
	grep -q "^$p  *debug:on  aborted: heaplab: $p: free of a freed block (double free) .* during op 5 'f 1' " "$tmp/ch13-misuse.txt" ||
		fail "ch13: $p's debug mode does not name the double free at op 5"
done
for p in $(hl_models); do
	grep -q "^$p  *[0-9.]*% " "$tmp/ch11-compare.txt" || fail "ch11: no row for $p"
done
for p in bump firstfit bins slab sharded pools percpu; do
	hl_compiled "$p" || continue
	grep -q "^$p  *[0-9.]*% " "$tmp/ch14-compare.txt" || fail "ch14: no row for $p"
done
[ $bad -eq 0 ] && echo "PASS: $n worked examples and steppers, each used by its chapter"
exit $bad
