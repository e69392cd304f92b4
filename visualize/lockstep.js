/* heaplab lockstep: one trace on several policies, a column each, every
 * column at the same op.
 *
 * HL_OPS[k] is op k as [text, line, label or null] (k = 0: before the
 * first op); HL_COLUMNS[c] is one policy's walk: {policy, stopped (the
 * reason its replay stopped, or null), steps, explain, svgs}, where
 * steps[k] is its heap after op k as
 * [live, peak, committed, resident, utilization, OS calls, picture index,
 *  frame of that picture, reused (1: the op's block holds bytes a freed
 *  block held), the freed block's id, the block's address, its cell's id],
 * explain[k] the steps the policy took (replay --explain's lines) and
 * svgs the kept pictures.  A column whose replay stopped has fewer steps.
 * "next divergence" goes to the next op where the columns differ by the
 * rule chosen (HL_RULE, HL_PCT at first; the same rules as the terminal's
 * table, visualize/lockstep.c):
 *   os         the op made an OS call in one column and none in another
 *   reuse      the op's block reuses a freed block's bytes in one column
 *              and not in another
 *   committed  the op changed a column's committed bytes, and after it the
 *              columns' committed bytes differ by more than N %
 * The list of ops, the buttons, the jump box and the keys (right/n next,
 * left/p previous, Home first, End last, space play, g jump box) are
 * moves.js's; d goes to the next divergence, D to the previous.  No network.
 */
