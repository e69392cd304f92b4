#!/usr/bin/env bash
# Every fidelity row of every family present (fidelity/*.rows): each model
# against the real allocator it models, on this machine.  One line per row
# (PASS / FAIL / SKIP and its id), then "fidelity: N passed, N failed,
# N skipped", which .ci/summarize counts row by row.  A row whose real
# library or probe is missing is SKIP; the script fails when a row fails,
# and is itself a SKIP when no row could run.
set -u
. "$(dirname "$0")/../lib.sh"
hl_skip_sanitized "every row preloads heaplab and the real allocator into a probe; a -fsanitize=$hl_sanitizer build owns malloc"
out=$("$build/heaplab" fidelity --check --brief)
status=$?
echo "$out"
[ $status -eq 0 ] || exit $status
echo "$out" | tail -1 | grep -q '^fidelity: 0 passed, 0 failed' && exit 77
exit 0
