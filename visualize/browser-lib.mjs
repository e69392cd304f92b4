// browser-lib.mjs: what heaplab's browser tests share.  playwright-core
// is loaded from $HEAPLAB_BROWSER_DIR's node_modules (visualize/ci-deps.sh
// installs it there) and drives the system's Chromium (/usr/bin/chromium,
// or $CHROMIUM) headless, with nothing that reaches for the network.
// check() prints one "ok" or "FAIL" line per expectation and counts the
// failures; finish() exits with that count (capped at 100), so a test's
// exit status is 0 only when every check held.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import path from 'node:path';

let failures = 0;

/** Prints whether @got equals @want (compared as strings) and counts a miss. */
export function check(what, got, want) {
	const same = String(got) === String(want);
	console.log(`${same ? 'ok' : 'FAIL'}: ${what}: ${JSON.stringify(got)}${same ? '' : ` (expected ${JSON.stringify(want)})`}`);
	if (!same)
		failures++;
}

/** A JSON file's contents, or null when no path is given. */
export function readJson(file) {
	return file ? JSON.parse(readFileSync(file, 'utf8')) : null;
}

/** The file: URL of a page on disk. */
export function pageUrl(file) {
	return pathToFileURL(path.resolve(file)).href;
}

/** Headless Chromium; @extraArgs are added to the quiet defaults. */
export async function launchBrowser(extraArgs = []) {
	const require = createRequire(path.join(process.env.HEAPLAB_BROWSER_DIR, 'node_modules', 'x.js'));
	const { chromium } = require('playwright-core');
	return chromium.launch({
		executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
		args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
			'--disable-component-update', '--disable-sync', '--no-first-run', ...extraArgs],
	});
}

/** Ends the test: the exit status is the number of failed checks. */
export function finish() {
	process.exit(Math.min(failures, 100));
}
