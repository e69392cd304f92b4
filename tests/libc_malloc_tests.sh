#!/usr/bin/env bash
# The C libraries' own malloc tests under the real allocators and under
# every compiled-in policy: glibc 2.36's malloc/tst-*.c that build without
# glibc's internals and libc-test's malloc regressions, vendored unchanged
# in tests/libc/ (tests/libc/README says where from and under which
# licence), built here with heaplab's stand-in for glibc's test driver and
# libc-test's helpers (tests/libc/include/, tests/libc/test-skeleton.c).
#
# Each test runs under timeout(1) (a hang is a result: "hang") with no
# preload (glibc), under each real allocator that is installed, and under
# each policy through the preload library.  A policy's result must equal
# its real allocator's, measured here:
#     bins ↔ glibc        slab ↔ jemalloc      sharded ↔ mimalloc
#     percpu (front:thread) ↔ tcmalloc (gperftools)
#     pools ↔ glibc (CPython hands these calls to the C library)
#     firstfit, bump, student ↔ glibc (no real allocator: glibc is the C
#         library every program here gets, so it is the behaviour a model
#         standing in for malloc must give)
# unless the pair is a departure named in the table below (and in
# bench/FIDELITY.md).  A listed departure that is no longer seen is
# reported, so the table stays true.  Results: pass, fail (non-zero
# exit), unsup (exit 77), hang (timeout), SIGNAME (died of a signal),
# build (did not compile).
set -u
. "$(dirname "$0")/lib.sh"
hl_skip_sanitized "every run preloads heaplab into the C libraries' malloc tests; a -fsanitize=$hl_sanitizer build owns malloc"
src="${abs_top_srcdir:-${srcdir:-.}}"
libc="$src/tests/libc"
short="${LIBC_TESTS_TIMEOUT:-6}"
parallel="${LIBC_TESTS_JOBS:-4}"
libdir=/usr/lib/x86_64-linux-gnu
declare -A reallib=(
	[jemalloc]=$libdir/libjemalloc.so.2
	[mimalloc]=$libdir/libmimalloc.so.2
	[tcmalloc]=$libdir/libtcmalloc_minimal.so.4
)
# policy -> the allocator whose result it must give
declare -A model_of=(
	[bins]=glibc [slab]=jemalloc [sharded]=mimalloc [percpu]=tcmalloc
	[pools]=glibc [firstfit]=glibc [bump]=glibc [student]=glibc
)

