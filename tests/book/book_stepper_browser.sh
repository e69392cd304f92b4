#!/bin/sh
# A chapter's embedded stepper in a real browser: the stepper
# chapter 3 embeds (book/gen_steppers.sh writes it, make doc copies it next
# to the chapter's page) is put in a host page with the chapter's own
# \htmlonly block, and tests/book/book_stepper_browser.mjs drives it in headless
# Chromium: "next" three times inside the frame must show the trace's third
# op and the live bytes worked out here from the trace's text.
# Skipped (exit 77) only when Chromium, node or playwright-core is not
# installed: visualize/ci-deps.sh installs them.
set -u
src=${srcdir:-.}
chapter="$src/book/03-bump-regions.md"
. "$src/tests/visualize/browser_lib.sh"
hl_tmpdir book-stepper-browser
fail() { echo "FAIL: $*"; exit 1; }

sh "$src/book/gen_steppers.sh" ./heaplab "$tmp" || fail "gen_steppers.sh failed"
line=$(sed -n '/^TABLE$/q; /<<.TABLE.$/,$p' "$src/book/gen_steppers.sh" | awk '$1 == "03"')
[ -n "$line" ] || fail "chapter 3 has no line in book/gen_steppers.sh"
set -- $line
hl_compiled "$2" || hl_skip "$2 is not compiled in"
trace="$src/book/traces/$4"
[ -s "$tmp/ch03-stepper.html" ] || fail "no stepper page for chapter 3"
block=$(sed -n '/^\\htmlonly$/,/^\\endhtmlonly$/p' "$chapter" | sed '1d;$d')
echo "$block" | grep -q 'src="ch03-stepper.html"' || fail "chapter 3 does not embed ch03-stepper.html"
{
	echo '<!DOCTYPE html><html><head><meta charset="utf-8"><title>chapter 3</title></head><body>'
	echo '<h1>Chapter 3 (host page)</h1>'
	echo "$block"
	echo '</body></html>'
} >"$tmp/host.html"

# the trace's ops; the third, and the live requested bytes after it
grep '^[arfcmts] ' "$trace" >"$tmp/ops"
ops=$(wc -l <"$tmp/ops")
op3=$(sed -n 3p "$tmp/ops")
live3=$(head -n 3 "$tmp/ops" | awk '
	$1 == "a" || $1 == "r" { live += $3 - size[$2]; size[$2] = $3 }
	$1 == "f" { live -= size[$2]; size[$2] = 0 }
	END { print live + 0 }')
printf '{ "ops": %s, "op3": "%s", "live3": "%s" }\n' "$ops" "$op3" "$live3" >"$tmp/expect.json"
cat "$tmp/expect.json"
node "$src/tests/book/book_stepper_browser.mjs" "$tmp/host.html" "$tmp/expect.json"
