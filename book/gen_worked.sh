#!/bin/sh
# gen_worked.sh HEAPLAB OUTDIR: the worked examples of chapters 9 to 14, 17 and 18,
# made at build time from heaplab runs (as gen_explain.sh makes the walk
# of explain.rep), so every address, size and figure they quote is what
# this build's code does.  make doc runs it before Doxygen; a chapter
# includes a text file with \verbinclude and embeds a stepper page in an
# iframe (make doc copies OUTDIR/*-stepper.html beside the pages).
# tests/book/book_worked.sh checks the chapters, the table and the files.
#
# One line per example: chapter, kind, trace (in book/traces), policy
# (a comma list for the kinds that compare, or "models": every compiled-in
# allocator model, `all` in policies/policies.list, so a policy added is a
# row with nothing here changed), configuration ("-": none),
# and for explain the ops to keep ("-": all; "1-2,30-": those ranges).
# Kinds and what each writes into OUTDIR:
#   explain   chNN-worked.txt   replay --explain, ops outside the ranges
#             left out, each run of them replaced by one line naming it
#   step      chNN-stepper.html the page heaplab step writes (the last
#             field, when not "-", is its --every: a picture every N ops)
#   stats     chNN-stats.txt    replay --stats: the sizes that measure
#             memory, for one policy
#   compare   chNN-compare.txt  one row per policy: utilization, peak and
#             final committed, final resident, kernel calls
#   diagnose  chNN-diagnose.txt heaplab diagnose --trace, its summary
#   misuse    chNN-misuse.txt   per policy, debug off and on: what the
#             trace's mistake leads to (the abort line, or nothing)
# bins is pinned to version:2.43 where the chapter describes glibc 2.43 (16
# chunks a tcache bin, no fastbins); unpinned it follows the running glibc.
set -eu
heaplab=$1
out=$2
src=$(cd "$(dirname "$0")" && pwd)
compiled=$("$heaplab" policies | awk '{print $1}')
has() { echo "$compiled" | grep -qx "$1"; }

# the policies of a comma list (or "models") that are compiled in,
# space-separated
present() {
	list=$1
	[ "$list" != models ] || list=$(awk '!/^#/ && $2 == "all" { print $1 }' "$src/../policies/policies.list")
	for p in $(echo "$list" | tr , ' '); do
		if has "$p"; then printf '%s ' "$p"; fi
	done
}

# conf_args CONF: the --conf argument, or nothing for "-"
conf_args() { [ "$1" = - ] || printf '%s' "--conf=$1"; }

explain() { # trace policy conf ranges
	echo "\$ heaplab replay --policy=$2 $(conf_args "$3") --repeat 0 --explain book/traces/$1" | tr -s ' '
	"$heaplab" replay --policy="$2" $(conf_args "$3") --repeat 0 --explain "$src/traces/$1" |
	sed "s|$src/traces/|book/traces/|" |
	awk -v keep="$4" '
		function kept(n,   i, k, r, lo, hi) {
			if (keep == "-") return 1
			k = split(keep, r, ",")
			for (i = 1; i <= k; i++) {
				lo = r[i]; hi = r[i]
				if (r[i] ~ /-/) { split(r[i], b, "-"); lo = b[1]; hi = b[2] == "" ? 1e9 : b[2] }
				if (n + 0 >= lo + 0 && n + 0 <= hi + 0) return 1
			}
			return 0
		}
		function flush() {
			if (gap == 1) printf "... (op %d left out)\n", first
			else if (gap) printf "... (ops %d to %d left out)\n", first, first + gap - 1
			gap = 0
		}
		/^op [0-9]+ / { n = $2; show = kept(n); if (show) flush(); else if (!gap++) first = n }
		!/^( |op )/ { flush(); print; next }
		show { print }'
}

stats() { # trace policy conf
	echo "\$ heaplab replay --policy=$2 $(conf_args "$3") --repeat 0 --stats book/traces/$1" | tr -s ' '
	"$heaplab" replay --policy="$2" $(conf_args "$3") --repeat 0 --stats "$src/traces/$1" |
	grep -E '^(live_requested_bytes|peak_requested_bytes|bloat_factor|live_usable_bytes|reserved_bytes|committed_bytes|resident_bytes):|^  (peak_committed_bytes|metadata_bytes):' |
	sed 's/^  //'
}

