// book_stepper_browser.mjs HOST.html EXPECT.json: a chapter's embedded
// stepper in headless Chromium (playwright-core from $HEAPLAB_BROWSER_DIR,
// executablePath /usr/bin/chromium or $CHROMIUM).  HOST.html holds the
// chapter's \htmlonly block as the built page has it: an <iframe> whose
// page `heaplab step` wrote.  EXPECT (worked out by the shell test from the
// trace's text, not from the page) gives the number of ops, the third op
// and the live requested bytes after it.  Checked: the frame is on the
// page and tall enough to use, its stepper shows a picture, "next" three
// times shows the third op with the right live bytes, the keyboard steps
// inside the frame, and nothing is fetched from the network.  Each check
// prints "ok" or "FAIL"; the exit status is the number of failures.
import { check, readJson, pageUrl, launchBrowser, finish } from '../../visualize/browser-lib.mjs';

const [host_path, expect_path] = process.argv.slice(2);
const expect = readJson(expect_path);


const browser = await launchBrowser(['--allow-file-access-from-files']);
try {
	const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
	const requests = [];
	page.on('request', (r) => { if (!r.url().startsWith('file:')) requests.push(r.url()); });
	const errors = [];
	page.on('pageerror', (e) => errors.push(String(e)));
	await page.goto(pageUrl(host_path));

	const iframe = page.locator('iframe.hl-stepper');
	check('one embedded stepper on the page', await iframe.count(), 1);
	const box = await iframe.boundingBox();
	check('the frame is at least 500 px tall', box !== null && box.height >= 500, true);
	const frame = page.frameLocator('iframe.hl-stepper');
	const text = async (id) => (await frame.locator(`#${id}`).textContent()).trim();
	await frame.locator('#next').waitFor();
	check('the frame shows the first step', await text('step-index'), '0');
	check('the frame shows a picture', await frame.locator('#diagram svg').count(), 1);
	check('the frame lists every op', await frame.locator('#ops-list li').count() >= expect.ops, true);
	for (let i = 0; i < 3; i++)
		await frame.locator('#next').click();
	check('after 3 x next: step', await text('step-index'), '3');
	check('after 3 x next: op', await text('op-text'), expect.op3);
	check('after 3 x next: live requested', await frame.locator('#stat-live').getAttribute('data-value'), expect.live3);
	check('after 3 x next: a picture', await frame.locator('#diagram svg').count(), 1);
	await frame.locator('#next').focus();
	await page.keyboard.press('ArrowLeft');
	check('left arrow inside the frame goes back one op', await text('step-index'), '2');
	await page.keyboard.press('End');
	check('End inside the frame goes to the last op', await text('step-index'), String(expect.ops));
	check('no network requests', requests.length, 0);
	check('no script errors', errors.join('; '), '');
} finally {
	await browser.close();
}
finish();
