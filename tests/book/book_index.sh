#!/bin/sh
# The book's index (book/index-terms.md) is what book/gen_index.sh writes
# from the chapters as they are (a heading renamed, a term used in a new
# section, a glossary entry added: the page must be written again), every
# glossary term has an entry, and every link resolves: a chapter number to
# a page of book/, a section title to a {#id} of a heading in that same
# chapter.
. "${srcdir:-.}/tests/book/book_lib.sh"
book="$top/book"
idx="$book/index-terms.md"
need_page "$idx"
hl_tmpdir book-index

sh "$book/gen_index.sh" "$book" > "$tmp/index.md" || fail "book/gen_index.sh failed"
cmp -s "$tmp/index.md" "$idx" ||
	fail "book/index-terms.md is stale (run: sh book/gen_index.sh > book/index-terms.md); first differences:
$(diff "$idx" "$tmp/index.md" | head -6 | cut -c1-160)"

# every glossary term is an entry
for t in $(sed -n 's/^- \*\*\([^*]*\)\*\* — .*/\1/p' "$book/glossary.md" | tr ' ' '~'); do
	t=$(echo "$t" | tr '~' ' ')
	grep -qF -- "- **$t** ([glossary](glossary.md))" "$idx" || fail "the glossary's '$t' has no entry"
done

# every link of the page points to a page of book/
for l in $(grep -o '](\([^)#]*\))' "$idx" | sed 's/^](//; s/)$//' | sort -u); do
	[ -e "$book/$l" ] || fail "the index links to $l, which does not exist"
done
# every section link follows its chapter's link and names a heading's id
# of that chapter (a section without an id links to the chapter itself)
pairs=$(grep -o '\]([0-9][0-9]-[^)]*\.md) \[[^]]*\]([^)]*)' "$idx" | sed 's/^](\([^)]*\)) \[.*\](\([^)]*\))$/\1 \2/' | sort -u)
sections=$(echo "$pairs" | grep -c .)
while read -r page target; do
	case $target in
	"#"*) grep -q "^#.*{${target}} *\$" "$book/$page" ||
		fail "the index links to $target in $page, where no heading has that id" ;;
	"$page") ;;
	*) fail "a section of $page links to $target" ;;
	esac
done <<PAIRS
$pairs
PAIRS
# links that are neither: a chapter number with no section after it
orphans=$(grep -o '](\(#[^)]*\))' "$idx" | sort -u | wc -l)
[ "$orphans" -le "$sections" ] || fail "$((orphans - sections)) anchor links follow no chapter link"
[ "$sections" -ge 100 ] || fail "only $sections sections linked"
[ $bad -eq 0 ] && echo "index: $(grep -c '^- \*\*' "$idx") terms, $sections sections linked, up to date"
exit $bad
