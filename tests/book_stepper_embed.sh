#!/bin/sh
# A chapter's embedded stepper in a real browser (issue 20): chapter 9's
# \htmlonly block, in a page of its own beside the stepper page that
# book/gen_worked.sh makes for it (the same `heaplab step` command, from
# the script's table), loaded in headless Chromium by
# tests/book_stepper_embed.mjs, which steps inside the frame.  Expected
# values come from the trace's text and `heaplab replay --explain`, not
# from the page.  Skipped (exit 77) only when Chromium, node or
# playwright-core is not installed (visualize/ci-deps.sh installs them) or
# sharded is not compiled in.
set -u
src=${srcdir:-.}
chromium=${CHROMIUM:-/usr/bin/chromium}
export HEAPLAB_BROWSER_DIR=${HEAPLAB_BROWSER_DIR:-/tmp/heaplab-browser}
[ -x "$chromium" ] || { echo "SKIP: no Chromium at $chromium (run visualize/ci-deps.sh, or set CHROMIUM)"; exit 77; }
command -v node >/dev/null 2>&1 || { echo "SKIP: no node to drive Chromium (run visualize/ci-deps.sh)"; exit 77; }
[ -f "$HEAPLAB_BROWSER_DIR/node_modules/playwright-core/package.json" ] ||
	{ echo "SKIP: no playwright-core in $HEAPLAB_BROWSER_DIR (run visualize/ci-deps.sh)"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

# chapter 9's stepper line of the table: trace, policy, configuration
set -- $(sed -n '/<<.TABLE.$/,/^TABLE$/p' "$src/book/gen_worked.sh" | awk '$1 == "09" && $2 == "step" { print $3, $4, $5 }')
[ $# -eq 3 ] || fail "no stepper for chapter 9 in book/gen_worked.sh"
trace="$src/book/traces/$1" policy=$2 conf=$3
./heaplab policies | awk '{print $1}' | grep -qx "$policy" || { echo "SKIP: $policy is not compiled in"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/book-stepper-embed.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT

md=$(ls "$src"/book/09-*.md)
sed -n '/^\\htmlonly$/,/^\\endhtmlonly$/p' "$md" | sed '1d;$d' >"$tmp/block"
grep -q '<iframe' "$tmp/block" || fail "${md##*/} has no \\htmlonly block with an iframe"
src_attr=$(sed -n 's/.*<iframe src="\([^"]*\)".*/\1/p' "$tmp/block")
{ echo '<!DOCTYPE html><html><head><meta charset="utf-8"><title>chapter 9</title></head><body>'
  cat "$tmp/block"; echo '</body></html>'; } >"$tmp/chapter.html"
set -- --policy="$policy"
[ "$conf" = - ] || set -- "$@" --conf="$conf"
./heaplab step "$trace" "$@" -o "$tmp/$src_attr" >/dev/null 2>&1 || fail "heaplab step failed"

# what the page must show, from the trace and replay --explain
grep '^[arfcmts] ' "$trace" >"$tmp/ops"
ops=$(wc -l <"$tmp/ops")
op3=$(sed -n 3p "$tmp/ops")
collect=$(./heaplab replay "$@" --repeat 0 --explain "$trace" | awk '/^op [0-9]+ / { n = $2 } /collected: thread_free/ { print n; exit }')
[ -n "$collect" ] || fail "replay --explain shows no collection of thread_free"
./heaplab replay "$@" --repeat 0 --explain "$trace" |
	awk -v n="$collect" '/^op [0-9]+ / { on = ($2 == n); next } on { sub(/^ +/, ""); print }' >"$tmp/steps"
steps=$(node -e 'process.stdout.write(JSON.stringify(require("fs").readFileSync(process.argv[1], "utf8").trim()))' "$tmp/steps")
cat >"$tmp/expect.json" <<JSON
{ "src": "$src_attr", "ops": $ops, "op3": "$op3", "explain": { "op": $collect, "steps": $steps } }
JSON
cat "$tmp/expect.json"
node "$src/tests/book_stepper_embed.mjs" "$tmp/chapter.html" "$tmp/expect.json"
