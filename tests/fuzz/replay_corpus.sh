#!/bin/sh
# Every fuzz corpus entry is a regression test: each harness runs, as a
# plain program (tests/fuzz/replay_HARNESS), on every file of its corpus,
# and the trace harness also on every shipped trace (traces/, with the
# damaged ones).  A harness aborts on any bug it finds; then the entry
# that made it abort is named.
set -u
srcdir=${srcdir:-.}
bin=${abs_top_builddir:-.}/tests/fuzz
corpus=$srcdir/tests/fuzz/corpus
status=0
for h in trace conf ops; do
	set -- "$corpus/$h"/*
	[ "$h" = trace ] && set -- "$@" "$srcdir"/traces/*.rep "$srcdir"/traces/damaged/*
	if [ ! -e "$1" ] || [ $# -lt 3 ]; then
		echo "FAIL: the $h corpus ($corpus/$h) is missing or nearly empty"
		status=1
		continue
	fi
	if out=$("$bin/replay_$h" "$@" 2>&1) && [ "$out" = "$# input(s) replayed" ]; then
		echo "ok: replay_$h: $# inputs"
		continue
	fi
	status=1
	echo "FAIL: replay_$h on its corpus:"
	echo "$out" | tail -5
	for f in "$@"; do
		"$bin/replay_$h" "$f" >/dev/null 2>&1 || echo "FAIL: replay_$h $f"
	done
done
exit $status
