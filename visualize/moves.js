/* heaplab stepper pages: the moves both share (stepper.js, one policy;
 * lockstep.js, a column per policy): the list of ops, the buttons first,
 * previous, play, next and last, the jump box (an op number; "s name" or
 * a bare name is a label), the label list and the keys: right/n next,
 * left/p previous, Home first, End last, space play, g the jump box, and
 * the page's own.
 *
 * hlMoves(p) builds and wires them: p.count is the number of steps (ops
 * + 1), p.text(k), p.line(k) and p.label(k) say op k (label: null when none),
 * p.show(k) shows step k (it keeps k within 0 .. count - 1), p.current()
 * is the step shown, p.note(text) says why a jump went nowhere, p.item(li,
 * k) (may be absent) marks op k's list item, p.keys maps more keys to
 * actions.  It returns {at: f}: f(k) marks step k in the list, names its
 * op above the view and puts k in the jump box (the page's show calls it).
 * Nothing here talks to the network.
 */
function hlMoves(p) {
	'use strict';
	var last = p.count - 1, timer = null, marked = -1;

	function $(id) { return document.getElementById(id); }

	function jumpToLabel(name) {
		for (var k = 1; k <= last; k++)
			if (p.label(k) === name) { p.show(k); return true; }
		return false;
	}

	/* A number is an op; "s name" or a bare name is a label. */
	function jump(text) {
		text = text.trim();
		if (/^\d+$/.test(text)) { p.show(parseInt(text, 10)); return; }
		if (!jumpToLabel(text.replace(/^s\s+/, '')))
			p.note('No op or label "' + text + '".');
	}

	function play() {
		if (timer) {
			clearInterval(timer);
			timer = null;
			$('play').textContent = 'play';
			return;
		}
		if (p.current() === last)
			p.show(0);
		$('play').textContent = 'pause';
		timer = setInterval(function () {
			if (p.current() >= last) { play(); return; }
			p.show(p.current() + 1);
		}, 700);
	}

	function buildList() {
		var ol = $('ops-list');
		for (var i = 0; i <= last; i++) (function (k) {
			var li = document.createElement('li'), n = document.createElement('span');
			n.className = 'n';
			n.textContent = k === 0 ? 'start' : String(k);
			li.appendChild(n);
			li.appendChild(document.createTextNode(k === 0 ? 'empty heap' : p.text(k)));
			if (p.label(k) !== null) {
				var badge = document.createElement('span');
				badge.className = 'label';
				badge.textContent = p.label(k);
				li.appendChild(badge);
			}
			if (p.item)
				p.item(li, k);
			li.addEventListener('click', function () { p.show(k); });
			ol.appendChild(li);
		}(i));
	}

	function buildLabels() {
		var sel = $('jump-label');
		for (var k = 0; k <= last; k++) {
			if (p.label(k) === null)
				continue;
			var o = document.createElement('option');
			o.value = o.textContent = p.label(k);
			sel.appendChild(o);
		}
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
			ArrowRight: function () { p.show(p.current() + 1); }, n: function () { p.show(p.current() + 1); },
			ArrowLeft: function () { p.show(p.current() - 1); }, p: function () { p.show(p.current() - 1); },
			Home: function () { p.show(0); }, End: function () { p.show(last); },
			' ': play, g: function () { $('jump-op').select(); }
		};
		var action = actions[e.key] || (p.keys || {})[e.key];
		if (action) {
			e.preventDefault();
			action();
		}
	}

	/* Step k is the one shown. */
	function at(k) {
		var items = $('ops-list').children;
		if (marked >= 0)
			items[marked].classList.remove('current');
		items[k].classList.add('current');
		items[k].scrollIntoView({ block: 'nearest' });
		marked = k;
		$('now-what').textContent = k === 0 ? 'start, op' : 'after op';
		$('step-index').textContent = String(k);
		$('op-text').textContent = k === 0 ? 'the empty heap' : p.text(k);
		$('op-line').textContent = k === 0 ? '' : '(line ' + p.line(k) + ')';
		$('op-label').textContent = p.label(k) === null ? '' : 'label: ' + p.label(k);
		$('jump-op').value = String(k);
	}

	buildList();
	buildLabels();
	$('first').addEventListener('click', function () { p.show(0); });
	$('prev').addEventListener('click', function () { p.show(p.current() - 1); });
	$('next').addEventListener('click', function () { p.show(p.current() + 1); });
	$('last').addEventListener('click', function () { p.show(last); });
	$('play').addEventListener('click', play);
	$('jump-form').addEventListener('submit', function (e) { e.preventDefault(); jump($('jump-op').value); });
	document.addEventListener('keydown', onKey);
	return { at: at };
}
