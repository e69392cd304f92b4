#!/bin/sh
# The book's chapter 7, "glibc after 2.36": bench/glibcver on the real
# glibc (2.36 here) and on bins as 2.36, 2.42 and 2.43.
#   Measured on glibc 2.36 (the values are what that glibc printed here):
#   - 100 freed 48-byte chunks: 7 go to the tcache, 93 to a fastbin, and
#     mallinfo2 says smblks 93, fsmblks 4464 (93 x 48); malloc_info writes
#     the fastbin's size row and a "fast" total in the heap and overall;
#   - mallopt(M_MXFAST, 0) returns 1 and so does GLIBC_TUNABLES=
#     glibc.malloc.mxfast=0: no fastbin chunk, the fast total 0;
#     mallopt(M_MXFAST, 1000) returns 0 (above 160, MAX_FAST_SIZE);
#   - GLIBC_TUNABLES=glibc.malloc.tcache_max=131072 changes nothing: a freed
#     100,016-byte chunk stays in the bins (fordblks), as without it;
#   - bins as 2.36 prints exactly what glibc 2.36 prints, in all of these.
#   Read in glibc's malloc/malloc.c (the glibc-2.42 tag; for 2.43 the
#   bminor/glibc mirror's master of 2026-01-20, days before the release),
#   not measured, and checked on the model:
#   - 2.43: mallinfo2's smblks and fsmblks are 0, malloc_info has no
#     "fast" total, mallopt(M_MXFAST, any) returns 1 and changes nothing;
#   - 2.42: tcache_max above 100,016 caches the freed large chunk (it
#     counts as in use), the default does not; tcache_max 100000 (chunk
#     100,016) does not cache it at 2.42 (size < nb), does at 2.43 (nb + 1).
. "${srcdir:-.}/tests/book/book_lib.sh"
prog=$build/bench/glibcver
[ -x "$prog" ] || { echo "FAIL: no $prog (make bench/glibcver)"; exit 1; }
hl_skip_sanitized "bench/glibcver runs under heaplab run, whose preloaded malloc a -fsanitize=$hl_sanitizer build rules out"
hl_need_models glibc
glibc=$(hl_model_of glibc)
hl_tmpdir book-glibc
unset GLIBC_TUNABLES MALLOC_ARENA_MAX

# bad input: one line, exit 2
for args in "" "fast mxfast x" "nosuch"; do
	# shellcheck disable=SC2086
	err=$("$prog" $args 2>&1 > /dev/null); rc=$?
	[ "$rc" -eq 2 ] && [ "$(echo "$err" | grep -c .)" -eq 1 ] || fail "glibcver $args: exit $rc, not 2 with one line: $err"
done

model() { v=$1; shift; "$heaplab" run --policy="$glibc" --conf="$v" -- "$prog" "$@" 2> /dev/null; }
# the value after the word $1 on the mallinfo2 line
field() { awk -v w="$1" '$1 == "mallinfo2:" { for (i = 2; i < NF; i++) if ($i == w) print $(i + 1) }'; }

