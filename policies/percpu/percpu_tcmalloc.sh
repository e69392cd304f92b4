#!/usr/bin/env bash
# percpu front:thread beside the real gperftools tcmalloc (Debian's
# libtcmalloc_minimal.so.4, 2.10): malloc_usable_size of every request from
# 1 to 70,000 bytes, then of large requests, must be equal.  The expected
# values are the real library's, measured now (tests/programs/usable_probe under
# LD_PRELOAD); the model's come from the same probe under heaplab's
# preload library.  No library: SKIP.
set -u
. "$(dirname "$0")/../../tests/lib.sh"
probe="$build/tests/programs/usable_probe"
lib=
for l in /usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4 /usr/lib64/libtcmalloc_minimal.so.4 \
	/usr/lib/libtcmalloc_minimal.so.4; do
	[ -e "$l" ] && lib=$l && break
done
[ -n "$lib" ] || hl_skip "no libtcmalloc_minimal.so.4 here"
hl_skip_sanitized "a sanitizer owns malloc, nothing can be preloaded"
hl_compiled percpu || hl_skip "percpu is not compiled in"
hl_tmpdir; work=$tmp
fail=0
for range in "1 70000 1" "70001 2000000 4093"; do
	LD_PRELOAD=$lib "$probe" $range > "$work/real" || { echo "FAIL: probe on $lib"; exit 1; }
	HEAPLAB_CONF=debug:off "$heaplab" run --policy=percpu --conf=front:thread -- "$probe" $range \
		> "$work/model" || { echo "FAIL: probe on the model"; exit 1; }
	n=$(wc -l < "$work/real")
	differ=$(paste -d' ' "$work/real" "$work/model" | awk '$2 != $4' | wc -l)
	if [ "$n" -gt 0 ] && [ "$differ" -eq 0 ]; then
		echo "PASS: usable sizes equal for all $n requests of $range ($lib)"
	else
		echo "FAIL: $differ of $n usable sizes differ over $range; first ones (n real model):"
		paste -d' ' "$work/real" "$work/model" | awk '$2 != $4 {print $1, $2, $4}' | head -5
		fail=1
	fi
done
exit $fail
