#!/usr/bin/env bash
# The design notes stay a map: HACKING.md is short enough to read in ten
# minutes (at most 2,500 words), every relative link of HACKING.md and of
# the topic files in hacking/ leads to a file that exists, and every topic
# file is linked from HACKING.md (a file nobody links is a file nobody
# reads).  Links inside code (fenced blocks, `spans`) are not links; a
# link to a web address or to an anchor of the same page is not checked.
# Then the build's Makefile is asked for HL_NOTES (what make doc gives
# Doxygen, book/local.mk) and EXTRA_DIST: every note must be in both, or
# the site's links break and the release lacks the file.
# The check is first shown to catch a broken link, a topic file nobody
# links and a map grown too long, on copies made here; then the real
# notes must be clean.  A second or so.
set -u
. "$(dirname "$0")/../lib.sh"
top=$(cd "${srcdir:-.}" && pwd)
max_words=2500
hl_tmpdir hacking-map
fail=0

# links FILE: the targets of FILE's markdown links, one a line, code aside
links() {
	awk '
	/^[ \t]*```/ { fence = !fence; next }
	fence { next }
	{
		line = $0
		gsub(/`[^`]*`/, "", line)
		while (match(line, /\]\([^) \t]+\)/)) {
			print substr(line, RSTART + 2, RLENGTH - 3)
			line = substr(line, RSTART + RLENGTH)
		}
	}' "$1"
}

# problems ROOT: one line per broken rule in ROOT's HACKING.md and
# ROOT/hacking/, nothing when the notes are sound
problems() {
	local root=$1 f t dir words linked=
	[ -f "$root/HACKING.md" ] || { echo "HACKING.md: missing"; return; }
	words=$(wc -w < "$root/HACKING.md")
	[ "$words" -le $max_words ] || echo "HACKING.md: $words words, more than $max_words"
	for f in "$root/HACKING.md" "$root"/hacking/*.md; do
		[ -f "$f" ] || continue
		dir=$(dirname "$f")
		while read -r t; do
			case "$t" in
			*:*|'#'*) continue ;;
			/*) echo "${f#"$root"/}: link to $t: not relative"; continue ;;
			esac
			t=${t%%#*}
			if [ ! -e "$dir/$t" ]; then
				echo "${f#"$root"/}: link to $t: no such file"
			elif [ "$f" = "$root/HACKING.md" ]; then
				linked="$linked $(realpath -m --relative-to="$root" "$dir/$t")"
			fi
		done < <(links "$f")
	done
	for f in "$root"/hacking/*; do
		[ -e "$f" ] || continue
		case " $linked " in
		*" ${f#"$root"/} "*) ;;
		*) echo "${f#"$root"/}: not linked from HACKING.md" ;;
		esac
	done
}

# the check on copies of the notes: a link broken and a file nobody links
# (found beside what the real notes have wrong, if anything), then a map
# too long
real=$(problems "$top")
mkdir -p "$tmp/planted" "$tmp/long"
cp -R "$top/HACKING.md" "$top/hacking" "$tmp/planted/" || exit 99
first=$(ls "$tmp/planted/hacking" | head -n 1)
printf '\nSee [the gone page](gone.md#top), not `[code](code.md)`.\n' >> "$tmp/planted/hacking/$first"
printf '# Nobody links this\n' > "$tmp/planted/hacking/orphan.md"
out=$(problems "$tmp/planted" | sort)
want=$(printf '%s\n' "$real" "hacking/$first: link to gone.md: no such file" \
	"hacking/orphan.md: not linked from HACKING.md" | sed '/^$/d' | sort)
if [ "$out" = "$want" ]; then
	echo "PASS: a broken link and a topic file nobody links are found (and code is not a link)"
else
	echo "FAIL: on planted notes, wanted:"; echo "$want"; echo "got:"; echo "$out"; fail=1
fi
cp -R "$top/HACKING.md" "$top/hacking" "$tmp/long/" || exit 99
for i in $(seq 260); do echo "one two three four five six seven eight nine ten"; done >> "$tmp/long/HACKING.md"
out=$(problems "$tmp/long")
if printf '%s\n' "$out" | grep -q "^HACKING.md: [0-9]* words, more than $max_words\$"; then
	echo "PASS: a map grown past $max_words words is refused"
else
	echo "FAIL: a map of $(wc -w < "$tmp/long/HACKING.md") words went unnoticed: $out"; fail=1
fi

# the real notes
if [ -z "$real" ]; then
	echo "PASS: HACKING.md ($(wc -w < "$top/HACKING.md") words) links every topic file, and every link of the notes leads to a file"
else
	echo "FAIL: the notes:"; echo "$real" | sed 's/^/    /'; fail=1
fi

# every note is a Doxygen input and in the release
if [ -f "$build/Makefile" ]; then
	printf 'hl-notes:\n\t@echo $(HL_NOTES)\n\t@echo $(EXTRA_DIST)\n' > "$tmp/notes.mk"
	lists=$(cd "$build" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -f Makefile -f "$tmp/notes.mk" hl-notes) ||
		{ echo "FAIL: the Makefile could not list HL_NOTES and EXTRA_DIST"; exit 1; }
	notes=" $(sed -n 1p <<<"$lists") " dist=" $(sed -n 2p <<<"$lists") " missing=
	for f in "$top/HACKING.md" "$top"/hacking/*; do
		f=${f#"$top"/}
		case "$notes" in *" $f "*) ;; *) missing="$missing $f (HL_NOTES)" ;; esac
		case "$dist" in *" $f "*) ;; *) missing="$missing $f (EXTRA_DIST)" ;; esac
	done
	if [ -z "$missing" ]; then
		echo "PASS: every note is in HL_NOTES (make doc's input) and in EXTRA_DIST"
	else
		echo "FAIL: notes missing from the Makefile's lists:$missing"; fail=1
	fi
else
	echo "note: no Makefile in $build: HL_NOTES and EXTRA_DIST not checked"
fi
exit $fail
