#!/usr/bin/env bash
# Every command block of README.md (its indented blocks whose lines are
# commands) and every line of heaplab(1)'s EXAMPLES runs as written, in a
# fresh copy of the source tree made in a temporary directory (a new
# user's clone), with `heaplab` on the PATH and `_build` being this
# build.  A block fails on a non-zero exit or on an error line in its
# output (a line holding "error", "Error", "cannot ", "FAIL" or
# "warning:"; statistics' "failed: 0" is none), except libtool's reminder
# to run "libtool --finish" when the install goes elsewhere than the
# prefix this build was configured with (quickstart configures
# --prefix=$HOME/.local, where it does not arise).
#
# Checked more cheaply, because they take minutes or build trees of their
# own (each named by the start of its line):
#   ./quickstart WORD         quickstart parses (bash -n) and accepts WORD
#                             (its usage line lists it); the demo itself is
#                             bench/demo.sh, whose table the lead's full
#                             run shows
#   ./bootstrap && ./configure ... && make && make check
#                             the classic flow: its scripts exist and parse
#                             (configure in the source folder is run by
#                             tests/house/add_policy.sh on a copy, and
#                             tests/house/ignored_outputs.sh checks that
#                             .gitignore covers what make builds there; the
#                             whole flow in the tree is run by hand before a
#                             stop: hacking/building.md)
#   heaplab replay --policy=all traces/*.rep
#   heaplab compare traces/*-bal.rep
#                             on the first two traces the glob names, not
#                             all of them (every trace under every policy
#                             is tests/programs/replay_traces.sh's job)
#   heaplab fidelity --family glibc
#                             with --row on the first glibc row only
# Under a sanitizer build the blocks that preload heaplab into a program
# (heaplab run, diagnose, the install) cannot run: the test exits 77.
# A line that needs what this build lacks is left out of its block with a
# line saying what (the rest of the block runs; a block left with no line
# is skipped): a policy it names (a word of policies/policies.list,
# comments aside) that is not compiled in, or the model of a family it
# asks for (--family F; diagnose records on the C library: the model of
# glibc).
set -u
. "$(dirname "$0")/../lib.sh"
src=$(cd "${srcdir:-.}" && pwd)
build=$(cd "$build" && pwd)
hl_skip_sanitized "built with -fsanitize=$hl_sanitizer: README's heaplab run and diagnose preload heaplab, which a sanitizer's runtime forbids"
hl_tmpdir readme-commands
tree="$tmp/clone"
mkdir -p "$tree" "$tmp/bin" "$tmp/home"
tar -C "$src" --exclude='./_build*' --exclude=./.git -cf - . | tar -C "$tree" -xf - || exit 99
ln -s "$build" "$tree/_build"
ln -s "$build/heaplab" "$tmp/bin/heaplab"
export PATH="$tmp/bin:$PATH" HOME="$tmp/home"
passed=0 failed=0
error_line='[Ee]rror|cannot |FAIL|warning:'

# The shorter form of a long command (see the header), or the line itself.
cheaper() {
	local line=$1 first
	case "$line" in
	./quickstart\ *)
		local word=${line#./quickstart }
		word=${word%% *}
		echo "bash -n quickstart && grep -q 'usage: ./quickstart .*\\b$word\\b' quickstart"
		;;
	./bootstrap\ \&\&*)
		echo "sh -n bootstrap && test -f configure.ac && test -f Makefile.am"
		;;
	"heaplab replay --policy=all traces/*.rep"*)
		echo "heaplab replay --policy=all $(cd "$tree" && ls traces/*.rep | head -2 | tr '\n' ' ')"
		;;
	"heaplab compare traces/*-bal.rep"*)
		echo "heaplab compare $(cd "$tree" && ls traces/*-bal.rep | head -2 | tr '\n' ' ')"
		;;
	"heaplab fidelity --family glibc"*)
		first=$(heaplab fidelity --family glibc --list 2>/dev/null | awk 'NF { print $1; exit }')
		echo "heaplab fidelity --family glibc${first:+ --row $first}"
		;;
	*) echo "$line" ;;
	esac
}

