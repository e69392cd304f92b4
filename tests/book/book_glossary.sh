#!/bin/sh
# The glossary (book/glossary.md) defines each term once, in alphabetical
# order (case ignored), names at least the words every chapter leans on, and
# every chapter, the course path and every lab README link to it.
. "${srcdir:-.}/tests/book/book_lib.sh"
g="$top/book/glossary.md"
need_page "$g"
terms=$(sed -n 's/^- \*\*\([^*]*\)\*\* — .*/\1/p' "$g")
n=$(echo "$terms" | grep -c .)
dups=$(echo "$terms" | tr 'A-Z' 'a-z' | sort | uniq -d)
[ -z "$dups" ] || fail "defined more than once: $(echo $dups)"
echo "$terms" | tr 'A-Z' 'a-z' | LC_ALL=C sort -c 2> /dev/null || {
	first=$(echo "$terms" | tr 'A-Z' 'a-z' | LC_ALL=C sort -c 2>&1 | sed 's/.*disorder: //')
	fail "not in alphabetical order (first out of place: $first)"
}
# an entry is one bullet: a term line not in the expected form is a typo
other=$(grep -c '^- \*\*' "$g")
[ "$other" -eq "$n" ] || fail "$((other - n)) entries are not written '- **term** — definition'"
for w in chunk span slab extent page segment pool arena bin class tcache dirty \
	 muzzy retained top fastbin "unsorted bin" thread_free local_free usedpools \
	 decay purge trim commit RSS; do
	echo "$terms" | grep -qx -- "$w" || fail "the glossary does not define '$w'"
done
for f in "$top"/book/[0-9][0-9]-*.md "$top"/book/course-path.md; do
	case "$f" in */00-index.md) continue ;; esac
	grep -q '](glossary\.md)' "$f" || fail "${f##*/} does not link to the glossary"
done
for f in "$top"/exercises/[0-9][0-9]-*/README.md; do
	grep -q '](\.\./\.\./book/glossary\.md)' "$f" || fail "${f#$top/} does not link to the glossary"
done
[ "$n" -ge 40 ] || fail "only $n terms"
[ $bad -eq 0 ] && echo "glossary: $n terms, each once, in order; every chapter and lab links to it"
exit $bad