# Named departures: TEST POLICY REASON (also in bench/FIDELITY.md).  A
# "flaky" reason: the real allocator's result changes from run to run
# (a deadlock it does not always hit), so the pair may also agree.
departures=$(cat <<'TABLE'
tst-calloc student the course skeleton searches its list on every call: 50 000 callocs took over 60 s, killed at the timeout (hang)
tst-trim1 student flaky: the course skeleton searches its list on every call: its 10 000 allocations take about the timeout, four times over, on a busy machine (hang)
tst-mallinfo2 firstfit no mallinfo figures (mallinfo2 gives zeros, as jemalloc's libc-provided one does): uordblks does not grow
tst-mallinfo2 bump no mallinfo figures (mallinfo2 gives zeros): uordblks does not grow
tst-mallinfo2 student no mallinfo figures (mallinfo2 gives zeros): uordblks does not grow
tst-mallinfo2 pools as under CPython: its 160, 320 and 480-byte blocks go to pymalloc's arenas, which CPython maps itself, so the C library's mallinfo2 (the fallback's) counts only the larger ones: uordblks grows by 30,352 of the 30,400 bytes asked (it passed while bins' tcache record was 112 bytes bigger than glibc 2.36's)
tst-malloc-stats-cancellation firstfit no real allocator: malloc_stats is glibc's, called under another malloc, where it fails as under jemalloc and mimalloc
tst-malloc-stats-cancellation bump the same as firstfit
tst-malloc-stats-cancellation student the same as firstfit
tst-malloc-thread-fail slab (LIBC_TESTS_LONG=1 only) jemalloc 5.3 crashes (SIGSEGV in the test's child) when memory runs out under 9 threads; slab returns NULL, as the test wants
tst-malloc-thread-fail firstfit (LIBC_TESTS_LONG=1 only) slow, not stuck: each valloc and memalign run leaves a free fragment of nearly a page beside every page-aligned block, and the first-fit search walks all of them on every call (tens of thousands, under one lock, in 9 threads): over the 300 s limit (hang)
tst-malloc-thread-fail student (LIBC_TESTS_LONG=1 only) the course skeleton searches its list on every call, as firstfit does here: over the 300 s limit (hang)
tst-malloc-fork-deadlock slab flaky: jemalloc 5.3 hung here (fork while threads allocate), slab does not
tst-malloc-fork-deadlock percpu flaky: gperftools 2.10 hung here (fork while threads allocate), percpu does not
tst-mallocfork slab flaky: jemalloc 5.3 sometimes hangs forking from a signal handler that interrupted malloc; slab does not
tst-mallocfork percpu flaky: gperftools 2.10 sometimes hangs forking from a signal handler that interrupted malloc; percpu does not
tst-mallocalign1 percpu gperftools gives malloc(1..8) an 8-byte size class, 8-aligned; percpu gives 16 (MALLOC_ALIGNMENT, what the test wants)
tst-memalign slab jemalloc leaves errno alone when memalign refuses an impossible request; heaplab's entry point sets it as glibc does
tst-memalign sharded mimalloc leaves errno alone when memalign refuses an impossible request; heaplab's entry point sets it as glibc does
tst-memalign percpu gperftools leaves errno alone for memalign (-1, pagesize); heaplab's entry point sets EINVAL as glibc does
tst-pvalloc slab jemalloc has no pvalloc: glibc's runs on jemalloc's heap and pvalloc (-1) crashes (SIGSEGV); heaplab gives pvalloc its own entry point
tst-pvalloc sharded mimalloc's pvalloc (-1) leaves errno alone; heaplab's sets ENOMEM as glibc does
tst-pvalloc percpu gperftools' pvalloc (-1) succeeds (the size wraps when rounded to a page); heaplab's refuses with ENOMEM as glibc does
tst-valloc slab jemalloc's valloc (-1) leaves errno alone; heaplab's sets ENOMEM as glibc does
tst-valloc sharded mimalloc's valloc (-1) leaves errno alone; heaplab's sets ENOMEM as glibc does
tst-tcfree1 bump bump keeps no record of a freed block, so a double free is not detected (glibc aborts)
tst-tcfree2 bump bump keeps no record of a freed block, so a double free is not detected (glibc aborts)
tst-tcfree2 percpu gperftools 2.10 takes the second free of ptrs[0] into the thread cache unchecked (its first free went back to its span with the rest of a list shorter than a batch); percpu's span bitmap has the object free and aborts, as glibc does
malloc-brk-fail slab jemalloc serves malloc (10000) from memory it had mapped before the address space was filled; slab has none spare and refuses (ENOMEM), then succeeds once 64 KiB is unmapped
malloc-brk-fail percpu gperftools serves malloc (10000) from spans it had mapped before the address space was filled; percpu has none spare and refuses (ENOMEM), then succeeds
tst-malloc-too-large slab (LIBC_TESTS_LONG=1 only) jemalloc leaves errno alone when reallocarray and memalign refuse sizes near SIZE_MAX; heaplab's entry points set ENOMEM as glibc does
tst-malloc-too-large sharded (LIBC_TESTS_LONG=1 only) mimalloc did not finish in 40 s (its refusals of sizes near SIZE_MAX are slow or loop); sharded passes
tst-malloc-too-large percpu (LIBC_TESTS_LONG=1 only) gperftools' pvalloc of sizes near SIZE_MAX succeeds (the size wraps when rounded to a page); percpu refuses with ENOMEM as glibc does
tst-malloc_info student (LIBC_TESTS_LONG=1 only) the course skeleton's list search: 4 threads' allocations outlast 40 s
tst-malloc-tcache-leak pools (LIBC_TESTS_LONG=1 only) its one block before the check is 8 bytes, which pymalloc's pools hold; mallinfo counts only the C library's heap behind them (as under CPython, whose arenas are mapped apart), so uordblks is 0 and the test's assertion fails (ABRT)
tst-malloc-tcache-leak firstfit (LIBC_TESTS_LONG=1 only) no mallinfo figures (zeros): the test asserts uordblks is not 0 (ABRT), as under jemalloc and mimalloc
tst-malloc-tcache-leak bump (LIBC_TESTS_LONG=1 only) the same as firstfit
tst-malloc-tcache-leak student (LIBC_TESTS_LONG=1 only) the same as firstfit
tst-mallocfork2 slab flaky: (LIBC_TESTS_LONG=1 only) jemalloc 5.3 hung forking from a signal handler that interrupted malloc (10 000 forks); slab does not
tst-mallocfork2 percpu flaky: (LIBC_TESTS_LONG=1 only) gperftools 2.10 hung forking from a signal handler that interrupted malloc (10 000 forks); percpu does not
TABLE
)

# Tests left out: TEST KIND REASON.  KIND "long": longer than make check
# allows (glibc's own run time here given); LIBC_TESTS_LONG=1 runs them too,
# each under LIBC_TESTS_LONG_TIMEOUT seconds (default 300).  KIND "needs":
# the test checks something only glibc's debugging library gives.
skipped=$(cat <<'TABLE'
tst-malloc-usable needs runs only under MALLOC_CHECK_=3 with glibc's libc_malloc_debug.so preloaded (glibc's Makefile sets it), which checks malloc_usable_size against the requested size: a property of glibc's debugging library, not of an allocator
tst-malloc-tcache-leak long 100 000 threads created and joined, over 10 s under glibc (glibc gives it 50 s)
tst-malloc-thread-fail long allocation failures in 8 threads over a range of sizes, over 10 s under glibc (glibc gives it 100 s)
tst-mallocfork2 long 10 000 forks from a signal handler, over 10 s under glibc (glibc gives it 100 s)
tst-mallocfork3 long 10 000 forks while threads send signals, over 10 s under glibc (glibc gives it 100 s)
tst-malloc-too-large long about 7 s under glibc (allocation requests near SIZE_MAX, each size with every call)
tst-malloc_info long about 7 s under glibc (malloc_info beside 4 threads allocating)
TABLE
)

policies=$("$heaplab" policies 2>/dev/null | awk '{print $1}')
if [ ! -f "$preload" ] || [ -z "$policies" ] || [ ! -d "$libc/glibc-2.36" ]; then
	echo "libc_malloc_tests: the preload library, the policy list or tests/libc is missing"
	exit 1
fi
cc="${CC:-cc}"
hl_tmpdir libc-malloc-tests

# the columns: glibc, then each real allocator beside its policy
columns=(glibc)
for p in bins slab sharded percpu pools firstfit bump student; do
	grep -qx "$p" <<<"$policies" || continue
	m=${model_of[$p]}
	if [ "$m" != glibc ] && [[ ! " ${columns[*]} " =~ " $m " ]]; then
		if [ -e "${reallib[$m]}" ]; then columns+=("$m"); else echo "NOTE: ${reallib[$m]} is not installed: $p is not compared"; fi
	fi
	columns+=("$p")
done
for p in $policies; do
	[[ " ${columns[*]} " =~ " $p " ]] || { columns+=("$p"); model_of[$p]=glibc; }
done

# result BINARY ALLOCATOR: one run, printed as one word
result() {
	local bin=$1 who=$2 env=(env -u LD_PRELOAD HEAPLAB_CONF=)
	case $who in
	glibc) ;;
	jemalloc|mimalloc|tcmalloc) env+=(LD_PRELOAD="${reallib[$who]}") ;;
	percpu) env+=(LD_PRELOAD="$preload" HEAPLAB_POLICY=percpu HEAPLAB_CONF=front:thread) ;;
	*) env+=(LD_PRELOAD="$preload" HEAPLAB_POLICY="$who") ;;
	esac
	(cd "$tmp/run" && TMPDIR="$tmp/run" "${env[@]}" timeout -s KILL "$limit" "$bin" >"$tmp/out.$who" 2>&1)
	local rc=$?
	case $rc in
	0) echo pass ;;
	77) echo unsup ;;
	137) echo hang ;;
	1) echo fail ;;
	*) if [ "$rc" -gt 128 ]; then echo "$(kill -l $((rc - 128)))"; else echo "fail"; fi ;;
	esac
}

