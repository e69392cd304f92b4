# Sourced by the browser tests (tests/visualize/test_visualize_browser.sh,
# tests/visualize/diagnose_browser.sh, tests/book/book_stepper_browser.sh): exports
# HEAPLAB_BROWSER_DIR for visualize/browser-lib.mjs and skips the test
# (exit 77, with the reason) only when Chromium, node or playwright-core is
# not installed; visualize/ci-deps.sh installs all three.  It sources
# tests/lib.sh, so a browser test has what every test script shares.
. "$(dirname "$0")/../lib.sh"
chromium=${CHROMIUM:-/usr/bin/chromium}
export HEAPLAB_BROWSER_DIR=${HEAPLAB_BROWSER_DIR:-/tmp/heaplab-browser}
[ -x "$chromium" ] || hl_skip "no Chromium at $chromium (run visualize/ci-deps.sh, or set CHROMIUM)"
command -v node >/dev/null 2>&1 || hl_skip "no node to drive Chromium (run visualize/ci-deps.sh)"
[ -f "$HEAPLAB_BROWSER_DIR/node_modules/playwright-core/package.json" ] ||
	hl_skip "no playwright-core in $HEAPLAB_BROWSER_DIR (run visualize/ci-deps.sh)"
