#!/usr/bin/env bash
# bins against the real glibc it models, trace by trace: every shipped trace
# is replayed on this machine's glibc (bench/sysreplay, each in a fresh
# process) and on bins with its defaults, which follow the running glibc
# (option version: tcache_count 7 and fastbins on for 2.36, with no --conf),
# and the peak bytes each holds from the system must agree.
#   - glibc's defaults (top_pad 128 KiB): equal on every trace;
#   - top_pad 0 (GLIBC_TUNABLES / --conf): equal on every trace too (three
#     long traces ended one page apart while bins' tcache record was glibc
#     2.42's 768-byte chunk, not 2.36's 656).
# The figures are those of glibc 2.36 (Debian 12); elsewhere this is a SKIP.
set -u
. "$(dirname "$0")/../../tests/lib.sh"
hl_skip_sanitized "bench/sysreplay would measure the sanitizer's malloc, not glibc's; a -fsanitize=$hl_sanitizer build owns malloc"
src="${srcdir:-.}"
sysreplay="$build/bench/sysreplay"
hl_compiled bins || hl_skip "bins is not compiled in"
version=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')
[ "$version" = 2.36 ] || hl_skip "bins' side-by-side settings are for glibc 2.36; this is glibc ${version:-unknown}"
[ -x "$sysreplay" ] || { echo "no $sysreplay"; exit 99; }
failed=0

# "trace peak" lines: from sysreplay's table (glibc_peaks TUNABLES) or from
# replay's JSON (bins_peaks CONF)
glibc_peaks() { GLIBC_TUNABLES="$1" "$sysreplay" "$src"/traces/*.rep | awk '/\.rep /{print $1, $5}'; }
bins_peaks() {
	# debug:off: an --enable-debug build's checker after every call would be
	# quadratic on the long traces (and measures nothing here)
	"$heaplab" replay --policy=bins --conf="${1:+$1,}debug:off" --repeat 0 --check-every 0 --json "$src"/traces/*.rep 2>/dev/null |
		sed -n 's/.*"trace":"\([^"]*\)".*"peak_committed":\([0-9]*\).*/\1 \2/p'
}

# compare NAME TUNABLES CONF SLACK_ALL: every trace within SLACK_ALL bytes,
# every -bal trace exact
compare() {
	local name=$1 tun=$2 conf=$3 slack=$4 n
	n=$(join <(glibc_peaks "$tun" | sort) <(bins_peaks "$conf" | sort) |
		awk -v slack="$slack" -v name="$name" '
		{ d = $2 - $3; if (d < 0) d = -d; n++
		  if (d > slack || ($1 ~ /-bal\.rep$/ && d != 0)) {
			  printf "%s: %s: glibc holds %d bytes at its peak, bins %d\n", name, $1, $2, $3; bad++ }
		  else if (d) near++ }
		END { printf "%s: %d traces, %d equal, %d within a page, %d apart\n", name, n, n - near - bad, near, bad
		      exit bad ? 1 : (n < 50) }') || failed=1
	echo "$n"
}
compare "defaults" "" "" 0
compare "top_pad 0" "glibc.malloc.top_pad=0" "top_pad:0" 0
exit $failed
