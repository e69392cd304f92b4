#!/usr/bin/env python3
"""Calls only downward: a policy whose header lists its files in layers
(a block opening with a line "Layers (top to bottom" in NAME.h, one layer a
line, its files first on the line) may call, from each file, only functions
defined in its own layer or in a layer below.  Every .c and .h of the
folder must be in the list.  A function "is defined in" the file holding
its body (a header's static inline functions belong to the header);
comments, strings and prototypes do not count, only uses inside a body or
an initializer (a function named in a table counts like a call).

    layers.py ROOT POLICY...   exit 0 when every call goes down, 1 (and the
                               list of upward calls) when not, 2 when a
                               policy's list is missing or incomplete
                               (grade and quiz, named so, are checked the
                               same way: their grade.h and quiz.h list
                               their files in layers)

The same rule holds between the folders of the library (FOLDERS below, the
stack of HACKING.md): a file may use a function defined in its own folder
or in a folder its folder stands on, never one above or beside it; a policy
may use only its own folder and the core.

    layers.py ROOT --folders   exit 0 when every use goes down, 1 (and the
                               list) when not, 2 when a C file lies in a
                               folder the stack does not name
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from os_seam import strip_comments_and_strings  # noqa: E402

FILE = re.compile(r"^[\w.-]+\.[ch]$")
# a function body: name ( params ) {  at brace depth 0
DEFINITION = re.compile(r"\b([A-Za-z_]\w*)\s*\(([^()]|\([^()]*\))*\)\s*\{")
IDENT = re.compile(r"\b[A-Za-z_]\w*\b")


def read_layers(header):
    """The layers listed in @header's comment, top first: lists of files."""
    layers, inside = [], False
    with open(header, errors="replace") as fh:
        for line in fh:
            text = line.strip().lstrip("*").strip()
            if not inside:
                inside = text.startswith("Layers (top to bottom")
                continue
            if not text or text.startswith("-"):
                if layers and not text:
                    break
                continue
            files = []
            for word in text.split():
                if not FILE.match(word):
                    break
                files.append(word)
            if files:
                layers.append(files)
    return layers


def depth_split(code):
    """(text at brace depth 0, text inside braces) with offsets kept."""
    top, inner, depth = [], [], 0
    for c in code:
        if c == "{":
            depth += 1
        elif c == "}":
            depth = max(depth - 1, 0)
        keep_top = depth == 0 or (depth == 1 and c == "{")
        top.append(c if keep_top or c == "\n" else " ")
        inner.append(c if depth > 0 and c != "{" else (" " if c != "\n" else "\n"))
    return "".join(top), "".join(inner)


def definitions(code):
    """Names of the functions whose bodies @code holds (depth 0)."""
    names = set()
    top, _ = depth_split(code)
    for m in DEFINITION.finditer(top):
        name = m.group(1)
        if name not in ("if", "for", "while", "switch", "return", "sizeof"):
            names.add(name)
    return names


# The library's folders whose header lists their files in layers too, as a
# policy's does (FOLDER/FOLDER.h); checked by name like a policy.
LAYERED_FOLDERS = ("diagnose", "grade", "quiz")


def check_policy(root, policy):
    rel = policy if policy in LAYERED_FOLDERS else f"policies/{policy}"
    folder = os.path.join(root, rel)
    header = os.path.join(folder, policy + ".h")
    if not os.path.exists(header):
        return None, [f"{rel}: no {policy}.h"]
    layers = read_layers(header)
    if not layers:
        return None, [f"{rel}/{policy}.h: no \"Layers (top to bottom\" list"]
    rank = {f: i for i, files in enumerate(layers) for f in files}
    # (its Check suite, test_NAME.c, is a test program: not in the list)
    present = sorted(f for f in os.listdir(folder) if f.endswith((".c", ".h")) and not f.startswith("test_"))
    missing = [f for f in present if f not in rank]
    ghosts = [f for f in rank if f not in present]
    if missing or ghosts:
        return None, [f"{rel}/{policy}.h: layers list lacks {', '.join(missing)}"
                      if missing else
                      f"{rel}/{policy}.h: layers list names missing {', '.join(ghosts)}"]
    code = {}
    for f in present:
        with open(os.path.join(folder, f), errors="replace") as fh:
            code[f] = strip_comments_and_strings(fh.read())
    defined_in = {}
    for f in present:
        for name in definitions(code[f]):
            if f.endswith(".c") and re.search(r"^\s*static\b[^;{]*\b" + name + r"\s*\(", code[f], re.M):
                continue  # file-local: nobody else can call it
            defined_in.setdefault(name, set()).add(f)
    upward = []
    for f in present:
        _, inner = depth_split(code[f])
        own = definitions(code[f])
        for lineno, line in enumerate(inner.split("\n"), 1):
            for m in IDENT.finditer(line):
                name = m.group(0)
                if name in own or name not in defined_in:
                    continue
                for g in sorted(defined_in[name]):
                    if rank[g] < rank[f]:
                        upward.append(f"{rel}/{f}:{lineno}: {name} "
                                      f"(defined in {g}, a layer above)")
    return layers, upward


