#!/usr/bin/env python3
"""The sampling error of `heaplab diagnose` (bench/SAMPLING.md): how far
the predicted peak and final RSS of a sampled recording are from those of
the whole recording's replay.

    bench/sampling/error.py [--only=NAME,...] [--rates=8,64] [--seeds=3]
                            [--work=DIR] [--out=FILE|-] BUILD
    bench/sampling/error.py --rows=DIR/rows.json [--rates=...] [--out=...]

For each program of bench/accuracy's corpus (corpus.py): records it once,
whole (`BUILD/heaplab diagnose --keep`), replays the recording whole
(`diagnose --trace=REC --json`), then derives sampled recordings from it
at each rate, one block in K of the recording's with all its ops
(`diagnose --trace=REC --sample=K`, HEAPLAB_TRACE_SEED=1..N: N draws),
and compares the predicted peak and final RSS of the candidate of each
allocator as it is (glibc, jemalloc, mimalloc, TCMalloc) with the whole
replay's.  The error of a cell is the largest over its draws; the "worst"
row, the largest over the corpus, is the bound diagnose states
(diagnose/sample.c).  Writes the tables between the markers of --out
(default bench/SAMPLING.md; - prints them).  Exit status: 0, or 2 on bad
arguments or a missing build.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'accuracy'))
import corpus  # noqa: E402
from run import ALLOCATORS, candidate_for, write_out  # noqa: E402

MIB = 1 << 20
BEGIN, END = '<!-- error.py: tables begin -->', '<!-- error.py: tables end -->'
POLICIES = '--policies=bins,slab,sharded,percpu'
# The programs the stated bound is over: sampling is for long programs,
# and one of a few hundred ops keeps a few dozen blocks at 1 in 8.
MANY_OPS = 100000


def fail(message):
    print(f'sampling: {message}', file=sys.stderr)
    sys.exit(2)


def parse(argv):
    opts = {'only': None, 'rates': [8, 64], 'seeds': 3, 'work': None, 'rows': None,
            'out': os.path.join(HERE, '..', 'SAMPLING.md'), 'build': None}
    for arg in argv:
        name, eq, value = arg.partition('=')
        if arg in ('-h', '--help'):
            print(__doc__.strip())
            sys.exit(0)
        elif name == '--only' and value:
            opts['only'] = value.split(',')
        elif name == '--rates' and value and all(v.isdigit() and int(v) > 1 for v in value.split(',')):
            opts['rates'] = [int(v) for v in value.split(',')]
        elif name == '--seeds' and value.isdigit() and int(value) > 0:
            opts['seeds'] = int(value)
        elif name == '--rows' and value:
            opts['rows'] = value
        elif name in ('--work', '--out') and value:
            opts[name[2:]] = value
        elif arg.startswith('-') or opts['build'] or eq:
            fail(f'bad argument {arg!r} (try --help)')
        else:
            opts['build'] = arg
    if not opts['rows'] and (not opts['build'] or not os.access(os.path.join(opts['build'], 'heaplab'), os.X_OK)):
        fail('give the build folder, with heaplab built in it')
    return opts


def diagnose(build, args, env_extra, log, stdin=None):
    """heaplab diagnose --json=- with @args: the report, or None."""
    env = dict(os.environ)
    env.update(env_extra)
    with open(stdin) if stdin else open(os.devnull) as inp:
        out = subprocess.run([os.path.join(build, 'heaplab'), 'diagnose', '--jobs=2', POLICIES, '--json=-'] + args,
                             env=env, stdin=inp, stdout=subprocess.PIPE, stderr=log)
    try:
        return json.loads(out.stdout) if out.returncode == 0 else None
    except ValueError:
        return None


def predictions(report):
    """{allocator: (peak, final)} of the candidates as they are."""
    got = {}
    for a in ALLOCATORS:
        c = candidate_for(report, a)
        if c:
            got[a] = (c['predicted_peak_rss'], c['predicted_final_rss'])
    return got


def error(pred, whole):
    return (pred - whole) / whole if whole else 0.0


def measure(opts, program, work, log):
    argv, stdin = corpus.expand(program, work)
    rec = os.path.join(work, program['name'] + '.rep')
    env = dict(program.get('env', {}))
    if diagnose(opts['build'], [f'--keep={rec}', '--'] + argv, env, log, stdin) is None:
        return None
    whole = diagnose(opts['build'], [f'--trace={rec}'], {}, log)
    if whole is None:
        return None
    row = {'name': program['name'], 'ops': whole['recording']['ops'], 'whole': predictions(whole), 'rates': {}}
    for k in opts['rates']:
        cells = {}
        for seed in range(1, opts['seeds'] + 1):
            r = diagnose(opts['build'], [f'--trace={rec}', f'--sample={k}'], {'HEAPLAB_TRACE_SEED': str(seed)}, log)
            if r is None:
                continue
            for a, (peak, final) in predictions(r).items():
                if a not in row['whole']:
                    continue
                wp, wf = row['whole'][a]
                ep, ef = error(peak, wp), error(final, wf)
                old = cells.get(a, (0.0, 0.0))
                cells[a] = (ep if abs(ep) > abs(old[0]) else old[0], ef if abs(ef) > abs(old[1]) else old[1])
        row['rates'][k] = cells
    return row


def pct(x):
    return f'{x * 100:+.1f} %'


def tables(rows, opts, seconds):
    lines = [f'{opts["seeds"]} draws a rate (HEAPLAB_TRACE_SEED=1..{opts["seeds"]}), the largest error of the draws '
             f'shown{f", in {seconds / 60:.0f} minutes" if seconds else ""}.', '']
    head = '| program | ops | allocator | whole: peak / final |' + ''.join(
        f' 1 in {k}: peak | 1 in {k}: final |' for k in opts['rates'])
    lines += [head, '|' + ' --- |' * (4 + 2 * len(opts['rates']))]
    worst = {k: [0.0, 0.0] for k in opts['rates']}
    worst_all = {k: [0.0, 0.0] for k in opts['rates']}
    for r in rows:
        if 'why' in r:
            lines.append(f'| {r["name"]} | | | {r["why"]} |' + ' |' * (2 * len(opts['rates'])))
            continue
        for a in ALLOCATORS:
            if a not in r['whole']:
                continue
            wp, wf = r['whole'][a]
            cells = ''
            for k in opts['rates']:
                ep, ef = r['rates'].get(k, {}).get(a, (None, None))
                cells += f' {pct(ep) if ep is not None else "-"} | {pct(ef) if ef is not None else "-"} |'
                for w in (worst, worst_all) if r['ops'] >= MANY_OPS else (worst_all,):
                    if ep is not None:
                        w[k][0] = max(w[k][0], abs(ep))
                        w[k][1] = max(w[k][1], abs(ef))
            lines.append(f'| {r["name"]} | {r["ops"]:,} | {a} | {wp / MIB:.1f} / {wf / MIB:.1f} MiB |{cells}')
    lines.append('| **worst** (programs of 100,000 ops or more) | | | |' + ''.join(
        f' {w[0] * 100:.1f} % | {w[1] * 100:.1f} % |' for w in (worst[k] for k in opts['rates'])))
    lines.append('| worst, all | | | |' + ''.join(
        f' {w[0] * 100:.1f} % | {w[1] * 100:.1f} % |' for w in (worst_all[k] for k in opts['rates'])))
    return '\n'.join(lines) + '\n', worst


def main(argv):
    opts = parse(argv[1:])
    if opts['rows']:   # the tables again, from a run's rows.json
        with open(opts['rows']) as f:
            rows = [r | {'rates': {int(k): v for k, v in r.get('rates', {}).items()}} for r in json.load(f)]
        text, _ = tables(rows, opts, 0)
        write_out(opts['out'], '\n' + text + '\n', BEGIN, END)
        return 0
    programs = [p for p in corpus.PROGRAMS if not opts['only'] or p['name'] in opts['only']]
    work = opts['work'] or tempfile.mkdtemp(prefix='heaplab-sampling.')
    os.makedirs(work, exist_ok=True)
    corpus.prepare(work, programs)
    rows, started = [], time.time()
    with open(os.path.join(work, 'stderr.log'), 'w') as log:
        for n, p in enumerate(programs, 1):
            print(f'sampling: [{n}/{len(programs)}] {p["name"]} ...', file=sys.stderr)
            missing = [x for x in p.get('needs', []) if not any(
                os.access(os.path.join(d, x), os.X_OK) for d in os.environ.get('PATH', '').split(':'))]
            row = None if missing else measure(opts, p, work, log)
            if row is None:
                row = {'name': p['name'], 'why': 'not installed: ' + ', '.join(missing) if missing
                       else f'heaplab diagnose failed (see {work}/stderr.log)'}
            rows.append(row)
    text, worst = tables(rows, opts, time.time() - started)
    write_out(opts['out'], '\n' + text + '\n', BEGIN, END)
    with open(os.path.join(work, 'rows.json'), 'w') as f:
        json.dump(rows, f, indent=1, default=str)
    print('sampling: worst ' + ', '.join(f'1 in {k}: peak {w[0] * 100:.1f} %, final {w[1] * 100:.1f} %'
                                         for k, w in worst.items()), file=sys.stderr)
    if not opts['work']:
        subprocess.run(['rm', '-rf', work])
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
