// lockstep-browser-test.mjs PAGE.html EXPECT.json: drives a lockstep page
// (heaplab step --policy=A,B,...) in headless Chromium.
//
// EXPECT holds what the shell test (tests/visualize/test_visualize_lockstep_browser.sh)
// worked out without the page: the policies in order, the ops, op 3's
// text, and for some ops each policy's figures ("os", "dos": the OS calls
// so far and by the op, "committed", "reused", "ids": the freed blocks the
// op's block overlaps); the first two ops where OS calls diverge, the first
// where reuse does, and the first after the first of OS calls where
// committed bytes do with N = 50.
// The script checks one column per policy, presses "next" three times and
// checks that every column shows op 3 with its figures, then walks "next
// divergence" for each rule (button and keys) and checks where it lands and
// what every column shows there.  Each check prints "ok" or "FAIL"; the
// exit status is the number of failures (browser-lib.mjs).
import { check, readJson, pageUrl, launchBrowser, finish } from './browser-lib.mjs';

const [pagePath, expectPath] = process.argv.slice(2);
const expect = readJson(expectPath);

/** What every column shows now, in page order. */
async function columns(page) {
	return page.$$eval('.column', (cols) => cols.map((c) => {
		const cell = (k) => c.querySelector(`.stat-${k}`);
		return {
			policy: c.dataset.policy,
			step: c.querySelector('.col-step').textContent.trim(),
			op: c.querySelector('.col-op').textContent.trim(),
			os: cell('oscalls').dataset.value,
			dos: cell('oscalls').dataset.op,
			committed: cell('committed').dataset.value,
			reuse: c.querySelector('.col-reuse').textContent.trim(),
			pictures: c.querySelectorAll('.diagram svg').length,
			explain: c.querySelector('.explain').textContent.trim(),
		};
	}));
}

/** Checks that the page and every column are at op @k, with @k's figures
 *  when EXPECT has them. */
async function at(page, what, k) {
	check(`${what}: the page is at op`, (await page.textContent('#step-index')).trim(), String(k));
	const cols = await columns(page);
	const figures = expect.at[String(k)];
	for (const c of cols) {
		check(`${what}: ${c.policy} is at op`, c.step, String(k));
		check(`${what}: ${c.policy} shows the op`, c.op, k === 0 ? 'the empty heap' : expect.ops[k]);
		check(`${what}: ${c.policy} shows one picture`, c.pictures, 1);
		if (k > 0)
			check(`${what}: ${c.policy} says the steps it took`, c.explain.length > 0, true);
		if (!figures)
			continue;
		const f = figures[c.policy];
		check(`${what}: ${c.policy}'s OS calls so far`, c.os, f.os);
		check(`${what}: ${c.policy}'s OS calls by this op`, c.dos, f.dos);
		check(`${what}: ${c.policy}'s committed bytes`, c.committed, f.committed);
		check(`${what}: ${c.policy} says it reuses a freed block`, c.reuse !== '', f.reused === 1);
		if (f.reused === 1) {
			const id = (c.reuse.match(/block (\d+)/) || [])[1];
			check(`${what}: ${c.policy} names a freed block its block overlaps`, f.ids.split(',').includes(id), true);
		}
	}
	return cols;
}

const browser = await launchBrowser();
try {
	const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
	const requests = [];
	page.on('request', (r) => { if (!r.url().startsWith('file:')) requests.push(r.url()); });
	const errors = [];
	page.on('pageerror', (e) => errors.push(String(e)));
	page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
	await page.goto(pageUrl(pagePath));

	let cols = await at(page, 'start', 0);
	check('one column per policy, in order', cols.map((c) => c.policy).join(','), expect.policies.join(','));
	check('the rule chosen at first', await page.inputValue('#rule'), 'os');

	for (let i = 0; i < 3; i++)
		await page.click('#next');
	await at(page, '3 x next', 3);

	// OS calls: from the start, the button, then the keys d and D
	await page.keyboard.press('Home');
	await page.click('#next-div');
	cols = await at(page, 'next divergence (OS call)', expect.os[0]);
	const dos = cols.map((c) => Number(c.dos));
	check('there, one column made an OS call', dos.some((d) => d > 0), true);
	check('there, another made none', dos.some((d) => d === 0), true);
	await page.keyboard.press('d');
	await at(page, 'd (next divergence again)', expect.os[1]);
	await page.keyboard.press('D');
	await at(page, 'D (previous divergence)', expect.os[0]);

	// reuse of a freed block
	await page.selectOption('#rule', 'reuse');
	await page.click('#first');
	await page.click('#next-div');
	cols = await at(page, 'next divergence (reuse)', expect.reuse);
	check('there, one column reuses a freed block', cols.some((c) => c.reuse !== ''), true);
	check('there, another does not', cols.some((c) => c.reuse === ''), true);

	// committed bytes apart by more than 50 %, from the first OS divergence on
	await page.fill('#jump-op', String(expect.os[0]));
	await page.keyboard.press('Enter');
	await page.selectOption('#rule', 'committed');
	await page.fill('#pct', '50');
	await page.click('#next-div');
	await at(page, `next divergence after op ${expect.os[0]} (committed, N = 50)`, expect.committed50);

	// past the last one it stays, and says so
	await page.selectOption('#rule', 'os');
	await page.keyboard.press('End');
	const end = (await page.textContent('#step-index')).trim();
	await page.click('#next-div');
	check('past the last divergence the page stays', (await page.textContent('#step-index')).trim(), end);
	check('and says there is none', /No later op/.test(await page.textContent('#div-note')), true);

	check('no network requests', requests.length, 0);
	check('no script errors', errors.join('; '), '');
} finally {
	await browser.close();
}
finish();
