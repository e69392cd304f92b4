"""The corpus of bench/accuracy: real programs nobody in this project wrote,
each with the input it works on, made here from a fixed seed.

Each program is a dict:
  name     the row's name
  what     one line: the program and its workload
  argv     the command (strings; {work} is the folder of the inputs,
           {here} this folder)
  env      settings the program always runs with (PYTHONMALLOC=malloc)
  stdin    a file of {work} or {here} read on standard input, or None
  cpython  True when diagnose predicts it through CPython's grid (pymalloc
           in front, pools in the model)
  final    what its last RSS is: what the program holds just before exit
  needs    the programs it needs on PATH (a row is skipped without them)
  repeat   the least number of real runs a cell takes the median of, for
           a program whose real runs differ from one another by more than
           the target (the seed's: its peak moves by a fifth from run to
           run with the order its threads take turns in)
  draws    diagnose's --draws: how many times it records the program,
           for the same reason (the recording of median live peak is
           diagnosed)
Every workload frees what it built before it exits, unless `final` says
otherwise.
"""
import os
import random
import shutil
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))


def cc1():
    """gcc's compiler proper (the driver forks it: its RSS is not the driver's)."""
    try:
        out = subprocess.run(['gcc', '-print-prog-name=cc1'], capture_output=True, text=True, check=True)
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return 'cc1'


def make_c(path, functions=60):
    """A large C file with no #include: loops, switches and calls for -O2."""
    rnd = random.Random(1)
    with open(path, 'w') as f:
        f.write('struct rec { int a, b; double c; char name[24]; };\n')
        for k in range(functions):
            cases = ''.join(f'\tcase {c}: s += {rnd.randint(1, 99)} * a[n & 15]; break;\n' for c in range(8))
            call = f'\ts += f{k - 1}(a, n - 1, r);\n' if k else ''
            f.write(f'int f{k}(int *a, int n, struct rec *r)\n{{\n\tint s = {k};\n'
                    f'\tfor (int i = 0; i < n; i++) {{\n'
                    f'\t\tif (a[i] % {rnd.randint(2, 9)} == 1)\n\t\t\ts += a[i] * {rnd.randint(3, 999)};\n'
                    f'\t\telse\n\t\t\ts ^= a[i] << (i & 7);\n'
                    f'\t\tr[i & 7].a += s; r[i & 3].c *= 1.{k % 10};\n\t}}\n'
                    f'\tswitch (n & 7) {{\n{cases}\t}}\n{call}\treturn s;\n}}\n')


def make_text(path, megabytes=2):
    """Log-like lines: compressible, not trivially."""
    rnd = random.Random(2)
    words = ['GET', 'POST', 'user', 'session', 'cache', 'miss', 'hit', 'timeout', 'ok', 'error', 'retry', 'db',
             'query', 'index', 'page', 'alloc', 'free', 'thread', 'lock', 'wait']
    with open(path, 'w') as f:
        size, n = 0, 0
        while size < megabytes << 20:
            line = (f'2026-12-03T{n // 3600 % 24:02d}:{n // 60 % 60:02d}:{n % 60:02d} '
                    f'{rnd.choice(words)} {rnd.choice(words)} id={rnd.randint(0, 99999)} '
                    f'{" ".join(rnd.choice(words) for _ in range(rnd.randint(2, 9)))}\n')
            f.write(line)
            size += len(line)
            n += 1


def make_json(path, records=50000):
    import json
    rnd = random.Random(3)
    with open(path, 'w') as f:
        json.dump([{'id': i, 'name': f'n{i}', 'tags': [f't{i % 7}', 'x'], 'v': rnd.random()} for i in range(records)], f)


def make_repo(path, commits=300, files=40):
    """A git repository of generated history, written by git fast-import
    (one pack), for git log -p to read."""
    rnd = random.Random(4)
    if os.path.isdir(path):
        shutil.rmtree(path)
    subprocess.run(['git', 'init', '-q', '--bare', path], check=True)
    lines = {k: [f'line {j} of file {k}: {rnd.randint(0, 1 << 30)}\n' for j in range(600)] for k in range(files)}
    stream = []
    for c in range(commits):
        stream.append(f'commit refs/heads/main\nmark :{c + 1}\n'
                      f'committer A U Thor <a@example.org> {1700000000 + c * 60} +0000\n')
        message = f'change {c}\n'
        stream.append(f'data {len(message)}\n{message}')
        if c:
            stream.append(f'from :{c}\n')
        for k in (range(files) if c == 0 else rnd.sample(range(files), 4)):
            body = lines[k]
            for _ in range(30 if c else 0):
                body[rnd.randrange(len(body))] = f'changed in {c}: {rnd.randint(0, 1 << 30)}\n'
            data = ''.join(body)
            stream.append(f'M 644 inline f{k}.txt\ndata {len(data)}\n{data}\n')
    subprocess.run(['git', '--git-dir', path, 'fast-import', '--quiet'], input=''.join(stream).encode(), check=True)


