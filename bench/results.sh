#!/usr/bin/env bash
# bench/RESULTS.md, the current figure of everything the project claims:
# runs the commands of the rows in bench/results.rows and writes the table.
# A row not run keeps the figure and the date RESULTS.md already has for it.
#   bench/results.sh BUILD_DIR [--list] [--cheap] [--rewrite | --check] [ROW-GLOB...]
# ROW-GLOB: run the rows whose id matches (e.g. 'instructions.*');
# --cheap: the rows marked cheap (a few minutes in all); with neither,
# every row that can run here.  --list prints the rows and their commands
# without running anything; --rewrite runs nothing and writes the table
# again (after an edit of results.rows); --check runs nothing and exits 1,
# saying so, when RESULTS.md is not what --rewrite would write (rows added
# or changed without writing it again, a hand edit of what the rows
# define).  The figure cells are the table's own data: a manual row's
# figure is updated by editing its cells, which --check accepts.
# Rows marked external need programs built outside the project from the
# mimalloc-bench snapshot (glibc-simple, cfrac, mstress): MB=DIR names
# where they are, else those rows are left as they are.  Rows marked
# manual have no parser: run their command by hand and write the figures
# and the date into the row's cells in RESULTS.md (where figures are kept).
# Every command runs under `nice -n 10` from the source tree with B set to
# the build directory; each row's raw output is kept in BUILD_DIR/results/.
# A progress line per row goes to stderr.
set -uo pipefail
usage() { echo "usage: bench/results.sh BUILD_DIR [--list] [--cheap] [--rewrite | --check] [ROW-GLOB...]" >&2; exit 2; }
src=$(cd "$(dirname "$0")/.." && pwd)
rows_file="$src/bench/results.rows"
results="$src/bench/RESULTS.md"
[ $# -ge 1 ] || usage
B=$(cd "$1" 2>/dev/null && pwd) || { echo "results: no build directory $1" >&2; exit 2; }
shift
list=0 cheap=0 rewrite=0 check=0 globs=()
for a in "$@"; do
	case "$a" in
	--list) list=1 ;;
	--cheap) cheap=1 ;;
	--rewrite) rewrite=1 ;;
	--check) rewrite=1 check=1 ;;
	-*) echo "results: unknown option '$a'" >&2; usage ;;
	*) globs+=("$a") ;;
	esac
done
MB=${MB:-}
[ -r "$rows_file" ] || { echo "results: no $rows_file" >&2; exit 2; }

# The rows: one record per stanza, fields in the order of `keys`.
keys=(row section cost figure unit model real command parse)
declare -A f=()
ids=()
while IFS=$'\x1f' read -r -a rec; do
	id=${rec[0]}
	[ -n "$id" ] || continue
	[ -z "${f[$id,row]:-}" ] || { echo "results: $rows_file: row $id twice" >&2; exit 2; }
	ids+=("$id")
	for k in "${!keys[@]}"; do f[$id,${keys[$k]}]=${rec[$k]:-}; done
	for k in section cost figure command parse; do
		[ -n "${f[$id,$k]}" ] || { echo "results: $rows_file: row $id has no $k" >&2; exit 2; }
	done
