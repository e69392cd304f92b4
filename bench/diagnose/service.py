"""A small Python "service" whose resident memory does not come down, for
the diagnosis walked through in chapter 12 of the book.

    python3 bench/diagnose/service.py [count | trim | trace]

Four worker threads serve 48 requests between them.  Each request parses
1,500 records: a dict holding a short name (pymalloc) and a body of 600 to
1,599 bytes (above pymalloc's 512, so the C library's malloc), and each
record points back at its request, so a request and its records form a
cycle that only the cyclic collector frees.  Automatic collection is off,
as some latency-minded services run.  A cache keeps the body of one
record in 50 for good: small live data scattered through the C heap.

With no argument the program just runs (for heaplab diagnose and
bench/diagnose/peak_final.py); it takes one reference to the cache that
it never gives back, so the interpreter's teardown leaves the cache alone
and the resident set at exit is the one the service runs with.  "count" prints, at three moments (before
the requests, after them, after gc.collect()), the objects the collector
tracks (len(gc.get_objects())), pymalloc's allocated blocks
(sys.getallocatedblocks()) and the resident set from /proc/self/statm;
"trim" does the same and then calls glibc's malloc_trim(0) and counts
once more.
"trace" runs under tracemalloc and prints the three largest lines of the
difference between a snapshot before the requests and one after
gc.collect(), and the traced memory then.
"""
import ctypes
import gc
import os
import sys
import threading

THREADS = 4
REQUESTS = 48
RECORDS = 1500
KEEP_ONE_IN = 50
PAGE = os.sysconf('SC_PAGE_SIZE')

cache = []
cache_lock = threading.Lock()


class Request:
    def __init__(self, number):
        self.number = number
        self.records = []


def rss_mib():
    with open('/proc/self/statm') as statm:
        return int(statm.read().split()[1]) * PAGE / 1048576


def handle(number):
    request = Request(number)
    for i in range(RECORDS):
        body = '%d:%d;' % (number, i) + 'b' * (600 + (i * 7919) % 1000)
        request.records.append({'request': request, 'name': 'r%d-%d' % (number, i), 'body': body})
    with cache_lock:
        cache.extend(r['body'] for r in request.records[::KEEP_ONE_IN])


def worker(first):
    for number in range(first, REQUESTS, THREADS):
        handle(number)


def serve():
    threads = [threading.Thread(target=worker, args=(t,)) for t in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def census(moment):
    print('%-16s gc objects %7d  allocated blocks %7d  rss %6.1f MiB'
          % (moment, len(gc.get_objects()), sys.getallocatedblocks(), rss_mib()))


def main(mode):
    gc.disable()
    if mode in ('count', 'trim'):
        census('before')
        serve()
        census('after requests')
        print('gc.collect() found %d unreachable objects' % gc.collect())
        census('after collect')
        if mode == 'trim':
            print('malloc_trim(0) returned %d' % ctypes.CDLL(None).malloc_trim(0))
            census('after trim')
    elif mode == 'trace':
        import tracemalloc
        tracemalloc.start()
        before = tracemalloc.take_snapshot()
        serve()
        gc.collect()
        after = tracemalloc.take_snapshot()
        for stat in after.compare_to(before, 'lineno')[:3]:
            print(stat)
        current, peak = tracemalloc.get_traced_memory()
        print('traced: current %.1f MiB, peak %.1f MiB, rss %.1f MiB'
              % (current / 1048576, peak / 1048576, rss_mib()))
    elif mode == '':
        serve()
        gc.collect()
        # one reference that nothing gives back: the cache outlives the
        # interpreter's teardown, so the process exits holding what it
        # served with
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(cache))
    else:
        sys.exit('service.py: unknown mode %r (count, trim, trace or nothing)' % mode)


if __name__ == '__main__':
    main(sys.argv[1] if len(sys.argv) > 1 else '')
