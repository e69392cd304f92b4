#!/usr/bin/env bash
# The rest of the C library's malloc API under the preload library, each
# policy beside its real allocator, measured now with the same probe
# (tests/programs/malloc_api_probe.c): mallinfo2 and mallinfo before and after a
# workload and after malloc_trim(0), malloc_trim's answer, mallopt's answers
# to fifteen parameters and values, malloc_stats' text and malloc_info's XML,
# the arenas malloc_info shows after mallopt(M_ARENA_MAX, N), and the bytes
# in use after threads that filled their caches have ended.
#
#   bins   beside glibc (no preload): every line equal (bins' tcache
#          record is the running glibc's struct, policies/bins/bins.h).
#   slab, sharded   beside jemalloc 5.3 and mimalloc 2.0.9, which export none
#          of these functions: everything equal (glibc's idle malloc answers).
#   percpu front:thread   beside libtcmalloc_minimal (gperftools 2.10):
#          mallinfo2, malloc_info, malloc_trim and mallopt equal; mallinfo's
#          arena after the workload equal and its unfilled fields 0; the
#          bytes in use grown by the workload (uordblks after less before)
#          within 64 bytes: percpu counts the 16-byte tail of an 8 KiB span
#          of 112-byte objects as in use, gperftools does not; gperftools
#          starts with libstdc++'s emergency pool allocated, so the figures
#          before differ.  malloc_stats: the same lines, numbers aside.
#   every other policy and configuration: each call returns, the probe
#          exits 0 (no crash), and what the man page says they answer.
# A missing real library is SKIP for its comparison, never PASS.  Each
# family's model is the one heaplab policies --families names, under the
# options it lists for the installed allocator.
set -u
. "$(dirname "$0")/../lib.sh"
glibc=$(hl_model_of glibc)   # the policy that models glibc (bins here)
probe="$build/tests/programs/malloc_api_probe"
hl_skip_sanitized "a sanitizer owns malloc, nothing can be preloaded"
hl_tmpdir malloc-api
work=$tmp
fail=0 checked=0
libdir=/usr/lib/x86_64-linux-gnu
pass() { echo "PASS: $*"; checked=$((checked + 1)); }
bad() { echo "FAIL: $*"; fail=1; }
# the options under which the model of FAMILY follows its installed allocator
family_conf() { hl_families | awk -v f="$1" '$2 == f { print $3; exit }'; }

# run NAME [POLICY CONF]: the probe's heap run, NAME.out and NAME.err;
# no POLICY: glibc, or the library in $preload
run() {
	local name=$1 policy=${2:-} conf=${3:-}
	if [ -n "$policy" ]; then
		HEAPLAB_CONF= "$heaplab" run --policy="$policy" ${conf:+--conf="$conf"} -- \
			"$probe" heap > "$work/$name.out" 2> "$work/$name.err"
	else
		LD_PRELOAD=${preload:-} "$probe" heap > "$work/$name.out" 2> "$work/$name.err"
	fi || { bad "the probe failed under $name (exit $?)"; tail -3 "$work/$name.err"; return 1; }
}

