#!/bin/sh
# Writes the book's index (book/index-terms.md) on standard output, from the
# chapters as they are:
#
#   sh book/gen_index.sh [BOOK_DIR] > book/index-terms.md
#
# The terms are every entry of the glossary (book/glossary.md) and the
# names listed below (allocators, policies, knobs, system calls).  A term
# is indexed under the sections (the "## " headings of chapters 1 to 16)
# that explain it: a section whose heading names it, that sets it in bold
# or italics, or that uses it at least three times; at most five sections
# a term, those that use it most, listed in the book's order.  Fenced code,
# the embedded steppers and the instructor's sections (`\if instructor`)
# are not read, so both editions of the book give the same index, and
# neither are the sections every chapter ends with (the common mistakes,
# the predictions, the exercises, the summary, the stepper, and "Where the
# figures come from", which lists the measurements).  A section
# is linked by its heading's {#id}, or, when it has none, by its chapter.
# tests/book/book_index.sh fails when the checked-in page is not this script's
# output, or when one of its links points nowhere.
set -eu
book=${1:-$(dirname "$0")}
[ -s "$book/glossary.md" ] || { echo "gen_index: no glossary in $book" >&2; exit 2; }

# The terms that are not glossary entries: "name|pattern|kind", where the
# pattern is an awk regular expression matched on lowercased text and kind
# is "word" (in prose; a code span naming a policy does not count) or
# "code" (only in a code span that starts with the pattern, or after
# "policy=" or "policies/": a policy's name).
extra='glibc (ptmalloc)|glibc|ptmalloc|word
jemalloc|jemalloc|word
mimalloc|mimalloc|word
tcmalloc, gperftools|tcmalloc|gperftools|word
pymalloc (CPython)|pymalloc|word
musl|musl|word
bump (policy)|bump|code
firstfit (policy)|firstfit|code
bins (policy)|bins|code
slab (policy)|slab|code
sharded (policy)|sharded|code
pools (policy)|pools|code
percpu (policy)|percpu|code
student (policy)|student|code
brk, sbrk|s?brk|word
mmap|mmap|word
munmap|munmap|word
mremap|mremap|word
mprotect|mprotect|word
malloc_trim|malloc_trim|word
mallopt|mallopt|word
MALLOC_ARENA_MAX|malloc_arena_max|word
GLIBC_TUNABLES|glibc_tunables|word
M_MMAP_THRESHOLD|m_mmap_threshold|word
tcache_count|tcache_count|word
MALLOC_CONF|malloc_conf|word
dirty_decay_ms|dirty_decay_ms|word
muzzy_decay_ms|muzzy_decay_ms|word
narenas|narenas|word
PYTHONMALLOC|pythonmalloc|word
LD_PRELOAD|ld_preload|word
first fit, best fit|first fit|best fit|next fit|worst fit|word
internal fragmentation|internal fragmentation|word
external fragmentation|external fragmentation|word
double free|double free|word
use after free|use.after.free|word
heap checker|checker|word
callgrind|callgrind|word
transparent huge pages|transparent huge|thp|word
smaps, smaps_rollup|smaps|word
malloc_stats, malloc_info|malloc_stats|malloc_info|word'

# "name|pattern|kind" lines: the glossary's, then the list above (a name
# may carry several patterns, any of which counts)
terms=$( {
	sed -n 's/^- \*\*\([^*]*\)\*\* — .*/\1/p' "$book/glossary.md" |
		awk '{ p = tolower($0); gsub(/[.]/, "[.]", p); gsub(/ /, "[ -]", p); print $0 "|" p "|gloss" }'
	echo "$extra"
} )

chapters=$(ls "$book"/[0-9][0-9]-*.md | grep -v '/00-')

