/* heaplab stepper: walks the frames the page carries.
 *
 * HL_STEPS[k] is the heap after op k (k = 0: before the first op), as
 * [op text, line, label or null, live, peak, committed, resident,
 *  utilization, OS calls, picture index, frame of that picture];
 * HL_SVGS holds the kept pictures; HL_EVERY says how often one was kept.
 * With HL_DELTAS (heapdiff.js) the page also says what each op changed,
 * outlines those blocks in the picture, and compares any two steps
 * ("compare with"): time travel is stepping back and forth.
 * Keys: right/n next, left/p previous, Home first, End last, space play,
 * g jump box, c compare box.  Nothing here talks to the network.
 */
(function () {
	'use strict';
	var TEXT = 0, LINE = 1, LABEL = 2, LIVE = 3, PEAK = 4, COMMITTED = 5, RESIDENT = 6,
		UTIL = 7, OSCALLS = 8, PICTURE = 9, PICTURE_FRAME = 10;
	var steps = HL_STEPS, svgs = HL_SVGS, last = steps.length - 1;
	var cur = -1, shownPicture = -1, timer = null, compareWith = null;

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
		var s = steps[k], items = $('ops-list').children;
		if (cur >= 0)
			items[cur].classList.remove('current');
		items[k].classList.add('current');
		items[k].scrollIntoView({ block: 'nearest' });
		cur = k;
		$('now-what').textContent = k === 0 ? 'start, op' : 'after op';
		$('step-index').textContent = String(k);
		$('op-text').textContent = k === 0 ? 'the empty heap' : s[TEXT];
		$('op-line').textContent = k === 0 ? '' : '(line ' + s[LINE] + ')';
		$('op-label').textContent = s[LABEL] === null ? '' : 'label: ' + s[LABEL];
		showStats(s);
		showPicture(k, s);
		showChanges(k);
		$('jump-op').value = String(k);
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

	function jumpToLabel(name) {
		for (var k = 1; k <= last; k++)
			if (steps[k][LABEL] === name) { show(k); return true; }
		return false;
	}

	/* A number is an op; "s name" or a bare name is a label. */
	function jump(text) {
		text = text.trim();
		if (/^\d+$/.test(text)) { show(parseInt(text, 10)); return; }
		if (!jumpToLabel(text.replace(/^s\s+/, '')))
			$('diagram-note').textContent = 'No op or label "' + text + '".';
	}

	function play() {
		if (timer) {
			clearInterval(timer);
			timer = null;
			$('play').textContent = 'play';
			return;
		}
		if (cur === last)
			show(0);
		$('play').textContent = 'pause';
		timer = setInterval(function () {
			if (cur >= last) { play(); return; }
			show(cur + 1);
		}, 700);
	}

	function buildList() {
		var ol = $('ops-list');
		steps.forEach(function (s, k) {
			var li = document.createElement('li'), n = document.createElement('span');
			n.className = 'n';
			n.textContent = k === 0 ? 'start' : String(k);
			li.appendChild(n);
			li.appendChild(document.createTextNode(k === 0 ? 'empty heap' : s[TEXT]));
			if (s[LABEL] !== null) {
				var badge = document.createElement('span');
				badge.className = 'label';
				badge.textContent = s[LABEL];
				li.appendChild(badge);
			}
			if (s[PICTURE_FRAME] === k)
				li.classList.add('kept');
			li.addEventListener('click', function () { show(k); });
			ol.appendChild(li);
		});
	}

	function buildLabels() {
		var sel = $('jump-label');
		steps.forEach(function (s) {
			if (s[LABEL] === null)
				return;
			var o = document.createElement('option');
			o.value = o.textContent = s[LABEL];
			sel.appendChild(o);
		});
		sel.addEventListener('change', function () {
			if (sel.value)
				jumpToLabel(sel.value);
		});
	}

	function onKey(e) {
		var tag = e.target.tagName;
		if (tag === 'INPUT' || tag === 'SELECT' || e.ctrlKey || e.metaKey || e.altKey)
			return;
		var actions = {
			ArrowRight: function () { show(cur + 1); }, n: function () { show(cur + 1); },
			ArrowLeft: function () { show(cur - 1); }, p: function () { show(cur - 1); },
			Home: function () { show(0); }, End: function () { show(last); },
			' ': play, g: function () { $('jump-op').select(); },
			c: function () { $('compare-op').select(); }
		};
		if (actions[e.key]) {
			e.preventDefault();
			actions[e.key]();
		}
	}

	buildList();
	buildLabels();
	$('first').addEventListener('click', function () { show(0); });
	$('prev').addEventListener('click', function () { show(cur - 1); });
	$('next').addEventListener('click', function () { show(cur + 1); });
	$('last').addEventListener('click', function () { show(last); });
	$('play').addEventListener('click', play);
	$('jump-form').addEventListener('submit', function (e) { e.preventDefault(); jump($('jump-op').value); });
	$('compare-form').addEventListener('submit', function (e) { e.preventDefault(); compare($('compare-op').value); });
	$('compare-off').addEventListener('click', function () { $('compare-op').value = ''; compare(''); });
	/* a cell's link only names its block (hover shows it): no navigation */
	$('diagram').addEventListener('click', function (e) {
		if (e.target.closest && e.target.closest('a'))
			e.preventDefault();
	});
	document.addEventListener('keydown', onKey);
	show(0);
}());
