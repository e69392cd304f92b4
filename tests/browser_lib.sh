# Sourced by the browser tests (tests/test_visualize_browser.sh,
# tests/diagnose_browser.sh, tests/book_stepper_browser.sh): exports
# HEAPLAB_BROWSER_DIR for visualize/browser-lib.mjs and skips the test
# (exit 77, with the reason) only when Chromium, node or playwright-core is
# not installed; visualize/ci-deps.sh installs all three.
chromium=${CHROMIUM:-/usr/bin/chromium}
export HEAPLAB_BROWSER_DIR=${HEAPLAB_BROWSER_DIR:-/tmp/heaplab-browser}
[ -x "$chromium" ] || { echo "SKIP: no Chromium at $chromium (run visualize/ci-deps.sh, or set CHROMIUM)"; exit 77; }
command -v node >/dev/null 2>&1 || { echo "SKIP: no node to drive Chromium (run visualize/ci-deps.sh)"; exit 77; }
[ -f "$HEAPLAB_BROWSER_DIR/node_modules/playwright-core/package.json" ] ||
	{ echo "SKIP: no playwright-core in $HEAPLAB_BROWSER_DIR (run visualize/ci-deps.sh)"; exit 77; }
