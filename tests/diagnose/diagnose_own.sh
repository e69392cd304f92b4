#!/usr/bin/env bash
# The real allocators' own memory at start: a program recorded on glibc
# and predicted under jemalloc, mimalloc or gperftools has none of their
# library pages and first metadata in what lay outside its heap, so
# diagnose adds, for each candidate that preloads one, what a process that
# starts it holds beyond one on glibc (`cat /proc/self/statm`), less what
# the model holds of itself after one malloc.  Checked against the real
# allocators: a perl program (a hash of 60,000 strings and 20,000 small
# arrays, then dropped) measures its own peak (VmHWM) under each real
# allocator, installed here; the peak diagnose predicts for each lies
# within 10 % of it, and under gperftools, whose own memory at start is the
# largest (about 5.4 MiB), nearer with that memory added than without
# (-11 % without it when this test was written).
set -u
. "$(dirname "$0")/../lib.sh"
hl_need_models glibc
hl_skip_sanitized "recording preloads heaplab's recorder; a -fsanitize=$hl_sanitizer build owns malloc"
command -v perl >/dev/null || hl_skip "no perl"
py=$(command -v python3) || hl_skip "no python3"
libdir=/usr/lib/x86_64-linux-gnu
hl_tmpdir
failed=0 passed=0
pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }

cat > "$tmp/w.pl" <<'PL'
my %h;
$h{"key$_"} = "v" x (20 + $_ % 60) for 1 .. 60000;
my @a = map { [$_, "x$_"] } 1 .. 20000;
undef %h; undef @a;
open(my $s, '<', '/proc/self/status');
while (<$s>) { if (/^VmHWM:\s+(\d+)/) { open(my $o, '>', $ARGV[0]); print $o $1 * 1024; } }
PL
"$heaplab" diagnose --knobs= --json="$tmp/report.json" -- perl "$tmp/w.pl" "$tmp/scratch" >/dev/null 2>"$tmp/err" ||
	{ fail "diagnose failed"; cat "$tmp/err"; }
# predicted_peak_rss and allocator_own_bytes of the candidate whose real
# setting is exactly SETTING
candidate() {
	hl_candidate "$tmp/report.json" real_setting "$1" predicted_peak_rss allocator_own_bytes
}
ran=0
for lib in "" libjemalloc.so.2 libmimalloc.so.2 libtcmalloc_minimal.so.4; do
	family=glibc
	case $lib in libjemalloc*) family=jemalloc ;; libmimalloc*) family=mimalloc ;; libtcmalloc*) family=tcmalloc ;; esac
	[ -n "$(hl_unmodelled $family)" ] && { echo "SKIP (part): no compiled-in policy models $family"; continue; }
	if [ -n "$lib" ]; then
		[ -r "$libdir/$lib" ] || { echo "not installed: $libdir/$lib"; continue; }
		setting="LD_PRELOAD=$libdir/$lib"
	else
		setting="the default (glibc malloc as it is)"
	fi
	LD_PRELOAD=${lib:+$libdir/$lib} perl "$tmp/w.pl" "$tmp/hwm" || { fail "${lib:-glibc}: perl failed"; continue; }
	measured=$(cat "$tmp/hwm")
	read -r predicted own <<<"$(candidate "$setting")"
	ran=$((ran + 1))
	awk -v p="${predicted:-0}" -v m="$measured" 'BEGIN { d = (p - m) / m; exit !(d < 0.10 && d > -0.10) }' && pass ||
		fail "${lib:-glibc}: predicted peak '${predicted:-}' B is not within 10 % of the measured $measured B"
	if [ -z "$lib" ]; then
		[ "${own:-x}" = 0 ] && pass || fail "glibc: own memory at start '${own:-}', not 0 (the recording ran on it)"
	elif [ "$lib" = libtcmalloc_minimal.so.4 ]; then
		awk -v p="${predicted:-0}" -v o="${own:-0}" -v m="$measured" 'BEGIN {
			d = p - m; e = p - o - m; exit !(o > 0 && (d < 0 ? -d : d) < (e < 0 ? -e : e)) }' && pass ||
			fail "gperftools: with its own memory at start (${own:-} B) the prediction is not nearer $measured B"
	fi
done
[ $ran -ge 2 ] || [ $failed -gt 0 ] || hl_skip "fewer than two allocators to compare"
echo "diagnose_own: $passed passed, $failed failed"
[ $failed -eq 0 ]
