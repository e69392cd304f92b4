#!/usr/bin/env bash
# The preload library's fast path keeps the operation counters right on
# every policy (tests/programs/shim_counts.c says what it checks), with the plain
# default heap (the fast path) and with the ledger on (the careful one);
# a model whose real allocator it follows under other options (percpu's
# front:thread, gperftools) under those too.
set -u
. "$(dirname "$0")/../lib.sh"
hl_skip_sanitized "preloads heaplab into tests/programs/shim_counts; a -fsanitize=$hl_sanitizer build owns malloc"
program="$build/tests/programs/shim_counts"
failed=0 passed=0
for p in $(hl_models); do
	confs=("" "ledger:on")
	# a model that follows its real allocator under other options (percpu's
	# gperftools front) takes other copies of the shim's malloc and free
	family_conf=$(hl_families | awk -v p="$p" '$1 == p { print $3 }')
	[ -n "$family_conf" ] && confs+=("$family_conf" "$family_conf,ledger:on")
	for conf in "${confs[@]}"; do
		got=$(HEAPLAB_POLICY=$p HEAPLAB_CONF=$conf LD_PRELOAD="$preload" "$program" 2>&1)
		if [ "$got" = ok ]; then passed=$((passed + 1)); else
			failed=$((failed + 1)); echo "FAIL: $p ${conf:-(plain)}: $got"
		fi
	done
done
echo "shim counts: $passed passed, $failed failed"
[ $failed -eq 0 ]
