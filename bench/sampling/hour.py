#!/usr/bin/env python3
"""The hour-long program of bench/SAMPLING.md: sqlite3 (the Debian
package's, on an in-memory database) fed rounds of SQL for SECONDS
seconds, its peak and final RSS read from outside.

    bench/sampling/hour.py SECONDS [NAME=VALUE ...]

The NAME=VALUE settings go into sqlite3's environment (LD_PRELOAD of an
allocator, or of libheaplab-record.so with HEAPLAB_RECORD=PREFIX).  A
round: a work table of 20,000 to 60,000 rows of blobs of 60 to 460 bytes
filled from a recursive CTE, indexed, queried, 1 row in 25 copied into a
table that lasts, and dropped.  Every 150 rounds all but the last 30
rounds' rows of the lasting table are deleted and the database vacuumed
(its pages go back to malloc): the heap grows and shrinks in cycles whose
peak does not depend on how many rounds the time holds.  At the end the
same cut and vacuum, then three rows in four of what is left deleted.
Each round is written when sqlite3 has answered the one before, so a
slower run makes fewer rounds of the same shape.  With sqlite3 still
running (waiting for more), its VmHWM and VmRSS are read: the peak and
the final.  Prints one JSON object: rounds, seconds, peak, final (bytes).
Exit status 2 on bad arguments, 1 when sqlite3 fails.
"""
import json
import os
import subprocess
import sys
import time

CYCLE, KEEP_ROUNDS = 150, 30


def round_sql(r):
    n = 20000 + r * 7919 % 40000
    return (f'CREATE TABLE w(id INTEGER PRIMARY KEY, name TEXT, grp INTEGER, payload BLOB);\n'
            f'WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {n})\n'
            f"INSERT INTO w SELECT i, 'name-' || (i * 7919 % {n}), i % 97, "
            f'randomblob(60 + i * {r % 13 + 1} % 400) FROM n;\n'
            f'CREATE INDEX w_name ON w(name);\n'
            f'SELECT grp, count(*), sum(length(payload)) FROM w GROUP BY grp ORDER BY 2 DESC LIMIT 1;\n'
            f'INSERT INTO keep(r, name, payload) SELECT {r}, name, payload FROM w WHERE id % 25 = {r % 25};\n'
            f'DELETE FROM w WHERE grp % 3 = 0;\n'
            f"SELECT count(*) FROM w WHERE name LIKE 'name-{r % 10}%';\n"
            f'DROP TABLE w;\n')


def cut_sql(r):
    return f'DELETE FROM keep WHERE r < {r - KEEP_ROUNDS};\nVACUUM;\n'


def status(pid):
    """VmHWM and VmRSS of @pid in bytes."""
    got = {}
    with open(f'/proc/{pid}/status') as f:
        for line in f:
            key, _, value = line.partition(':')
            if key in ('VmHWM', 'VmRSS'):
                got[key] = int(value.split()[0]) * 1024
    return got['VmHWM'], got['VmRSS']


def main(argv):
    if len(argv) < 2 or not argv[1].isdigit() or any('=' not in a for a in argv[2:]):
        print('usage: hour.py SECONDS [NAME=VALUE ...]', file=sys.stderr)
        return 2
    seconds = int(argv[1])
    env = dict(os.environ)
    env.update(a.split('=', 1) for a in argv[2:])
    child = subprocess.Popen(['sqlite3', ':memory:'], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env,
                             text=True, bufsize=1)

    def ask(sql, r):
        """Sends @sql and a marker, reads up to the marker's answer."""
        child.stdin.write(f"{sql}SELECT 'done {r}';\n")
        child.stdin.flush()
        for line in child.stdout:
            if line.strip() == f'done {r}':
                return
        raise OSError('sqlite3 ended')

    start, r = time.monotonic(), 0
    try:
        ask('PRAGMA cache_size = -65536;\n'
            'CREATE TABLE keep(id INTEGER PRIMARY KEY, r INTEGER, name TEXT, payload BLOB);\n', -1)
        while time.monotonic() - start < seconds:
            ask(round_sql(r) + (cut_sql(r) if r % CYCLE == CYCLE - 1 else ''), r)
            r += 1
        ask(cut_sql(r) + 'DELETE FROM keep WHERE r % 4 <> 0;\n', r)
        peak, final = status(child.pid)
    except OSError as e:
        print(f'hour.py: {e}', file=sys.stderr)
        return 1
    finally:
        child.stdin.close()
        child.wait()
    print(json.dumps({'rounds': r, 'seconds': round(time.monotonic() - start, 1), 'peak': peak, 'final': final,
                      'status': child.returncode}))
    return 0 if child.returncode == 0 else 1


if __name__ == '__main__':
    sys.exit(main(sys.argv))
