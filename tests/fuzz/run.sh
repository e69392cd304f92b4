#!/bin/sh
# make fuzz: runs each libFuzzer harness for SECONDS on its seed corpus.
#   run.sh FUZZ_SRCDIR FUZZ_BUILDDIR SECONDS HARNESS...
# New inputs go to FUZZ_BUILDDIR/new/HARNESS (scratch, never the seeds);
# crashes to FUZZ_BUILDDIR/crashes/HARNESS-*; each harness's log to
# FUZZ_BUILDDIR/HARNESS.log.  Exit status 1 when any harness crashed.
set -u
src=$1 build=$2 seconds=$3
shift 3
case $seconds in ''|*[!0-9]*) echo "make fuzz: FUZZ_SECONDS must be a number of seconds, not '$seconds'" >&2; exit 2 ;; esac
# the trace reader also starts from every shipped trace (truncated to max_len)
traces="$src/../../traces"
failed=""
for h in "$@"; do
	mkdir -p "$build/new/$h" "$build/crashes"
	seeds="$src/corpus/$h"
	extra=""
	maxlen=4096
	if [ "$h" = trace ]; then extra="$traces $traces/damaged"; maxlen=65536; fi
	echo "fuzz_$h: ${seconds}s on $seeds $extra (log: $build/$h.log)"
	# shellcheck disable=SC2086 # $extra is a list of directories
	"$build/fuzz_$h" -max_total_time="$seconds" -max_len=$maxlen -timeout=20 -rss_limit_mb=4096 \
		-print_final_stats=1 -artifact_prefix="$build/crashes/$h-" \
		"$build/new/$h" "$seeds" $extra >"$build/$h.log" 2>&1
	rc=$?
	grep -E '^stat::(number_of_executed_units|peak_rss_mb)|^#[0-9]+ *DONE' "$build/$h.log" | sed 's/^/    /'
	if [ $rc -ne 0 ]; then
		echo "fuzz_$h: CRASH (exit $rc): the input is in $(ls -t "$build/crashes/$h-"* 2>/dev/null | head -1);" \
			"reproduce with $build/fuzz_$h FILE, see the end of $build/$h.log" >&2
		failed="$failed $h"
	fi
done
if [ -n "$failed" ]; then
	echo "make fuzz: crashes in:$failed (minimize with fuzz_HARNESS -minimize_crash=1 FILE; add to $src/corpus/HARNESS/ once fixed)" >&2
	exit 1
fi
echo "make fuzz: no crash"
