#!/usr/bin/env bash
# Claims of the book (book/claims.md) that heaplab has no model for, each
# checked on the real allocator installed here.  One PASS / FAIL / SKIP line
# per check, then "claims-real: N passed, N failed, N skipped", which
# .ci/summarize counts.  A missing library or tool is SKIP, never PASS; the
# script fails when a check fails, and is itself a SKIP when none ran.
#
#   60 jemalloc's heap profiler charges bytes to the function that
#      allocated them (fidelity/probes/claims_jeprof.c)
#   61 gperftools' tcmalloc keeps freed small blocks in tiers: thread
#      cache, transfer cache, central lists, page heap (claims_tcmalloc_tiers.c)
#   90 realloc by a fixed step against doubling, on glibc (claims_realloc.c;
#      the glibc.realloc-* fidelity rows compare the same probe with bins)
#   81 the Python service's fix: jemalloc preloaded with narenas:2 and
#      background_thread:true, and PYTHONMALLOC=malloc (claims_python_fix.py)
#   93 musl's mallocng against glibc: the usable-size ladder and what a
#      freed burst leaves resident (claims_musl.c, built here with musl-gcc)
set -u
. "$(dirname "$0")/../lib.sh"
hl_skip_sanitized "the claims are measured on the real allocators, preloaded into probes; a -fsanitize=$hl_sanitizer build owns malloc"
src="${abs_top_srcdir:-${srcdir:-.}}"
probes="$build/fidelity/probes"
libdir=/usr/lib/x86_64-linux-gnu
jemalloc="${HEAPLAB_FIDELITY_JEMALLOC:-$libdir/libjemalloc.so.2}"
tcmalloc="${HEAPLAB_FIDELITY_TCMALLOC:-$libdir/libtcmalloc_minimal.so.4}"
# The probes run in this environment minus anything that picks an allocator.
unset LD_PRELOAD MALLOC_CONF GLIBC_TUNABLES PYTHONMALLOC $(compgen -v HEAPLAB_) $(compgen -v TCMALLOC_)
hl_tmpdir
passed=0 failed=0 skipped=0

