#!/bin/sh
# ci-deps.sh: installs what the stepper's browser test
# (tests/visualize/test_visualize_browser.sh) needs, for .ci/run:
#   - Debian's chromium (apt), and node with npm when missing;
#   - playwright-core from npm, into $HEAPLAB_BROWSER_DIR
#     (default /tmp/heaplab-browser), where the test looks for it.
# It only ever runs apt-get and npm; it is safe to run twice.
set -eu
dir=${HEAPLAB_BROWSER_DIR:-/tmp/heaplab-browser}

as_root() {
	if [ "$(id -u)" = 0 ]; then "$@"; else sudo -n "$@"; fi
}

missing=""
command -v chromium >/dev/null 2>&1 || missing="$missing chromium"
command -v node >/dev/null 2>&1 || missing="$missing nodejs"
command -v npm >/dev/null 2>&1 || missing="$missing npm"
if [ -n "$missing" ]; then
	echo "ci-deps: apt-get install$missing"
	as_root apt-get update -q
	# shellcheck disable=SC2086
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing
fi
if [ ! -f "$dir/node_modules/playwright-core/package.json" ]; then
	echo "ci-deps: npm install playwright-core into $dir"
	mkdir -p "$dir"
	(cd "$dir" && npm install --no-audit --no-fund --silent playwright-core)
fi
echo "ci-deps: chromium $(command -v chromium), playwright-core in $dir"