# The library's folders, each with the folders it stands on (the stack of
# HACKING.md).  "policies/*" is every policy folder, each on its own: no
# policy uses another's code.  The programs around the library (tests,
# bench, exercises, the book's generator, the fidelity probes) may use any
# of it and are not listed.
FOLDERS = {
    "core": [],
    "policies/*": ["core"],
    "trace": ["policies/*", "core"],
    "shim": ["trace", "policies/*", "core"],
    "visualize": ["trace", "core"],
    "diagnose": ["visualize", "trace", "core"],
    "fidelity": ["trace", "core"],
    "grade": ["visualize", "trace", "core"],
    "quiz": ["visualize", "trace", "core"],
    "cli": ["diagnose", "grade", "quiz", "fidelity", "visualize", "trace", "core"],
}
# The folders of programs around the library (they may use any of it); a C
# file in any other top folder missing from FOLDERS is a stray.
PROGRAMS = ("tests", "bench", "exercises", "book")
# Names the library defines for the C library's callers (the malloc family
# of the preload shims, the recorder's mmap and timed waits, a program's
# main): a use of them is a call to the C library, not to the folder that
# happens to define them too.
LIBC_NAMES = set("""malloc free calloc realloc reallocarray memalign posix_memalign aligned_alloc valloc
    pvalloc malloc_usable_size cfree mmap mmap64 munmap mremap fork main mallinfo mallinfo2 mallopt
    malloc_stats malloc_info malloc_trim pthread_cond_timedwait pthread_cond_clockwait""".split())
# Not checked: the probes are programs; heaplab.h declares the installed API
# of every folder (its prototypes sit inside extern "C" braces).
NOT_IN_STACK = ("fidelity/probes", "core/heaplab.h")


def folder_of(rel):
    parts = rel.split("/")
    if parts[0] == "policies" and len(parts) == 3 and parts[2].startswith("test_"):
        return "tests"  # a policy's Check suite is a test program, as those of tests/
    if parts[0] == "policies" and len(parts) > 2:
        return "policies/" + parts[1]
    return parts[0]


def allowed(user, definer):
    if user == definer:
        return True
    below = FOLDERS.get("policies/*" if user.startswith("policies/") else user, [])
    return definer in below or (definer.startswith("policies/") and "policies/*" in below)


def check_folders(root):
    code, strays = {}, []
    for top in sorted(os.listdir(root)):
        if top.startswith((".", "_build")) or not os.path.isdir(os.path.join(root, top)):
            continue
        if os.path.exists(os.path.join(root, top, "config.status")):
            continue  # a build folder under another name than _build
        for d, dirs, files in os.walk(os.path.join(root, top)):
            dirs[:] = sorted(x for x in dirs if not x.startswith("_build"))
            for f in sorted(files):
                rel = os.path.relpath(os.path.join(d, f), root)
                if not f.endswith((".c", ".h")) or rel.startswith(NOT_IN_STACK):
                    continue
                folder = folder_of(rel)
                key = "policies/*" if folder.startswith("policies/") else folder
                if key not in FOLDERS:
                    if folder != "tests" and top not in PROGRAMS:
                        strays.append(f"{rel}: in no folder of the stack")
                    continue
                with open(os.path.join(d, f), errors="replace") as fh:
                    code[rel] = strip_comments_and_strings(fh.read())
    defined_in = {}
    for rel, text in code.items():
        for name in definitions(text):
            if name in LIBC_NAMES:
                continue
            if rel.endswith(".c") and re.search(r"^\s*static\b[^;{]*\b" + name + r"\s*\(", text, re.M):
                continue
            defined_in.setdefault(name, set()).add(folder_of(rel))
    wrong = []
    for rel, text in sorted(code.items()):
        user = folder_of(rel)
        _, inner = depth_split(text)
        for lineno, line in enumerate(inner.split("\n"), 1):
            for m in IDENT.finditer(line):
                name = m.group(0)
                before = line[:m.start()].rstrip()
                if name not in defined_in or before.endswith((".", "->")):
                    continue
                owners = defined_in[name]
                if not any(allowed(user, g) for g in owners):
                    wrong.append(f"{rel}:{lineno}: {name} (defined in {', '.join(sorted(owners))}, "
                                 f"which {user} does not stand on)")
    for p in strays + wrong:
        print(p)
    return 2 if strays else 1 if wrong else 0


def main():
    if len(sys.argv) == 3 and sys.argv[2] == "--folders":
        return check_folders(sys.argv[1])
    if len(sys.argv) < 3:
        print("usage: layers.py ROOT POLICY...", file=sys.stderr)
        return 2
    status = 0
    for policy in sys.argv[2:]:
        layers, problems = check_policy(sys.argv[1], policy)
        for p in problems:
            print(p)
        if layers is None:
            status = 2
        elif problems and status == 0:
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
