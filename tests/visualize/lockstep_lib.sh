# Sourced by the lockstep tests (tests/visualize/test_visualize_lockstep.sh and
# tests/visualize/test_visualize_lockstep_browser.sh): what each op of a trace did
# under each policy, worked out without the lockstep's code, from one
# `heaplab replay --explain=json` per policy, and the ops where the
# policies differ by each rule (visualize/vis.h says the rules).  Needs
# ./heaplab.

# The compiled-in policies, a word each ($policies) and as a list ($list);
# a test of the lockstep is skipped (77) when there are fewer than two.
policies=$(hl_policies ./heaplab)
list=$(echo $policies | tr ' ' ',')
if [ "$(echo $policies | wc -w)" -lt 2 ]; then
	hl_skip "one policy compiled in; the lockstep needs two"
fi

# steady COMMAND...: runs it the same way every time, so that two runs of
# a trace agree: on one CPU (the first this shell may use; percpu's caches
# are per CPU, and a replay the kernel moves midway takes other paths) and
# without address-space randomisation (sharded, as mimalloc, maps 64 MiB
# to cut a 32 MiB-aligned segment out of it and unmaps one piece or two,
# as the address the kernel chose dictates).
steady_prefix=
if setarch "$(uname -m)" -R true 2>/dev/null; then
	steady_prefix="setarch $(uname -m) -R"
fi
if command -v taskset >/dev/null 2>&1; then
	cpu=$(taskset -pc $$ 2>/dev/null | sed 's/.*: *//; s/[-,].*//')
	[ -z "$cpu" ] || steady_prefix="$steady_prefix taskset -c $cpu"
fi
steady() {
	$steady_prefix "$@"
}

# lockstep_facts TRACE POLICY...: a line per policy and op K (0: the empty
# heap), "POLICY K OS DOS COMMITTED DCOMMITTED REUSED IDS": the OS calls so
# far and those the op made, committed bytes and their change, 1 when the
# block the op handed out overlaps bytes a block freed earlier held (IDS:
# those blocks, or -).  The freed bytes are kept as every free left them,
# overlapping, and searched one by one.
lockstep_facts() {
	trace=$1
	shift
	for p in "$@"; do
		steady ./heaplab replay --policy="$p" --repeat 0 --explain=json "$trace" | awk -v p="$p" '
			function value(s, key,   m) {
				if (!match(s, "\"" key "\":-?[0-9]+"))
					return 0
				m = substr(s, RSTART, RLENGTH)
				sub(/.*:/, "", m)
				return m + 0
			}
			function figures(key) {
				match($0, "\"" key "\":[{][^}]*[}]")
				return substr($0, RSTART, RLENGTH)
			}
			function hex(s,   n, i) {
				n = 0
				for (i = 1; i <= length(s); i++)
					n = n * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
				return n
			}
			function freed(r, lo, hi, id) {
				n++
				fr[n] = r; flo[n] = lo; fhi[n] = hi; fid[n] = id
			}
			{
				op = value($0, "op"); id = value($0, "id"); size = value($0, "size")
				match($0, /"kind":"[a-z]"/)
				kind = substr($0, RSTART + 8, 1)
				region = -1
				# the block of the op itself: the "addr" after its "size" (events have theirs)
				if (match($0, /"size":[0-9]+,"addr":"region#[0-9]+\+0x[0-9a-f]+"/)) {
					a = substr($0, RSTART, RLENGTH)
					sub(/.*region#/, "", a)
					sub(/"$/, "", a)
					split(a, part, /[+]0x/)
					region = part[1] + 0
					lo = hex(part[2])
					hi = lo + (size > 0 ? size : 1)
				}
				d = figures("delta"); f = figures("after")
				if (op == 1)
					print p, 0, value(f, "os_calls") - value(d, "os_calls"), 0,
						value(f, "committed") - value(d, "committed"), 0, 0, "-"
				reused = 0; ids = "-"
				if (kind == "f" && (id in preg)) {
					freed(preg[id], plo[id], phi[id], id)
					delete preg[id]
				} else if (kind ~ /[acmr]/ && region >= 0) {
					for (i = 1; i <= n; i++)
						if (fr[i] == region && flo[i] < hi && fhi[i] > lo) {
							ids = reused ? ids "," fid[i] : fid[i]
							reused = 1
						}
					if (kind == "r" && (id in preg) && (preg[id] != region || plo[id] != lo))
						freed(preg[id], plo[id], phi[id], id)
					preg[id] = region; plo[id] = lo; phi[id] = hi
				}
				print p, op, value(f, "os_calls"), value(d, "os_calls"), value(f, "committed"),
					value(d, "committed"), reused, ids
			}' || return 1
	done
}

# lockstep_diverging FACTS RULE PCT: the ops (one a line, in order) where
# the policies of FACTS differ by RULE (os, reuse, committed with N = PCT).
lockstep_diverging() {
	awk -v rule="$2" -v pct="$3" '
		$2 > last { last = $2 }
		$2 > 0 {
			k = $2
			did = rule == "os" ? $4 > 0 : rule == "reuse" ? $7 == 1 : $6 != 0
			if (did) yes[k] = 1; else no[k] = 1
		}
		{
			if (!($2 in lo) || $5 < lo[$2]) lo[$2] = $5
			if (!($2 in hi) || $5 > hi[$2]) hi[$2] = $5
		}
		END {
			for (k = 1; k <= last; k++)
				if (rule == "committed" ? yes[k] && hi[k] > lo[k] * (1 + pct / 100) : yes[k] && no[k])
					print k
		}' "$1"
}

# lockstep_cells TABLE: the cells of `heaplab step --tty`'s lockstep table,
# a line each: "POLICY K OS DOS COMMITTED REUSED" (DOS 0 where the cell
# names no OS call of the op, COMMITTED as written, REUSED 1 for 'r').
lockstep_cells() {
	awk -F'|' '
		/^ +op +line/ { next }
		NF > 2 && !/^ *[0-9]+ / && !names {
			for (c = 2; c < NF; c++) {
				n = $c
				gsub(/ /, "", n)
				name[c] = n
			}
			names = 1
		}
		NF > 2 && /^ *[0-9]+ / {
			split($1, head, " ")
			for (c = 2; c < NF; c++) {
				m = split($c, w, " ")
				dos = m >= 6 && w[6] ~ /^[+]/ ? substr(w[6], 2) : 0
				print name[c], head[1], w[5], dos, w[1] " " w[2], w[m] == "r" ? 1 : 0
			}
		}' "$1"
}

# An awk function, human(BYTES): bytes as the table writes them (vis_bytes).
lockstep_human='function human(b,   u, units) {
	split("B KiB MiB GiB TiB", units, " ")
	for (u = 1; b >= 1024 && u < 5; u++)
		b /= 1024
	return u == 1 ? sprintf("%.0f B", b) : sprintf(b < 10 ? "%.2f %s" : "%.1f %s", b, units[u])
}'
