#!/usr/bin/env bash
# heaplab fidelity itself, on rows made for the test (tests/fidelity/):
#   - a damaged rows file stops it with "file:line: message" and exit 2;
#   - a row whose model departs from the real allocator (bins set up as
#     glibc 2.43, its tcache depth compared equal to 2.36's) is FAIL, so is a row
#     whose key the probe never prints, so is one past its timeout, and
#     --check then exits 1;
#   - a row whose probe was not built, whose real library is missing, or
#     whose glibc version is not this machine's, is SKIP, never PASS;
#   - a row that agrees is PASS;
#   - a family heaplab does not know is one a rows file brings: its family
#     stanza says the real side (`real_preload`: none, the C library's own
#     malloc, or a library), a damaged stanza is "file:line: message", and
#     its rows are listed and run like any other family's.
set -u
. "$(dirname "$0")/../lib.sh"
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
# a family of its own: the family stanza, damaged
family=lab damage "1: the family stanza names 'glibc', not this file's family" <<'ROWS'
family glibc
real_preload none
ROWS
family=lab damage "2: bad real_preload 'libc.so.6' (none, or the library's absolute path)" <<'ROWS'
family lab
real_preload libc.so.6
ROWS
family=lab damage "1: the family stanza has no 'real_preload' field" <<'ROWS'
family lab
ROWS
family=lab damage "1: the family stanza holds only 'family' and 'real_preload'" <<'ROWS'
family lab
real_preload none
claim c
ROWS
family=lab damage "7: the family stanza comes before the first row" <<'ROWS'
row lab.a
claim c
probe sizes 1 2
key ladder
compare equal

family lab
real_preload none
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

# a family of its own, whose real side is the C library's malloc: listed,
# its row run on glibc and on the model its row names (the glibc model
# frees the block and returns NULL for realloc(p, 0), as glibc does); a
# family stanza naming a library that is not there makes its rows SKIP
rm -f "$tmp"/*.rows
cat >"$tmp/lab.rows" <<ROWS
family        lab
real_preload  none

row       lab.realloc-zero
claim     realloc(p, 0) frees the block and returns NULL
probe     realloc_zero
key       realloc_zero
compare   equal
model     $glibc
ROWS
expect "a new family is listed" "$(HEAPLAB_FIDELITY_DIR="$tmp" "$heaplab" fidelity --list | cut -f1)" lab.realloc-zero
expect "a new family is one of --family's" "$(HEAPLAB_FIDELITY_DIR="$tmp" "$heaplab" fidelity --family lab --brief)" \
	"PASS lab.realloc-zero
fidelity: 1 passed, 0 failed, 0 skipped"
sed -i 's|^real_preload  none$|real_preload  /nonexistent/liblab.so|' "$tmp/lab.rows"
expect "a new family's missing library" "$(HEAPLAB_FIDELITY_DIR="$tmp" "$heaplab" fidelity --brief | head -1)" \
	"SKIP lab.realloc-zero: /nonexistent/liblab.so is not installed"
exit $failed
