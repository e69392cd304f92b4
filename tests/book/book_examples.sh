#!/bin/sh
# Chapters 1-8 teach from worked examples generated at build time.  Each chapter: at least MIN_WORDS words in the student's edition; includes at least one file
# that book/gen_explain.sh or book/gen_examples.sh writes, and every file
# it includes is written; embeds its stepper (an <iframe> of
# chNN-stepper.html inside \htmlonly, a page book/gen_steppers.sh writes,
# self-contained); has "Common mistakes", "Predict, then run" and
# "Exercises" graded Warm-up, Core, Challenge.  Then what the prose works
# out by hand is checked against the generated output, with the expected
# values computed here from the traces and the rules the chapters state:
# bump's cursor steps (ch03), best fit's hole (ch04), the merges of each
# free (ch06), the order chunks come back from a two-deep tcache (ch07),
# and decay's dirty bytes purged, not lost (ch08).
. "${srcdir:-.}/tests/book/book_lib.sh"
MIN_WORDS=2500
book="$top/book"
hl_tmpdir book-examples

sh "$book/gen_explain.sh" ./heaplab "$tmp" || fail "gen_explain.sh failed"
sh "$book/gen_examples.sh" ./heaplab "$tmp" || fail "gen_examples.sh failed"
sh "$book/gen_steppers.sh" ./heaplab "$tmp" || fail "gen_steppers.sh failed"
steppers=$(sed -n '/^TABLE$/q; /<<.TABLE.$/,$p' "$book/gen_steppers.sh" | sed 1d)

for n in 01 02 03 04 05 06 07 08; do
	f=$(ls "$book/$n"-*.md 2>/dev/null) || { fail "no chapter $n"; continue; }
	name=${f##*/}
	# words of the student's edition: the instructor's answers aside
	w=$(awk '/^ *\\if instructor$/ { skip = 1 } !skip { print } /^ *\\endif$/ { skip = 0 }' "$f" | wc -w)
	[ "$w" -ge "$MIN_WORDS" ] || fail "$name has $w words (student's edition), fewer than $MIN_WORDS"
	incs=$(sed -n 's/^\\verbinclude \(ch[0-9][0-9]-[a-z0-9-]*\.txt\)$/\1/p' "$f")
	echo "$incs" | grep -q "^ch$n-" || fail "$name includes no generated example of its own"
	for i in $incs; do
		[ -s "$tmp/$i" ] || fail "$name includes $i, which no generator wrote"
	done
	sed -n '/^\\htmlonly$/,/^\\endhtmlonly$/p' "$f" | grep -q "<iframe class=\"hl-stepper\" src=\"ch$n-stepper.html\"" ||
		fail "$name does not embed ch$n-stepper.html in an \\htmlonly block"
	line=$(echo "$steppers" | awk -v n="$n" '$1 == n')
	[ -n "$line" ] || fail "book/gen_steppers.sh has no line for chapter $n"
	set -- $line
	if [ -n "$line" ] && hl_compiled "$2"; then
		[ -s "$tmp/ch$n-stepper.html" ] || fail "gen_steppers.sh did not write ch$n-stepper.html"
		! grep -q '<script[^>]*src=\|<link[^>]*href=' "$tmp/ch$n-stepper.html" ||
			fail "ch$n-stepper.html loads something from outside the page"
	fi
	for h in "Common mistakes" "Predict, then run" "Exercises"; do
		grep -q "^## $h\$" "$f" || fail "$name has no '## $h' section"
	done
	for level in Warm-up Core Challenge; do
		sed -n '/^## Exercises$/,/^## /p' "$f" | grep -q "^\*\*$level\.\*\*\$" ||
			fail "$name's exercises have no $level level"
	done
	echo "chapter $n: $w words, $(echo "$incs" | wc -w) generated examples, stepper embedded"
done

# the ops of one op number N in an explain file
op_lines() { awk -v n="$2" '/^op [0-9]+ / { on = ($2 == n) } on' "$1"; }
round16() { echo $(( ($1 + 15) / 16 * 16 )); }

# ch03: each allocation moves bump's cursor by a 16-byte header plus the
# request rounded up to 16
if hl_compiled bump; then
	want=$(awk '$1 == "a" { print $3 }' "$book/traces/bump-arith.rep" | while read -r n; do
		echo "cursor moved $((16 + $(round16 "$n"))) B"; done)
	got=$(grep -o 'cursor moved [0-9]* B' "$tmp/ch03-ex-bump.txt")
	[ "$want" = "$got" ] || fail "ch03: bump's steps are not 16 + round_up(n, 16): $(echo $got)"
fi
# ch04: best fit takes the smallest freed block that holds the last request
# (blocks are max(48, round_up(n + 16, 16)) bytes)
if hl_compiled firstfit; then
	need=$(round16 $(( $(awk '$1 == "a" { n = $3 } END { print n }' "$book/traces/fits.rep") + 16 )))
	best=$(awk '$1 == "a" { size[$2] = $3 } $1 == "f" { print size[$2] }' "$book/traces/fits.rep" |
		while read -r n; do round16 $((n + 16)); done | awk -v need="$need" '$1 >= need' | sort -n | head -1)
	grep -q "best fit: free block $best B" "$tmp/ch04-ex-fits.txt" ||
		fail "ch04: best fit did not take the $best-byte block for a $need-byte need"
fi
# ch06: with the tcache off, each free merges with each free neighbour
# (blocks side by side in the order allocated; the last block is a live guard)
if hl_compiled bins; then
	nblocks=$(grep -c '^a [0-5] ' "$book/traces/coalesce.rep")
	freed=" " merges=""
	for i in $(awk '$1 == "f" { print $2 }' "$book/traces/coalesce.rep"); do
		want=0
		case "$freed" in *" $((i - 1)) "*) want=$((want + 1)) ;; esac
		[ $((i + 1)) -lt "$nblocks" ] && case "$freed" in *" $((i + 1)) "*) want=$((want + 1)) ;; esac
		freed="$freed$i "
		op=$(grep '^[arfcmts] ' "$book/traces/coalesce.rep" | grep -nx "f $i" | cut -d: -f1)
		got=$(op_lines "$tmp/ch06-ex-coalesce.txt" "$op" | grep -c 'merge: with the')
		[ "$got" -eq "$want" ] || fail "ch06: free of block $i merged $got times, $want free neighbours"
		merges="$merges$want"
	done
	# the trace meets every case: no free neighbour, one, and two
	case "$merges" in *0*1*2*|*0*2*1*|*1*0*2*|*1*2*0*|*2*0*1*|*2*1*0*) ;; *) fail "ch06: the frees do not meet every case ($merges)" ;; esac
	echo "ch06: merges per free $merges"