# compare REAL MODEL WHAT AWK: joins the two runs' outputs line by line and
# fails on any line the awk program (given r and m, the two lines' last
# fields, and line, the real one) does not accept
compare() {
	local real=$1 model=$2 what=$3 rule=$4
	if [ "$(wc -l < "$real")" -ne "$(wc -l < "$model")" ]; then
		bad "$what: $(wc -l < "$real") lines against $(wc -l < "$model")"; diff "$real" "$model" | head -6; return
	fi
	local off
	off=$(paste -d'\n' "$real" "$model" | awk 'NR % 2 { line = $0; r = $NF; next }
		{ m = $NF; mline = $0; gsub(/[0-9"]+/, "#", mline); rl = line; gsub(/[0-9"]+/, "#", rl) }
		'"$rule"' { next } { print "  real: " line; print "  model: " $0 }')
	if [ -z "$off" ]; then pass "$what"; else bad "$what"; echo "$off" | head -8; fi
}
num() { awk -v k="$1" '$1 == k { print $2 }' "$2"; }

# ---- bins beside glibc --------------------------------------------------------
if [ -n "$glibc" ]; then
	preload= run glibc && run "$glibc" "$glibc" ""
	if [ "$(num mallinfo2.after.hblks "$work/glibc.out")" != 1 ] ||
	   [ "$(num mallinfo2.after.smblks "$work/glibc.out")" = 0 ] ||
	   [ "$(num malloc_trim "$work/glibc.out")" != 1 ]; then
		bad "glibc's own run does not show the workload (a mapped chunk, fastbin chunks, a trim)"
	fi
	compare "$work/glibc.out" "$work/$glibc.out" "$glibc answers mallinfo2, mallinfo, malloc_trim, mallopt and malloc_info as glibc does" \
		"(line == \$0)"
	compare "$work/glibc.err" "$work/$glibc.err" "$glibc: malloc_stats is glibc's" "(line == \$0)"
	for n in 0 1 2 3; do
		real=$("$probe" arenas $n) model=$(HEAPLAB_CONF= "$heaplab" run --policy="$glibc" -- "$probe" arenas $n)
		if [ -n "$real" ] && [ "$real" = "$model" ]; then
			pass "mallopt(M_ARENA_MAX, $n) then four threads: $real under glibc and $glibc"
		else
			bad "mallopt(M_ARENA_MAX, $n): glibc '$real', $glibc '$model'"
		fi
	done
	# what a thread cached goes back when it ends (glibc's tst-malloc-tcache-
	# leak asks the same): the bytes in use after 200 threads, one after the
	# other, are those after the first.  The figures themselves differ (glibc
	# 3216, bins 1120 here): glibc keeps a secondary arena's header, about
	# 2 KiB, inside its sub-heap, bins in its metadata.
	steady() { awk '{ exit !($6 + 0 > 0 && $6 + 0 == $9) }'; }
	real=$("$probe" threads 200) model=$(HEAPLAB_CONF= "$heaplab" run --policy="$glibc" -- "$probe" threads 200)
	if echo "$real" | steady && echo "$model" | steady; then
		pass "200 threads filling their caches leave what the first left: glibc '$real', $glibc '$model'"
	else
		bad "threads' caches: glibc '$real', $glibc '$model'"
	fi
fi

# ---- slab, sharded beside jemalloc, mimalloc: nothing of theirs ------------------
for pair in jemalloc:libjemalloc.so.2 mimalloc:libmimalloc.so.2; do
	policy=$(hl_model_of "${pair%%:*}") lib=$libdir/${pair#*:}
	[ -n "$policy" ] || continue
	if [ ! -e "$lib" ]; then echo "SKIP: $lib is not installed ($policy not compared)"; continue; fi
	preload=$lib run "real-$policy" && run "$policy" "$policy" "$(family_conf "${pair%%:*}")"
	for s in out err; do
		if cmp -s "$work/real-$policy.$s" "$work/$policy.$s" && [ -s "$work/real-$policy.$s" ]; then
			pass "$policy's std$s equals ${lib##*/}'s (the C library's idle malloc answers)"
		else
			bad "$policy's std$s differs from ${lib##*/}'s"; diff "$work/real-$policy.$s" "$work/$policy.$s" | head -6
		fi
	done
done

# ---- percpu front:thread beside gperftools -------------------------------------
lib=$libdir/libtcmalloc_minimal.so.4
tcmalloc=$(hl_model_of tcmalloc) tcmalloc_conf=$(family_conf tcmalloc)
if [ -n "$tcmalloc" ] && [ ! -e "$lib" ]; then
	echo "SKIP: $lib is not installed ($tcmalloc not compared)"
elif [ -n "$tcmalloc" ]; then
	preload=$lib run tcmalloc && run "$tcmalloc" "$tcmalloc" "$tcmalloc_conf"
	compare "$work/tcmalloc.out" "$work/$tcmalloc.out" "$tcmalloc $tcmalloc_conf: mallinfo2, malloc_trim, mallopt, malloc_info and mallinfo's arena and unfilled fields as gperftools'" \
		"(line == \$0) || (line ~ /^mallinfo\\.before\\./) ||
		 (line ~ /^mallinfo\\.after\\.(fsmblks|fordblks|uordblks) /)"
	grown() { echo $(( $(num mallinfo.after.uordblks "$1") - $(num mallinfo.before.uordblks "$1") )); }
	r=$(grown "$work/tcmalloc.out") m=$(grown "$work/$tcmalloc.out")
	if [ "$r" -gt 0 ] && [ $((m - r)) -ge -64 ] && [ $((m - r)) -le 64 ]; then
		pass "mallinfo's uordblks grew by $m under $tcmalloc, $r under gperftools (within 64)"
	else
		bad "mallinfo's uordblks grew by $m under $tcmalloc, $r under gperftools"
	fi
	if diff <(sed 's/[0-9.]\+//g; s/  */ /g' "$work/tcmalloc.err") <(sed 's/[0-9.]\+//g; s/  */ /g' "$work/$tcmalloc.err") >/dev/null &&
	   grep -q "MALLOC:" "$work/tcmalloc.err"; then
		pass "$tcmalloc's malloc_stats has gperftools' lines"
	else
		bad "$tcmalloc's malloc_stats lines differ from gperftools'"; diff "$work/tcmalloc.err" "$work/$tcmalloc.err" | head -6
	fi
fi

# ---- every policy: safe, and what the man page says ---------------------------
# (the model of glibc answers as glibc, and the model of pymalloc as the
# malloc it falls back to, glibc's by default; the others as glibc's idle
# malloc)
idle='mallinfo2.after.arena 0'
as_glibc=" $glibc $(hl_model_of pymalloc) "
for policy in $(hl_policies); do
	for conf in "" debug:on; do
		name="$policy${conf:+-debug}"
		run "$name" "$policy" "$conf" || continue
		"$heaplab" run --policy="$policy" ${conf:+--conf="$conf"} -- "$probe" arenas 2 > "$work/$name.arenas" ||
			bad "the arenas probe failed under $name"
		case $as_glibc in
		*" $policy "*) grep -qx 'malloc_trim 1' "$work/$name.out" && ! grep -qx "$idle" "$work/$name.out" ;;
		*) grep -qx 'malloc_trim 0' "$work/$name.out" && grep -qx "$idle" "$work/$name.out" ;;
		esac && pass "$name: every call returns; mallinfo2 and malloc_trim as documented" ||
			bad "$name: mallinfo2 or malloc_trim not as documented"
	done
done
[ "$checked" -gt 0 ] || { echo "SKIP: nothing compared"; exit 77; }
exit $fail