mkdir -p "$tmp/run"
tests=()
for f in "$libc"/glibc-2.36/tst-*.c "$libc"/musl-libc-test/malloc-*.c; do tests+=("$f"); done
printf '%-30s' test; printf ' %-9s' "${columns[@]}"; echo
failures=0 skips=0 ran=0 compared=0 agreed=0 named=0
unexplained=()
for f in "${tests[@]}"; do
	name=$(basename "$f" .c)
	# LIBC_TESTS="NAME..." runs only those (for work on one test)
	[ -z "${LIBC_TESTS:-}" ] || [[ " $LIBC_TESTS " =~ " $name " ]] || continue
	kind=$(awk -v t="$name" '$1 == t { print $2 }' <<<"$skipped")
	why=$(awk -v t="$name" '$1 == t { $1 = $2 = ""; sub(/^ +/, ""); print }' <<<"$skipped")
	limit=$short
	if [ "$kind" = long ] && [ "${LIBC_TESTS_LONG:-0}" = 1 ]; then
		limit=${LIBC_TESTS_LONG_TIMEOUT:-300}
	elif [ -n "$kind" ]; then
		printf '%-30s SKIP (%s): %s\n' "$name" "$kind" "$why"; skips=$((skips + 1)); continue
	fi
	bin="$tmp/$name"
	ran=$((ran + 1))
	declare -A res=()
	if ! "$cc" -std=gnu11 -O1 -w -D_GNU_SOURCE -I"$libc/include" -o "$bin" "$f" -pthread >"$tmp/cc.out" 2>&1; then
		for c in "${columns[@]}"; do res[$c]=build; done
		sed 's/^/    /' "$tmp/cc.out" | head -5
	else
		# a few runs at a time (each its own output file); the timeout is
		# several times the longest run of a passing test (about 1 s)
		for c in "${columns[@]}"; do
			while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do wait -n; done
			result "$bin" "$c" >"$tmp/res.$c" 2>/dev/null &
		done
		wait
		for c in "${columns[@]}"; do res[$c]=$(cat "$tmp/res.$c"); done
		# a hang may be a busy machine's slowness: each short run that hit
		# its limit runs once more, alone, with four times the time
		for c in "${columns[@]}"; do
			[ "${res[$c]}" = hang ] && [ "$limit" = "$short" ] || continue
			res[$c]=$(limit=$((short * 4)) result "$bin" "$c" 2>/dev/null)
		done
	fi
	printf '%-30s' "$name"
	for c in "${columns[@]}"; do printf ' %-9s' "${res[$c]}"; done
	echo
	for c in "${columns[@]}"; do
		m=${model_of[$c]:-}
		[ -n "$m" ] && [ -n "${res[$m]:-}" ] || continue
		compared=$((compared + 1))
		listed=$(awk -v t="$name" -v p="$c" '$1 == t && $2 == p' <<<"$departures")
		if [ "${res[$c]}" = "${res[$m]}" ]; then
			agreed=$((agreed + 1))
			case $listed in
			"") ;;
			*" flaky:"*) echo "NOTE: $name under $c: the flaky departure did not show this run (${res[$c]} as $m)" ;;
			*) echo "NOTE: $name under $c: the named departure is no longer seen (${res[$c]} as $m); update the table" ;;
			esac
		elif [ -n "$listed" ]; then
			named=$((named + 1))
		else
			failures=$((failures + 1))
			unexplained+=("$name $c: ${res[$c]}, $m: ${res[$m]}")
			sed 's/^/    | /' "$tmp/out.$c" | head -4
		fi
	done
	unset res
done
echo "totals: $ran tests run ($skips left out), $compared policy results compared with their real allocator's: $agreed equal, $named named departures, $failures unexplained"
for u in "${unexplained[@]}"; do echo "FAIL: $u"; done
[ "$failures" -eq 0 ]