echo "$terms" | awk -v chapters="$chapters" '
function flush_section() {
	if (sec == "") return
	nsec++
	stext[nsec] = text; shead[nsec] = head; sfile[nsec] = file; sid[nsec] = id
	schap[nsec] = chap
	sec = ""; text = ""
}
# occurrences of regular expression r in s
function count(s, r,   n) {
	n = 0
	while (match(s, r)) { n++; s = substr(s, RSTART + RLENGTH) }
	return n
}
BEGIN { FS = "|" }
{
	nt++; tname[nt] = $1; tkind[nt] = $NF; tpat[nt] = ""
	for (i = 2; i < NF; i++) tpat[nt] = tpat[nt] (i > 2 ? "|" : "") $i
}
END {
	nf = split(chapters, files, "\n")
	for (f = 1; f <= nf; f++) {
		path = files[f]; file = path; sub(/.*\//, "", file)
		chap = file; sub(/-.*/, "", chap); sub(/^0/, "", chap)
		fence = 0; html = 0; depth = 0; sec = ""
		while ((getline line < path) > 0) {
			if (line ~ /^[ \t]*\\if instructor([ \t]|$)/) { depth++; continue }
			if (depth && line ~ /^[ \t]*\\if[ \t]/) { depth++; continue }
			if (depth && line ~ /^[ \t]*\\endif([ \t]|$)/) { depth--; continue }
			if (depth) continue
			if (line ~ /^[ \t]*```/) { fence = !fence; continue }
			if (fence) continue
			if (line ~ /^\\htmlonly/) { html = 1; continue }
			if (line ~ /^\\endhtmlonly/) { html = 0; continue }
			if (html) continue
			if (line ~ /^## /) {
				flush_section()
				head = substr(line, 4); id = ""
				if (match(head, /[ \t]*\{#[A-Za-z0-9_-]+\}[ \t]*$/)) {
					id = substr(head, RSTART, RLENGTH)
					head = substr(head, 1, RSTART - 1)
					sub(/^[ \t]*\{#/, "", id); sub(/\}[ \t]*$/, "", id)
				}
				sec = (head ~ /^(Summary|Exercises|Step through it yourself|Predict, then run|Common mistakes|Where the figures come from)$/) ? "" : head
				continue
			}
			if (sec != "") text = text " " line
		}
		flush_section()
		close(path)
	}
	# the policies, whose names are also words ("bins", "pools")
	policy_span = "`(bump|firstfit|bins|slab|sharded|pools|percpu|student)`"
	for (t = 1; t <= nt; t++) {
		p = "(" tpat[t] ")"
		# a plural and the forms of a verb count ("coalesced", "coalescing")
		stem = p
		if (tkind[t] == "gloss" && tpat[t] ~ /^[a-z ]+e$/) stem = "(" tpat[t] "|" substr(tpat[t], 1, length(tpat[t]) - 1) "ing)"
		word = "(^|[^a-z0-9_])" stem "(e?s|d|ed|ing)?([^a-z0-9_]|$)"
		n_hits = 0; n_used = 0
		for (s = 1; s <= nsec; s++) {
			low = tolower(stext[s]); h = tolower(shead[s])
			if (tkind[t] == "code") {
				n = count(low, "(`|policy=|policies/)" p "([ :/`])")
				inh = count(h, "`" p "[ :`]|(^|[^a-z0-9_])" p " policy")
				emph = 0
			} else {
				plain = low; gsub(policy_span, " ", plain)
				n = count(plain, word)
				inh = count(h, word)
				emph = count(plain, "\\*\\*?" p "(e?s)?\\*\\*?")
			}
			if (n == 0 && !inh) continue
			n_used++
			used_s[n_used] = s; used_score[n_used] = n
			if (!(inh || emph || n >= 3)) continue
			n_hits++
			hit_s[n_hits] = s
			hit_score[n_hits] = n + 10 * (inh > 0) + 3 * emph
		}
		# a term no section explains at length: the three sections that
		# use it most
		limit = 5
		if (n_hits == 0) {
			for (i = 1; i <= n_used; i++) { hit_s[i] = used_s[i]; hit_score[i] = used_score[i] }
			n_hits = n_used; limit = 3
		}
		# the best, kept in the book order
		for (i = 1; i <= n_hits; i++) keep[i] = 0
		for (k = 1; k <= limit && k <= n_hits; k++) {
			best = 0
			for (i = 1; i <= n_hits; i++)
				if (!keep[i] && (best == 0 || hit_score[i] > hit_score[best])) best = i
			keep[best] = 1
		}
		out = ""
		for (i = 1; i <= n_hits; i++) {
			if (!keep[i]) continue
			s = hit_s[i]
			target = (sid[s] != "") ? "#" sid[s] : sfile[s]
			out = out (out == "" ? "" : "; ") "[" schap[s] "](" sfile[s] ") [" shead[s] "](" target ")"
		}
		line = "- **" tname[t] "**"
		if (tkind[t] == "gloss") line = line " ([glossary](glossary.md))"
		line = line (out == "" ? ": not used in the chapters" : ": " out)
		sortkey[t] = tolower(tname[t]); entry[t] = line
	}
	for (t = 1; t <= nt; t++) print sortkey[t] "\t" entry[t]
}' | LC_ALL=C sort -t "	" -k1,1 | cut -f2- | {
	cat <<'EOF'
# Index {#book_index}

Each term of [the glossary](glossary.md), and the names of the allocators,
the policies, their knobs and the system calls, with the sections of the
chapters that explain them, in the book's order (at most five a term: the
sections that name it in their heading, set it in bold, or use it most).
The number opens the chapter; the section's title opens the section on
the built site (`make doc`), and the chapter where a heading has no anchor.

This page is written by `book/gen_index.sh` from the chapters;
`tests/book/book_index.sh` fails when it is out of date (run
`sh book/gen_index.sh > book/index-terms.md` in the source tree) or when
one of its links points nowhere.

EOF
	cat
}
