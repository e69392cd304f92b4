#!/usr/bin/env python3
"""How right `heaplab diagnose` is on real programs (bench/ACCURACY.md).

    bench/accuracy/run.py [--only=NAME,...] [--repeat=N] [--work=DIR]
                          [--out=FILE|-] [--json=FILE] [--list] BUILD

For each program of the corpus (corpus.py; --list shows it), made inputs
in a folder of its own: records the program once with `BUILD/heaplab
diagnose --json` on this machine's glibc and reads the predicted peak and
final RSS of the candidates that stand for glibc, jemalloc, mimalloc and
TCMalloc (gperftools) as they are; then runs the program for real under
each, with the setting the candidate names (LD_PRELOAD of the real
library; glibc: nothing), and measures its peak and final RSS from outside
(bench/diagnose/peak_final.py: the kernel's high-water mark, and the
resident set read with the program held at its exit).  --repeat takes the
median of N real runs.  Writes the tables between the markers of --out
(default bench/ACCURACY.md; - prints them), the text around them kept;
--json writes every cell's figures.  A progress line goes to the standard
error.  Exit status: 0, or 2 on bad arguments or a missing build.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, '..', 'diagnose'))
import corpus  # noqa: E402
import peak_final  # noqa: E402

MIB = 1 << 20
BEGIN, END = '<!-- accuracy.py: tables begin -->', '<!-- accuracy.py: tables end -->'
# The allocators of the table: the name and how diagnose's candidate for it
# as it is names its real setting (a CPython program's: pymalloc in front).
ALLOCATORS = ['glibc', 'jemalloc', 'mimalloc', 'tcmalloc']
LIBRARY = {'jemalloc': 'libjemalloc.so.2', 'mimalloc': 'libmimalloc.so.2', 'tcmalloc': 'libtcmalloc_minimal.so.4'}
# The target: peak within 10 %, final within 15 % or 2 MiB, the larger.
PEAK_TARGET, FINAL_TARGET, FINAL_FLOOR = 0.10, 0.15, 2 * MIB


def fail(message):
    print(f'accuracy: {message}', file=sys.stderr)
    sys.exit(2)


def parse(argv):
    opts = {'only': None, 'repeat': 1, 'work': None, 'out': os.path.join(HERE, '..', 'ACCURACY.md'), 'json': None,
            'list': False, 'build': None}
    for arg in argv:
        name, eq, value = arg.partition('=')
        if arg == '--list':
            opts['list'] = True
        elif arg in ('-h', '--help'):
            print(__doc__.strip())
            sys.exit(0)
        elif name in ('--only', '--repeat', '--work', '--out', '--json') and eq and value:
            opts[name[2:]] = value
        elif arg.startswith('-'):
            fail(f"unknown or incomplete option '{arg}' (try --help)")
        elif opts['build'] is None:
            opts['build'] = arg
        else:
            fail(f"one build folder only ('{arg}' is a second)")
    if not str(opts['repeat']).isdigit() or not 1 <= int(opts['repeat']) <= 20:
        fail(f"bad --repeat '{opts['repeat']}' (1..20)")
    opts['repeat'] = int(opts['repeat'])
    names = [p['name'] for p in corpus.PROGRAMS]
    if opts['only']:
        wanted = opts['only'].split(',')
        for w in wanted:
            if w not in names:
                fail(f"no program '{w}' in the corpus (--list shows them)")
        opts['only'] = wanted
    if not opts['list']:
        if opts['build'] is None:
            fail('no build folder given (the folder with heaplab and .libs/libheaplab-record.so; try --help)')
        if not os.access(os.path.join(opts['build'], 'heaplab'), os.X_OK):
            fail(f"no heaplab in '{opts['build']}'")
    return opts


class Progress:
    """One line on the standard error, rewritten on a terminal."""

    def __init__(self):
        self.tty = sys.stderr.isatty()

    def say(self, text):
        if self.tty:
            sys.stderr.write('\r\033[K' + text)
        else:
            sys.stderr.write(text + '\n')
        sys.stderr.flush()

    def done(self):
        if self.tty:
            sys.stderr.write('\n')


def setting_env(setting):
    """'A=1 B=2' (a candidate's real setting) as a dict; {} for the default."""
    if not setting or setting.startswith('the default'):
        return {}
    env = {}
    for word in setting.split():
        name, eq, value = word.partition('=')
        if not eq:
            raise ValueError(f'not a setting: {setting!r}')
        env[name] = value
    return env


def candidate_for(report, allocator):
    """diagnose's candidate for @allocator as it is (behind pymalloc for a
    CPython program), or None."""
    for c in report['candidates']:
        real = c.get('real_setting') or ''
        if allocator == 'glibc' and real.startswith('the default') and c['ok']:
            return c
        if allocator != 'glibc' and real.startswith('LD_PRELOAD=') and real.split() == [real] and \
                real.endswith('/' + LIBRARY[allocator]) and c['ok']:
            return c
    return None


def run_diagnose(build, program, argv, stdin, work, log):
    env = dict(os.environ)
    env.update(program.get('env', {}))
    path = os.path.join(work, program['name'] + '.json')
    cmd = [os.path.join(build, 'heaplab'), 'diagnose', '--policies=bins,slab,sharded,percpu', f'--json={path}',
           '--keep=' + os.path.join(work, program['name'] + '.rep')] + \
        ([f'--draws={program["draws"]}'] if program.get('draws') else []) + ['--'] + argv
    with open(stdin) if stdin else open(os.devnull) as inp, \
            open(os.path.join(work, program['name'] + '.txt'), 'w') as out:
        started = time.time()
        rc = subprocess.run(cmd, env=env, stdin=inp, stdout=out, stderr=log).returncode
    if rc != 0:
        return None, time.time() - started
    with open(path) as f:
        return json.load(f), time.time() - started


def run_real(program, argv, stdin, setting, repeat, log):
    env = dict(os.environ)
    env.update(program.get('env', {}))
    env.update(setting_env(setting))
    peaks, finals, statuses, split = [], [], [], {}
    for _ in range(repeat):
        with open(stdin) if stdin else open(os.devnull) as inp:
            peak, final, status = peak_final.measure(argv, env, err=log, stdin=inp, split=split)
        peaks.append(peak)
        finals.append(final)
        statuses.append(status)
    return (statistics.median(peaks), statistics.median(finals), max(statuses), split.get('peak'),
            (min(peaks), max(peaks), min(finals), max(finals)))


def within(cell):
    mp, mf, pp, pf = cell['measured_peak'], cell['measured_final'], cell['predicted_peak'], cell['predicted_final']
    peak_ok = mp > 0 and abs(pp - mp) <= PEAK_TARGET * mp
    final_ok = abs(pf - mf) <= max(FINAL_TARGET * mf, FINAL_FLOOR)
    return peak_ok, final_ok


def within_spread(cell):
    """Within the target, or inside what the real runs themselves gave
    (their least to their largest peak, and final): a program whose real
    runs differ by more than the target cannot be predicted within it by
    one figure, and this count says where that is the only miss."""
    lo_p, hi_p, lo_f, hi_f = cell.get('spread') or (0, 0, 0, 0)
    peak_ok, final_ok = within(cell)
    return ((peak_ok or lo_p <= cell['predicted_peak'] <= hi_p) and
            (final_ok or lo_f <= cell['predicted_final'] <= hi_f))


def spread_text(cell):
    lo_p, hi_p, lo_f, hi_f = cell.get('spread') or (0, 0, 0, 0)
    return f'{mib(lo_p)}–{mib(hi_p)} / {mib(lo_f)}–{mib(hi_f)}'


def percent(pred, meas):
    return 100.0 * (pred - meas) / meas if meas else float('nan')


def mib(b):
    return f'{b / MIB:.1f}'


def split_text(split):
    return f'{mib(split["anonymous"])} / {mib(split["file"])}' if split else '—'


def tables(results, opts, seconds):
    cells = [c for r in results for c in r['cells'] if 'measured_peak' in c]
    ok = sum(1 for c in cells if all(within(c)))
    spread_ok = sum(1 for c in cells if within_spread(c))
    more = sorted({r['name'] for r in results if r['program'].get('repeat', 0) > opts['repeat']})
    lines = [f'**{ok} of {len(cells)} cells within the target** (peak within 10 %, final within 15 % or 2 MiB, '
             f'the larger); {len(results)} programs, measured {time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())} '
             f'in {seconds / 60:.1f} min, real runs: median of {opts["repeat"]}'
             + (f' ({", ".join(more)}: of {max(r["program"].get("repeat", 0) for r in results)}, its real runs '
                'differing more than the target from one another'
                + ''.join(f'; {r["name"]} recorded {r["program"]["draws"]} times (--draws)' for r in results
                          if r['program'].get('draws'))
                + ')' if more else '') + '.  '
             f'{spread_ok} of {len(cells)} within the target or inside the spread of the real runs (their least '
             'to their largest figure).', '',
             '| program | allocator | measured peak / final | real runs: peak / final, least–largest | '
             'predicted peak / final | peak error | final error | within | anonymous / file-backed at the peak |',
             '| --- | --- | --- | --- | --- | --- | --- | --- | --- |']
    for r in results:
        for c in r['cells']:
            if 'measured_peak' not in c:
                lines.append(f'| {r["name"]} | {c["allocator"]} | — | — | — | — | — | {c["why"]} | |')
                continue
            pk, fi = within(c)
            verdict = 'yes' if pk and fi else 'no: ' + ', '.join(w for w, good in (('peak', pk), ('final', fi)) if not good)
            lines.append(f'| {r["name"]} | {c["allocator"]} | {mib(c["measured_peak"])} / {mib(c["measured_final"])} | '
                         f'{spread_text(c)} | {mib(c["predicted_peak"])} / {mib(c["predicted_final"])} | '
                         f'{percent(c["predicted_peak"], c["measured_peak"]):+.0f} % | '
                         f'{percent(c["predicted_final"], c["measured_final"]):+.0f} % '
                         f'({(c["predicted_final"] - c["measured_final"]) / MIB:+.1f} MiB) | {verdict} | '
                         f'{split_text(c.get("peak_split"))} |')
    lines += ['', 'MiB.  What diagnose saw of each program (its summary, on glibc; the layers from /proc/PID/smaps at '
                  'the largest RSS sample of the recording, MiB):', '',
              '| program | ops recorded | model covers peak / final | outside the heap | heap | mapped | mmap (outside '
              'malloc) | files, code | stack | recorder | diagnose took |',
              '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |']
    for r in results:
        d = r.get('report')
        if not d:
            lines.append(f'| {r["name"]} | diagnose failed: {r.get("why", "")} | | | | | | | | | |')
            continue
        cov = d.get('coverage') or {}
        layers = (d.get('layers') or {}).get('peak') or {}
        code = sum(layers.get(k, 0) for k in ('exe', 'alloc', 'libs', 'files'))
        lines.append(f'| {r["name"]} | {d["recording"]["ops"]:,} | {cov.get("peak_percent", 0):.0f} % / '
                     f'{cov.get("final_percent", 0):.0f} % | {mib(d["outside_heap"])} | {mib(layers.get("heap", 0))} | '
                     f'{mib(layers.get("mapped", 0))} | {mib(layers.get("mmap", 0))} | {mib(code)} | '
                     f'{mib(layers.get("stack", 0))} | {mib(layers.get("recorder", 0))} | {r["seconds"]:.0f} s |')
    lines += ['', 'The programs (bench/accuracy/corpus.py) and what "final" is for each:', '']
    for r in results:
        p = r['program']
        lines.append(f'- **{p["name"]}**: {p["what"]}.' + (f' Final: {p["final"]}.' if p.get('final') else ''))
    return '\n'.join(lines) + '\n'


def write_out(path, text, begin=BEGIN, end=END):
    """@text between the markers of @path (the text around them kept)."""
    if path == '-':
        sys.stdout.write(text)
        return
    old = open(path).read() if os.path.exists(path) else ''
    if begin in old and end in old:
        new = old[:old.index(begin) + len(begin)] + '\n' + text + old[old.index(end):]
    else:
        new = old + ('\n' if old else '') + begin + '\n' + text + end + '\n'
    with open(path, 'w') as f:
        f.write(new)


def main(argv):
    opts = parse(argv[1:])
    programs = [p for p in corpus.PROGRAMS if not opts['only'] or p['name'] in opts['only']]
    if opts['list']:
        for p in programs:
            print(f'{p["name"]:16} {p["what"]}')
        return 0
    work = opts['work'] or tempfile.mkdtemp(prefix='heaplab-accuracy.')
    os.makedirs(work, exist_ok=True)
    progress = Progress()
    progress.say(f'accuracy: making the inputs in {work} ...')
    corpus.prepare(work, programs)
    results, started = [], time.time()
    with open(os.path.join(work, 'stderr.log'), 'w') as log:
        for n, p in enumerate(programs, 1):
            result = {'name': p['name'], 'program': p, 'cells': [], 'seconds': 0}
            results.append(result)
            missing = [x for x in p.get('needs', []) if not any(
                os.access(os.path.join(d, x), os.X_OK) for d in os.environ.get('PATH', '').split(':'))]
            argv_p, stdin = corpus.expand(p, work)
            if missing:
                result['why'] = 'not installed: ' + ', '.join(missing)
                result['cells'] = [{'allocator': a, 'why': result['why']} for a in ALLOCATORS]
                continue
            progress.say(f'accuracy: [{n}/{len(programs)}] {p["name"]}: recording and predicting (heaplab diagnose) ...')
            report, result['seconds'] = run_diagnose(opts['build'], p, argv_p, stdin, work, log)
            result['report'] = report
            if report is None:
                result['why'] = f'heaplab diagnose failed (see {work}/stderr.log)'
                result['cells'] = [{'allocator': a, 'why': result['why']} for a in ALLOCATORS]
                continue
            for k, a in enumerate(ALLOCATORS, 1):
                cand = candidate_for(report, a)
                if cand is None:
                    result['cells'].append({'allocator': a, 'why': 'no candidate for it in diagnose'})
                    continue
                lib = setting_env(cand['real_setting']).get('LD_PRELOAD')
                if lib and not os.path.exists(lib):
                    result['cells'].append({'allocator': a, 'why': f'{lib} not installed'})
                    continue
                progress.say(f'accuracy: [{n}/{len(programs)}] {p["name"]}: running under {a} ({k}/4) ...')
                peak, final, status, split, spread = run_real(p, argv_p, stdin, cand['real_setting'],
                                                              max(opts['repeat'], p.get('repeat', 0)), log)
                result['cells'].append({'allocator': a, 'policy': cand['policy'], 'conf': cand['conf'],
                                        'setting': cand['real_setting'], 'status': status,
                                        'measured_peak': peak, 'measured_final': final,
                                        'predicted_peak': cand['predicted_peak_rss'],
                                        'predicted_final': cand['predicted_final_rss'],
                                        'peak_split': split, 'spread': spread})
    progress.done()
    text = tables(results, opts, time.time() - started)
    write_out(opts['out'], text)
    if opts['json']:
        with open(opts['json'], 'w') as f:
            json.dump([{k: v for k, v in r.items() if k != 'report'} | {'coverage': (r.get('report') or {}).get(
                'coverage')} for r in results], f, indent=1)
    if not opts['work']:
        subprocess.run(['rm', '-rf', work])
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
