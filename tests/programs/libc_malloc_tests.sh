#!/usr/bin/env bash
# The C libraries' own malloc tests under the real allocators and under
# every compiled-in policy: glibc 2.36's malloc/tst-*.c that build without
# glibc's internals and libc-test's malloc regressions, vendored unchanged
# in tests/programs/libc/ (tests/programs/libc/README says where from and under which
# licence), built here with heaplab's stand-in for glibc's test driver and
# libc-test's helpers (tests/programs/libc/include/, tests/programs/libc/test-skeleton.c).
#
# Each test runs under timeout(1) (a hang is a result: "hang") with no
# preload (glibc), under each real allocator that is installed, and under
# each policy through the preload library.  A policy's result must equal
# its real allocator's, measured here: the family the policy models
# (heaplab policies --families: jemalloc, mimalloc, tcmalloc, under the
# options it names) when that library can be preloaded, else glibc (a
# model of glibc; a model of pymalloc, as CPython hands these calls to
# the C library; a textbook policy, since glibc is the C library every
# program here gets, so its behaviour is what a stand-in must give),
# unless the pair is a departure named in the policy's folder
# (policies/NAME/libc_tests.table, and in
# bench/FIDELITY.md)).  A listed departure that is no longer seen is
# reported, so the table stays true.  Results: pass, fail (non-zero
# exit), unsup (exit 77), hang (timeout), SIGNAME (died of a signal),
# build (did not compile).
set -u
. "$(dirname "$0")/../lib.sh"
hl_skip_sanitized "every run preloads heaplab into the C libraries' malloc tests; a -fsanitize=$hl_sanitizer build owns malloc"
src="${abs_top_srcdir:-${srcdir:-.}}"
libc="$src/tests/programs/libc"
short="${LIBC_TESTS_TIMEOUT:-6}"
parallel="${LIBC_TESTS_JOBS:-4}"
libdir=/usr/lib/x86_64-linux-gnu
declare -A reallib=(
	[jemalloc]=$libdir/libjemalloc.so.2
	[mimalloc]=$libdir/libmimalloc.so.2
	[tcmalloc]=$libdir/libtcmalloc_minimal.so.4
)
# policy -> the allocator whose result it must give: the family it models
# (heaplab policies --verbose) when that one is preloaded here, else glibc;
# and the options it runs under (its family's, e.g. gperftools' front)
declare -A model_of=() conf_of=()
while read -r p family conf; do
	model_of[$p]=$family conf_of[$p]=$conf
done < <(hl_families)

# Named departures: TEST POLICY REASON, from each policy's folder
# (policies/NAME/libc_tests.table: TEST REASON; also in bench/FIDELITY.md).
# A "flaky" reason: the real allocator's result changes from run to run
# (a deadlock it does not always hit), so the pair may also agree.
departures=$(for f in "$src"/policies/*/libc_tests.table; do
	p=$(basename "$(dirname "$f")")
	sed -n "/^[^#]/s/^\([^ ]*\) /\1 $p /p" "$f"
done)

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

policies=$(hl_policies 2>/dev/null)
if [ ! -f "$preload" ] || [ -z "$policies" ] || [ ! -d "$libc/glibc-2.36" ]; then
	echo "libc_malloc_tests: the preload library, the policy list or tests/programs/libc is missing"
	exit 1
fi
cc="${CC:-cc}"
hl_tmpdir libc-malloc-tests

# the columns: glibc, then each real allocator beside its policy (the
# models of a real allocator first, in their order, then the others)
columns=(glibc)
for p in $(for p in $policies; do [ -n "${model_of[$p]:-}" ] && echo "$p"; done) $policies; do
	[[ " ${columns[*]} " =~ " $p " ]] && continue
	m=${model_of[$p]:-glibc}
	[ -n "${reallib[$m]:-}" ] || m=glibc
	model_of[$p]=$m
	if [ "$m" != glibc ] && [[ ! " ${columns[*]} " =~ " $m " ]]; then
		if [ -e "${reallib[$m]}" ]; then columns+=("$m"); else echo "NOTE: ${reallib[$m]} is not installed: $p is not compared"; model_of[$p]=; fi
	fi
	columns+=("$p")
done

# result BINARY ALLOCATOR: one run, printed as one word
result() {
	local bin=$1 who=$2 env=(env -u LD_PRELOAD HEAPLAB_CONF=)
	case $who in
	glibc) ;;
	jemalloc|mimalloc|tcmalloc) env+=(LD_PRELOAD="${reallib[$who]}") ;;
	*) env+=(LD_PRELOAD="$preload" HEAPLAB_POLICY="$who" HEAPLAB_CONF="${conf_of[$who]:-}") ;;
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
