#!/usr/bin/env bash
# Misuse: classic heap mistakes (tests/programs/misuse_program.c, one per run) under
# every compiled-in policy, through the malloc shim.
#
#  debug:on   every cell must abort (SIGABRT) with exactly one line
#             "heaplab: <policy>: <what> (<address>)" naming the mistake;
#  debug:off  each policy must do what its folder's misuse.table says,
#             which is what its real allocator does where that can be run
#             here: the real one runs the same program in the same test,
#             and a model must catch at least every mistake its allocator
#             catches.  Where the real allocator is glibc, the text must be
#             one the installed C library prints.
#  replay     a trace with a double free, replayed with debug:on, names the
#             operation.
# Any signal other than SIGABRT fails the cell: heaplab must never crash.
set -u
. "$(dirname "$0")/../lib.sh"
hl_skip_sanitized "every cell preloads heaplab or a real allocator into tests/programs/misuse_program; a -fsanitize=$hl_sanitizer build owns malloc"
src="${srcdir:-.}"
program="$build/tests/programs/misuse_program"
libdir=/usr/lib/x86_64-linux-gnu

cases="double-free interior stack overflow write-after-free large-double-free"
relatives="foreign realloc-freed header-smash"

# What the one debug-mode line must say, per case (an extended regex).
debug_says() {
	case $1 in
	double-free | large-double-free) echo 'free of a freed block \(double free\)' ;;
	interior) echo 'free of an address inside the heap that is not the start of a live block' ;;
	stack | foreign) echo 'free of a pointer this heap never handed out' ;;
	overflow) echo 'write past the end of a 40-byte block|heap damaged before free: .*(size|runs out)' ;;
	write-after-free) echo 'write into a freed block' ;;
	realloc-freed) echo 'realloc of a freed block' ;;
	header-smash) echo 'heap damaged before free: .*(size|header|footer)|write past the end of a 40-byte block' ;;
	esac
}

# Without debug, each policy's folder says what it does: its misuse.table
# (policies/NAME/misuse.table: the real allocator it is compared with, then
# a case and its outcome a row; its header says the format).  Every
# allocator model has one; the lab skeleton is asked for none.

passed=0 failed=0 skipped=0
pass() { passed=$((passed + 1)); echo "PASS: $*"; }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }
skip() { skipped=$((skipped + 1)); echo "SKIP: $*"; }

hl_tmpdir

# run [ENV=VALUE...] -- COMMAND...: sets rc, err (stderr), out (stdout).
run() {
	local envs=()
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	# in a subshell whose own stderr is dropped: bash's "Aborted" notices
	rc=$( { env "${envs[@]}" "$@" >"$tmp/out" 2>"$tmp/err"; echo $?; } 2>/dev/null)
	out=$(cat "$tmp/out")
	err=$(cat "$tmp/err")
}

# The outcome of the last run, in the table's words.
outcome() {
	if [ "$rc" -eq 0 ] && [[ "$out" == survived* ]]; then
		echo survive
	elif [ "$rc" -eq 134 ]; then
		echo abort
	elif [ "$rc" -gt 128 ]; then
		echo "signal $((rc - 128))"
	else
		echo "exit $rc"
	fi
}

# The message of a heaplab fatal line, without "heaplab: POLICY: " and the
# address; a hosted policy's line keeps its name ("bins: ...").
message_of() { # policy
	printf '%s\n' "$err" | sed -n "s/^heaplab: \(.*\) (0x[0-9a-f]*)\$/\1/p" | head -n 1 | sed "s/^$1: //"
}

policies=$(hl_policies)
if [ ! -x "$program" ] || [ ! -f "$preload" ] || [ -z "$policies" ]; then
	hl_skip "misuse: the program, the preload library or the policy list is missing"
fi
# debug:on runs each policy's checker: the allocator models' (marked "all"
# in policies.list); a policy outside the models, the lab skeleton, leaves
# its checker to the student (heaplab grade judges it).
models=$(awk '$2 == "all" { print $1 }' "$src/policies/policies.list")
for p in $policies; do
	grep -qx "$p" <<<"$models" || { echo "NOTE: debug:on $p: not an allocator model, its checker is the student's to write"; continue; }
	for c in $cases $relatives; do
		run HEAPLAB_POLICY="$p" HEAPLAB_CONF=debug:on LD_PRELOAD="$preload" -- "$program" "$c"
		want=$(debug_says "$c")
		lines=$(printf '%s\n' "$err" | grep -c .)
		if [ "$(outcome)" = abort ] && [ "$lines" -eq 1 ] &&
			printf '%s\n' "$err" | grep -Eq "^heaplab: $p: .*($want).* \(0x[0-9a-f]+\)\$"; then
			pass "debug:on $p $c: $err"
		else
			fail "debug:on $p $c: $(outcome), $lines line(s), want one line saying /$want/ (address): $err"
		fi
	done
