#!/usr/bin/env bash
# A share of CPython's own regression tests (python3 -m test) under
# `heaplab run`, on every compiled-in policy but two and on percpu's
# front:thread,
# with PYTHONMALLOC=malloc so that every Python object comes from the
# policy.  The system allocator decides what is expected: the same modules
# run first without heaplab, and every module that passes there must pass
# under each policy (and each model under the options it follows its real
# allocator with: percpu's front:thread).  The modules are ones that churn objects (dicts,
# lists, sets, strings, bytes, JSON, regular expressions, the collector,
# weak references, threads); the whole suite, run once by hand for percpu,
# is in bench/RESULTS.md.  Not run: the malloc lab's skeleton (`student`,
# to fill in) and its reference (`firstfit`), whose search of every free block makes these modules take
# 110 s instead of 8 (real_programs.sh runs python3 on it).  Skipped (77)
# in a sanitizer build, which owns malloc, and where python3 has no test
# package.
set -u
. "$(dirname "$0")/../lib.sh"
hl_skip_sanitized "python regrtest: not run: built with -fsanitize=$hl_sanitizer, which owns malloc"
python3 -c 'import test.libregrtest' 2>/dev/null ||
	hl_skip "python regrtest: not run: python3 has no test package (Debian: libpython3-testsuite)"
export HEAPLAB_CONF=debug:off PYTHONMALLOC=malloc
modules="test_dict test_list test_set test_tuple test_deque test_collections test_unicode test_bytes
	test_json test_re test_gc test_weakref test_thread test_descr"
hl_tmpdir; work=$tmp
cd "$work" || exit 99

# Runs the modules with "$@" in front of python3; prints "MODULE RESULT"
# per module (passed, failed, crashed, ...), from regrtest's lines.
regrtest() {
	"$@" python3 -m test -j2 --timeout 300 $modules > "$work/log" 2>&1
	sed -nE 's/.*\] (test_[A-Za-z0-9_]+) ([a-z]+).*/\1 \2/p' "$work/log" | sort
}

regrtest env > "$work/want"
want=$(awk '$2 == "passed" { print $1 }' "$work/want")
n=$(echo "$want" | grep -c .)
if [ "$n" -lt 10 ]; then
	echo "FAIL: only $n of the modules pass without heaplab; regrtest said:"
	tail -15 "$work/log"
	exit 1
fi
failed=0 passed=0
skeleton=$(hl_role skeleton) reference=$(hl_role reference)
for p in $(hl_policies | grep -vx -e "${skeleton:-/}" -e "${reference:-/}") \
	$(hl_families | awk 'NF > 2 { print $1 "/" $3 }'); do
	policy=${p%%/*} conf=
	[ "$p" != "$policy" ] && conf=,${p#*/}
	regrtest "$heaplab" run --policy="$policy" --conf="debug:off$conf" -- > "$work/got"
	bad=
	for m in $want; do
		grep -qx "$m passed" "$work/got" || bad="$bad $m($(awk -v m="$m" '$1 == m { print $2 }' "$work/got"))"
	done
	if [ -n "$bad" ]; then
		failed=$((failed + 1))
		echo "FAIL: on $p, modules that pass on the system allocator do not:$bad"
		grep -E "^(FAIL|ERROR):|heaplab" "$work/log" | head -5
	else
		passed=$((passed + 1))
		echo "python regrtest on $p: the $n modules pass, as on the system allocator"
	fi
done
echo "python regrtest: $passed policies passed, $failed failed"
[ $failed -eq 0 ]
