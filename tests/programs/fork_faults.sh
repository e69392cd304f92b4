#!/usr/bin/env bash
# fork at the worst moment, under every policy beside its real allocator.
#  signal  tests/programs/fork/signal_fork.c: one thread; a signal handler forks
#          while the thread is inside malloc, free or fork (the case of
#          glibc's tst-mallocfork2);
#  stdio   tests/programs/fork/stdio_fork.c: threads in getline (a FILE held,
#          realloc) and fflush(NULL) (the list of files held, a FILE
#          wanted) while others fork (the case of tst-malloc-fork-deadlock).
# Each program runs under timeout: "pass" (exit 0), "hang" (timed out),
# "fail:N" (exit status N: a failed child, a crash).  The real allocators
# run the same binaries in the same test: glibc, and jemalloc, mimalloc and
# gperftools' tcmalloc through LD_PRELOAD.  A policy must pass wherever its
# real allocator passes; where the real one hangs (jemalloc and tcmalloc
# take their locks in a pthread_atfork handler, before glibc's list lock and
# even when the process has one thread), the model's result is printed
# beside it and not judged: the core's handler survives both cases for
# every policy, a departure on the safe side.  A policy's real allocator is
# the family it models (heaplab policies --families) when that one is
# preloaded here: jemalloc, mimalloc, tcmalloc; else glibc: a model of
# glibc, of pymalloc (which takes no lock of its own; above 512 bytes it is
# the C library), or of none (the C library it replaces).
set -u
. "$(dirname "$0")/../lib.sh"
hl_skip_sanitized "every run preloads heaplab or a real allocator; a -fsanitize=$hl_sanitizer build owns malloc"
libdir=/usr/lib/x86_64-linux-gnu
limit=${HL_FORK_TIMEOUT:-60}
hl_tmpdir
failed=0 passed=0
pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }

policies=$(hl_policies)
for prog in signal stdio; do
	[ -x "$build/tests/programs/fork_$prog" ] || { echo "no $build/tests/programs/fork_$prog"; exit 99; }
done

# outcome TARGET PROG: runs in the background, writes $tmp/TARGET.PROG
start() {
	local target=$1 prog=$2
	shift 2
	(
		timeout -k 5 "$limit" env "$@" "$build/tests/programs/fork_$prog" >"$tmp/$target.$prog.out" 2>&1
		rc=$?
		case $rc in
		0) echo pass ;;
		124 | 137) echo hang ;;
		*) echo "fail:$rc" ;;
		esac >"$tmp/$target.$prog"
	) &
}

# the family a policy models when its library is preloaded here, else glibc
real_of() {
	case $(hl_families | awk -v p="$1" '$1 == p { print $2 }') in
	jemalloc) echo jemalloc ;;
	mimalloc) echo mimalloc ;;
	tcmalloc) echo tcmalloc ;;
	*) echo glibc ;;
	esac
}
lib_of() {
	case $1 in
	jemalloc) echo "$libdir/libjemalloc.so.2" ;;
	mimalloc) echo "$libdir/libmimalloc.so.2" ;;
	tcmalloc) echo "$libdir/libtcmalloc_minimal.so.4" ;;
	esac
}

# the real allocators first, all at once (two of them may sit out the
# timeout), then the policies four at a time
for prog in signal stdio; do
	start glibc $prog HL_NONE=1
	for real in jemalloc mimalloc tcmalloc; do
		[ -r "$(lib_of $real)" ] && start $real $prog LD_PRELOAD="$(lib_of $real)"
	done
done
wait
n=0
for p in $policies; do
	for prog in signal stdio; do
		start "$p" $prog HEAPLAB_POLICY="$p" LD_PRELOAD="$preload"
	done
	n=$((n + 1))
	[ $((n % 2)) -eq 0 ] && wait
done
wait

for p in $policies; do
	real=$(real_of "$p")
	for prog in signal stdio; do
		model=$(cat "$tmp/$p.$prog")
		if [ ! -f "$tmp/$real.$prog" ]; then
			echo "SKIP: $p $prog: $real is not installed (model: $model)"
			continue
		fi
		expect=$(cat "$tmp/$real.$prog")
		printf '%-8s %-6s model %-8s %-9s %s\n' "$p" "$prog" "$model" "$real" "$expect"
		if [ "$expect" = pass ]; then
			[ "$model" = pass ] && pass || { fail "$p $prog: $model where $real passes"; cat "$tmp/$p.$prog.out"; }
		elif [ "$model" = pass ] || [ "$model" = "$expect" ]; then
			echo "         ($real does not pass: the model's result is fidelity or the safe side, not judged)"
		else
			fail "$p $prog: $model where $real gives $expect"
			cat "$tmp/$p.$prog.out"
		fi
	done
done
# the tests must be able to fail: glibc itself has to pass both
for prog in signal stdio; do
	[ "$(cat "$tmp/glibc.$prog")" = pass ] && pass || fail "glibc $prog: $(cat "$tmp/glibc.$prog") (the program or the machine is broken)"
done
echo "fork faults: $passed passed, $failed failed"
[ $failed -eq 0 ]
