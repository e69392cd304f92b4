/* heaplab stepper: walks the frames the page carries.
 *
 * HL_STEPS[k] is the heap after op k (k = 0: before the first op), as
 * [op text, line, label or null, live, peak, committed, resident,
 *  utilization, OS calls, picture index, frame of that picture];
 * HL_SVGS holds the kept pictures; HL_EVERY says how often one was kept.
 * With HL_DELTAS (heapdiff.js) the page also says what each op changed,
 * outlines those blocks in the picture, and compares any two steps
 * ("compare with"): time travel is stepping back and forth.
 * The list of ops, the buttons, the jump box and the keys (right/n next,
 * left/p previous, Home first, End last, space play, g jump box) are
 * moves.js's; c goes to the compare box.  Nothing here talks to the network.
 */
(function () {
	'use strict';
	var TEXT = 0, LINE = 1, LABEL = 2, LIVE = 3, PEAK = 4, COMMITTED = 5, RESIDENT = 6,
		UTIL = 7, OSCALLS = 8, PICTURE = 9, PICTURE_FRAME = 10;
	var steps = HL_STEPS, svgs = HL_SVGS, last = steps.length - 1;
	var cur = -1, shownPicture = -1, compareWith = null;

	function $(id) { return document.getElementById(id); }

	function bytes(b) {
		var units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'], u = 0;
		while (b >= 1024 && u < units.length - 1) { b /= 1024; u++; }
		return u === 0 ? b + ' B' : b.toFixed(b < 10 ? 2 : 1) + ' ' + units[u];
	}

	function setStat(id, value, text) {
		var cell = $(id);
		cell.setAttribute('data-value', String(value));
		cell.textContent = text;
	}

	function showStats(s) {
		setStat('stat-live', s[LIVE], bytes(s[LIVE]));
		setStat('stat-peak', s[PEAK], bytes(s[PEAK]));
		setStat('stat-committed', s[COMMITTED], bytes(s[COMMITTED]));
		setStat('stat-resident', s[RESIDENT], bytes(s[RESIDENT]));
		setStat('stat-util', s[UTIL], (100 * s[UTIL]).toFixed(1) + ' %');
		setStat('stat-oscalls', s[OSCALLS], String(s[OSCALLS]));
	}

	function showPicture(k, s) {
		if (s[PICTURE] !== shownPicture) {
			$('diagram').innerHTML = svgs[s[PICTURE]];
			shownPicture = s[PICTURE];
		}
		$('diagram-note').textContent = s[PICTURE_FRAME] === k ? '' :
			'Picture of the heap after op ' + s[PICTURE_FRAME] + ' (pictures are kept every ' +
			HL_EVERY + ' ops and at each label).';
	}

	function blockText(b) {
		return b.name + ' ' + b.state + ' ' + b.size;
	}

	/* Outlines the cells of blocks @p ids in the shown picture (when it is
	 * the picture of step k); returns how many were found. */
	function outline(ids, k) {
		var svg = $('diagram'), found = 0;
		Array.prototype.forEach.call(svg.querySelectorAll('.hl-changed'), function (g) {
			g.classList.remove('hl-changed');
		});
		if (steps[k][PICTURE_FRAME] !== k)
			return 0;
		ids.forEach(function (id) {
			var g = document.getElementById('a_' + id);
			if (g && svg.contains(g)) {
				g.classList.add('hl-changed');
				found++;
			}
		});
		return found;
	}

	function showChanges(k) {
		var box = $('changes'), list = $('changes-list');
		if (!HeapDiff.available) {
			box.hidden = true;
			return;
		}
		var from = compareWith !== null ? compareWith : Math.max(0, k - 1);
		var changes = k === from ? [] : HeapDiff.diff(Math.min(from, k), Math.max(from, k));
		var later = Math.max(from, k), ids = [];
		$('changes-what').textContent = compareWith !== null ?
			'Compared with step ' + from + ':' : (k === 0 ? 'The empty heap.' : 'What op ' + k + ' changed:');
		list.innerHTML = '';
		changes.forEach(function (c) {
			var li = document.createElement('li');
			li.setAttribute('data-kind', c.kind);
			li.textContent = c.kind + ': ' + (c.before.length ? c.before.map(blockText).join(' + ') : 'nothing') +
				' \u2192 ' + (c.after.length ? c.after.map(blockText).join(' + ') : 'nothing');
			list.appendChild(li);
			if (later === k)
				c.after.forEach(function (b) { ids.push(b.id); });
		});
		if (k > 0 && !changes.length) {
			var li = document.createElement('li');
			li.textContent = 'no block changed';
			list.appendChild(li);
		}
		list.setAttribute('data-ids', ids.slice().sort().join(' '));
		outline(ids, k);
		showExplanation(k);
	}

	/* The steps the policy took for op k (replay --explain's lines). */
	function showExplanation(k) {
		var text = typeof HL_EXPLAIN !== 'undefined' ? HL_EXPLAIN[k] : '';
		$('explain-what').hidden = $('explain').hidden = !text || compareWith !== null;
		$('explain').textContent = text.split('\n').map(function (l) { return l.trim(); }).join('\n').trim();
	}

	function show(k) {
		k = Math.max(0, Math.min(last, k));
		var s = steps[k];
		moves.at(k);
		cur = k;
		showStats(s);
		showPicture(k, s);
		showChanges(k);
	}

	/* "compare with": a step number, or empty to go back to op by op. */
	function compare(text) {
		text = text.trim();
		if (text === '') {
			compareWith = null;
		} else if (/^\d+$/.test(text) && parseInt(text, 10) <= last) {
			compareWith = parseInt(text, 10);
		} else {
			$('diagram-note').textContent = 'No step "' + text + '" to compare with.';
			return;
		}
		show(cur);
	}

	var moves = hlMoves({
		count: steps.length,
		text: function (k) { return steps[k][TEXT]; },
		line: function (k) { return steps[k][LINE]; },
		label: function (k) { return steps[k][LABEL]; },
		show: show,
		current: function () { return cur; },
		note: function (text) { $('diagram-note').textContent = text; },
		item: function (li, k) {
			if (steps[k][PICTURE_FRAME] === k)
				li.classList.add('kept');
		},
		keys: { c: function () { $('compare-op').select(); } }
	});
	$('compare-form').addEventListener('submit', function (e) { e.preventDefault(); compare($('compare-op').value); });
	$('compare-off').addEventListener('click', function () { $('compare-op').value = ''; compare(''); });
	/* a cell's link only names its block (hover shows it): no navigation */
	$('diagram').addEventListener('click', function (e) {
		if (e.target.closest && e.target.closest('a'))
			e.preventDefault();
	});
	show(0);
}());