done

# ---- without debug ---------------------------------------------------------

declare -A glibc_outcome glibc_text
for c in $cases; do
	run -- "$program" "$c"
	glibc_outcome[$c]=$(outcome)
	glibc_text[$c]=$(printf '%s\n' "$err" | head -n 1)
done
libc=$(ldd "$program" | awk '/libc\.so\.6/ {print $3}')

# The real allocator's outcome for case $2 of a table's `real` line $1
# ("glibc", "preload LIB", "program PATH", "none"), or "" when none runs here.
real_outcome() { # real case
	local lib=
	case $1 in
	glibc) echo "${glibc_outcome[$2]}" ;;
	"program "*)
		[ -x "$build/${1#program }" ] || return
		run -- "$build/${1#program }" "$2"
		outcome
		;;
	"preload "*)
		lib=$(ls "$libdir/${1#preload }"* 2>/dev/null | head -n 1)
		[ -n "$lib" ] && [ -f "$lib" ] || return
		run LD_PRELOAD="$lib" -- "$program" "$2"
		outcome
		;;
	esac
}

for p in $policies; do
	tablefile=$src/policies/$p/misuse.table
	if [ ! -f "$tablefile" ]; then
		if grep -qx "$p" <<<"$models"; then
			fail "debug:off $p: an allocator model with no policies/$p/misuse.table"
		else
			echo "NOTE: debug:off $p: not an allocator model, no misuse.table asked of it"
		fi
		continue
	fi
	realof=none
	while read -r conf c want; do
		case $conf in '' | '#'*) continue ;; real) realof=$c${want:+ $want}; continue ;; esac
		row=$p${conf#-}
		[ "$conf" = - ] && conf=debug:off || conf=debug:off,$conf
		[ "$row" = "$p" ] || row="$p $conf"
		real=$(real_outcome "$realof" "$c")
		run HEAPLAB_POLICY="$p" HEAPLAB_CONF="$conf" LD_PRELOAD="$preload" -- "$program" "$c"
		got=$(outcome) text=$(message_of "$p")
		note="real allocator: ${real:-not run here}"
		if [ "$want" = glibc ]; then
			want=${glibc_outcome[$c]}
			[ "$want" = abort ] && want="abort:${glibc_text[$c]}"
		fi
		case $want in
		survive) ok=$([ "$got" = survive ] && echo y) ;;
		abort:*) ok=$([ "$got" = abort ] && [ "$text" = "${want#abort:}" ] && echo y) ;;
		*) ok= ;;
		esac
		# a model catches at least what its real allocator catches
		if [ "$real" = abort ] && [ "$got" != abort ]; then
			ok=
			note="$note, which the model must match"
		fi
		# a model of glibc speaks glibc's words: where 2.36 stays silent,
		# the text must still be one the installed libc can print
		if [ "$realof" = glibc ] && [ "$got" = abort ] && [ -n "$libc" ] && ! grep -qaF -- "$text" "$libc"; then
			ok=
			note="$note; '$text' is not a message of $libc"
		fi
		if [ -n "$ok" ]; then
			pass "debug:off $row $c: $got${text:+ '$text'} ($note)"
		else
			fail "debug:off $row $c: $got${text:+ '$text'}, want $want ($note); stderr: $err"
		fi
	done <"$tablefile"
done

# ---- replay: the operation number ------------------------------------------

trace="$src/tests/programs/misuse/double-free.rep"
for p in $policies; do
	run -- "$heaplab" replay --policy="$p" --conf=debug:on "$trace"
	line=$(printf '%s\n' "$err" | grep "^heaplab: $p:")
	if [ "$(outcome)" = abort ] && [ "$(printf '%s\n' "$line" | grep -c .)" -eq 1 ] &&
		[[ "$line" == *"double free"*"during op 3 'f 0' ("*"double-free.rep:8)" ]]; then
		pass "replay $p: $line"
	else
		fail "replay $p: $(outcome), want one line naming op 3 'f 0' at double-free.rep:8: $err"
	fi
done

echo "misuse: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