pass() { echo "PASS $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); }
skip() { echo "SKIP $1: $2"; skipped=$((skipped + 1)); }
# check ID WHY CONDITION: PASS when the arithmetic CONDITION holds.
check() { if (($3)); then pass "$1"; else fail "$1" "$2"; fi; }
# val KEY OUTPUT: the value of the line KEY=value.
val() { echo "$2" | sed -n "s/^$1=//p" | head -1; }
# run ID OUTVAR COMMAND...: runs a probe; exit 77 is SKIP, other failures FAIL.
run() {
	local id=$1 var=$2 probe_out rc
	shift 2
	probe_out=$("$@" 2>"$tmp/err")
	rc=$?
	printf -v "$var" '%s' "$probe_out"
	[ $rc -eq 0 ] && return 0
	if [ $rc -eq 77 ]; then skip "$id" "$(tail -1 "$tmp/err")"; else fail "$id" "exit $rc: $(tail -1 "$tmp/err")"; fi
	return 1
}

# --- 60: jemalloc's heap profile names the allocating function ----------
if [ ! -r "$jemalloc" ]; then
	skip claim60.jemalloc-prof "no $jemalloc"
elif run claim60.jemalloc-prof out env LD_PRELOAD="$jemalloc" MALLOC_CONF=prof:true,lg_prof_sample:0 \
	"$probes/claims_jeprof" "$tmp/heap.prof" 20000 1000; then
	req=$(val requested "$out") at=$(val attributed "$out") else=$(val elsewhere "$out")
	echo "  jemalloc: $req bytes requested, $at charged to $(val function "$out"), $else elsewhere"
	check claim60.jemalloc-prof "only $at of $req bytes charged to the allocating function" \
		"$at >= $req && $else < $req / 10"
fi

# --- 61: tcmalloc's tiers -----------------------------------------------
if [ ! -r "$tcmalloc" ]; then
	skip claim61.tcmalloc-tiers "no $tcmalloc"
elif run claim61.tcmalloc-tiers out env LD_PRELOAD="$tcmalloc" "$probes/claims_tcmalloc_tiers" 200000 64; then
	summary="" grew=0
	for tier in thread transfer central pageheap; do
		b=$(val "before_$tier" "$out") a=$(val "$tier" "$out")
		summary+=" $tier $b->$a"
		grew=$((grew + (a > b)))
	done
	echo "  tcmalloc free bytes after freeing $(val freed "$out"):$summary"
	check claim61.tcmalloc-tiers "not every tier gained free bytes:$summary" "$grew == 4"
	check claim61.tcmalloc-pageheap "whole spans did not go back to the page heap:$summary" \
		"$(val pageheap "$out") - $(val before_pageheap "$out") >= $(val freed "$out") / 2"
fi

# --- 81: the Python service's three settings, read back from CPython ----
if [ ! -r "$jemalloc" ] || ! command -v python3 >/dev/null; then
	skip claim81.python-fix "needs $jemalloc and python3"
elif run claim81.python-fix fix env LD_PRELOAD="$jemalloc" MALLOC_CONF=narenas:2,background_thread:true \
	PYTHONMALLOC=malloc python3 "$src/fidelity/probes/claims_python_fix.py" &&
	run claim81.python-fix pym env LD_PRELOAD="$jemalloc" MALLOC_CONF=narenas:2,background_thread:true \
	python3 "$src/fidelity/probes/claims_python_fix.py"; then
	echo "  jemalloc under CPython: narenas $(val narenas "$fix"), background_thread $(val background_thread "$fix");" \
		"of $(val objects_bytes "$fix") bytes of small objects, $(val malloc_live_bytes "$fix") live in jemalloc" \
		"with PYTHONMALLOC=malloc, $(val malloc_live_bytes "$pym") with pymalloc"
	check claim81.jemalloc-settings "MALLOC_CONF did not take: narenas $(val narenas "$fix"), background_thread $(val background_thread "$fix")" \
		"$(val narenas "$fix") == 2 && $(val background_thread "$fix") == 1"
	check claim81.pythonmalloc-malloc "PYTHONMALLOC=malloc: only $(val malloc_live_bytes "$fix") of $(val objects_bytes "$fix") bytes reached malloc" \
		"$(val malloc_live_bytes "$fix") >= $(val objects_bytes "$fix")"
	check claim81.pymalloc-keeps-small "pymalloc: $(val malloc_live_bytes "$pym") of $(val objects_bytes "$pym") bytes reached malloc" \
		"$(val malloc_live_bytes "$pym") * 10 < $(val objects_bytes "$pym")"
fi

# --- 90: realloc by a fixed step against doubling (glibc) ---------------
if [ "$(getconf GNU_LIBC_VERSION 2>/dev/null)" != "glibc 2.36" ]; then
	skip claim90.realloc-growth "the figures are glibc 2.36's; this is $(getconf GNU_LIBC_VERSION 2>/dev/null)"
elif run claim90.realloc-growth add "$probes/claims_realloc" add 1024 1048576 &&
	run claim90.realloc-growth dbl "$probes/claims_realloc" double 1024 1048576; then
	for v in add dbl; do
		echo "  glibc $v: reallocs $(val reallocs "${!v}"), copies $(val copies "${!v}") ($(val copied_kb "${!v}") KiB), mremaps $(val mremaps "${!v}"), mapped from $(val mapped_from "${!v}") bytes"
	done
	# A copy at every step would carry 1+2+...+1023 KiB = 511.5 MiB; glibc
	# grows the block in place at the top, then as a mapped chunk by mremap
	# (whether mremap moves the mapping is the kernel's choice: not checked).
	check claim90.realloc-in-place "fixed steps copied $(val copied_kb "$add") KiB, not much less than a copy per step" \
		"$(val copied_kb "$add") < 2048 && $(val mapped_from "$add") > 0"
	check claim90.realloc-doubling "doubling did more reallocs or copied more than fixed steps" \
		"$(val reallocs "$dbl") < $(val reallocs "$add") && $(val copied_kb "$dbl") <= $(val copied_kb "$add")"
fi

# --- 93: musl's mallocng against glibc ----------------------------------
if ! command -v musl-gcc >/dev/null; then
	skip claim93.musl "musl-gcc is not installed (apt-get install musl-tools)"
elif ! musl-gcc -std=c11 -O2 -o "$tmp/musl" "$src/fidelity/probes/claims_musl.c" 2>"$tmp/err" ||
	! ${CC:-cc} -std=c11 -O2 -o "$tmp/glibc" "$src/fidelity/probes/claims_musl.c" 2>>"$tmp/err"; then
	fail claim93.musl "the probe did not build: $(tail -1 "$tmp/err")"
elif run claim93.musl m "$tmp/musl" 1024 && run claim93.musl g "$tmp/glibc" 1024; then
	for v in m g; do
		echo "  $([ $v = m ] && echo musl || echo glibc): usable == request for $(val exact "${!v}") of 1024 requests, $(val steps "${!v}") sizes; burst $(val burst_kb "${!v}") KiB, $(val kept_kb "${!v}") KiB still resident after freeing 63 in 64"
	done
	check claim93.musl-exact-size "musl's malloc_usable_size is not the request" "$(val exact "$m") == 1024"
	check claim93.glibc-rounds "glibc's malloc_usable_size was exact for $(val exact "$g") requests" \
		"$(val exact "$g") < 128"
	check claim93.musl-returns "musl kept $(val kept_kb "$m") of $(val burst_kb "$m") KiB" \
		"$(val kept_kb "$m") * 4 < $(val burst_kb "$m") * 3"
	check claim93.glibc-keeps "glibc returned pages: kept $(val kept_kb "$g") of $(val burst_kb "$g") KiB" \
		"$(val kept_kb "$g") * 10 >= $(val burst_kb "$g") * 9"
fi

echo "claims-real: $passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ] || exit 1
[ $passed -eq 0 ] && exit 77
exit 0
