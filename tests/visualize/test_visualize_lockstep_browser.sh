#!/bin/sh
# The lockstep page in a real browser: `heaplab step --policy=A,B,...` with
# every compiled-in policy on the teaching trace, driven in headless
# Chromium by visualize/lockstep-browser-test.mjs.  Where "next" and "next
# divergence" must land, and what each column must show there, is worked
# out here without the page: from `heaplab replay --explain=json` of each
# policy alone (tests/visualize/lockstep_lib.sh), the ops where the policies differ
# by each rule; the terminal's table (`step --tty`) must print the same
# figures for the first op where OS calls differ.  Replays run steady
# (tests/visualize/lockstep_lib.sh says why).
# Skipped (exit 77) only when Chromium, node or playwright-core is not
# installed (visualize/ci-deps.sh installs them) or one policy is compiled in.
set -u
src=${srcdir:-.}
trace="$src/visualize/traces/teach.rep"
. "$src/tests/visualize/browser_lib.sh"
. "$src/tests/lib.sh"
. "$src/tests/visualize/lockstep_lib.sh"
hl_tmpdir heaplab-lockstep-browser
fail() { echo "FAIL: $*"; exit 1; }

lockstep_facts "$trace" $policies >"$tmp/facts" || fail "replay --explain failed"
os=$(lockstep_diverging "$tmp/facts" os 10)
os1=$(echo "$os" | sed -n 1p)
os2=$(echo "$os" | sed -n 2p)
reuse=$(lockstep_diverging "$tmp/facts" reuse 10 | sed -n 1p)
committed=$(lockstep_diverging "$tmp/facts" committed 50 | awk -v after="$os1" '$1 > after' | sed -n 1p)
[ -n "$os2" ] && [ -n "$reuse" ] && [ -n "$committed" ] ||
	fail "teach.rep has too few divergences for this test (os: $os; reuse: $reuse; committed: $committed)"
[ "$os1" -gt 1 ] || fail "the first OS divergence is op $os1: 'next divergence' would not skip an op"

# the table must say the same of op $os1
steady ./heaplab step --tty --policy="$list" "$trace" >"$tmp/table" || fail "heaplab step --tty failed"
lockstep_cells "$tmp/table" | awk -v k="$os1" '$2 == k { print $1, $3, $4 }' | sort >"$tmp/table-os1"
awk -v k="$os1" '$2 == k { print $1, $3, $4 }' "$tmp/facts" | sort >"$tmp/facts-os1"
[ -s "$tmp/facts-os1" ] && cmp -s "$tmp/table-os1" "$tmp/facts-os1" ||
	{ diff "$tmp/facts-os1" "$tmp/table-os1"; fail "the table's OS calls at op $os1 differ from replay --explain's"; }

# EXPECT: the ops' texts and each policy's figures at the ops visited
grep '^[arfcmts] ' "$trace" >"$tmp/ops"
{
	printf '{ "policies": [%s],\n' "$(echo $policies | sed 's/[^ ]*/"&"/g; s/ /, /g')"
	printf '  "ops": [""'
	while read -r line; do printf ', "%s"' "$line"; done <"$tmp/ops"
	printf '],\n  "os": [%s, %s], "reuse": %s, "committed50": %s,\n  "at": {' "$os1" "$os2" "$reuse" "$committed"
	awk -v want="3 $os1 $os2 $reuse $committed" '
		BEGIN { split(want, w, " "); for (i in w) keep[w[i]] = 1 }
		($2 in keep) && !(($1, $2) in seen) {
			seen[$1, $2] = 1
			fig[$2] = fig[$2] (fig[$2] == "" ? "" : ", ") sprintf("\"%s\": { \"os\": \"%s\", \"dos\": \"%s\", \"committed\": \"%s\", \"reused\": %d, \"ids\": \"%s\" }", $1, $3, $4, $5, $7, $8)
		}
		END { n = 0; for (k in fig) printf "%s\n    \"%s\": { %s }", n++ ? "," : "", k, fig[k] }' "$tmp/facts"
	printf ' } }\n'
} >"$tmp/expect.json"
node -e 'JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"))' "$tmp/expect.json" ||
	{ cat "$tmp/expect.json"; fail "the expectations are not JSON"; }
echo "expected: OS calls diverge first at ops $os1 and $os2, reuse at $reuse, committed (50 %) after $os1 at $committed"

steady ./heaplab step --policy="$list" -o "$tmp/lockstep.html" "$trace" || fail "heaplab step (page) failed"
node "$src/visualize/lockstep-browser-test.mjs" "$tmp/lockstep.html" "$tmp/expect.json"