fi
# ch07: a tcache bin is a stack of 2 (the trace's conf), the unsorted bin a
# queue, a miss refills the stack from the queue: the order blocks come back
if hl_compiled bins; then
	order=$(grep '^[arfcmts] ' "$book/traces/tcache-order.rep" | awk '
		$1 == "a" && $3 == 200 && !($2 in home) { home[$2] = $2 }
		$1 == "f" && $2 in home { if (nt < 2) t[nt++] = $2; else q[nq++] = $2 }
		$1 == "a" && $3 == 200 && $2 >= 4 {
			if (nt == 0) { for (k = 0; k < nq && nt < 2; k++) t[nt++] = q[k]; for (j = 0; k < nq; k++) q[j++] = q[k]; nq = j }
			printf "%s ", t[--nt] }')
	# which of blocks 0-3 each later request got, by address
	full="$tmp/ch07-full.txt"
	./heaplab replay --policy=bins --conf=version:2.43,tcache_count:2 --repeat 0 --explain "$book/traces/tcache-order.rep" >"$full"
	got=""
	for b in 4 5 6 7; do
		a=$(grep -o "a $b 200 -> [^ ]*" "$full" | sed 's/.* -> //')
		for k in 0 1 2 3; do
			[ "$(grep -o "a $k 200 -> [^ ]*" "$full" | sed 's/.* -> //')" = "$a" ] && got="$got$k "
		done
	done
	[ -n "$order" ] && [ "$got" = "$order" ] || fail "ch07: blocks came back in the order '$got', a stack of 2 and a queue give '$order'"
	echo "ch07: blocks come back in the order $order"
	grep -q "a 6 200 -> " "$tmp/ch07-ex-order.txt" || fail "ch07: the included output lacks the refilling request"
fi
# ch08: the bytes left dirty by the default delay are the bytes a zero delay
# purges, and then nothing of them stays resident
if hl_compiled slab; then
	kept=$(awk '/^\$/ { run++ } run == 1 && $1 == "dirty_bytes:" { print $2 }' "$tmp/ch08-ex-decay-stats.txt")
	purged=$(awk '/^\$/ { run++ } run == 2 && $1 == "purged_bytes:" { print $2 }' "$tmp/ch08-ex-decay-stats.txt")
	res=$(awk '/^\$/ { run++ } run == 2 && $1 == "resident_bytes:" { print $2 }' "$tmp/ch08-ex-decay-stats.txt")
	[ -n "$kept" ] && [ "$kept" -gt 0 ] && [ "$kept" = "$purged" ] && [ "$res" = 0 ] ||
		fail "ch08: dirty bytes kept ($kept) are not those purged at once ($purged, resident after: $res)"
fi
[ $bad -eq 0 ] && echo "PASS: chapters 1-8 teach from generated examples and embed their steppers"
exit $bad
