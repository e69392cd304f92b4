#!/usr/bin/env bash
# Misuse: classic heap mistakes (tests/misuse_program.c, one per run) under
# every compiled-in policy, through the malloc shim.
#
#  debug:on   every cell must abort (SIGABRT) with exactly one line
#             "heaplab: <policy>: <what> (<address>)" naming the mistake;
#  debug:off  each policy must do what the table below says, which is what
#             its real allocator does where that can be run here: the real
#             one runs the same program in the same test, and a model must
#             catch at least every mistake its allocator catches.  For bins
#             the text must be glibc's own, as this run measured it.
#  replay     a trace with a double free, replayed with debug:on, names the
#             operation.
# Any signal other than SIGABRT fails the cell: heaplab must never crash.
set -u
. "$(dirname "$0")/lib.sh"
hl_skip_sanitized "every cell preloads heaplab or a real allocator into tests/misuse_program; a -fsanitize=$hl_sanitizer build owns malloc"
src="${srcdir:-.}"
program="$build/tests/misuse_program"
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

# Without debug: policy, case, outcome.  "survive": accepted silently;
# "abort:TEXT": heaplab: <policy>: TEXT (<address>); "glibc": whatever the
# real glibc did in this run, with its text.  The real allocator of each
# row, measured by this script, is in the last column of its output line.
#  - bins follows the running glibc (2.36 here: option version); where the
#    model still differs from 2.36, the row says abort with the text and
#    the script checks that the installed libc.so.6 contains that message.
#  - slab, sharded: jemalloc 5.3 and mimalloc 2.0.9 (release builds) accept
#    double frees, interior pointers and overflows silently, and crash
#    (SIGSEGV) on a pointer they never handed out; the models abort there
#    with a message instead, and slab also refuses an interior pointer.
#  - sharded secure:on models mimalloc's secure build, not installed here:
#    its row is not compared with a real allocator.
#  - pools: CPython 3.11's pymalloc (tests/misuse_pymalloc, embedded
#    libpython) accepts a double free and an interior pointer silently and
#    crashes on a written-over free list; pools checks what its structures
#    let it check cheaply (a double free of its pool's last block, a link
#    leaving its pool).  Above 512 bytes, and for pointers it does not
#    know, pymalloc calls the C library and pools calls bins: glibc's text,
#    though not always the same one (the heap around differs).
#  - bump frees nothing, as a region allocator: only foreign pointers.
#  - firstfit models no real allocator.
table="
bump            double-free        survive
bump            interior           survive
bump            stack              abort:free of a pointer this heap does not own
bump            overflow           survive
bump            write-after-free   survive
bump            large-double-free  survive
firstfit        double-free        abort:double free
firstfit        interior           abort:invalid pointer (no block header in front of it)
firstfit        stack              abort:invalid pointer (not inside this heap)
firstfit        overflow           abort:invalid pointer (no block header in front of it)
firstfit        write-after-free   abort:free list link overwritten (a write after free?)
firstfit        large-double-free  abort:double free
bins            double-free        glibc
bins            interior           glibc
bins            stack              glibc
bins            overflow           glibc
bins            write-after-free   abort:malloc(): unaligned tcache chunk detected
bins            large-double-free  glibc
slab            double-free        survive
slab            interior           abort:free of a pointer that is not the start of a region
slab            stack              abort:free of a pointer this heap does not own
slab            overflow           survive
slab            write-after-free   survive
slab            large-double-free  survive
sharded         double-free        survive
sharded         interior           survive
sharded         stack              abort:free of a pointer this heap does not own
sharded         overflow           survive
sharded         write-after-free   survive
sharded         large-double-free  survive
sharded+secure  double-free        abort:double free
sharded+secure  interior           abort:free of a pointer that is not a block
sharded+secure  stack              abort:free of a pointer this heap does not own
sharded+secure  overflow           survive
sharded+secure  write-after-free   survive
sharded+secure  large-double-free  abort:double free
pools           double-free        abort:double free (its pool is already empty)
pools           interior           survive
pools           stack              abort:bins: free(): invalid pointer
pools           overflow           survive
pools           write-after-free   abort:free list smashed
pools           large-double-free  abort:bins: double free or corruption (top)
"

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

# The real allocator's outcome for a row, or "" when none runs here.
real_outcome() { # row case
	local lib=
	case $1 in
	bins) echo "${glibc_outcome[$2]}"; return ;;
	pools)
		[ -x "$build/tests/misuse_pymalloc" ] || return
		run -- "$build/tests/misuse_pymalloc" "$2"
		outcome
		return
		;;
	slab) lib=$libdir/libjemalloc.so.2 ;;
	sharded) lib=$(ls $libdir/libmimalloc.so.2* 2>/dev/null | head -n 1) ;;
	*) return ;;
	esac
	[ -n "$lib" ] && [ -f "$lib" ] || return
	run LD_PRELOAD="$lib" -- "$program" "$2"
	outcome
}

while read -r row c want; do
	[ -n "$row" ] || continue
	p=${row%+secure} conf=debug:off
	[ "$row" != "$p" ] && conf=debug:off,secure:on
	if ! printf '%s\n' $policies | grep -qx "$p"; then
		skip "debug:off $row $c: not compiled in"
		continue
	fi
	real=$(real_outcome "$row" "$c")
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
	# bins' own texts are glibc's: where 2.36 stays silent, the text must
	# still be one the installed libc can print
	if [ "$p" = bins ] && [ "$got" = abort ] && [ -n "$libc" ] && ! grep -qaF -- "$text" "$libc"; then
		ok=
		note="$note; '$text' is not a message of $libc"
	fi
	if [ -n "$ok" ]; then
		pass "debug:off $row $c: $got${text:+ '$text'} ($note)"
	else
		fail "debug:off $row $c: $got${text:+ '$text'}, want $want ($note); stderr: $err"
	fi
done <<<"$table"

# ---- replay: the operation number ------------------------------------------

trace="$src/tests/misuse/double-free.rep"
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
