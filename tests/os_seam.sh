#!/usr/bin/env bash
# The one OS seam (DESIGN: "the page source is the ONLY file that calls
# mmap, munmap, madvise, mprotect, brk, mincore"): no C file of the source
# tree but core/os.c makes a kernel memory call.  First the checker is shown
# to catch a call (and to ignore comments and strings) on a small tree made
# here, then the real tree must be clean.
set -u
srcdir=${srcdir:-.}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$srcdir" && pwd)
command -v python3 >/dev/null || { echo "SKIP: python3 is needed"; exit 77; }
fail=0

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/core" "$tmp/policies/demo"
printf 'void *os(void) { return mmap(0, 4096, 3, 0x22, -1, 0); }\n' > "$tmp/core/os.c"
cat > "$tmp/policies/demo/demo.c" <<'C'
/* a comment naming mmap(p, n) does not count */
static const char *s = "madvise(p, n)";
void purge(void *p, unsigned long n) { madvise(p, n, 4); }
long raw(void) { return syscall(SYS_munmap, 0, 0); }
C
out=$(python3 "$here/os_seam.py" "$tmp"); rc=$?
want=$'policies/demo/demo.c:3: madvise: kernel memory call outside the page source (core/os.c)\npolicies/demo/demo.c:4: SYS_munmap: kernel memory call outside the page source (core/os.c)'
if [ $rc -eq 1 ] && [ "$out" = "$want" ]; then
	echo "PASS: the checker finds the two calls a policy makes, not the comment or the string"
else
	echo "FAIL: the checker on a planted tree (status $rc):"; echo "$out"; fail=1
fi

out=$(python3 "$here/os_seam.py" "$top"); rc=$?
if [ $rc -eq 0 ]; then
	echo "PASS: only core/os.c calls the kernel for memory"
else
	echo "FAIL: kernel memory calls outside the page source:"; echo "$out"; fail=1
fi
exit $fail
