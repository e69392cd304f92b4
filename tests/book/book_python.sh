#!/bin/sh
# The Python service of the book's chapter 12 ("A Python service, step by
# step"), run again on the real CPython 3.11 and glibc here, against the
# figures the chapter prints.  The chapter's blocks of output are read from
# book/12-measuring.md; the program, bench/diagnose/service.py, is run now:
#   - step 1 and 2 (`service.py count`, on CPython 3.11.2, the chapter's;
#     another 3.11 skips this part): the counts of tracked objects and
#     of unreachable objects are the chapter's exactly, pymalloc's
#     allocated blocks within 1 %; the resident set rises with the
#     requests and the collection leaves most of it;
#   - rung 4 (`service.py trim`): malloc_trim(0) gives back more than half
#     of what the collection left;
#   - step 3 (`service.py trace`): tracemalloc's first line is the line of
#     service.py that builds a body (found in the program, not in the
#     book), with the chapter's count, and the chapter names that line;
#   - step 4: `heaplab diagnose` covers at least 90 % of the measured peak,
#     within 3 points of the chapter's figure, and ranks first a jemalloc
#     row with dirty_decay_ms:0, whose real setting preloads jemalloc;
#     measured with bench/diagnose/peak_final.py, that setting ends below
#     half of glibc's final RSS, with a higher peak, and PYTHONMALLOC=malloc
#     on glibc ends no lower than pymalloc on glibc (orders only: RSS
#     figures move from run to run).
# Nothing is timed.
. "${srcdir:-.}/tests/book/book_lib.sh"
ch="$top/book/12-measuring.md"
svc="$top/bench/diagnose/service.py"
pf="$top/bench/diagnose/peak_final.py"
py=/usr/bin/python3
need_page "$ch"
[ -s "$svc" ] || { echo "FAIL: $svc is missing"; exit 1; }
[ -x "$py" ] || hl_skip "no $py"
"$py" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' || hl_skip "$py is not CPython 3.11, the version the chapter ran"
hl_skip_sanitized "the program runs under the real allocators and heaplab's recorder, which a -fsanitize=$hl_sanitizer build rules out"
hl_tmpdir book-python
unset PYTHONMALLOC PYTHONDEVMODE PYTHONTRACEMALLOC PYTHONSTARTUP LD_PRELOAD MALLOC_CONF GLIBC_TUNABLES MALLOC_ARENA_MAX

# the chapter's block of output after the line "$ ... service.py MODE"
book_block() {
	awk -v cmd="bench/diagnose/service.py $1" '
		on && /^ *$/ { exit }
		on { sub(/^    /, ""); print }
		$0 ~ "^    \\$ " && index($0, cmd) && substr($0, length($0) - length(cmd) + 1) == cmd { on = 1 }' "$ch"
}
# field $2 (a counter's name: "gc objects", "allocated blocks", "rss") of
# the line of moment $1 in the output on stdin
field() { awk -v m="$1" -v f="$2" 'index($0, m) == 1 { s = substr($0, index($0, f) + length(f)); split(s, w, " "); print w[1]; exit }'; }

# steps 1 and 2
book_block count > "$tmp/book.count"
[ -s "$tmp/book.count" ] || fail "the chapter shows no output of service.py count"
"$py" "$svc" count > "$tmp/count" || fail "service.py count failed"
# the counts are those of the chapter's CPython, Debian's 3.11.2: another
# release of 3.11 starts with other objects
"$py" -c 'import sys; sys.exit(sys.version_info[:3] != (3, 11, 2))' && counts=exact || counts=skip
[ $counts = exact ] || echo "SKIP (part): $py is not CPython 3.11.2, whose object counts the chapter prints"
for m in before "after requests" "after collect"; do
	[ $counts = exact ] || break
	want=$(field "$m" "gc objects" < "$tmp/book.count") got=$(field "$m" "gc objects" < "$tmp/count")
	[ -n "$want" ] && [ "$want" = "$got" ] || fail "$m: the chapter has $want gc objects, the program $got"
	want=$(field "$m" "allocated blocks" < "$tmp/book.count") got=$(field "$m" "allocated blocks" < "$tmp/count")
	[ -n "$want" ] && [ -n "$got" ] && [ $(( (got - want) * 100 )) -le "$want" ] && [ $(( (want - got) * 100 )) -le "$want" ] ||
		fail "$m: the chapter has $want allocated blocks, the program $got (more than 1 % apart)"
done
want=$(sed -n 's/^gc.collect() found \([0-9]*\) .*/\1/p' "$tmp/book.count")
got=$(sed -n 's/^gc.collect() found \([0-9]*\) .*/\1/p' "$tmp/count")
if [ $counts = exact ]; then
	[ -n "$want" ] && [ "$want" = "$got" ] || fail "gc.collect() found $got unreachable objects, the chapter says $want"
	grep -q "found $(echo "$got" | sed 's/\(...\)$/,\1/')\($\| \)" "$ch" || fail "the chapter's prose does not give the $got unreachable objects"
