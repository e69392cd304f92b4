-- The SQLite program of bench/accuracy (sqlite3 :memory: < workload.sql):
-- a table filled from a recursive CTE, an index, a few queries, then the
-- table dropped, so the last RSS shows what the allocator keeps of the
-- in-memory database's pages.
PRAGMA cache_size = -65536;
CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, grp INTEGER, payload BLOB);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 60000)
INSERT INTO t SELECT i, 'name-' || (i * 7919 % 60000), i % 97, randomblob(60 + i % 80) FROM n;
CREATE INDEX t_name ON t(name);
SELECT grp, count(*), sum(length(payload)) FROM t GROUP BY grp ORDER BY 2 DESC LIMIT 3;
SELECT count(DISTINCT name) FROM t;
DELETE FROM t WHERE grp % 2 = 0;
SELECT count(*) FROM t WHERE name LIKE 'name-1%';
DROP TABLE t;
VACUUM;