# lacks TEXT: what the commands of TEXT need that this build lacks, or nothing
every_policy=$(awk '!/^#/ && NF { print $1 }' "$(hl_list_file)")
lacks() {
	local code word family
	code=$(sed 's/\(^\|[[:space:]]\)#.*//' <<<"$1")
	for word in $(tr -c 'A-Za-z0-9_\n' ' ' <<<"$code"); do
		grep -qx "$word" <<<"$every_policy" && ! hl_compiled "$word" && { echo "policy $word, not compiled in"; return; }
	done
	for family in $(sed -n 's/.*--family[= ]\([a-z]*\).*/\1/p' <<<"$code") $(grep -q 'heaplab diagnose' <<<"$code" && echo glibc); do
		[ -z "$(hl_unmodelled "$family")" ] || { echo "a model of $family, which no compiled-in policy is"; return; }
	done
}

skipped=0
# run_block NAME: runs the lines on stdin, in order, in one shell (those
# this build can run).
run_block() {
	local name=$1 script="$tmp/block.sh" out="$tmp/out" line need lines=0
	: >"$script"
	echo 'set -e -o pipefail' >>"$script"
	while IFS= read -r line; do
		need=$(lacks "$line")
		if [ -n "$need" ]; then
			skipped=$((skipped + 1))
			echo "SKIP (part): ${name%% (*}: '$line' needs $need"
		else
			cheaper "$line" >>"$script"
			lines=$((lines + 1))
		fi
	done
	[ "$lines" -gt 0 ] || return
	local rc=0
	# as a person types them: not inside make check's make (whose jobserver
	# a make in the block would warn about)
	(cd "$tree" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL timeout 600 bash "$script" </dev/null >"$out" 2>&1) || rc=$?
	if [ "$rc" -eq 0 ]; then
		if grep -v "^libtool: warning: remember to run 'libtool --finish" "$out" | grep -E -q "$error_line"; then
			failed=$((failed + 1))
			echo "FAIL: $name: an error line:"
			grep -E "$error_line" "$out" | head -5
		else
			passed=$((passed + 1))
		fi
	else
		failed=$((failed + 1))
		echo "FAIL: $name: exit $rc running:"
		sed -n '2,$p' "$script"
		tail -5 "$out"
	fi
}

# README.md: blocks of lines indented by four spaces, a blank line apart;
# a block is commands when its first word is one
blocks=0
awk '
	/^    / { sub(/^    /, ""); b = b $0 "\n"; next }
	{ if (b != "") { printf "%s%c", b, 0; b = "" } }
	END { if (b != "") printf "%s%c", b, 0 }
' "$src/README.md" >"$tmp/blocks"
while IFS= read -r -d '' block; do
	first=$(printf '%s' "$block" | awk 'NR == 1 { print $1 }')
	case "$first" in
	heaplab | ./* | make | export | [A-Z]*=*) ;;
	*) continue ;;
	esac
	blocks=$((blocks + 1))
	run_block "README.md block $blocks ($(printf '%s' "$block" | head -1))" < <(printf '%s' "$block")
done <"$tmp/blocks"
[ "$blocks" -ge 5 ] || { echo "FAIL: only $blocks command blocks found in README.md"; failed=$((failed + 1)); }

# heaplab(1): each line between .nf and .fi of EXAMPLES, roff's \- as -
n=0
while IFS= read -r line; do
	n=$((n + 1))
	run_block "heaplab(1) example $n ($line)" < <(printf '%s\n' "$line")
done < <(awk '/^\.SH EXAMPLES/ { on = 1; next } on && /^\.SH/ { exit } on && /^\.nf/ { code = 1; next }
	code && /^\.fi/ { code = 0; next } code' "$src/man/heaplab.1" | sed 's/\\-/-/g')
[ "$n" -ge 1 ] || { echo "FAIL: no EXAMPLES in heaplab(1)"; failed=$((failed + 1)); }

echo "README and man page commands: $passed blocks passed, $failed failed; $skipped lines skipped"
[ "$failed" -eq 0 ]