done < <(awk -v keys="${keys[*]}" '
	BEGIN { n = split(keys, k, " "); for (i = 1; i <= n; i++) pos[k[i]] = i }
	function flush() { if (have) { line = v[1]; for (i = 2; i <= n; i++) line = line "\037" v[i]; print line }
	                   have = 0; delete v }
	/^#/ { next }
	/^[ \t]*$/ { flush(); next }
	{ key = $1; val = $0; sub(/^[^ \t]+[ \t]*/, "", val)
	  if (!(key in pos)) { printf "results: %s:%d: unknown field %s\n", FILENAME, NR, key > "/dev/stderr"; exit 2 }
	  v[pos[key]] = val; have = 1 }
	END { flush() }' "$rows_file")
[ ${#ids[@]} -gt 0 ] || { echo "results: no rows in $rows_file" >&2; exit 2; }

# A command as the table shows it: the model's and the real allocator's
# halves each in backquotes.
shown() { local c=$1; echo "\`${c// ;; /\` ;; \`}\`"; }

if [ $list = 1 ]; then
	for id in "${ids[@]}"; do
		printf '%-40s %-9s %s\n' "$id" "${f[$id,cost]}" "${f[$id,command]}"
	done
	exit 0
fi

# The figures RESULTS.md has now, by row id: the model, real, ratio and
# measured cells.
declare -A old=()
if [ -r "$results" ]; then
	while IFS=$'\x1f' read -r id m r x d; do
		old[$id,model]=$m old[$id,real]=$r old[$id,ratio]=$x old[$id,measured]=$d
	done < <(awk -F'|' 'NF >= 9 && $2 ~ /^ [a-z]+[-a-z0-9]*\.[^ ]+ $/ {
		for (i = 2; i <= 8; i++) { gsub(/^ +| +$/, "", $i) }
		print $2 "\037" $4 "\037" $5 "\037" $6 "\037" $8 }' "$results")
fi

wanted() {
	local id=$1 g
	if [ ${#globs[@]} -gt 0 ]; then
		for g in "${globs[@]}"; do [[ "$id" == $g ]] && return 0; done
		return 1
	fi
	[ $cheap = 0 ] || [ "${f[$id,cost]}" = cheap ]
}

# --- parsers: each reads $out_model and $out_real (the same text when the
# row has one command) and sets M, R (the two sides' figures) and X (the
# ratio or comparison); a parser that finds nothing returns 1.
num() { awk -v v="$1" 'BEGIN { exit !(v ~ /^-?[0-9]+(\.[0-9]+)?$/) }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f×", a / b }'; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# the trimmed cells of the markdown row whose first cell is $2, in $1
cells() { awk -F'|' -v t="$2" '{ g = $2; gsub(/^ +| +$/, "", g); if (g == t) { for (i = 3; i < NF; i++) { c = $i; gsub(/^ +| +$/, "", c); printf "%s\037", c }; print ""; exit } }' <<<"$1"; }

parse_cell() { # instructions.sh: the count of target $1 (model) and $2 (real)
	M=$(cells "$out_model" "$1" | cut -d$'\x1f' -f1) R=$(cells "$out_real" "$2" | cut -d$'\x1f' -f1)
	num "$M" && num "$R" || return 1
	X=$(ratio "$M" "$R")
}
parse_rounds() { # rounds.sh: CPU s of each, and the model's median ratio
	local m r
	IFS=$'\x1f' read -r -a m <<<"$(cells "$out_model" "$1")"
	IFS=$'\x1f' read -r -a r <<<"$(cells "$out_real" "$2")"
	num "${m[1]:-}" && num "${r[1]:-}" && num "${m[2]:-}" || return 1
	M="${m[1]} s" R="${r[1]} s" X="${m[2]}× (median of the rounds' ratios)"
}
parse_scaling() { # scaling.sh: the ratio on each CPU
	local m r
	IFS=$'\x1f' read -r -a m <<<"$(cells "$out_model" "$1")"
	IFS=$'\x1f' read -r -a r <<<"$(cells "$out_real" "$2")"
	num "${m[1]:-}" && num "${m[3]:-}" || return 1
	M="${m[1]} / ${m[3]}" R="${r[1]:--} / ${r[3]:--}" X=""
}
parse_pyring() {
	local p l x
	p=$(awk '$1 == "pymalloc_ns_per_op" { print $2 }' <<<"$out_real")
	l=$(awk '$1 == "libc_ns_per_op" { print $2 }' <<<"$out_real")
	x=$(awk '$1 == "ratio" { print $2 }' <<<"$out_real")
	num "$p" && num "$l" && num "$x" || return 1
	M="" R="$p / $l" X="$x×"
}
twofill_side() { # medians of shared pages and lines over the runs
	local p l
	p=$(awk '$1 == "runs" { print $4 }' <<<"$1" | median)
	l=$(awk '$1 == "runs" { sub(/:$/, "", $6); print $6 }' <<<"$1" | median)
	num "$p" && num "$l" || return 1
	echo "$p / $l"
}
parse_twofill() { M=$(twofill_side "$out_model") && R=$(twofill_side "$out_real") || return 1; X=""; }
pagemates_side() { awk '$1 == "chunk" { print $6 " / " $10 }' <<<"$1"; }
parse_pagemates() {
	M=$(pagemates_side "$out_model") R=$(pagemates_side "$out_real")
	[ -n "$M" ] && [ -n "$R" ] || return 1
	X=$(ratio "${M%% *}" "${R%% *}")
}
parse_keys() { # "key value" lines: the keys' values, " / " between them
	local k side v t
	for side in model real; do
		t=""
		[ $side = model ] && v=$out_model || v=$out_real
		for k in "$@"; do
			k=$(awk -v k="$k" '$1 == k { print $2; exit }' <<<"$v")
			num "$k" || return 1
			t+="${t:+ / }$k"
		done
		[ $side = model ] && M=$t || R=$t
	done
	X=""
	[ $# -eq 1 ] && X=$(ratio "$M" "$R")
	return 0
}
parse_utilization() { # replay --json (model) against sysreplay's mean (real)
	M=$(sed -n 's/.*"utilization":\([0-9.]*\).*/\1/p' <<<"$out_model" |
		awk '{ s += $1; n++ } END { if (n) printf "%.1f", 100 * s / n }')
	R=$(awk '$1 == "mean" { v = $NF; sub(/%$/, "", v); print v }' <<<"$out_real")
	num "$M" && num "$R" || return 1
	X=$(awk -v a="$M" -v b="$R" 'BEGIN { printf "%+.1f points", a - b }')
}
parse_side_by_side() { # the test's summary lines
	X=$(awk -F': ' '/ traces, / { printf "%s%s: %s", sep, $1, $2; sep = "; " }' <<<"$out_model")
	[ -n "$X" ] || return 1
	M="" R=""
}
parse_adversary() { # heaplab bound --json (model, resident with its metadata) against sysreplay --rss (real), or the model alone
	M=$(python3 -c 'import json,sys; o=json.load(sys.stdin); print("%.2f" % (o["policies"][0]["peak_resident_with_metadata"] / o["bound_bytes"]))' <<<"$out_model" 2>/dev/null)
	if [ "$out_real" = "$out_model" ]; then num "$M"; return; fi
	R=$(awk '/\.rep /{ printf "%.2f", $5 / $4 }' <<<"$out_real")
	num "$M" && num "$R" || return 1
	X=$(ratio "$M" "$R")
}
parse_adversary_rules() { # tests/programs/adversary.sh's "(rule)" lines: each hand-built trace against the policy's worst
	X=$(sed -n 's/^\([a-z]*\) (rule): model committed \([0-9.]*\) x bound (worst shipped \([0-9.]*\)), resident \([0-9.]*\) (worst \([0-9.]*\))\(; \([^ ]*\) \([0-9.]*\) x bound (worst shipped \([0-9.]*\))\)\{0,1\}.*/\1 \2 \3 \4 \5 \7 \8 \9/p' <<<"$out_model" |
		awk '{ printf "%s%s: committed %.2f (worst %.2f), resident %.2f (worst %.2f)", sep, $1, $2, $3, $4, $5
		       if (NF == 8) { r = $6; sub(/\.so.*/, "", r); sub(/^lib/, "", r); printf ", %s %.2f (worst %.2f)", r, $7, $8 }
		       sep = "; " }')
	[ -n "$X" ] || return 1
	M="" R=""
}
parse_bound() { # heaplab bound --json: the best layout found over the bound, mean and widest
	X=$(python3 -c '
import json, sys
text = sys.stdin.read()
try:
	objs = json.loads(text)
	objs = objs if isinstance(objs, list) else [objs]
except ValueError:
	objs = [json.loads(l) for l in text.splitlines() if l.strip()]
r = sorted((o["found_bytes"] / o["bound_bytes"], o["trace"].split("/")[-1]) for o in objs if o["bound_bytes"])
print("%.2f× the bound on average over %d traces; widest %s (%.2f×)" % (sum(x for x, _ in r) / len(r), len(r), r[-1][1], r[-1][0]))
' <<<"$out_model" 2>/dev/null)
	[ -n "$X" ] || return 1
	M="" R=""
}
parse_fidelity() { # the summary line
	X=$(sed -n 's/^fidelity: \([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped.*/\1 \/ \2 \/ \3/p' <<<"$out_model" | tail -1)
	[ -n "$X" ] || return 1
	M="" R=""
}

# run_cmd COMMAND: runs it once and sets `last` to the file of its output
# (rows that share a command share its run).
declare -A ran=()
run_cmd() {
	local c=$1 n=${#ran[@]}
	if [ -z "${ran[$c]:-}" ]; then
		(cd "$src" && B="$B" MB="$MB" nice -n 10 bash -c "$c") >"$work/$n.out" 2>"$work/$n.err" ||
			{ echo "results: failed: $c: $(tail -1 "$work/$n.err")" >&2; return 1; }
		ran[$c]="$work/$n.out"
	fi
	last=${ran[$c]}
}

declare -A new=()
status=0
if [ $rewrite = 0 ]; then
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
	mkdir -p "$B/results"
	todo=()
	for id in "${ids[@]}"; do wanted "$id" && todo+=("$id"); done
	[ ${#todo[@]} -gt 0 ] || { echo "results: no row matches ${globs[*]:-}" >&2; exit 2; }
	k=0
	for id in "${todo[@]}"; do
		k=$((k + 1))
		cmd=${f[$id,command]} cost=${f[$id,cost]}
		printf 'results: [%d/%d] %s: ' "$k" "${#todo[@]}" "$id" >&2
		if [ "$cost" = manual ]; then
			echo "run by hand (no parser): its figure stays" >&2; continue
		fi
		if [ "$cost" = external ] && { [ -z "$MB" ] || [ ! -d "$MB" ]; }; then
			echo "needs MB=DIR (the mimalloc-bench programs): its figure stays" >&2; continue
		fi
		echo "$cmd" >&2
		if [[ "$cmd" == *" ;; "* ]]; then
			run_cmd "${cmd%% ;; *}" && out_model=$(cat "$last") &&
				run_cmd "${cmd#* ;; }" && out_real=$(cat "$last") || { status=1; continue; }
		else
			run_cmd "$cmd" && out_model=$(cat "$last") || { status=1; continue; }
			out_real=$out_model
		fi
		printf '%s\n' "$out_model" >"$B/results/$id.out"
		[ "$out_real" = "$out_model" ] || printf '%s\n' "$out_real" >>"$B/results/$id.out"
		M="" R="" X=""
		read -r -a p <<<"${f[$id,parse]}"
		if ! declare -F "parse_${p[0]}" >/dev/null || ! "parse_${p[0]}" "${p[@]:1}"; then
			echo "results: $id: could not read its figures from the output ($B/results/$id.out)" >&2
			status=1; continue
		fi
		new[$id,model]="${f[$id,model]}${M:+${f[$id,model]:+ }$M}"
		new[$id,real]="${f[$id,real]}${R:+${f[$id,real]:+ }$R}"
		new[$id,ratio]=$X
		new[$id,measured]="$(date -u '+%Y-%m-%d %H:%M UTC')"
		echo "results: $id: ${new[$id,model]:-—} | ${new[$id,real]:-—} | ${X:-—}" >&2
	done
fi

# --- the table
cell() { # the new figure, else the old one, else "not measured yet"
	local v=${new[$1,$2]-${old[$1,$2]-}}
	if [ -z "${new[$1,measured]:-}" ] && [ -z "${old[$1,measured]:-}" ]; then
		case $2 in model) v=${f[$1,model]} ;; real) v=${f[$1,real]} ;; measured) v="not measured yet" ;; *) v="" ;; esac
	fi
	printf '%s' "${v:-—}"
}
# section_head NAME: the section's title, and the paragraph under it
section_head() {
	case $1 in
	instructions) echo "## Instructions per operation (callgrind: the steady figure)"; echo
		echo "Counted by callgrind on \`bench/ring\`: the difference between 200,000 and 100,000 pairs over 100,000, so start-up and exit cancel and the ring's own loop (about 17) is included.  The load of the machine does not move these: they are the figure to compare between commits." ;;
	time) echo "## Time: CPU-time ratios from interleaved rounds"; echo
		echo "\`bench/rounds.sh\` runs every target once a round, the order turned each round, and gives the median of the per-round ratios of CPU time to the real allocator.  A time means something only on a quiet machine (the rows' dates; HISTORY.md says how loaded it was).  glibc-simple is glibc's \`bench-malloc-simple.c\`; cfrac and mstress are programs of mimalloc-bench; all three are built outside the project (\`gcc -O2\` from the \`daanx/mimalloc-bench\` snapshot) into \`\$MB\`." ;;
	scaling) echo "## Two threads: scaling and where their blocks go"; echo
		echo "\`bench/scaling.sh\` pins the ring's threads and reads each CPU alone and beside the other (this machine's two vCPUs do not run equally fast).  \`bench/twofill\` counts the pages and lines that hold blocks of two threads started together; \`bench/pagemates\` shows why they matter, with no allocator at all." ;;
	memory) echo "## Memory"; echo
		echo "Resident and held bytes: the real allocator's figure is the one the model must reproduce." ;;
	diagnose) echo "## heaplab diagnose against the real allocators"; echo
		echo "CPython's 8-thread repro (\`bench/diagnose/repro.py 2 0.5\`, \`PYTHONMALLOC=malloc\`): the model's resident heap and metadata plus the process's part outside the heap, against the real allocator's RSS read from outside by \`bench/diagnose/peak_final.py\` (median of 5 runs).  These take half an hour and more; run by hand." ;;
	whole) echo "## Whole programs, fidelity, robustness" ;;
	esac
	echo
}
sections=(instructions time scaling memory diagnose whole)

{
	cat <<'EOF'
# Results: the current figures

One row per figure the project claims, each with the model beside the real
allocator it models (where there is one), the ratio or comparison, the
date it was measured and the command that measures it.  **This file is
generated** by `bench/results.sh` from `bench/results.rows`: edit the rows,
not this table (only a manual row's figure cells are written by hand).  How each figure came about — the dated sections of
measurements, experiments and dead ends since 2026-11-30 — is the journal,
[HISTORY.md](HISTORY.md), which `make bench` also appends to.

    bench/results.sh _build --list           # the rows and their commands
    bench/results.sh _build --cheap          # the rows that take seconds (a few minutes in all)
    bench/results.sh _build 'memory.*'       # some rows; with no row, every row that can run here

Commands run from the source tree; `$B` is the build directory (`_build`).
Where a row has two commands, ` ;; ` separates the model's (first) from the
real allocator's.  A *measured* date that says "journal, not rerun" is the
latest figure of HISTORY.md, carried here as it was; `bench/results.sh`
replaces it with the date of its own run.  The discipline: instruction
counts are the steady figure; times are ratios within one run of
interleaved rounds, the median of several; one run of a time alone says
little on this shared machine.

Machine: AMD EPYC (2 vCPUs, shared by several engineers), 23 GiB, Debian
12: glibc 2.36, jemalloc 5.3.0, mimalloc 2.0.9, gperftools 2.10
(`libtcmalloc_minimal.so.4`), CPython 3.11.  The fidelity rows, claim by
claim, are in [FIDELITY.md](FIDELITY.md).
EOF
	for s in "${sections[@]}"; do
		echo
		section_head "$s"
		echo "| row | figure | model | real | ratio | unit | measured | command |"
		echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
		for id in "${ids[@]}"; do
			[ "${f[$id,section]}" = "$s" ] || continue
			printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$id" "${f[$id,figure]}" \
				"$(cell "$id" model)" "$(cell "$id" real)" "$(cell "$id" ratio)" "${f[$id,unit]:-—}" \
				"$(cell "$id" measured)" "$(shown "${f[$id,command]}")"
		done
	done
} >"$results.new" || exit 2
if [ $check = 1 ]; then
	cmp -s "$results.new" "$results" && { rm -f "$results.new"; exit 0; }
	echo "results: $results is not what bench/results.sh writes from $rows_file (diff it with $results.new)" >&2
	exit 1
fi
mv "$results.new" "$results"
echo "results: wrote $results" >&2
exit $status