PROGRAMS = [
    dict(name='python3', what='CPython 3.11, default allocator (pymalloc on malloc): tuples, strings, dicts, '
                              'bytes built in 2 rounds and dropped (workload.py)',
         argv=['python3', '{here}/workload.py', '2'], cpython=True, needs=['python3']),
    dict(name='python3-malloc', what='the same with PYTHONMALLOC=malloc: every object a malloc call',
         argv=['python3', '{here}/workload.py', '2'], env={'PYTHONMALLOC': 'malloc'}, needs=['python3']),
    dict(name='repro', what="the seed's case (bench/diagnose/repro.py 2 0.5): CPython 3.11, 8 threads build "
                            'bursts of 20,000 dicts and keep one in 1,000, default allocator',
         argv=['python3', '{here}/../diagnose/repro.py', '2', '0.5'], cpython=True, needs=['python3'], repeat=15, draws=7,
         final='the kept dicts live to the end: the last RSS is what the allocator keeps around them'),
    dict(name='repro-malloc', what='the same with PYTHONMALLOC=malloc (the seed ran it this way)',
         argv=['python3', '{here}/../diagnose/repro.py', '2', '0.5'], env={'PYTHONMALLOC': 'malloc'},
         needs=['python3'], repeat=15, draws=7, final='the kept dicts live to the end'),
    dict(name='cc1', what='gcc 12 -O2 (cc1, the compiler proper) on a generated C file of 60 functions',
         argv=[cc1(), '-quiet', '-O2', '{work}/big.c', '-o', '/dev/null'], needs=['gcc'],
         final='the compiler frees little before it exits (its GC heap is let go with the process): '
               'the last RSS is near the peak'),
    dict(name='sqlite3', what='sqlite3 on an in-memory database: 60,000 rows from a recursive CTE, an index, '
                              'queries, half deleted, the table dropped, VACUUM (workload.sql)',
         argv=['sqlite3', ':memory:'], stdin='{here}/workload.sql', needs=['sqlite3']),
    dict(name='perl', what='perl 5.36: a hash of 40,000 strings, an array of arrays, a sort, in 2 rounds, '
                           'undefined (workload.pl)',
         argv=['perl', '{here}/workload.pl', '2'], needs=['perl']),
    dict(name='git', what='git log -p on a generated repository (300 commits of 4 files in 40, one pack)',
         argv=['git', '--git-dir', '{work}/repo.git', '--no-pager', 'log', '-p', 'main'], needs=['git'],
         final='git lets its object cache go with the process: the last RSS is near the peak'),
    dict(name='xz', what='xz -6 -T1 on 2 MiB of generated log lines', argv=['xz', '-6', '-T1', '-k', '-f', '{work}/log.txt'],
         needs=['xz']),
    dict(name='zstd', what='zstd -19 on the same 2 MiB', argv=['zstd', '-19', '-q', '-f', '{work}/log.txt', '-o',
                                                               '{work}/log.txt.zst'], needs=['zstd']),
    dict(name='jq', what='jq on a 3.8 MB JSON array of 50,000 records (a filter and a count)',
         argv=['jq', '-c', 'map(select(.id % 3 == 0)) | length', '{work}/data.json'], needs=['jq'],
         final='jq frees its values at the end: the last RSS is what the allocator keeps of them'),
    dict(name='sort', what='coreutils sort on the 2 MiB of log lines', argv=['sort', '-o', '{work}/sorted.txt',
                                                                              '{work}/log.txt'], needs=['sort']),
]

INPUTS = [('big.c', make_c), ('log.txt', make_text), ('data.json', make_json), ('repo.git', make_repo)]


def prepare(work, programs):
    """Makes the inputs of @programs in @work (each once)."""
    for name, make in INPUTS:
        path = os.path.join(work, name)
        used = any('{work}/' + name in a for p in programs for a in p['argv'])
        if used and not os.path.exists(path):
            make(path)


def expand(program, work):
    """The program's argv and stdin with {work} and {here} filled in."""
    fill = lambda s: s.replace('{work}', work).replace('{here}', HERE)
    stdin = program.get('stdin')
    return [fill(a) for a in program['argv']], fill(stdin) if stdin else None
