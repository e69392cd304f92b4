#!/usr/bin/env bash
# make bench: runs each workload under every heaplab policy and under the
# real allocators (glibc, jemalloc, mimalloc, tcmalloc) through LD_PRELOAD,
# prints ns/op and RSS as ratios to glibc, adds the real CPython pymalloc on
# the ring (bench/pyring, when libpython was found), and appends the tables
# with the machine and the command to bench/HISTORY.md (the journal; the
# current figures are bench/RESULTS.md, written by bench/results.sh).
#   bench/run.sh BUILD_DIR SRC_DIR [quick]
set -uo pipefail
build=$(cd "${1:-.}" && pwd)
src=$(cd "${2:-$build}" && pwd)
quick=${3:-}
heaplab="$build/heaplab"
preload="$build/.libs/libheaplab-preload.so"
results="$src/bench/HISTORY.md"
scale=1
[ "$quick" = quick ] && scale=10

source "$src/bench/allocators.sh" bench
for p in $("$heaplab" policies | awk '{print $1}'); do
	[ "$p" = student ] || targets+=("heaplab-$p")
	# pools again with its headers in a table (no shared L1 set; see pools.c)
	[ "$p" = pools ] && targets+=("heaplab-pools/headers:table")
done

# Runs one workload under one target; prints its "key value" lines.
run_one() {
	local target=$1; shift
	case "$target" in
	glibc) "$@" ;;
	heaplab-*/*) local spec=${target#heaplab-}
		HEAPLAB_POLICY=${spec%%/*} HEAPLAB_CONF=${spec#*/} LD_PRELOAD="$preload" "$@" ;;
	heaplab-*) HEAPLAB_POLICY=${target#heaplab-} LD_PRELOAD="$preload" "$@" ;;
	*) LD_PRELOAD="${lib[$target]}" "$@" ;;
	esac
}

declare -A value
workloads=(
	"ring1|$build/bench/ring 1 $((4000000 / scale)) 1000 256"
	"ring2|$build/bench/ring 2 $((4000000 / scale)) 1000 256"
	"ring512|$build/bench/ring 1 $((4000000 / scale)) 1000 512"
	"xthread|$build/bench/xthread $((2000000 / scale)) 256"
	"halfgig|$build/bench/halfgig 1500"
	"cliff|$build/bench/cliff $((1000000 / scale))"
	"cliff16|$build/bench/cliff $((1000000 / scale)) 16"
)
total=$(( ${#workloads[@]} * ${#targets[@]} )); n=0
for w in "${workloads[@]}"; do
	name=${w%%|*}; cmd=${w#*|}
	for t in "${targets[@]}"; do
		n=$((n + 1))
		[ -t 2 ] && printf '\rbench: %d/%d %s under %s          ' "$n" "$total" "$name" "$t" >&2
		out=$(run_one "$t" $cmd 2>/dev/null) || out="failed 1"
		while read -r k v; do value["$name,$t,$k"]=$v; done <<< "$out"
	done
done
[ -t 2 ] && printf '\r%70s\r' '' >&2

ratio() { # value / glibc value, 2 decimals
	local v=${value["$1,$2,$3"]:-} g=${value["$1,glibc,$3"]:-}
	if [ -z "$v" ] || [ -z "$g" ]; then echo "-"; return; fi
	awk -v v="$v" -v g="$g" 'BEGIN { if (g > 0) printf "%.2f", v / g; else print "-" }'
}

table() {
	echo "| target | ring 1T ns/op | ×glibc | ring 2T ns/op | ×glibc | ring ≤512 ns/op | ×glibc | xthread ns/op | ×glibc | halfgig peak MB | after free 90% MB | after free all MB | after 1.5 s MB | cliff 496 → 528 ns (100 live) | cliff 496 → 528 ns (16 live) |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
	for t in "${targets[@]}"; do
		printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s → %s | %s → %s |\n' "$t" \
			"${value["ring1,$t,ns_per_op"]:--}" "$(ratio ring1 "$t" ns_per_op)" \
			"${value["ring2,$t,ns_per_op"]:--}" "$(ratio ring2 "$t" ns_per_op)" \
			"${value["ring512,$t,ns_per_op"]:--}" "$(ratio ring512 "$t" ns_per_op)" \
			"${value["xthread,$t,ns_per_op"]:--}" "$(ratio xthread "$t" ns_per_op)" \
			"${value["halfgig,$t,rss_after_alloc_mb"]:--}" "${value["halfgig,$t,rss_after_free90_mb"]:--}" \
			"${value["halfgig,$t,rss_after_free_all_mb"]:--}" "${value["halfgig,$t,rss_after_wait_mb"]:--}" \
			"${value["cliff,$t,ns_at_496"]:--}" "${value["cliff,$t,ns_at_528"]:--}" \
			"${value["cliff16,$t,ns_at_496"]:--}" "${value["cliff16,$t,ns_at_528"]:--}"
	done
}

# The real CPython pymalloc next to heaplab-pools' ring ≤512: bench/pyring
# runs the same ring on an embedded libpython and on glibc in one process.
pymalloc_table() {
	local -A py=()
	local out k v
	out=$("$build/bench/pyring" $((4000000 / scale)) 512 2>/dev/null) || { echo "pymalloc: bench/pyring failed, left out" >&2; return; }
	while read -r k v; do py[$k]=$v; done <<< "$out"
	echo
	printf 'Real CPython pymalloc on the ring ≤512 workload (`bench/pyring %d 512`: %s interleaved rounds on each allocator in one process, medians):\n' \
		$((4000000 / scale)) "${py[rounds]:-?}"
	echo
	echo "| allocator | ring ≤512 ns/op | ×glibc (same process) |"
	echo "|---|---|---|"
	printf '| glibc (in bench/pyring) | %s | 1.00 |\n' "${py[libc_ns_per_op]:--}"
	printf '| real CPython pymalloc (embedded, Python %s) | %s | %s |\n' "${py[python_version]:-?}" \
		"${py[pymalloc_ns_per_op]:--}" "${py[ratio]:--}"
}

report=$(table)
if [ -x "$build/bench/pyring" ]; then
	report+=$'\n'$(pymalloc_table)
else
	echo "pymalloc: libpython not found, left out" >&2
fi
echo "$report"
{
	echo
	echo "## $(date -u '+%Y-%m-%d %H:%M UTC') — \`make bench${quick:+ BENCH=quick}\`"
	echo
	echo "Machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB; $(uname -sr); glibc $(ldd --version | head -1 | awk '{print $NF}')."
	echo "One run each; ratios are to glibc in the same run. The machine is shared, so treat single figures with care."
	echo
	echo "$report"
} >> "$results"
echo "bench: appended to $results" >&2