fi
r0=$(field before rss < "$tmp/count") r1=$(field "after requests" rss < "$tmp/count") r2=$(field "after collect" rss < "$tmp/count")
awk -v a="$r0" -v b="$r1" -v c="$r2" 'BEGIN { exit !(b > 5 * a && c > b / 2 && c < b) }' ||
	fail "rss before, after the requests, after the collection: $r0 $r1 $r2 MiB (want the requests to multiply it, the collection to leave more than half)"

# rung 4: a trim
"$py" "$svc" trim > "$tmp/trim" || fail "service.py trim failed"
c=$(field "after collect" rss < "$tmp/trim") t=$(field "after trim" rss < "$tmp/trim")
awk -v c="$c" -v t="$t" 'BEGIN { exit !(t > 0 && t < c / 2) }' || fail "malloc_trim(0): rss $c -> $t MiB, not below half"

# step 3: tracemalloc's top line
line=$(grep -n "^ *body = " "$svc" | cut -d: -f1)
[ -n "$line" ] || fail "service.py has no 'body = ' line"
"$py" "$svc" trace > "$tmp/trace" || fail "service.py trace failed"
top=$(head -1 "$tmp/trace")
case $top in
*"/service.py:$line: "*) ;;
*) fail "tracemalloc's top line is not service.py:$line (the body): $top" ;;
esac
got=$(echo "$top" | sed -n 's/.*, count=\([0-9]*\) .*/\1/p')
btop=$(book_block trace | head -1)
want=$(echo "$btop" | sed -n 's/.*, count=\([0-9]*\) .*/\1/p')
[ -n "$got" ] && [ "$got" = "$want" ] || fail "tracemalloc's top line counts $got blocks, the chapter's $want"
case $btop in
*"/service.py:$line: "*) ;;
*) fail "the chapter's top line is not service.py:$line: $btop" ;;
esac
grep -q "^Line $line builds a record's body" "$ch" || fail "the chapter does not name line $line as the body's"

# step 4: heaplab diagnose, then the recommendation for real
missing=$(hl_unmodelled glibc jemalloc pymalloc)
if [ -z "$missing" ]; then
	"$heaplab" diagnose -- "$py" "$svc" > "$tmp/diag" 2>&1 || fail "heaplab diagnose failed: $(tail -3 "$tmp/diag")"
	cov=$(sed -n 's/^coverage: .* accounts for \([0-9.]*\) % of the measured peak.*/\1/p' "$tmp/diag")
	bcov=$(sed -n 's/^    coverage: .* accounts for \([0-9.]*\) % of the measured peak.*/\1/p' "$ch")
	[ -n "$cov" ] && [ -n "$bcov" ] && awk -v a="$cov" -v b="$bcov" 'BEGIN { d = a - b; exit !(a >= 90 && d <= 3 && d >= -3) }' ||
		fail "coverage of the peak: $cov % now, $bcov % in the chapter (want 90 % or more, within 3 points)"
	first=$(grep -E '^  1 +[a-z]+ ' "$tmp/diag")
	case $first in
	*dirty_decay_ms*libjemalloc*MALLOC_CONF=dirty_decay_ms:0*) ;;
	*) fail "diagnose ranks first: $first (the chapter: jemalloc with dirty_decay_ms:0)" ;;
	esac
else
	echo "SKIP (part): no model of $missing compiled in: no diagnose"
fi
jemalloc=/usr/lib/$(gcc -print-multiarch 2> /dev/null || echo x86_64-linux-gnu)/libjemalloc.so.2
if [ -e "$jemalloc" ]; then
	set -- $("$py" "$pf" -- "$py" "$svc"); gp=${1:-0} gf=${2:-0}
	set -- $("$py" "$pf" PYTHONMALLOC=malloc -- "$py" "$svc"); mf=${2:-0}
	set -- $("$py" "$pf" LD_PRELOAD="$jemalloc" MALLOC_CONF=dirty_decay_ms:0 -- "$py" "$svc"); jp=${1:-0} jf=${2:-0}
	awk -v gp="$gp" -v gf="$gf" -v jp="$jp" -v jf="$jf" 'BEGIN { exit !(gf > 0 && jf > 0 && jf < gf / 2 && jp > gp) }' ||
		fail "peak, final RSS: glibc $gp $gf, jemalloc with dirty_decay_ms:0 $jp $jf (want jemalloc's final below half of glibc's, its peak above)"
	awk -v gf="$gf" -v mf="$mf" 'BEGIN { exit !(mf >= gf) }' || fail "final RSS: PYTHONMALLOC=malloc $mf MiB, below pymalloc's $gf"
else
	echo "SKIP (part): no $jemalloc"
fi
[ $bad -eq 0 ] && echo "python: chapter 12's service: counts as printed ($got kept bodies, line $line), trim, diagnose's first row and the real jemalloc as the chapter says"
exit $bad
