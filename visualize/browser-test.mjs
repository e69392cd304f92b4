// browser-test.mjs PAGE.html EXPECT.json: drives a stepper page in headless
// Chromium (playwright-core, executablePath /usr/bin/chromium or $CHROMIUM).
//
// EXPECT holds what the shell test worked out without the page: the op
// and statistics after three ops, and a label with its op and live bytes.
// The script presses "next" three times (the button), checks the shown op
// and numbers, steps with the keyboard, then jumps to the label.  With
// DIFF-STEP.json and DIFF-COMPARE.json (`heaplab diff --json` of op N - 1
// against op N, and of two labels' steps), it goes to op N and checks the
// changes listed and the blocks outlined in the picture, steps away and
// back, then compares the two steps in the page and checks them again.  Each
// check prints "ok" or "FAIL"; the exit status is the number of failures
// (capped), 0 when all hold.  Loaded from $HEAPLAB_BROWSER_DIR's
// node_modules (see visualize/ci-deps.sh).
import { check, readJson, pageUrl, launchBrowser, finish } from './browser-lib.mjs';

const [page_path, expect_path, diff_step_path, diff_compare_path] = process.argv.slice(2);
const expect = readJson(expect_path);
const diffStep = readJson(diff_step_path), diffCompare = readJson(diff_compare_path);


async function shown(page) {
	const text = async (id) => (await page.textContent(`#${id}`)).trim();
	const value = async (id) => page.getAttribute(`#${id}`, 'data-value');
	return {
		index: await text('step-index'),
		op: await text('op-text'),
		live: await value('stat-live'),
		peak: await value('stat-peak'),
		committed: await value('stat-committed'),
		resident: await value('stat-resident'),
		oscalls: await value('stat-oscalls'),
		pictures: await page.locator('#diagram svg').count(),
	};
}

const browser = await launchBrowser();
try {
	const page = await browser.newPage();
	const requests = [];
	page.on('request', (r) => { if (!r.url().startsWith('file:')) requests.push(r.url()); });
	const errors = [];
	page.on('pageerror', (e) => errors.push(String(e)));
	await page.goto(pageUrl(page_path));

	let s = await shown(page);
	check('first frame index', s.index, '0');
	check('first frame live bytes', s.live, '0');
	check('a picture is shown', s.pictures, 1);
	for (let i = 0; i < 3; i++)
		await page.click('#next');
	s = await shown(page);
	const a = expect.after3;
	check('after 3 x next: frame', s.index, '3');
	check('after 3 x next: op', s.op, a.op);
	check('after 3 x next: live requested', s.live, a.live);
	check('after 3 x next: peak requested', s.peak, a.peak);
	check('after 3 x next: committed', s.committed, a.committed);
	check('after 3 x next: resident', s.resident, a.resident);
	check('after 3 x next: OS calls', s.oscalls, a.oscalls);
	check('after 3 x next: one picture', s.pictures, 1);

	await page.keyboard.press('ArrowLeft');
	check('left arrow goes back one op', (await shown(page)).index, '2');
	await page.keyboard.press('End');
	check('End goes to the last op', (await shown(page)).index, String(expect.ops));
	await page.keyboard.press('Home');
	check('Home goes back to the start', (await shown(page)).index, '0');

	await page.selectOption('#jump-label', expect.label.name);
	s = await shown(page);
	check(`label '${expect.label.name}': frame`, s.index, String(expect.label.frame));
	check(`label '${expect.label.name}': op`, s.op, `s ${expect.label.name}`);
	check(`label '${expect.label.name}': live requested`, s.live, expect.label.live);

	await page.fill('#jump-op', `s ${expect.label.name}`);
	await page.keyboard.press('Enter');
	check('jump box takes "s label"', (await shown(page)).index, String(expect.label.frame));

	if (diffStep && diffCompare) {
		// the ids of the later step's blocks in each change, as the command says
		const wanted = (d) => d.changes.flatMap((c) => c.after.map((b) => b.id)).sort().join(' ');
		const onPage = async () => ({
			ids: await page.getAttribute('#changes-list', 'data-ids'),
			kinds: await page.$$eval('#changes-list li[data-kind]', (l) => l.map((x) => x.dataset.kind).join(' ')),
			outlined: (await page.$$eval('#diagram .hl-changed', (l) => l.map((g) => g.id.replace(/^a_/, ''))))
				.sort().join(' '),
		});
		const kinds = (d) => d.changes.map((c) => c.kind).join(' ');
		const at = async (k) => { await page.fill('#jump-op', String(k)); await page.keyboard.press('Enter'); };

		await at(diffStep.to);
		let p = await onPage();
		check(`op ${diffStep.to}: changes listed`, p.kinds, kinds(diffStep));
		check(`op ${diffStep.to}: changed blocks`, p.ids, wanted(diffStep));
		check(`op ${diffStep.to}: outlined in the picture`, p.outlined, wanted(diffStep));
		check(`op ${diffStep.to}: at least one block outlined`, p.outlined.length > 0, true);
		await page.keyboard.press('ArrowRight');
		await page.keyboard.press('ArrowLeft');
		await page.keyboard.press('ArrowLeft');
		await page.keyboard.press('ArrowRight');
		p = await onPage();
		check(`back and forth to op ${diffStep.to}: same changes`, p.ids, wanted(diffStep));

		await at(diffCompare.to);
		await page.fill('#compare-op', String(diffCompare.from));
		await page.click('#compare-go');
		p = await onPage();
		check(`step ${diffCompare.to} compared with ${diffCompare.from}: changes listed`, p.kinds, kinds(diffCompare));
		check(`step ${diffCompare.to} compared with ${diffCompare.from}: changed blocks`, p.ids, wanted(diffCompare));
		check(`step ${diffCompare.to} compared with ${diffCompare.from}: outlined`, p.outlined, wanted(diffCompare));
		await page.click('#compare-off');
		p = await onPage();
		const own = await page.$$eval('#changes-list li[data-kind]', (l) => l.length);
		check('"op by op" lists the last op\'s own changes again', own <= diffCompare.changes.length, true);
	}
	if (expect.explain) {
		await page.fill('#jump-op', String(expect.explain.op));
		await page.keyboard.press('Enter');
		check(`op ${expect.explain.op}: the steps shown are replay --explain's`,
			(await page.textContent('#explain')).trim(), expect.explain.steps);
	}

	check('no network requests', requests.length, 0);
	check('no script errors', errors.join('; '), '');
} finally {
	await browser.close();
}
finish();
