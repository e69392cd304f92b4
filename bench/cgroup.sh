#!/usr/bin/env bash
# cgroup.sh LIMIT_MIB COMMAND [ARGS...]: run COMMAND in a new cgroup v1
# memory group limited to LIMIT_MIB MiB (a child of this shell's own memory
# group, so a limit above it still holds), then print its exit status and
# the group's counters: usage, peak usage, failcnt, the OOM counters and
# the memory.stat lines the book's chapter 18 reads.  The group is removed
# on exit, also when the command fails or the script is interrupted (its
# page cache charges then move to the parent group).  Needs root and a
# writable /sys/fs/cgroup/memory; on a cgroup v2 machine use
# `systemd-run --scope -p MemoryMax=...` and read memory.events instead.
set -u
[ $# -ge 2 ] && [[ $1 =~ ^[1-9][0-9]*$ ]] || { echo "usage: cgroup.sh LIMIT_MIB COMMAND [ARGS...]" >&2; exit 2; }
limit=$1
shift
parent=/sys/fs/cgroup/memory$(sed -n 's/^[0-9]*:memory://p' /proc/self/cgroup 2>/dev/null)
[ -w "$parent/memory.limit_in_bytes" ] || { echo "cgroup.sh: no writable cgroup v1 memory group at $parent" >&2; exit 1; }
g=$parent/heaplab-$$
mkdir "$g" || exit 1
trap 'rmdir "$g" 2>/dev/null' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
echo $((limit << 20)) > "$g/memory.limit_in_bytes" || exit 1
# the child joins the group before it runs COMMAND, so every page COMMAND
# touches is charged there
bash -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$g" "$@"
echo "exit status $?"
for f in usage_in_bytes max_usage_in_bytes failcnt; do
	echo "memory.$f $(cat "$g/memory.$f")"
done
sed 's/^/memory.oom_control /' "$g/memory.oom_control"
grep -E '^(cache|rss|rss_huge|shmem|mapped_file|inactive_file|active_file) ' "$g/memory.stat" | sed 's/^/memory.stat /'
