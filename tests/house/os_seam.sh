#!/usr/bin/env bash
# The seams a policy reaches the outside world through:
# - the page source (DESIGN: "the page source is the ONLY file that calls
#   mmap, munmap, madvise, mprotect, brk, mincore"): no C file of the source
#   tree but core/os.c makes a kernel memory call (os_seam.py);
# - the clock (core/clock.h): no policy reads the clock, sleeps on a timeout
#   or starts a thread of its own; each reads the heap's clock
#   (hl_clock_now_ns) and runs background work as the core's task, so that
#   a replay drives both from the recording (clock_seam.py).
# Each checker is first shown to catch a call (and to ignore comments and
# strings) on a small tree made here, then the real tree must be clean.
set -u
. "$(dirname "$0")/../lib.sh"
srcdir=${srcdir:-.}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$srcdir" && pwd)
command -v python3 >/dev/null || hl_skip "python3 is needed"
fail=0

hl_tmpdir
mkdir -p "$tmp/core" "$tmp/policies/demo"
printf 'void *os(void) { return mmap(0, 4096, 3, 0x22, -1, 0); }\n' > "$tmp/core/os.c"
printf 'long now(void) { struct timespec t; clock_gettime(1, &t); return t.tv_sec; }\n' > "$tmp/core/clock.c"
cat > "$tmp/policies/demo/demo.c" <<'C'
/* a comment naming mmap(p, n) or clock_gettime(CLOCK_MONOTONIC, &ts) does not count */
static const char *s = "madvise(p, n) gettimeofday(&tv, 0)";
void purge(void *p, unsigned long n) { madvise(p, n, 4); }
long raw(void) { return syscall(SYS_munmap, 0, 0); }
long due(void) { struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts); return ts.tv_sec; }
long ok(void *h) { return hl_clock_now_ns(h) + st->time(); }
void wait(void) { pthread_cond_timedwait(&c, &m, &ts); }
C

# seam CHECKER WANT WHAT-IT-CATCHES WHAT-HOLDS
seam() {
	local out rc
	out=$(python3 "$here/$1" "$tmp"); rc=$?
	if [ $rc -eq 1 ] && [ "$out" = "$2" ]; then
		echo "PASS: $1 finds $3 on a planted tree, not the comment, the string or the core"
	else
		echo "FAIL: $1 on a planted tree (status $rc):"; echo "$out"; fail=1
	fi
	out=$(python3 "$here/$1" "$top"); rc=$?
	if [ $rc -eq 0 ]; then
		echo "PASS: $4"
	else
		echo "FAIL: $1 on the tree:"; echo "$out"; fail=1
	fi
}

mem=": kernel memory call outside the page source (core/os.c)"
seam os_seam.py "policies/demo/demo.c:3: madvise$mem"$'\n'"policies/demo/demo.c:4: SYS_munmap$mem" \
	"the two kernel memory calls a policy makes" "only core/os.c calls the kernel for memory"
clk=": a policy reads the clock or starts a thread itself (use hl_clock_now_ns, hl_background_*)"
seam clock_seam.py "policies/demo/demo.c:5: clock_gettime$clk"$'\n'"policies/demo/demo.c:7: pthread_cond_timedwait$clk" \
	"the clock read and the timed wait of a policy" "no policy reads the clock or starts a thread but through the core"
exit $fail
