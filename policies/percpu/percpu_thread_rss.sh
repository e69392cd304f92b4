#!/usr/bin/env bash
# percpu front:thread beside the real gperftools tcmalloc (Debian's
# libtcmalloc_minimal.so.4, 2.10): how much a trace keeps resident when
# its thread cache, transfer cache and central lists decide it.
# coalesce-big.rep allocates 100 waves of 100 blocks, each wave of a new
# size and freed whole before the next: what stays is what the caches
# keep of the earlier waves (a thread cache that starts at 64 KiB and
# grows at each scavenge; only whole batches held in the transfer cache)
# and the spans their objects pin.  realloc.rep grows blocks through many
# classes.  The real figure is measured now: peak anonymous resident
# growth under bench/sysreplay --rss, over the trace's bound; the model's
# is heaplab bound's peak resident with its metadata's growth, over the
# same bound.  They must be within 15 % (the model held 1.70x gperftools'
# on coalesce-big.rep while every thread cache started at 4 MiB and
# partial batches sat in the transfer cache).  No library: SKIP.
set -u
. "$(dirname "$0")/../../tests/lib.sh"
hl_skip_sanitized "the real allocator is preloaded into bench/sysreplay, which a -fsanitize=$hl_sanitizer build's malloc rules out"
lib=/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4
[ -e "$lib" ] || hl_skip "no $lib here"
hl_compiled percpu || hl_skip "percpu is not compiled in"
src="${srcdir:-.}"
sysreplay="$build/bench/sysreplay"
[ -x "$sysreplay" ] || { echo "no $sysreplay"; exit 99; }
hl_tmpdir
fail=0
for t in coalesce-big realloc; do
	LD_PRELOAD=$lib "$sysreplay" --rss "$src/traces/$t.rep" > "$tmp/real" 2>&1 ||
		{ echo "FAIL: $t: sysreplay on $lib: $(cat "$tmp/real")"; fail=1; continue; }
	"$heaplab" bound --offline-max=0 --policy=percpu --conf=front:thread --json "$src/traces/$t.rep" > "$tmp/model.json" ||
		{ echo "FAIL: $t: heaplab bound"; fail=1; continue; }
	real=$(awk '/\.rep /{ printf "%.2f", $5 / $4 }' "$tmp/real")
	model=$(python3 -c 'import json,sys; o=json.load(open(sys.argv[1])); print("%.2f" % (o["policies"][0]["peak_resident_with_metadata"] / o["bound_bytes"]))' "$tmp/model.json")
	if awk -v m="$model" -v r="$real" 'BEGIN { d = m / r; exit !(r > 0 && d >= 0.85 && d <= 1.15) }'; then
		echo "PASS: $t: model $model x bound, gperftools $real x bound (peak resident)"
	else
		echo "FAIL: $t: model $model x bound, gperftools $real x bound (peak resident): more than 15 % apart"
		fail=1
	fi
done
exit $fail
