#!/usr/bin/env bash
# The clock seam (core/clock.h): no policy reads the clock, sleeps on a
# timeout or starts a thread of its own; each reads the heap's clock
# (hl_clock_now_ns) and runs background work as the core's task, so that a
# replay can drive both from the recording.  First the checker is shown to
# catch a read (and to ignore comments, strings and the core's own reader)
# on a small tree made here, then the real tree must be clean.
set -u
srcdir=${srcdir:-.}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$srcdir" && pwd)
command -v python3 >/dev/null || { echo "SKIP: python3 is needed"; exit 77; }
fail=0

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/core" "$tmp/policies/demo"
printf 'long now(void) { struct timespec t; clock_gettime(1, &t); return t.tv_sec; }\n' > "$tmp/core/clock.c"
cat > "$tmp/policies/demo/demo.c" <<'C'
/* a comment naming clock_gettime(CLOCK_MONOTONIC, &ts) does not count */
static const char *s = "gettimeofday(&tv, 0)";
long due(void) { struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts); return ts.tv_sec; }
long ok(void *h) { return hl_clock_now_ns(h) + st->time(); }
void wait(void) { pthread_cond_timedwait(&c, &m, &ts); }
C
out=$(python3 "$here/clock_seam.py" "$tmp"); rc=$?
want=$'policies/demo/demo.c:3: clock_gettime: a policy reads the clock or starts a thread itself (use hl_clock_now_ns, hl_background_*)\npolicies/demo/demo.c:5: pthread_cond_timedwait: a policy reads the clock or starts a thread itself (use hl_clock_now_ns, hl_background_*)'
if [ $rc -eq 1 ] && [ "$out" = "$want" ]; then
	echo "PASS: the checker finds the clock read and the timed wait of a policy, not the comment, the string or the core"
else
	echo "FAIL: the checker on a planted tree (status $rc):"; echo "$out"; fail=1
fi

out=$(python3 "$here/clock_seam.py" "$top"); rc=$?
if [ $rc -eq 0 ]; then
	echo "PASS: no policy reads the clock or starts a thread but through the core"
else
	echo "FAIL: clock reads outside the core's clock:"; echo "$out"; fail=1
fi
exit $fail
