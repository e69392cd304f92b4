#!/usr/bin/env python3
"""The one OS seam: only the page source (core/os.c) may ask the kernel for
memory.  Lists every call of mmap, munmap, mremap, madvise, mprotect, brk,
sbrk or mincore (or their SYS_ numbers) in the C files under ROOT, outside
the files allowed below; comments and string literals do not count.

    os_seam.py ROOT        exit 0 when the seam holds, 1 (and a list) when not
"""
import os
import re
import sys

CALLS = r"mmap|mmap64|munmap|mremap|madvise|posix_madvise|mprotect|brk|sbrk|mincore"
CALL = re.compile(r"\b(?:" + CALLS + r")\s*\(|\bSYS_(?:" + CALLS + r")\b")

# Allowed by name, each with its reason.
ALLOWED = {
    "core/os.c": "the page source itself",
    "shim/record_mmap.c": "the recorder's interposer: forwards the program's own mmap, "
    "munmap and mremap to the C library's and notes their ranges; it maps nothing of its own",
    "bench/workloads/sysreplay.c": "drives the real glibc and reads its break, not heaplab's",
    "bench/workloads/costs.c": "times the kernel's own mmap, munmap, madvise and page faults "
    "(the book's cost model), not heaplab's page source",
    "bench/workloads/reports.c": "maps memory the allocator under study cannot reuse, and a block "
    "advised MADV_HUGEPAGE (the book's chapter 18), not heaplab's page source",
    "tests/programs/misuse_program.c": "maps a page of its own, to free a pointer no heap handed out",
    "tests/programs/limits_program.c": "fills the process's mappings so that free's munmap fails (glibc's tst-free-errno's way)",
}
# Programs that observe a real allocator from outside (the fidelity probes
# read glibc's break and map their own scratch memory); none is part of
# heaplab's allocator.
ALLOWED_DIRS = ("fidelity/probes/", "tests/programs/libc/")  # and the C libraries' own malloc tests
SKIP_DIRS = {".git", "_build", "node_modules", "autom4te.cache"}


def strip_comments_and_strings(text):
    """Blanks out comments, string and character literals (keeps newlines)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(" ")
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def c_files(root, top=""):
    """Yields (relative path, code without comments and strings) of every C
    file under ROOT/TOP."""
    for d, dirs, files in os.walk(os.path.join(root, top)):
        dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS and not x.startswith("_build"))
        for f in sorted(files):
            if not f.endswith((".c", ".h")):
                continue
            path = os.path.join(d, f)
            with open(path, errors="replace") as fh:
                yield os.path.relpath(path, root), strip_comments_and_strings(fh.read())


def calls(root, pattern, top="", skip=lambda rel: False):
    """file:line: name of every match of PATTERN in the C files under ROOT/TOP."""
    found = []
    for rel, code in c_files(root, top):
        if skip(rel):
            continue
        for lineno, line in enumerate(code.split("\n"), 1):
            for m in pattern.finditer(line):
                found.append(f"{rel}:{lineno}: {m.group(0).rstrip('( ')}")
    return found


def violations(root):
    return calls(root, CALL, skip=lambda rel: rel in ALLOWED or rel.startswith(ALLOWED_DIRS))


def main():
    if len(sys.argv) != 2:
        print("usage: os_seam.py ROOT", file=sys.stderr)
        return 2
    bad = violations(sys.argv[1])
    for v in bad:
        print(f"{v}: kernel memory call outside the page source (core/os.c)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
