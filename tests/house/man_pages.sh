#!/bin/sh
# The man pages stay true to the code:
#  - groff renders heaplab(1) and hl_heap_new(3) without a warning;
#  - every command `heaplab --help` lists has its section (.SS) in
#    heaplab(1), and every --option in each command's usage lines is named
#    in the page;
#  - every function of hl_heap_new(3)'s SYNOPSIS is declared in heaplab.h;
#  - its EXAMPLES program compiles against this build's library, runs and
#    prints the committed bytes that `heaplab replay --stats` reports for
#    the same malloc and free.
set -u
. "$(dirname "$0")/../lib.sh"
glibc=$(hl_model_of glibc)   # the policy that models glibc (bins here)
src=${srcdir:-.}
hl_tmpdir man-pages
fail() { echo "FAIL: $*"; exit 1; }
page1="$src/man/heaplab.1"
page3="$src/man/hl_heap_new.3"
command -v groff >/dev/null 2>&1 || hl_skip "no groff"
for p in "$page1" "$page3"; do
	groff -man -ww -z "$p" 2>"$tmp/warn" || fail "groff failed on $p"
	[ ! -s "$tmp/warn" ] || { cat "$tmp/warn"; fail "groff warned about $p"; }
done
# the page's text with roff's escaped minus signs as plain dashes
sed 's/\\-/-/g' "$page1" >"$tmp/page1"
commands=$(./heaplab --help | awk '/^commands:/ { on = 1; next } on && !NF { exit } on { print $1 }')
[ -n "$commands" ] || fail "heaplab --help lists no command"
n=0
for c in $commands; do
	grep -q "^\.SS $c\b" "$tmp/page1" || fail "heaplab(1) has no section for '$c'"
	# the usage lines: up to the first line that does not start a usage
	./heaplab "$c" --help 2>&1 | awk '/^usage:/ { on = 1 } on && !/^(usage:| )/ { exit } on' |
		grep -o -- '--[a-z][a-z-]*' | sort -u >"$tmp/opts"
	while read -r o; do
		[ "$o" = --help ] && continue
		grep -q -- "$o" "$tmp/page1" || fail "heaplab(1) does not name '$c $o'"
		n=$((n + 1))
	done <"$tmp/opts"
done
echo "heaplab(1): $(echo "$commands" | wc -l) commands, $n options named"
# every function of the SYNOPSIS is declared in heaplab.h
for f in $(grep -o 'hl_[a-z_]*(' "$page3" | tr -d '(' | sort -u); do
	grep -q "HL_API .*\b$f(" "$src/core/heaplab.h" || fail "hl_heap_new(3) names $f, which heaplab.h does not declare"
done
# the example: compiled, run, and its figure compared with replay --stats
awk '/^\.SH EXAMPLES/ { on = 1; next } on && /^\.nf/ { code = 1; next } code && /^\.fi/ { exit } code' "$page3" |
	sed 's/\\e/\\/g' >"$tmp/example.c"
grep -q hl_heap_new "$tmp/example.c" || fail "no example program in hl_heap_new(3)"
[ -n "$glibc" ] || hl_skip "the example needs the model of glibc"
${CC:-cc} -I"$src/core" -o "$tmp/example" "$tmp/example.c" -L.libs -lheaplab -Wl,-rpath,"$(pwd)/.libs" ${hl_sanitizer:+-fsanitize=$hl_sanitizer} ||
	fail "the example does not compile"
"$tmp/example" >"$tmp/out" || fail "the example failed"
printf 'a 0 100\nf 0\n' >"$tmp/one.rep"
want=$(./heaplab replay --policy=${glibc} --conf=tcache_count:7 --repeat 0 --stats "$tmp/one.rep" |
	awk '$1 == "committed_bytes:" { print $2 }')
grep -qx "$want bytes committed" "$tmp/out" || fail "the example printed '$(cat "$tmp/out")', replay says $want"
echo "PASS: hl_heap_new(3): the example prints $(cat "$tmp/out")"
