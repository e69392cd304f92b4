#!/usr/bin/env bash
# heaplab fidelity itself, on rows made for the test (tests/fidelity/):
#   - a damaged rows file stops it with "file:line: message" and exit 2;
#   - a row whose model departs from the real allocator (bins' default
#     tcache depth compared equal to glibc 2.36's) is FAIL, so is a row
#     whose key the probe never prints, and --check then exits 1;
#   - a row whose probe was not built, or whose real library is missing,
#     is SKIP, never PASS;
#   - a row that agrees is PASS.
set -u
build="${abs_top_builddir:-.}"
src="${srcdir:-.}"
heaplab="$build/heaplab"
"$heaplab" policies | awk '{print $1}' | grep -qx bins || { echo "bins is not compiled in"; exit 77; }
failed=0
expect() { # expect WHAT ACTUAL WANTED
	if [ "$2" = "$3" ]; then echo "ok: $1"; else echo "FAILED: $1: got '$2', wanted '$3'"; failed=1; fi
}

err=$(HEAPLAB_FIDELITY_DIR="$src/tests/fidelity/damaged" "$heaplab" fidelity --family glibc 2>&1 >/dev/null)
expect "damaged file: exit status" "$?" 2
expect "damaged file: the message" "$(echo "$err" | sed 's|.*/tests/fidelity/||')" \
	"damaged/glibc.rows:9: bad compare 'roughly' (equal, within N%, within N, deviation)"

out=$(HEAPLAB_FIDELITY_DIR="$src/tests/fidelity" HEAPLAB_FIDELITY_JEMALLOC=/nonexistent/libjemalloc.so.2 \
	"$heaplab" fidelity --check --brief 2>&1)
expect "--check with failing rows: exit status" "$?" 1
echo "$out" | sed "s/^/  | /"  # indented: its closing line is not this test's
verdict() { echo "$out" | awk -v id="$1" '$2 == id || $2 == id ":" {print $1}'; }
expect "a row that agrees" "$(verdict glibc.same)" PASS
expect "a model that departs" "$(verdict glibc.departs)" FAIL
expect "a key never printed" "$(verdict glibc.no-key)" FAIL
expect "a probe not built" "$(verdict glibc.no-probe)" SKIP
expect "a missing real library" "$(verdict jemalloc.anything)" SKIP
expect "the closing line" "$(echo "$out" | tail -1)" "fidelity: 1 passed, 2 failed, 2 skipped"
expect "the departure names both values" \
	"$(echo "$out" | grep "^FAIL glibc.departs: differ (the row says equal)" | grep -c "(real '7', model '16')$")" 1
expect "the departure shows the first line that differs" \
	"$(echo "$out" | grep -c "first difference: real 'order=6 5 4 3 2 1 0 19 ")" 1

HEAPLAB_FIDELITY_DIR="$src/tests/fidelity" "$heaplab" fidelity --row glibc.same --check >/dev/null 2>&1
expect "--check with a passing row: exit status" "$?" 0
exit $failed
