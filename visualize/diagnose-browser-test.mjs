// diagnose-browser-test.mjs REPORT.html EXPECT.json: opens a `heaplab
// diagnose -o` report in headless Chromium (playwright-core, as
// browser-test.mjs) and checks that its plots exist and carry the figures
// the shell test worked out without the page: the stacked causes add up,
// at the last sample, to the committed bytes of the replay; one line per
// candidate; each candidate's peak and final heap as `heaplab replay
// --stats` reports them; nothing fetched from the network, no script
// error.  Prints "ok"/"FAIL" per check; exit status = failures.
import { check, readJson, pageUrl, launchBrowser, finish } from './browser-lib.mjs';

const [page_path, expect_path] = process.argv.slice(2);
const expect = readJson(expect_path);


const browser = await launchBrowser();
try {
	const page = await browser.newPage();
	const requests = [], errors = [];
	page.on('request', (r) => { if (!r.url().startsWith('file:')) requests.push(r.url()); });
	page.on('pageerror', (e) => errors.push(String(e)));
	await page.goto(pageUrl(page_path));
	const causes = await page.$$eval('svg#causes polygon.series', (ps) =>
		ps.map((p) => ({ name: p.getAttribute('data-series'), last: Number(p.getAttribute('data-last')),
				 points: p.getAttribute('points').trim().split(/\s+/).length })));
	check('stacked causes drawn', causes.length > 0 && causes.every((c) => c.points >= 2), true);
	check('causes at the last sample add up to the committed bytes',
	      causes.reduce((s, c) => s + c.last, 0), expect.final);
	for (const [name, bytes] of Object.entries(expect.causes))
		check(`cause ${name}`, (causes.find((c) => c.name === name) || { last: 0 }).last, bytes);
	check('base final (data-final)', await page.getAttribute('#base', 'data-final'), expect.final);
	check('base peak (data-peak)', await page.getAttribute('#base', 'data-peak'), expect.peak);
	const lines = await page.$$eval('svg#whatif polyline.series', (ps) => ps.map((p) => p.getAttribute('data-series')));
	const rows = await page.$$eval('#ranking tr.run', (rs) => rs.map((r) => ({
		what: `${r.children[1].textContent} ${r.children[2].textContent}`,
		peak: r.getAttribute('data-peak'), final: r.getAttribute('data-final'),
		shown: [3, 4, 5].map((k) => r.children[k].textContent) })));
	// the cells a reader sees carry a unit, and say the bytes of the data
	const units = { B: 1, KiB: 1024, MiB: 1048576, GiB: 1073741824 };
	const inBytes = (text) => {
		const m = /^([0-9.]+) (B|KiB|MiB|GiB)$/.exec(text);
		return m ? Number(m[1]) * units[m[2]] : NaN;
	};
	for (const row of rows) {
		check(`${row.what}: sizes shown with their units`, row.shown.every((t) => !Number.isNaN(inBytes(t))), true);
		const shownPeak = inBytes(row.shown[0]);
		check(`${row.what}: the peak shown is data-peak to 1 %`,
		      Math.abs(shownPeak - Number(row.peak)) <= Number(row.peak) / 100, true);
	}
	check('one line per candidate of the table', lines.length, rows.length);
	check('at least the candidates worked out', rows.length >= expect.runs.length, true);
	for (const want of expect.runs)
		check(`${want.what}: has its line`, lines.includes(want.what), true);
	for (const want of expect.runs) {
		const row = rows.find((r) => r.what === want.what);
		check(`${want.what}: peak`, row ? row.peak : 'missing', want.peak);
		check(`${want.what}: final`, row ? row.final : 'missing', want.final);
	}
	const box = await page.locator('svg#causes').boundingBox();
	check('causes plot rendered with a size', box !== null && box.width > 100 && box.height > 100, true);
	check('recommendation shown', ((await page.textContent('#recommendation')) || '').trim().length > 0, true);
	check('nothing fetched from the network', requests.length, 0);
	check('no script error', errors.join('; '), '');
} finally {
	await browser.close();
}
finish();
