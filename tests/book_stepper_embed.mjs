// book_stepper_embed.mjs HOST.html EXPECT.json: a chapter's embedded
// stepper in headless Chromium (playwright-core, as visualize/browser-test.mjs).
// HOST is the chapter's \htmlonly block in a page of its own, beside the
// stepper page it names; EXPECT says what the shell test worked out without
// the page: the iframe's src, the trace's op count, the third op, and the
// steps replay --explain prints for one op.  Inside the frame the script
// presses "next" three times, jumps to that op and reads its steps, and
// presses End.  Each check prints "ok" or "FAIL"; the exit status is the
// number of failures (capped), 0 when all hold.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import path from 'node:path';

const [host_path, expect_path] = process.argv.slice(2);
const expect = JSON.parse(readFileSync(expect_path, 'utf8'));
const require = createRequire(path.join(process.env.HEAPLAB_BROWSER_DIR, 'node_modules', 'x.js'));
const { chromium } = require('playwright-core');

let failures = 0;
function check(what, got, want) {
	const same = String(got) === String(want);
	console.log(`${same ? 'ok' : 'FAIL'}: ${what}: ${JSON.stringify(got)}${same ? '' : ` (expected ${JSON.stringify(want)})`}`);
	if (!same)
		failures++;
}

const browser = await chromium.launch({
	executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
	args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
		'--disable-component-update', '--disable-sync', '--no-first-run',
		'--allow-file-access-from-files'],
});
try {
	const page = await browser.newPage();
	const requests = [];
	page.on('request', (r) => { if (!r.url().startsWith('file:')) requests.push(r.url()); });
	const errors = [];
	page.on('pageerror', (e) => errors.push(String(e)));
	await page.goto(pathToFileURL(path.resolve(host_path)).href);

	check('the chapter embeds one stepper', await page.locator('iframe').count(), 1);
	check('its src', await page.getAttribute('iframe', 'src'), expect.src);
	const handle = await page.waitForSelector('iframe');
	const frame = await handle.contentFrame();
	await frame.waitForSelector('#op-text');
	const index = async () => (await frame.textContent('#step-index')).trim();
	check('the embedded stepper starts at the start', await index(), '0');
	check('it shows a picture', await frame.locator('#diagram svg').count(), 1);
	for (let i = 0; i < 3; i++)
		await frame.click('#next');
	check('after 3 x next: frame', await index(), '3');
	check('after 3 x next: op', (await frame.textContent('#op-text')).trim(), expect.op3);
	await frame.fill('#jump-op', String(expect.explain.op));
	await frame.press('#jump-op', 'Enter');
	check(`op ${expect.explain.op}: index`, await index(), String(expect.explain.op));
	check(`op ${expect.explain.op}: the steps shown are replay --explain's`,
		(await frame.textContent('#explain')).trim(), expect.explain.steps);
	await frame.click('#diagram');
	await page.keyboard.press('End');
	check('End inside the frame goes to the last op', await index(), String(expect.ops));
	check('no network requests', requests.length, 0);
	check('no script errors', errors.join('; '), '');
} finally {
	await browser.close();
}
process.exit(Math.min(failures, 100));
