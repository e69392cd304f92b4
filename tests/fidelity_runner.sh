#!/usr/bin/env bash
# heaplab fidelity itself, on rows made for the test (tests/fidelity/):
#   - a damaged rows file stops it with "file:line: message" and exit 2;
#   - a row whose model departs from the real allocator (bins set up as
#     glibc 2.43, its tcache depth compared equal to 2.36's) is FAIL, so is a row
#     whose key the probe never prints, so is one past its timeout, and
#     --check then exits 1;
#   - a row whose probe was not built, whose real library is missing, or
#     whose glibc version is not this machine's, is SKIP, never PASS;
#   - a row that agrees is PASS.
set -u
. "$(dirname "$0")/lib.sh"
glibc=$(hl_model_of glibc)   # the policy that models glibc (bins here)
src="${srcdir:-.}"
[ -n "$glibc" ] || hl_skip "no model of glibc is compiled in"
failed=0
expect() { # expect WHAT ACTUAL WANTED
	if [ "$2" = "$3" ]; then echo "ok: $1"; else echo "FAILED: $1: got '$2', wanted '$3'"; failed=1; fi
}

err=$(HEAPLAB_FIDELITY_DIR="$src/tests/fidelity/damaged" "$heaplab" fidelity --family glibc 2>&1 >/dev/null)
expect "damaged file: exit status" "$?" 2
expect "damaged file: the message" "$(echo "$err" | sed 's|.*/tests/fidelity/||')" \
	"damaged/glibc.rows:9: bad compare 'roughly' (equal, within N%, within N, deviation)"

# more damage, each in a rows file of its own: "LINE: MESSAGE" wanted
hl_tmpdir
damage() { # [family=F] damage WANTED < rows text: exit 2 and F.rows:WANTED
	local fam=${family:-glibc} err rc
	rm -f "$tmp"/*.rows
	cat >"$tmp/$fam.rows"
	err=$(HEAPLAB_FIDELITY_DIR="$tmp" "$heaplab" fidelity --list 2>&1 >/dev/null)
	rc=$?
	expect "damaged file: $1" "$rc ${err#"$tmp"/}" "2 $fam.rows:$1"
}
damage "2: unknown field 'color' (see fidelity/README.md)" <<'ROWS'
row glibc.a
color red
ROWS
damage "1: row 'glibc.a' is a deviation: it needs a 'why'" <<'ROWS'
row glibc.a
claim c
probe sizes 1 2
key ladder
compare deviation
ROWS
damage "1: row id 'jemalloc.a' must be <family>.<name>, the family being this file's" <<'ROWS'
row jemalloc.a
claim c
probe sizes 1 2
key ladder
compare equal
ROWS
damage "2: this row has no 'probe' field" <<'ROWS'
# a comment
row glibc.a
claim c
key ladder
compare equal
ROWS
damage "3: field 'claim' given twice in this row" <<'ROWS'
row glibc.a
claim c
claim d
ROWS
family=jemalloc damage "1: real_version is known only for glibc rows (this is a jemalloc row)" <<'ROWS'
row jemalloc.a
claim c
probe sizes 1 2
key ladder
compare equal
real_version 5.3
ROWS
damage "6: environment word 'TUNABLES' is not NAME=value" <<'ROWS'
row glibc.a
claim c
probe sizes 1 2
key ladder
compare equal
real_env TUNABLES
ROWS

# running rows preloads heaplab and the real allocators into probes, which a
# sanitizer build cannot do: there only the rows files' checks above run
if hl_sanitized; then
	echo "SKIP: running rows (they preload heaplab into probes; a -fsanitize=$hl_sanitizer build owns malloc)"
	exit $failed
fi
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
expect "another glibc version" "$(echo "$out" | grep -c '^SKIP glibc.other-version: the row is for glibc 0.1; this is glibc ')" 1
expect "a probe past its timeout" "$(verdict glibc.too-slow)" FAIL
expect "the timeout is named" "$(echo "$out" | grep -c '^FAIL glibc.too-slow: real side timed out after 0.05 s')" 1
expect "the closing line" "$(echo "$out" | tail -1)" "fidelity: 1 passed, 3 failed, 3 skipped"
expect "the departure names both values" \
	"$(echo "$out" | grep "^FAIL glibc.departs: differ (the row says equal)" | grep -c "(real '7', model '16')$")" 1
expect "the departure shows the first line that differs" \
	"$(echo "$out" | grep -c "first difference: real 'order=6 5 4 3 2 1 0 19 ")" 1

HEAPLAB_FIDELITY_DIR="$src/tests/fidelity" "$heaplab" fidelity --row glibc.same --check >/dev/null 2>&1
expect "--check with a passing row: exit status" "$?" 0
exit $failed
