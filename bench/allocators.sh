# Sourced by the bench scripts: the real allocators they compare with.
# Sets `lib` (name -> shared library to LD_PRELOAD) and `targets` (glibc,
# then every one of them that is installed; the caller adds heaplab's
# policies).  $1 names the caller in its messages.  check_targets and
# run_under serve the scripts that take targets by name (rounds.sh,
# scaling.sh).
libdir=/usr/lib/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
declare -A lib=( [jemalloc]="$libdir/libjemalloc.so.2" [mimalloc]="$libdir/libmimalloc.so.2"
                 [tcmalloc]="$libdir/libtcmalloc_minimal.so.4" )
targets=(glibc)
for t in jemalloc mimalloc tcmalloc; do
	if [ -r "${lib[$t]}" ]; then targets+=("$t"); else echo "$1: $t not installed (${lib[$t]}), left out" >&2; fi
done

# Exits with a one-line error unless every name in the caller's `names`
# is a target it can run: glibc, an installed allocator of `lib`, or
# heaplab-POLICY[/CONF] with the preload library at $preload.  $1 names
# the caller.
check_targets() {
	local t
	for t in "${names[@]}"; do
		case "$t" in
		glibc) ;;
		heaplab-*) [ -r "$preload" ] || { echo "$1: no $preload (make libheaplab-preload.la)" >&2; exit 2; } ;;
		*) [ -n "${lib[$t]:-}" ] && [ -r "${lib[$t]}" ] || { echo "$1: unknown or missing allocator '$t'" >&2; exit 2; } ;;
		esac
	done
}

# Runs COMMAND... under target $1 (see check_targets).
run_under() {
	local t=$1 spec
	shift
	case "$t" in
	glibc) "$@" ;;
	heaplab-*/*) spec=${t#heaplab-}
		HEAPLAB_POLICY=${spec%%/*} HEAPLAB_CONF=${spec#*/} LD_PRELOAD="$preload" "$@" ;;
	heaplab-*) HEAPLAB_POLICY=${t#heaplab-} LD_PRELOAD="$preload" "$@" ;;
	*) LD_PRELOAD="${lib[$t]}" "$@" ;;
	esac
}