if [ "$(getconf GNU_LIBC_VERSION 2> /dev/null)" = "glibc 2.36" ]; then
	"$prog" fast > "$tmp/fast"
	[ "$(field smblks < "$tmp/fast")" = 93 ] && [ "$(field fsmblks < "$tmp/fast")" = 4464 ] ||
		fail "glibc 2.36: $(head -1 "$tmp/fast") (want smblks 93, fsmblks 4464)"
	[ "$(grep -c '<total type="fast" count="93" size="4464"/>' "$tmp/fast")" = 2 ] ||
		fail "glibc 2.36: malloc_info has not the fast total 93 / 4464 in its heap and overall"
	grep -q '<size from="33" to="48" total="4464" count="93"/>' "$tmp/fast" || fail "glibc 2.36: malloc_info has no fastbin row for 48-byte chunks"
	"$prog" fast mxfast 0 > "$tmp/mx0"
	head -1 "$tmp/mx0" | grep -qx 'mallopt(M_MXFAST, 0) returned 1' && [ "$(field smblks < "$tmp/mx0")" = 0 ] &&
		grep -q '<total type="fast" count="0" size="0"/>' "$tmp/mx0" || fail "glibc 2.36, M_MXFAST 0: $(head -2 "$tmp/mx0" | tr '\n' ' ')"
	GLIBC_TUNABLES=glibc.malloc.mxfast=0 "$prog" fast > "$tmp/tun0"
	[ "$(field smblks < "$tmp/tun0")" = 0 ] || fail "glibc 2.36, glibc.malloc.mxfast=0: $(head -1 "$tmp/tun0")"
	"$prog" fast mxfast 1000 | head -1 | grep -qx 'mallopt(M_MXFAST, 1000) returned 0' || fail "glibc 2.36: mallopt(M_MXFAST, 1000) did not return 0"
	"$prog" large > "$tmp/large"
	GLIBC_TUNABLES=glibc.malloc.tcache_max=131072 "$prog" large > "$tmp/large-tun"
	[ "$(field fordblks < "$tmp/large")" -ge 100016 ] && cmp -s "$tmp/large" "$tmp/large-tun" ||
		fail "glibc 2.36, tcache_max 131072: $(cat "$tmp/large-tun") against $(cat "$tmp/large") (want the same, the chunk free)"
	# the model of 2.36 prints what 2.36 printed
	for args in fast "fast mxfast 0" "fast mxfast 1000" large; do
		# shellcheck disable=SC2086
		"$prog" $args > "$tmp/real"
		# shellcheck disable=SC2086
		model version:2.36 $args > "$tmp/model"
		cmp -s "$tmp/real" "$tmp/model" || fail "$glibc as 2.36, glibcver $args: not what glibc 2.36 prints: $(diff "$tmp/real" "$tmp/model" | head -4 | tr '\n' ' ')"
	done
else
	echo "SKIP (part): the glibc here is not 2.36, whose figures this test holds"
fi

# the model of the sources
model version:2.43 fast > "$tmp/m43"
[ "$(field smblks < "$tmp/m43")" = 0 ] && [ "$(field fsmblks < "$tmp/m43")" = 0 ] || fail "$glibc as 2.43: $(head -1 "$tmp/m43")"
grep -q 'type="fast"' "$tmp/m43" && fail "$glibc as 2.43: malloc_info writes a fast total"
grep -q '</malloc>' "$tmp/m43" || fail "$glibc as 2.43: malloc_info wrote no XML"
for n in 0 1000; do
	model version:2.43 fast mxfast $n > "$tmp/m43-$n"
	head -1 "$tmp/m43-$n" | grep -qx "mallopt(M_MXFAST, $n) returned 1" || fail "$glibc as 2.43: mallopt(M_MXFAST, $n): $(head -1 "$tmp/m43-$n")"
	tail -n +2 "$tmp/m43-$n" | cmp -s - "$tmp/m43" || fail "$glibc as 2.43: mallopt(M_MXFAST, $n) changed the heap"
done
cached() { [ "$(model "$1" large | field uordblks)" -ge 100016 ]; }
cached version:2.42 && fail "$glibc as 2.42, default tcache_max: the 100,016-byte chunk is cached"
cached version:2.42,tcache_max:131072 || fail "$glibc as 2.42, tcache_max 131072: the 100,016-byte chunk is not cached"
cached version:2.36,tcache_max:131072 && fail "$glibc as 2.36, tcache_max 131072: the chunk is cached (2.36 refuses above 1032)"
cached version:2.42,tcache_max:100000 && fail "$glibc as 2.42, tcache_max 100000: the 100,016-byte chunk is cached (the tag's test is size < nb)"
cached version:2.43,tcache_max:100000 || fail "$glibc as 2.43, tcache_max 100000: the 100,016-byte chunk is not cached (2.43's limit is nb + 1)"
[ $bad -eq 0 ] && echo "glibc after 2.36: fastbin reports and M_MXFAST as glibc 2.36 measured, $glibc as 2.36 the same, as 2.42 and 2.43 as their sources say"
exit $bad
