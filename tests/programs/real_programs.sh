#!/usr/bin/env bash
# Real programs under `heaplab run`, on every compiled-in policy, must print
# exactly what they print on the system allocator: sort of 200,000 lines,
# python3 building and dropping a million small objects with
# PYTHONMALLOC=malloc, and a multi-threaded program that also forks; that
# last one also on a heaplab heap through the API (tests/programs/mt_api).
# In a sanitizer build the sanitizer owns malloc, so
# nothing can be preloaded: only the API run is left.
set -u
. "$(dirname "$0")/../lib.sh"
# In an --enable-debug build every call would run the heap checker, which
# makes these big programs quadratic: they run with the checker off (the
# debug code is still compiled in; the small suites exercise it).
export HEAPLAB_CONF=debug:off
mt="$build/tests/programs/mt_program"
mt_api="$build/tests/programs/mt_api"
hl_tmpdir; work=$tmp
awk 'BEGIN { srand(7); for (i = 0; i < 200000; i++) printf "%08d line %d\n", int(rand() * 1e8), i }' > "$work/lines"
py='import sys
objs = [{"k": i, "v": str(i) * (i % 7)} for i in range(1000000)]
total = sum(len(o["v"]) for o in objs)
del objs
ls = [tuple(range(i % 10)) for i in range(200000)]
print(total, len(ls))'
hl_sanitized || sort "$work/lines" > "$work/sort.want"
hl_sanitized || PYTHONMALLOC=malloc python3 -c "$py" > "$work/py.want"
"$mt" > "$work/mt.want"
failed=0 passed=0
check() { # name want got
	if cmp -s "$2" "$3"; then passed=$((passed + 1)); else
		failed=$((failed + 1)); echo "FAIL: $1 differs from the system allocator's output"; diff "$2" "$3" | head -5
	fi
}
for p in $(hl_models); do
	"$mt_api" "$p" > "$work/mt.got" 2> "$work/err" || echo "mt_api exited $? on $p: $(head -3 "$work/err")"
	check "threads+fork through the API on $p" "$work/mt.want" "$work/mt.got"
	hl_sanitized && continue
	"$heaplab" run --policy="$p" -- sort "$work/lines" > "$work/sort.got" 2> "$work/err" || echo "sort exited $? on $p: $(head -3 "$work/err")"
	check "sort on $p" "$work/sort.want" "$work/sort.got"
	PYTHONMALLOC=malloc "$heaplab" run --policy="$p" -- python3 -c "$py" > "$work/py.got" 2> "$work/err" || echo "python3 exited $? on $p: $(head -3 "$work/err")"
	check "python3 on $p" "$work/py.want" "$work/py.got"
	"$heaplab" run --policy="$p" -- "$mt" > "$work/mt.got" 2> "$work/err" || echo "mt_program exited $? on $p: $(head -3 "$work/err")"
	check "threads+fork on $p" "$work/mt.want" "$work/mt.got"
	# the recorder: a program's own trace must replay cleanly
	"$heaplab" run --policy="$p" --trace="$work/ls.rep" -- ls -l / > /dev/null 2>&1
	if "$heaplab" replay --policy="$p" --repeat 0 "$work/ls.rep" > /dev/null 2> "$work/err"; then passed=$((passed + 1)); else
		failed=$((failed + 1)); echo "FAIL: recorded trace of ls does not replay on $p: $(head -2 "$work/err")"; fi
done
hl_sanitized && echo "real programs: sort, python3, mt_program and the recorder under LD_PRELOAD not run: built with -fsanitize=$hl_sanitizer, which owns malloc"
echo "real programs: $passed passed, $failed failed"
[ $failed -eq 0 ]
