"""How much of the seed's bursts overlap, alone and recorded as diagnose
records CPython (PYTHONMALLOC=malloc past pymalloc, its timed waits in its
own time: HEAPLAB_RECORD_PACE=allocator:NS, each allocator call counted as
NS ns of the program's time), for a few NS: the figure diagnose counts for
a call of pymalloc (PYMALLOC_CALL_NS in diagnose/record_program.c) is the
one whose recorded runs overlap as the program alone does.

Each run is bench/diagnose/repro_live.py 2 0.5 (repro.py with a count of
the dicts its threads hold; its most at once is how far the bursts
overlap, which makes the peak).  The runs take turns (alone, then each NS)
so that the machine's load falls on all alike; each line gives the median
and the quartiles of the most dicts live at once over RUNS runs.

With --malloc, the same for the program run with PYTHONMALLOC=malloc
(repro-malloc), recorded as diagnose records it when PYTHONMALLOC is set:
HEAPLAB_RECORD_PACE=recorder:NS, the recorder's work left out.

Usage: python3 bench/diagnose/pace_calls.py [--malloc] BUILD_DIR [RUNS [NS ...]]
       (default: 21 runs, NS 0 and 14; 41 runs take about 5 minutes)"""
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def most_live(python, recorder, ns, on_malloc):
    env = dict(os.environ)
    env.pop("PYTHONMALLOC", None)
    if on_malloc:
        env["PYTHONMALLOC"] = "malloc"
    with tempfile.TemporaryDirectory() as d:
        if ns is not None and on_malloc:
            env.update(HEAPLAB_RECORD_PACE="recorder:%d" % ns, HEAPLAB_RECORD=os.path.join(d, "rec"),
                       HEAPLAB_RECORD_MS="10", LD_PRELOAD=recorder)
        elif ns is not None:
            env.update(PYTHONMALLOC="malloc", HEAPLAB_RECORD_FRONT="pymalloc", HEAPLAB_RECORD_PACE="allocator:%d" % ns,
                       HEAPLAB_RECORD=os.path.join(d, "rec"), HEAPLAB_RECORD_MS="10", LD_PRELOAD=recorder)
        run = subprocess.run([python, os.path.join(HERE, "repro_live.py"), "2", "0.5"], env=env, check=True,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    return int(run.stderr.split("peak_live_objects")[1].split()[0])


def main():
    args = sys.argv[1:]
    on_malloc = bool(args) and args[0] == "--malloc"
    args = args[on_malloc:]
    if not args:
        sys.exit(__doc__)
    recorder = os.path.join(os.path.abspath(args[0]), ".libs", "libheaplab-record.so")
    if not os.path.exists(recorder):
        sys.exit("pace_calls: no recorder at %s (build first)" % recorder)
    runs = int(args[1]) if len(args) > 1 else 21
    kinds = [None] + ([int(v) for v in args[2:]] or [0, 14])
    got = {k: [] for k in kinds}
    for r in range(runs):
        print("pace_calls: run %d of %d ..." % (r + 1, runs), file=sys.stderr, end="\r", flush=True)
        for k in kinds:
            got[k].append(most_live(sys.executable, recorder, k, on_malloc))
    print(file=sys.stderr)
    for k in kinds:
        q = statistics.quantiles(got[k], n=4)
        print("%-22s most dicts live at once: median %d, quartiles %d-%d (%d runs)"
              % ("alone" if k is None else "recorded, %d ns a call" % k, statistics.median(got[k]), q[0], q[2], runs))


main()
