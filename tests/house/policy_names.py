#!/usr/bin/env python3
"""Which files outside policies/NAME/ name a policy in their code.

    policy_names.py TOP [FILE...]

A policy is what its folder holds (hacking/recipes.md, "Adding a policy"): every
other file reaches it through its table or a file in its folder, and does
not type its name.  This prints, for each file of the tree (git's list, or
the FILEs given, relative to TOP) that names one, one line

    FILE: NAME[,NAME...] (line N, ...)

A name counts in code: a C or JavaScript comment, or a '#' comment of a
script, a makefile or a rows file, is prose and may name any policy
("bins' walk"), as may the documents (*.md), the man pages, the book and
the labs (course text about named policies), the traces (data) and the
vendored C library tests.  The possessive "student's" is the course's
student, not the skeleton policy.
"""
import os
import re
import subprocess
import sys

PROSE_DIRS = ('man/', 'book/', 'exercises/', 'traces/', 'tests/programs/libc/', 'bench/')
C_LIKE = ('.c', '.h', '.js', '.mjs', '.css')


def policies(top):
    with open(os.path.join(top, 'policies', 'policies.list')) as f:
        return [l.split()[0] for l in f if l.strip() and not l.startswith('#')]


def exempt(path):
    if path.endswith('.md') or path.startswith(PROSE_DIRS) or path == 'policies/policies.list':
        return True
    # a policy's own folder (policies/NAME/...), not files of policies/ itself
    return path.startswith('policies/') and path.count('/') >= 2


def code_of(path, text, pols):
    """The text with its comments blanked (line numbers kept); in C, a
    string literal stays only when it is a policy's name, alone or before
    options ("bins", "percpu:front:thread", "bins,slab"): a message or help
    text that uses the word ("a slab of each class") is prose."""
    def blank(m):
        return '\n' * m.group(0).count('\n')
    if path.endswith(C_LIKE):
        named = re.compile(r'^(%s)([:/,=].*)?$' % '|'.join(map(re.escape, pols)))
        token = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
        def keep(m):
            t = m.group(0)
            if t.startswith('"'):
                return t if named.match(t[1:-1]) else '""'
            return t if t.startswith("'") else blank(m)
        return token.sub(keep, text)
    if path.endswith(('.ac', '.m4')):
        text = re.sub(r'^[ \t]*dnl\b[^\n]*', '', text, flags=re.M)
    return re.sub(r'(^|[ \t])#[^\n]*', r'\1', text, flags=re.M)


def names_in(path, text, pattern, pols):
    hits = {}
    for i, line in enumerate(code_of(path, text, pols).split('\n'), 1):
        for m in pattern.finditer(line):
            hits.setdefault(m.group(1), []).append(i)
    return hits


def main(argv):
    top = argv[1]
    pols = policies(top)
    pattern = re.compile(r"(?<![\w.$/-])(" + '|'.join(map(re.escape, pols)) + r")(?![\w-]|'s)")
    if len(argv) > 2:
        files = argv[2:]
    else:
        out = subprocess.run(['git', '-C', top, 'ls-files'], capture_output=True, text=True, check=True)
        files = out.stdout.split('\n')
    for path in sorted(f for f in files if f and not exempt(f)):
        try:
            with open(os.path.join(top, path), errors='replace') as f:
                text = f.read()
        except (IsADirectoryError, FileNotFoundError):
            continue
        if '\0' in text:
            continue
        hits = names_in(path, text, pattern, pols)
        if hits:
            lines = sorted({n for ls in hits.values() for n in ls})
            shown = ', '.join(map(str, lines[:6])) + (', ...' if len(lines) > 6 else '')
            print(f"{path}: {','.join(sorted(hits))} (line {shown})")
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
