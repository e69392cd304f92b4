/* heaplab stepper: the heap's blocks at any step, and the diff of two steps.
 *
 * HL_DELTAS[k] is what op k changed in the walker's block list, as
 * [gone, came]: gone = names of blocks no longer there (or different),
 * came = [name, size, state] of new or different ones; HL_DELTAS[0] holds
 * every block of the new heap.  HL_STATES names the states.
 *
 * The diff follows visualize/diff.c (the `heaplab diff` command), and the
 * browser test checks that both find the same blocks: blocks of the two
 * moments that are the same memory (same start, or more than one word
 * shared: glibc lends a chunk's first word to the block before it) form a
 * group; a group's shape names the change (changed, split, merged,
 * reshaped, appeared, disappeared); a group of one unchanged block is no
 * change.
 */
var HeapDiff = (function () {
	'use strict';
	var LENT = 8;

	function place(name) {
		var m = /^region#(\d+)\+0x([0-9a-f]+)$/.exec(name);
		return m ? { region: parseInt(m[1], 10), off: parseInt(m[2], 16) } : { region: -1, off: 0 };
	}

	/* The id of a block's cell in the pictures: as hl_block_id makes it. */
	function cellId(name) {
		return 'blk_' + name.replace(/[#+]/g, '_');
	}

	/* The blocks after step k, sorted by place; built by replaying the
	 * deltas, with the last result kept to step forward cheaply. */
	var cache = { k: -1, map: null };

	function mapAt(k) {
		var map, from;
		if (cache.k >= 0 && cache.k <= k) {
			map = new Map(cache.map);
			from = cache.k + 1;
		} else {
			map = new Map();
			from = 0;
		}
		for (var i = from; i <= k; i++) {
			var d = HL_DELTAS[i];
			d[0].forEach(function (name) { map.delete(name); });
			d[1].forEach(function (b) { map.set(b[0], b); });
		}
		cache = { k: k, map: map };
		return map;
	}

	function blocksAt(k) {
		var list = [];
		mapAt(k).forEach(function (b) {
			var p = place(b[0]);
			list.push({ name: b[0], size: b[1], state: HL_STATES[b[2]], region: p.region, off: p.off,
				id: cellId(b[0]) });
		});
		list.sort(function (a, b) { return a.region - b.region || a.off - b.off; });
		return list;
	}

	function overlap(a, b) {
		if (a.region !== b.region)
			return false;
		if (a.off === b.off)
			return true;
		var lo = Math.max(a.off, b.off), hi = Math.min(a.off + a.size, b.off + b.size);
		return hi > lo && hi - lo > LENT;
	}

	function joins(list, from, to, b) {
		for (var i = from; i < to; i++)
			if (overlap(list[i], b))
				return true;
		return false;
	}

	function same(a, b) {
		return a.region === b.region && a.off === b.off && a.size === b.size && a.state === b.state;
	}

	function kindOf(nb, na) {
		if (nb === 0) return 'appeared';
		if (na === 0) return 'disappeared';
		if (nb === 1 && na === 1) return 'changed';
		if (nb === 1) return 'split';
		return na === 1 ? 'merged' : 'reshaped';
	}

	function earlier(b, a) {
		return b.region < a.region || (b.region === a.region && b.off < a.off);
	}

	/* The changes from step `from` to step `to`, each
	 * { kind, before: [blocks], after: [blocks] }. */
	function diff(from, to) {
		var a = blocksAt(from), b = blocksAt(to), out = [], i = 0, j = 0;
		while (i < a.length || j < b.length) {
			var ie = i, je = j;
			if (j === b.length || (i < a.length && !earlier(b[j], a[i])))
				ie++;
			else
				je++;
			for (var grew = true; grew;) {
				grew = false;
				if (ie < a.length && joins(b, j, je, a[ie])) { ie++; grew = true; }
				if (je < b.length && joins(a, i, ie, b[je])) { je++; grew = true; }
			}
			var nb = ie - i, na = je - j;
			if (!(nb === 1 && na === 1 && same(a[i], b[j])))
				out.push({ kind: kindOf(nb, na), before: a.slice(i, ie), after: b.slice(j, je) });
			i = ie;
			j = je;
		}
		return out;
	}

	return { diff: diff, available: typeof HL_DELTAS !== 'undefined' && HL_DELTAS.length > 0 };
}());