compare() { # trace policies conf
	echo "\$ heaplab replay --policy=$(present "$2" | sed 's/ $//; s/ /,/g') $(conf_args "$3") --repeat 0 --stats book/traces/$1" | tr -s ' '
	echo "(one row per policy, from its statistics; util = peak live requested / peak committed)"
	printf '%-9s %7s %14s %14s %14s %9s\n' policy util 'peak commit B' 'final commit B' 'final resid. B' 'os calls'
	for p in $(present "$2"); do
		"$heaplab" replay --policy="$p" $(conf_args "$3") --repeat 0 --stats "$src/traces/$1" |
		awk -v p="$p" '
			$1 == "committed_bytes:" { c = $2 }
			$1 == "resident_bytes:" { r = $2 }
			$1 == "peak_committed_bytes:" { pk = $2 }
			$1 ~ /_calls:$/ && $1 != "mincore_calls:" { os += $2 }
			$2 == p && $NF == "ok" { u = $4 }
			END { printf "%-9s %7s %14s %14s %14s %9s\n", p, u, pk, c, r, os }'
	done
}

diagnose() { # trace
	echo "\$ heaplab diagnose --trace=book/traces/$1"
	"$heaplab" diagnose --trace="$src/traces/$1" | sed "s|$src/traces/|book/traces/|" |
	sed '/^The replay runs/,$d'
}

misuse() { # trace policies
	echo "\$ heaplab replay --policy=P --conf=ledger:off,debug:D --check-every 1000000 --repeat 0 book/traces/$1"
	echo "(the ledger off and the checker only at the end, so the policy alone"
	echo " decides; per policy P and debug D: the first line it wrote that"
	echo " is not a warning about the trace, and how the process ended)"
	for p in $(present "$2"); do
		for d in off on; do
			err=$( { (ulimit -c 0; exec "$heaplab" replay --policy="$p" --conf=ledger:off,debug:$d \
				--check-every 1000000 --repeat 0 "$src/traces/$1"); } 2>&1) && rc=0 || rc=$?
			line=$(printf '%s\n' "$err" | grep -v -e ': warning: ' -e '^trace ' -e ' FAILED$' -e ' ok$' |
				grep . | head -1 | sed "s|$src/traces/|book/traces/|; s|$src/traces/||")
			case $rc in
			0) what="went on: no check caught it" ;;
			1) what="replay failed: $line" ;;
			134) what="aborted: $line" ;;
			*) what="exit $rc: $line" ;;
			esac
			printf '%-8s debug:%-3s %s\n' "$p" "$d" "$what"
		done
	done
}

while read -r chapter kind trace policy conf ranges; do
	case "$chapter" in '#'*|'') continue ;; esac
	case $kind in
	explain)
		has "$policy" || continue
		explain "$trace" "$policy" "$conf" "$ranges" >"$out/ch$chapter-worked.txt" ;;
	step)
		has "$policy" || continue
		set -- -o "$out/ch$chapter-stepper.html"
		[ "$ranges" = - ] || set -- "$@" --every "$ranges"
		"$heaplab" step "$src/traces/$trace" --policy="$policy" $(conf_args "$conf") "$@" \
			>"$out/ch$chapter-step.log" 2>&1 || { cat "$out/ch$chapter-step.log" >&2; exit 1; }
		rm -f "$out/ch$chapter-step.log" ;;
	stats)
		has "$policy" || continue
		stats "$trace" "$policy" "$conf" >"$out/ch$chapter-stats.txt" ;;
	compare) compare "$trace" "$policy" "$conf" >"$out/ch$chapter-compare.txt" ;;
	diagnose) diagnose "$trace" >"$out/ch$chapter-diagnose.txt" ;;
	misuse) # (stderr: the shell's word for each process that aborted)
		misuse "$trace" "$policy" >"$out/ch$chapter-misuse.txt" 2>/dev/null ;;
	*) echo "gen_worked.sh: unknown kind $kind" >&2; exit 1 ;;
	esac
done <<'TABLE'
09 explain remote.rep sharded - -
09 step remote.rep sharded - -
10 explain pool-life.rep pools - 1-2,30-
10 step pool-life.rep pools - 2
11 explain pinned-top.rep bins version:2.43 1-2,9-10,16-
11 step pinned-top.rep bins version:2.43 -
11 compare pinned-top.rep models - -
12 stats scattered.rep bins version:2.43 -
12 diagnose scattered.rep - - -
12 step scattered.rep bins version:2.43 24
13 misuse freed-twice.rep bins,slab,sharded,pools,percpu - -
13 explain secure-order.rep sharded secure:on -
13 step secure-order.rep sharded secure:on -
14 compare mixed-day.rep bump,firstfit,bins,slab,sharded,pools,percpu - -
14 step mixed-day.rep sharded - 4
17 explain pairs.rep bins version:2.36,tcache_count:0 4-7
18 stats held.rep bins version:2.36 -
TABLE
