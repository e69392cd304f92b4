#!/usr/bin/env bash
# heaplab adversary against bump: a region allocator never reuses, so the
# waves family (the same wave, four times or more) makes it hold at least
# four times its bound; the written trace, measured again by heaplab bound,
# gives the ratio the search printed.  (tests/programs/adversary.sh tests the
# shipped worst traces of every model against its real allocator.)
set -u
. "$(dirname "$0")/../../tests/lib.sh"
passed=0 failed=0
pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }
hl_tmpdir
json() { python3 -c 'import json,sys; o=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"; }
"$heaplab" adversary --policy=bump --budget=4 --live=64K -o "$tmp/bump.rep" > "$tmp/out" 2>&1 || fail "adversary exit $?: $(cat "$tmp/out")"
said=$(sed -n 's/.*: \([0-9.]*\) x bound.*/\1/p' "$tmp/out")
"$heaplab" bound --policy=bump --json "$tmp/bump.rep" > "$tmp/b.json"
again=$(json "$tmp/b.json" '"%.2f" % (o["policies"][0]["peak_committed"] / o["bound_bytes"])')
grep -q '^# family waves' "$tmp/bump.rep" && pass || fail "bump: the waves family did not win: $(head -3 "$tmp/bump.rep")"
awk -v r="$said" 'BEGIN { exit !(r >= 4) }' && pass || fail "bump: ratio $said, want >= 4"
[ "$said" = "$again" ] && pass || fail "bump: search said $said x bound, the written trace measures $again"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