(function () {
	'use strict';
	var TEXT = 0, LINE = 1, LABEL = 2;
	var LIVE = 0, COMMITTED = 2, RESIDENT = 3, OSCALLS = 5, PICTURE = 6, PICTURE_FRAME = 7,
		REUSED = 8, REUSED_ID = 9, ADDR = 10, CELL = 11;
	var ops = HL_OPS, columns = HL_COLUMNS, last = ops.length - 1;
	var cur = -1, views = [], moves = null;

	function $(id) { return document.getElementById(id); }

	function bytes(b) {
		var units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'], u = 0;
		while (b >= 1024 && u < units.length - 1) { b /= 1024; u++; }
		return u === 0 ? b + ' B' : b.toFixed(b < 10 ? 2 : 1) + ' ' + units[u];
	}

	function element(tag, className, parent, text) {
		var e = document.createElement(tag);
		if (className)
			e.className = className;
		if (text !== undefined)
			e.textContent = text;
		if (parent)
			parent.appendChild(e);
		return e;
	}

	/* One column's elements, found by class inside it. */
	function buildColumn(col) {
		var box = element('section', 'column', $('columns'));
		box.setAttribute('data-policy', col.policy);
		element('h2', null, box, col.policy);
		var now = element('p', 'col-now', box);
		now.appendChild(document.createTextNode('op '));
		var v = { col: col, box: box, step: element('b', 'col-step', now), shown: -1 };
		now.appendChild(document.createTextNode(': '));
		v.op = element('code', 'col-op', now);
		v.addr = element('span', 'col-addr', now);
		v.reuse = element('p', 'col-reuse', box);
		var table = element('table', 'stats', box), names = element('tr', null, table),
			cells = element('tr', null, table);
		v.cells = {};
		[['live', 'live requested'], ['committed', 'committed'], ['resident', 'resident'],
			['oscalls', 'OS calls (+ by this op)']].forEach(function (s) {
			element('th', null, names, s[1]);
			v.cells[s[0]] = element('td', 'stat-' + s[0], cells);
		});
		element('p', 'explain-what', box, 'The steps the policy took:');
		v.explain = element('pre', 'explain', box);
		v.diagram = element('div', 'diagram', box);
		v.note = element('p', 'diagram-note', box);
		return v;
	}

	function setStat(cell, value, text) {
		cell.setAttribute('data-value', String(value));
		cell.textContent = text;
	}

	function showColumn(v, k) {
		var col = v.col, steps = col.steps;
		v.box.classList.toggle('stopped', k >= steps.length);
		if (k >= steps.length) {
			v.step.textContent = String(steps.length - 1);
			v.op.textContent = '';
			v.addr.textContent = '';
			v.reuse.textContent = 'The replay stopped after op ' + (steps.length - 1) + ': ' + col.stopped;
			v.explain.textContent = '';
			return;
		}
		var s = steps[k], d = k > 0 ? s[OSCALLS] - steps[k - 1][OSCALLS] : 0;
		v.step.textContent = String(k);
		v.op.textContent = k === 0 ? 'the empty heap' : ops[k][TEXT];
		v.addr.textContent = s[ADDR] ? ' \u2192 ' + s[ADDR] : '';
		v.reuse.textContent = s[REUSED] ? 'reuses bytes that block ' + s[REUSED_ID] + ' held before it was freed' : '';
		setStat(v.cells.live, s[LIVE], bytes(s[LIVE]));
		setStat(v.cells.committed, s[COMMITTED], bytes(s[COMMITTED]));
		setStat(v.cells.resident, s[RESIDENT], bytes(s[RESIDENT]));
		setStat(v.cells.oscalls, s[OSCALLS], s[OSCALLS] + (d > 0 ? ' (+' + d + ')' : ''));
		v.cells.oscalls.setAttribute('data-op', String(d));
		v.explain.textContent = col.explain[k].split('\n').map(function (l) { return l.trim(); }).join('\n').trim();
		if (s[PICTURE] !== v.shown) {
			v.diagram.innerHTML = col.svgs[s[PICTURE]];
			v.shown = s[PICTURE];
		}
		v.note.textContent = s[PICTURE_FRAME] === k ? '' : 'Picture of the heap after op ' + s[PICTURE_FRAME] +
			' (pictures are kept every ' + HL_EVERY + ' ops and at each label).';
		Array.prototype.forEach.call(v.diagram.querySelectorAll('.hl-changed'), function (g) {
			g.classList.remove('hl-changed');
		});
		var cell = s[CELL] && s[PICTURE_FRAME] === k ? v.diagram.querySelector('[id="a_' + s[CELL] + '"]') : null;
		if (cell)
			cell.classList.add('hl-changed');
	}

	/* The columns that have step k. */
	function present(k) {
		return columns.filter(function (col) { return k < col.steps.length; });
	}

	function spread(k, pct) {
		var c = present(k).map(function (col) { return col.steps[k][COMMITTED]; });
		if (!c.length)
			return false;
		var lo = Math.min.apply(null, c), hi = Math.max.apply(null, c);
		return hi > lo * (1 + pct / 100);
	}

	/* Whether the columns differ at op k by @p rule. */
	function differs(k, rule, pct) {
		if (k < 1 || k > last)
			return false;
		var did = present(k).map(function (col) {
			var s = col.steps;
			return rule === 'os' ? s[k][OSCALLS] > s[k - 1][OSCALLS] :
				rule === 'reuse' ? s[k][REUSED] === 1 : s[k][COMMITTED] !== s[k - 1][COMMITTED];
		});
		/* committed: the op moved some column's figure, and they are apart */
		if (rule === 'committed')
			return did.indexOf(true) >= 0 && spread(k, pct);
		return did.indexOf(true) >= 0 && did.indexOf(false) >= 0;
	}

	function rule() { return $('rule').value; }

	function pct() {
		var n = parseFloat($('pct').value);
		return isFinite(n) && n >= 0 ? n : HL_PCT;
	}

	/* Says how op k differs (or that it does not). */
	function divNote(k) {
		if (!differs(k, rule(), pct()))
			return '';
		var who = present(k).map(function (col) {
			var s = col.steps, d = s[k][OSCALLS] - s[k - 1][OSCALLS];
			if (rule() === 'os')
				return col.policy + ' ' + d;
			if (rule() === 'reuse')
				return col.policy + (s[k][REUSED] ? ' reuses' : ' does not');
			return col.policy + ' ' + bytes(s[k][COMMITTED]);
		});
		var what = { os: 'OS calls this op made', reuse: 'reuse of freed bytes', committed: 'committed bytes' };
		return 'Op ' + k + ' diverges: ' + what[rule()] + ': ' + who.join(', ') + '.';
	}

	function markList() {
		var items = $('ops-list').children, r = rule(), p = pct();
		for (var k = 0; k <= last; k++)
			items[k].classList.toggle('diverges', differs(k, r, p));
	}

	function show(k) {
		k = Math.max(0, Math.min(last, k));
		moves.at(k);
		cur = k;
		views.forEach(function (v) { showColumn(v, k); });
		$('div-note').textContent = divNote(k);
	}

	/* The next (dir 1) or previous (dir -1) op where the columns differ. */
	function divergence(dir) {
		var r = rule(), p = pct();
		for (var k = cur + dir; k >= 1 && k <= last; k += dir)
			if (differs(k, r, p)) {
				show(k);
				return;
			}
		$('div-note').textContent = 'No ' + (dir > 0 ? 'later' : 'earlier') + ' op where the columns differ so.';
	}

	moves = hlMoves({
		count: ops.length,
		text: function (k) { return ops[k][TEXT]; },
		line: function (k) { return ops[k][LINE]; },
		label: function (k) { return ops[k][LABEL]; },
		show: show,
		current: function () { return cur; },
		note: function (text) { $('div-note').textContent = text; },
		keys: { d: function () { divergence(1); }, D: function () { divergence(-1); } }
	});
	views = columns.map(buildColumn);
	$('next-div').addEventListener('click', function () { divergence(1); });
	$('prev-div').addEventListener('click', function () { divergence(-1); });
	['change', 'input'].forEach(function (ev) {
		$('rule').addEventListener(ev, function () { markList(); show(cur); });
		$('pct').addEventListener(ev, function () { markList(); show(cur); });
	});
	/* a cell's link only names its block (hover shows it): no navigation */
	$('columns').addEventListener('click', function (e) {
		if (e.target.closest && e.target.closest('a'))
			e.preventDefault();
	});
	markList();
	show(0);
}());
